"""Retrograde kernels over one *part* of a group: the counting method without shared memory.

The Ray executor (:mod:`solver.retro.cluster`) splits every group ``glo..ghi`` into P
contiguous parts, one per actor; an actor holds only its parts (``part[gi - lo]`` for its
``lo..hi``). The per-ply work is that of :mod:`solver.kernels.retro`, cut where it would
touch another actor's cells:

* ``init_part`` values a part as ``init_range`` does; the values of lower-tier children
  (``edge``/``capture``: other groups, other owners) come in as a sorted ``keys`` /
  ``kvals`` pair fetched beforehand (``lower_requests`` lists what to fetch).
* A counter counts the in-group *moves* not yet refuted, as the lean kernels'
  (:func:`~solver.kernels.retro.in_group_moves`: only a capture's child is indexed), one
  more for a drawn lower-tier child.
* ``level_emit`` lists, for every position of the part decided at exactly ``level``
  plies, its distinct in-group parents as updates ``target << WSHIFT | moves << 1 |
  kind`` — kind ``LOSS_CHILD`` (the parent wins in ``level + 1``) or ``WIN_CHILD`` (its
  ``moves`` into the child's orbit refuted, :func:`~solver.kernels.lean._per_parent`) —
  instead of writing them; the owners apply them with ``apply_updates``.
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

from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT, loss_code, win_code
from solver.kernels.encode import bsearch, unrank
from solver.kernels.lean import _per_parent
from solver.kernels.moves import terminal
from solver.kernels.retro import fold_lower, in_group_moves, parent_weights

LOSS_CHILD, WIN_CHILD = np.uint8(0), np.uint8(1)
NO_WIN = 1 << 30
WSHIFT = 9  # an update: target << WSHIFT | moves << 1 | kind (moves < 256)
WMASK = 0xFF


@njit(cache=True)
def _grow(a, n):
    """``a`` with room for at least ``n + 1`` entries (doubling)."""
    if n < a.shape[0]:
        return a
    b = np.empty(2 * a.shape[0] + 16, dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _lower_children(gi, geo, lay, kids, out, nout):
    """Append the lower-tier children (the captures') of live ``gi`` to ``out``."""
    m, p, s = unrank(gi, geo, lay)
    if m & geo.traps[1 - s] or p & geo.traps[s] or terminal(m, p, geo) != ONGOING_V:
        return out, nout
    _, nl = in_group_moves(m, p, s, geo, lay, kids)
    for j in range(nl):
        out = _grow(out, nout)
        out[nout] = kids[j]
        nout += 1
    return out, nout


@njit(cache=True)
def lower_requests(lo, hi, pending, geo, lay):
    """Sorted distinct lower-tier children of the live positions ``lo..hi`` (``pending``
    empty) or of the positions listed in ``pending``."""
    kids = np.empty(6 * geo.npoints, np.int64)
    out = np.empty(1024, np.int64)
    nout = 0
    if pending.shape[0] == 0:
        for gi in range(lo, hi):
            out, nout = _lower_children(gi, geo, lay, kids, out, nout)
    else:
        for i in range(pending.shape[0]):
            out, nout = _lower_children(pending[i], geo, lay, kids, out, nout)
    return np.unique(out[:nout])


@njit(cache=True)
def count_moves(m, p, s, keys, kvals, geo, lay, buf):
    """``(in-group moves, fastest win, slowest loss, any draw)`` of a live position, its
    lower-tier children's values found in the sorted ``keys`` / ``kvals``."""
    n, nl = in_group_moves(m, p, s, geo, lay, buf)
    best_win, max_loss, draw_below = NO_WIN, 0, 0
    for i in range(nl):
        v = kvals[bsearch(keys, 0, keys.shape[0], buf[i])]
        best_win, max_loss, draw_below = fold_lower(v, best_win, max_loss, draw_below)
    return n, best_win, max_loss, draw_below


@njit(cache=True)
def parent_updates(gi, kind, geo, lay, pm, pp, buf, wts, k_sym, bounds, raw, who, count, nout):
    """The updates of decided ``gi`` into ``raw`` from ``nout`` on (one a distinct parent,
    with its moves into ``gi``'s orbit), their owners into ``who``, counted per owner in
    ``count[owner + 1]``; the new ``nout``."""
    n = _per_parent(buf, wts, parent_weights(gi, geo, lay, pm, pp, buf, wts), k_sym)
    for i in range(n):
        t = buf[i]
        r = np.searchsorted(bounds, t, side="right") - 1  # as ``owners``: the last part starting at or before t
        raw[nout] = (t << WSHIFT) | (wts[i] << 1) | kind
        who[nout] = r
        count[r + 1] += 1
        nout += 1
    return nout


@njit(cache=True)
def sort_by_owner(raw, who, count, nout, parts):
    """``raw[:nout]`` in a stable counting sort by owner, and the cuts: ``cuts[r]`` the
    first of owner ``r``."""
    for r in range(parts):
        count[r + 1] += count[r]
    cuts = count.copy()
    out = np.empty(nout, np.int64)
    for i in range(nout):
        r = who[i]
        out[count[r]] = raw[i]
        count[r] += 1
    return out, cuts


@njit(cache=True)
def init_part(part, lo, hi, geo, lay, keys, kvals):
    """Counters and immediate values of ``lo..hi`` into ``part``; the largest distance written."""
    buf = np.empty(6 * geo.npoints, np.int64)
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
        n, best_win, max_loss, draw_below = count_moves(m, p, s, keys, kvals, geo, lay, buf)
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

    Each update is ``target << WSHIFT | moves << 1 | kind``; they come sorted by owner (the
    part of ``bounds`` holding the target; within an owner in scan order), with ``cuts[r]``
    the first of owner ``r``. Returns ``(updates, cuts, positions decided at level, next
    index to scan)``.
    """
    target_loss = loss_code(level)
    target_win = win_code(level)
    parts = bounds.shape[0] - 1
    pm = np.empty(6 * geo.npoints, np.uint64)
    pp = np.empty(6 * geo.npoints, np.uint64)
    buf = np.empty(6 * geo.npoints, np.int64)
    wts = np.empty(6 * geo.npoints, np.int64)
    k_sym = geo.permbits.shape[0]
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
            nout = parent_updates(gi, kind, geo, lay, pm, pp, buf, wts, k_sym, bounds, raw, who, count, nout)
        gi += 1
    out, cuts = sort_by_owner(raw, who, count, nout, parts)
    return out, cuts, seen, gi


@njit(cache=True)
def apply_updates(part, lo, level, updates, has_lower):
    """Apply updates ``target << WSHIFT | moves << 1 | kind`` (from ``level_emit``) to the
    part; returns ``(largest distance written, pending)``.

    Without lower tiers a counter reaching zero is a loss in ``level + 1``; with them it
    is written so provisionally and listed in ``pending`` for ``resolve_pending``.
    """
    top = -1
    win_next = win_code(level + 1)
    pending = np.empty(64, np.int64)
    npend = 0
    for i in range(updates.shape[0]):
        target = updates[i] >> WSHIFT
        w = (updates[i] >> 1) & WMASK
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
            if old == w:
                part[q] = loss_code(level + 1)
                top = max(top, level + 1)
                if has_lower:
                    pending = _grow(pending, npend)
                    pending[npend] = target
                    npend += 1
            else:
                part[q] = old - np.uint16(w)
    return top, pending[:npend]


@njit(cache=True)
def resolve_pending(part, lo, pending, level, geo, lay, keys, kvals):
    """Final distances of the losses found at ``level``: ``max(level + 1, slowest lower loss)``."""
    buf = np.empty(6 * geo.npoints, np.int64)
    top = -1
    for i in range(pending.shape[0]):
        gi = pending[i]
        m, p, s = unrank(gi, geo, lay)
        _, _, max_loss, _ = count_moves(m, p, s, keys, kvals, geo, lay, buf)
        d = max(level + 1, max_loss)
        part[gi - lo] = loss_code(d)
        top = max(top, d)
    return top
