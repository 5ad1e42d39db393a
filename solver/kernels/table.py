"""df-pn's transposition table (``TT``), the pass argument on storing, and persistence.

4-way buckets keyed by the canonical key of :mod:`solver.kernels.symkeys` (position +
question). Entries hold pn, dn, ``dist`` (an upper bound on the attacker's fastest win,
valid when pn = 0), ``lb`` (a lower bound on it), the best move (``z * 6 + k``), the
effort (nodes spent below it, the replacement priority) and ``onpath``: the ply at which
the entry is on the current search path (``NOPATH`` when it is not), which is how df-pn
sees a repetition (:mod:`solver.kernels.dfpn`). Entries on the path are never replaced.

Persistence (:class:`solver.search.proofs.ProofStore`): :func:`tt_select` picks the
entries worth saving, :func:`tt_load` stores saved ones back.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import prefetch
from solver.kernels.code import ONGOING_V
from solver.kernels.moves import terminal
from solver.kernels.symkeys import canon

INF = 1 << 30  # an infinite proof or disproof number
NOPATH = -1  # ``onpath`` of an entry not on the current path
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # the key of an empty entry (and of a child that needs none)
DMAX = 0xFFFF  # "no distance known"

TT = namedtuple("TT", "k1 k2 pn dn dist lb best onpath effort")


def new_tt(bits: int) -> TT:
    """An empty table of ``2 ** bits`` entries."""
    n = 1 << bits
    return TT(
        np.full(n, EMPTY, dtype=np.uint64),
        np.full(n, EMPTY, dtype=np.uint64),
        np.ones(n, dtype=np.uint32),
        np.ones(n, dtype=np.uint32),
        np.full(n, DMAX, dtype=np.uint16),
        np.zeros(n, dtype=np.uint16),
        np.full(n, -1, dtype=np.int16),
        np.full(n, NOPATH, dtype=np.int16),
        np.zeros(n, dtype=np.uint32),
    )


@njit(cache=True, _nrt=False)
def bucket(table, k1, k2):
    """First entry of a key's 4-way bucket in ``table`` (any table with ``k1, k2`` key
    arrays of a power-of-two size: ``TT`` here, ``RTT`` of :mod:`solver.kernels.refine`)."""
    mask = np.uint64((table.k1.shape[0] >> 2) - 1)
    h = k1 * np.uint64(0x9E3779B97F4A7C15) ^ (k2 * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    return int(h & mask) * 4


@njit(cache=True, _nrt=False)
def tt_prefetch(tt, k1, k2):
    """Start loading the bucket of a key (all the fields a probe reads)."""
    b = bucket(tt, k1, k2)
    prefetch(tt.k1, b)
    prefetch(tt.k2, b)
    prefetch(tt.pn, b)
    prefetch(tt.dn, b)
    prefetch(tt.onpath, b)
    prefetch(tt.dist, b)
    prefetch(tt.lb, b)


@njit(cache=True, _nrt=False)
def tt_find(tt, k1, k2):
    """The entry of a key in ``tt`` (or in an ``RTT``), or -1."""
    b = bucket(tt, k1, k2)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
    return -1


@njit(cache=True, _nrt=False)
def tt_slot(tt, k1, k2):
    """The entry of a key, made if absent (replacing the least valuable); -1 if none free."""
    b = bucket(tt, k1, k2)
    victim = -1
    vscore = np.int64(1) << np.int64(62)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
        if tt.onpath[i] != NOPATH:
            continue
        if tt.k2[i] == EMPTY:
            score = np.int64(-1)
        else:
            score = np.int64(tt.effort[i])
            if tt.pn[i] == 0 or tt.dn[i] == 0:
                score += np.int64(1) << np.int64(40)
        if score < vscore:
            vscore = score
            victim = i
    if victim >= 0:
        i = victim
        tt.k1[i] = k1
        tt.k2[i] = k2
        tt.pn[i] = 1
        tt.dn[i] = 1
        tt.dist[i] = DMAX
        tt.lb[i] = 0
        tt.best[i] = -1
        tt.effort[i] = 0
    return victim


@njit(cache=True, _nrt=False)
def tt_store(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Record a search result (numbers capped at ``INF``, distances at ``DMAX``); a
    resolved entry is kept and only its distances tightened. Returns the entry or -1."""
    i = tt_slot(tt, k1, k2)
    if i < 0:
        return i
    if tt.pn[i] == 0 or tt.dn[i] == 0:  # resolved: keep, only tighten the distances
        if pn == 0 and tt.pn[i] == 0:
            if dist < tt.dist[i]:
                tt.dist[i] = dist
                tt.best[i] = best
            if lb > tt.lb[i]:
                tt.lb[i] = min(lb, DMAX)
        return i
    tt.pn[i] = min(pn, INF)
    tt.dn[i] = min(dn, INF)
    tt.dist[i] = min(dist, DMAX)
    tt.lb[i] = min(max(lb, np.int64(tt.lb[i])), DMAX)
    tt.best[i] = best
    tt.effort[i] = min(np.int64(tt.effort[i]) + effort, np.int64(0xFFFFFFFF))
    return i


@njit(cache=True, _nrt=False)
def pass_store(tt, m, p, s, q, pn, dn, dist, geo, symtab):
    """docs/rules.md §10 applied to a path-independent result of non-terminal ``(m, p, s)``:
    a board lost for X to move is won for Y to move (Y passes), and a board not won for X
    to move is not lost for Y to move; store those."""
    if q == 1 and pn == 0:
        # the mover X loses: for Y to move on the same board, Y wins by passing
        if terminal(p, m, geo) == ONGOING_V:
            k1, k2 = canon(p, m, 1 - s, 0, geo, symtab)
            tt_store(tt, k1, k2, 0, INF, min(dist + 1, DMAX - 1), 1, -1, 0)
    elif q == 0 and dn == 0:
        # X to move does not win: Y to move on the same board does not lose
        if terminal(p, m, geo) == ONGOING_V:
            k1, k2 = canon(p, m, 1 - s, 1, geo, symtab)
            tt_store(tt, k1, k2, INF, 0, DMAX, 0, -1, 0)


# ---------------------------------------------------------------------------- persistence


@njit(cache=True, _nrt=False)
def tt_select(tt, min_resolved, min_open, out_idx):
    """Indices of entries worth keeping: resolved with effort >= ``min_resolved``, open
    with effort >= ``min_open``; entries on the current path are skipped. Returns count."""
    n = 0
    for i in range(tt.k1.shape[0]):
        if tt.k2[i] == EMPTY or tt.onpath[i] != NOPATH:
            continue
        e = np.int64(tt.effort[i])
        if tt.pn[i] == 0 or tt.dn[i] == 0:
            if e >= min_resolved:
                out_idx[n] = i
                n += 1
        elif e >= min_open:
            out_idx[n] = i
            n += 1
    return n


@njit(cache=True, _nrt=False)
def tt_load(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Store saved entries (arrays of the fields) into ``tt``, as :func:`tt_store` does."""
    for j in range(k1.shape[0]):
        tt_store(tt, k1[j], k2[j], np.int64(pn[j]), np.int64(dn[j]), np.int64(dist[j]), np.int64(lb[j]),
                 np.int64(best[j]), np.int64(effort[j]))
