"""The partition kernels (:mod:`solver.kernels.partition`) over one byte a position: the
lean solve on Ray.

An actor holds its part of a group as byte cells with the codes of
:mod:`solver.kernels.lean` (decided at this ply or the next by parity, decided further
ahead, done, no position), and counters as the shared-memory lean solve counts them:
in-group moves (:func:`~solver.kernels.retro.in_group_moves`: only a lower-tier child's
index is computed), one more for a drawn lower-tier child, so a live counter is never 0
and stays below :data:`~solver.kernels.lean.MAXC`. A decided child's update names each
distinct parent with the moves it has into the child's orbit
(:func:`~solver.kernels.lean._per_parent`): ``(target << WSHIFT) | (moves << 1) | kind``. As in
the shared-memory lean solve the distance of a position is the ply that took it: each
emit lists the positions it took (part-local indices, ascending), which the actor writes
to its ply log, and a position decided through a lower tier at a distance ahead of the
ply is ``FAR_*`` in its cell and waits in the actor's far lists with its distance. Every
index into a part here is local (``gi - lo``) but for the updates, which name their
targets by global index as the partition kernels do.

A ply's rounds (:func:`emit8` stops after ``cap`` updates) stay exact: applying a round
writes only codes of ply ``level + 1``'s parity, which the ply's later rounds do not take.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import ONGOING_V, WIN_V
from solver.kernels.encode import unrank
from solver.kernels.lean import AT_LOSS, AT_WIN, BAD, DONE_LOSS, DONE_WIN, FAR_LOSS, FAR_WIN, MAXC, lower_value, next_at8
from solver.kernels.moves import terminal
from solver.kernels.partition import (
    LOSS_CHILD, NO_WIN, WIN_CHILD, WMASK, WSHIFT, _grow, count_moves, parent_updates, sort_by_owner,
)


@njit(cache=True)
def init_part8(part, lo, hi, geo, lay, keys, kvals, far_idx, far_d):
    """Counters and immediate values of ``lo..hi`` into ``part``; a position decided
    through a lower tier is ``FAR_*``, listed in ``far_idx`` / ``far_d`` (room for
    ``hi - lo``) with its distance. Returns ``(listed far, no position, largest distance)``."""
    buf = np.empty(6 * geo.npoints, np.int64)
    top = -1
    nfar = 0
    invalid = 0
    for gi in range(lo, hi):
        q = gi - lo
        m, p, s = unrank(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            part[q] = BAD
            invalid += 1
            continue
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            part[q] = AT_WIN if t == WIN_V else AT_LOSS  # decided at ply 0 (parity 0)
            top = max(top, 0)
            continue
        n, best_win, max_loss, draw_below = count_moves(m, p, s, keys, kvals, geo, lay, buf)
        if best_win != NO_WIN:
            part[q] = FAR_WIN
            far_idx[nfar] = q
            far_d[nfar] = best_win
            nfar += 1
            top = max(top, best_win)
        elif n + draw_below == 0:
            part[q] = FAR_LOSS
            far_idx[nfar] = q
            far_d[nfar] = max_loss
            nfar += 1
            top = max(top, max_loss)
        else:
            part[q] = np.uint8(n + draw_below)
    return nfar, invalid, top


@njit(cache=True)
def emit8(part, words, lo, start, hi, level, geo, lay, cap, bounds, taken):
    """As :func:`solver.kernels.partition.level_emit`, over bytes: the positions of the
    part decided at ``level`` from global index ``start`` on are marked done, listed in
    ``taken`` (local, ascending) and their in-group parents listed as updates; stops after
    ``cap`` updates or when ``taken`` is full. Returns ``(updates, cuts, positions taken,
    next global index to scan)``."""
    a = AT_LOSS + (level & 1)
    b = AT_WIN + (level & 1)
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
    ntaken = 0
    k = start - lo
    n_cells = hi - lo
    while k < n_cells and nout < cap and ntaken < taken.shape[0]:
        k = next_at8(part, words, k, n_cells, a, b)
        if k >= n_cells:
            break
        v = part[k]
        part[k] = DONE_LOSS if v == a else DONE_WIN
        taken[ntaken] = k
        ntaken += 1
        kind = np.int64(LOSS_CHILD if v == a else WIN_CHILD)
        nout = parent_updates(lo + k, kind, geo, lay, pm, pp, buf, wts, k_sym, bounds, raw, who, count, nout)
        k += 1
    out, cuts = sort_by_owner(raw, who, count, nout, parts)
    return out, cuts, ntaken, lo + min(k, n_cells)


@njit(cache=True)
def apply8(part, lo, level, updates, has_lower):
    """As :func:`solver.kernels.partition.apply_updates`, over bytes: a loss child makes a
    win at ``level + 1`` (a far win too: it is taken sooner), a win child takes its moves
    off the counter, and a counter at those moves makes a loss at ``level + 1`` — with lower tiers
    provisionally, listed as pending for :func:`resolve8`. Returns ``(largest distance
    written, pending)``."""
    top = -1
    win_next = np.uint8(AT_WIN + ((level + 1) & 1))
    loss_next = np.uint8(AT_LOSS + ((level + 1) & 1))
    pending = np.empty(64, np.int64)
    npend = 0
    for i in range(updates.shape[0]):
        target = updates[i] >> WSHIFT
        w = (updates[i] >> 1) & WMASK
        q = target - lo
        old = part[q]
        if updates[i] & 1 == LOSS_CHILD:
            if old > MAXC and old != FAR_WIN:
                continue  # decided: lost, or won no later than level + 1
            part[q] = win_next
            top = max(top, level + 1)
        else:
            if old == 0 or old > MAXC:
                continue
            if old == w:
                part[q] = loss_next
                top = max(top, level + 1)
                if has_lower:
                    pending = _grow(pending, npend)
                    pending[npend] = target
                    npend += 1
            else:
                part[q] = old - np.uint8(w)
    return top, pending[:npend]


@njit(cache=True)
def resolve8(part, lo, pending, level, geo, lay, keys, kvals, far_idx, far_d):
    """The losses found at ``level`` (global ``pending``): lost in ``max(level + 1,
    slowest lower-tier loss)``; one beyond ``level + 1`` is ``FAR_LOSS``, listed in
    ``far_idx`` / ``far_d`` (local; room for every pending). Returns ``(listed, largest
    distance)``."""
    buf = np.empty(6 * geo.npoints, np.int64)
    top = -1
    nfar = 0
    for i in range(pending.shape[0]):
        gi = pending[i]
        m, p, s = unrank(gi, geo, lay)
        _, _, max_loss, _ = count_moves(m, p, s, keys, kvals, geo, lay, buf)
        d = max(level + 1, max_loss)
        if d > level + 1:
            part[gi - lo] = FAR_LOSS
            far_idx[nfar] = gi - lo
            far_d[nfar] = d
            nfar += 1
        top = max(top, d)
    return nfar, top


@njit(cache=True)
def lower_values8(part, idx, esc_idx, esc_val, out):
    """``out[i]``: the uint16 value of the finished cell ``idx[i]`` (local) of ``part``."""
    for i in range(idx.shape[0]):
        out[i] = lower_value(part, idx[i], esc_idx, esc_val)
