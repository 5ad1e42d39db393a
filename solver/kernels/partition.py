"""Retrograde kernels over one *part* of a group: the counting method without shared memory.

The Ray executor (:mod:`solver.retro.cluster`) splits every group ``glo..ghi`` into P
contiguous parts, one per actor; an actor holds only its parts (``part[gi - lo]`` for its
``lo..hi``). The per-ply work is that of :mod:`solver.kernels.retro`, cut where it would
touch another actor's cells:

* ``init_part`` values a part as ``init_range`` does; the values of lower-tier children
  (``edge``/``capture``: other groups, other owners) come in as a sorted ``keys`` /
  ``kvals`` pair fetched beforehand (``lower_requests`` lists what to fetch).
* ``level_emit`` lists, for every position of the part decided at exactly ``level``
  plies, its in-group parents as updates ``target * 2 + kind`` — kind ``LOSS_CHILD`` (the
  parent wins in ``level + 1``) or ``WIN_CHILD`` (one child fewer to refute) — instead of
  writing them; the owners apply them with ``apply_updates``.
* A counter that reaches zero makes a loss; where lower tiers exist its distance also
  depends on the slowest lower-tier loss, so such parents come back as *pending*:
  ``lower_requests`` over them, then ``resolve_pending`` with the fetched values.

Between phases the executor exchanges the arrays; a barrier per ply keeps the result
identical to the shared-memory kernels (the updates of one ply commute: a loss child
lowers a win's distance to ``level + 1`` at most, decrements only count).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz
from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT, loss_code, win_code
from solver.kernels.encode import bsearch, index_of, unrank
from solver.kernels.lean import in_group_moves
from solver.kernels.moves import legal_pivots, pivot_children, terminal
from solver.kernels.retro import _add_unique, parent_indices

LOSS_CHILD, WIN_CHILD = np.uint8(0), np.uint8(1)
NO_WIN = 1 << 30


@njit(cache=True)
def _grow(a, n):
    """``a`` with room for at least ``n + 1`` entries (doubling)."""
    if n < a.shape[0]:
        return a
    b = np.empty(2 * a.shape[0] + 16, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _scratch(geo):
    """Scratch arrays of the child scans: one pivot's children, every child's index, a buffer."""
    n = 6 * geo.npoints
    return np.empty(6, np.uint64), np.empty(6, np.uint64), np.empty(6, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)


@njit(cache=True)
def _child_indices(m, p, s, geo, lay, cm, cp, cmv, out):
    """The index of every child of ``(m, p, s)`` into ``out`` (``6 * npoints``; a child
    reached by several moves may appear more than once); their count."""
    n = 0
    legal = legal_pivots(m, p, geo)
    while legal:
        z = ctz(legal)
        legal &= legal - ONE
        nc = pivot_children(m, p, s, z, geo, cm, cp, cmv, 0, True)
        for j in range(nc):
            out[n] = index_of(cm[j], cp[j], 1 - s, geo, lay)
            n += 1
    return n


@njit(cache=True)
def _lower_children(gi, glo, ghi, geo, lay, cm, cp, cmv, kids, out, nout):
    """Append the lower-tier (outside ``glo..ghi``) child indices of live ``gi`` to ``out``."""
    m, p, s = unrank(gi, geo, lay)
    if m & geo.traps[1 - s] or p & geo.traps[s] or terminal(m, p, geo) != ONGOING_V:
        return out, nout
    _, nl = in_group_moves(m, p, s, geo, lay, kids)  # only the captures' children are ranked
    for j in range(nl):
        out = _grow(out, nout)
        out[nout] = kids[j]
        nout += 1
    return out, nout


@njit(cache=True)
def lower_requests(lo, hi, pending, glo, ghi, geo, lay):
    """Sorted distinct lower-tier children of the live positions ``lo..hi`` (``pending``
    empty) or of the positions listed in ``pending``."""
    cm, cp, cmv, kids, _ = _scratch(geo)
    out = np.empty(1024, np.int64)
    nout = 0
    if pending.shape[0] == 0:
        for gi in range(lo, hi):
            out, nout = _lower_children(gi, glo, ghi, geo, lay, cm, cp, cmv, kids, out, nout)
    else:
        for i in range(pending.shape[0]):
            out, nout = _lower_children(pending[i], glo, ghi, geo, lay, cm, cp, cmv, kids, out, nout)
    return np.unique(out[:nout])


@njit(cache=True)
def _scan(m, p, s, glo, ghi, keys, kvals, geo, lay, cm, cp, cmv, kids, buf):
    """Distinct in-group children into ``buf`` (the two-byte Ray kernels count distinct
    children, the lean and shared-memory ones weighted moves: the values come out the
    same), and the
    fastest win / slowest loss / any draw through lower-tier children (from ``keys``)."""
    n = 0
    best_win = NO_WIN
    max_loss = 0
    draw_below = 0
    for j in range(_child_indices(m, p, s, geo, lay, cm, cp, cmv, kids)):
        ci = kids[j]
        if glo <= ci < ghi:
            n = _add_unique(buf, n, ci)
            continue
        v = kvals[bsearch(keys, 0, keys.shape[0], ci)]
        if v & RESOLVED:
            d = int(v & DMASK) + 1
            if v & WINBIT:
                max_loss = max(max_loss, d)
            else:
                best_win = min(best_win, d)
        else:
            draw_below = 1
    return n, best_win, max_loss, draw_below


@njit(cache=True)
def init_part(part, lo, hi, glo, ghi, geo, lay, keys, kvals):
    """Counters and immediate values of ``lo..hi`` into ``part``; the largest distance written."""
    cm, cp, cmv, kids, buf = _scratch(geo)
    top = -1
    for gi in range(lo, hi):
        m, p, s = unrank(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            part[gi - lo] = INVALID
            continue
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            part[gi - lo] = (RESOLVED | WINBIT) if t == WIN_V else RESOLVED
            top = max(top, 0)
            continue
        n, best_win, max_loss, draw_below = _scan(m, p, s, glo, ghi, keys, kvals, geo, lay, cm, cp, cmv, kids, buf)
        if best_win != NO_WIN:
            part[gi - lo] = win_code(best_win)
            top = max(top, best_win)
        elif n + draw_below == 0:
            part[gi - lo] = loss_code(max_loss)
            top = max(top, max_loss)
        else:
            part[gi - lo] = np.uint16(n + draw_below)
    return top


@njit(cache=True)
def level_emit(part, lo, start, hi, level, geo, lay, cap, bounds):
    """Updates for the in-group parents of the part's positions decided at exactly ``level``
    plies, scanning from global index ``start`` and stopping once ``cap`` updates are listed
    (so a round's memory is fixed, whatever the board and the ply).

    Each update is ``target * 2 + kind``; they come sorted by owner (the part of
    ``bounds`` holding the target; within an owner in scan order), with ``cuts[r]`` the
    first of owner ``r``. Returns ``(updates, cuts, positions decided at level, next
    index to scan)``.
    """
    target_loss = loss_code(level)
    target_win = win_code(level)
    parts = bounds.shape[0] - 1
    pm = np.empty(6 * geo.npoints, np.uint64)
    pp = np.empty(6 * geo.npoints, np.uint64)
    buf = np.empty(6 * geo.npoints, np.int64)
    raw = np.empty(cap + 6 * geo.npoints, np.int64)
    who = np.empty(cap + 6 * geo.npoints, np.int32)
    count = np.zeros(parts + 1, np.int64)
    nout = 0
    seen = 0
    gi = start
    while gi < hi and nout < cap:
        v = part[gi - lo]
        if v == target_loss or v == target_win:
            seen += 1
            kind = np.int64(LOSS_CHILD if v == target_loss else WIN_CHILD)
            n = parent_indices(gi, geo, lay, pm, pp, buf)
            for i in range(n):
                t = buf[i]
                r = np.searchsorted(bounds, t, side="right") - 1  # as ``owners``: the last part starting at or before t
                raw[nout] = t * 2 + kind
                who[nout] = r
                count[r + 1] += 1
                nout += 1
        gi += 1
    for r in range(parts):
        count[r + 1] += count[r]
    cuts = count.copy()
    out = np.empty(nout, np.int64)
    for i in range(nout):  # a stable counting sort by owner
        r = who[i]
        out[count[r]] = raw[i]
        count[r] += 1
    return out, cuts, seen, gi


@njit(cache=True)
def apply_updates(part, lo, level, updates, has_lower):
    """Apply updates ``target * 2 + kind`` (from ``level_emit``) to the part; returns
    ``(largest distance written, pending)``.

    Without lower tiers a counter reaching zero is a loss in ``level + 1``; with them it
    is written so provisionally and listed in ``pending`` for ``resolve_pending``.
    """
    top = -1
    win_next = win_code(level + 1)
    pending = np.empty(64, np.int64)
    npend = 0
    for i in range(updates.shape[0]):
        target = updates[i] >> 1
        q = target - lo
        old = part[q]
        if updates[i] & 1 == LOSS_CHILD:
            if old & RESOLVED and (not old & WINBIT or (old & DMASK) <= level + 1):
                continue
            part[q] = win_next
            top = max(top, level + 1)
        else:
            if old & RESOLVED:
                continue
            if old == 1:
                part[q] = loss_code(level + 1)
                top = max(top, level + 1)
                if has_lower:
                    pending = _grow(pending, npend)
                    pending[npend] = target
                    npend += 1
            else:
                part[q] = old - np.uint16(1)
    return top, pending[:npend]


@njit(cache=True)
def resolve_pending(part, lo, pending, level, glo, ghi, geo, lay, keys, kvals):
    """Final distances of the losses found at ``level``: ``max(level + 1, slowest lower loss)``."""
    cm, cp, cmv, kids, buf = _scratch(geo)
    top = -1
    for i in range(pending.shape[0]):
        gi = pending[i]
        m, p, s = unrank(gi, geo, lay)
        _, _, max_loss, _ = _scan(m, p, s, glo, ghi, keys, kvals, geo, lay, cm, cp, cmv, kids, buf)
        d = max(level + 1, max_loss)
        part[gi - lo] = loss_code(d)
        top = max(top, d)
    return top
