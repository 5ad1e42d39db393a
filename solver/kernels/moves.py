"""Move and unmove generation on bitboards, from the mover's view (compiled docs/rules.md §3–§5).

A position is ``(m, p, s)``: the mover's balls, the opponent's, the mover's colour. These
kernels are optimisations of :mod:`solver.game.rules` and are tested against it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz, pext, popcount
from solver.kernels.code import LOSS_V, ONGOING_V, WIN_V


@njit(cache=True, _nrt=False)
def turn(bits, z, k, nbr, ringmask):
    """Turn the ring around ``z`` by ``k``·60° ccw; balls turned off the board vanish."""
    out = bits & ~ringmask[z]
    for i in range(6):
        src = nbr[z, i]
        if src >= 0 and (bits >> np.uint64(src)) & ONE:
            dst = nbr[z, (i + k) % 6]
            if dst >= 0:
                out |= ONE << np.uint64(dst)
    return out


@njit(cache=True, _nrt=False, inline="always")
def ring_pattern(bits, z, ringmask):
    """The balls of ``bits`` on the ring around ``z``, packed in point order: the row of
    ``geo.rot`` to read (:func:`solver.kernels.geometry.ring_tables`)."""
    return np.int64(pext(bits, ringmask[z]))


@njit(cache=True, _nrt=False)
def is_legal(m, p, z, geo):
    """Empty pivot around which the mover has a strict majority."""
    zb = ONE << np.uint64(z)
    if (m | p) & zb or not geo.pivots & zb:
        return False
    rm = geo.ringmask[z]
    return popcount(m & rm) > popcount(p & rm)


@njit(cache=True, _nrt=False)
def apply_move(m, p, s, z, k, geo):
    """Rotate, then trap captures; returns ``(m', p')`` still from the mover's view."""
    keep = ~geo.ringmask[z]
    m2 = (m & keep) | geo.rot[z, k, ring_pattern(m, z, geo.ringmask)]
    p2 = (p & keep) | geo.rot[z, k, ring_pattern(p, z, geo.ringmask)]
    m2 &= ~geo.traps[1 - s]
    p2 &= ~geo.traps[s]
    return m2, p2


@njit(cache=True, _nrt=False)
def terminal(m, p, geo):
    """``WIN_V`` / ``LOSS_V`` for the mover if the position is over, else ``ONGOING_V``
    (the centre complete, or no legal move: only the empty pivots are visited)."""
    c = geo.centre
    if m & c == c:
        return WIN_V
    if p & c == c:
        return LOSS_V
    free = geo.pivots & ~(m | p)
    while free:
        z = ctz(free)
        rm = geo.ringmask[z]
        if popcount(m & rm) > popcount(p & rm):
            return ONGOING_V
        free &= free - ONE
    return LOSS_V


@njit(cache=True, _nrt=False, inline="always")
def legal_pivots(m, p, geo):
    """The legal moves' points as bits: empty pivots where the mover has a strict majority."""
    free = geo.pivots & ~(m | p)
    legal = free
    while free:
        z = ctz(free)
        free &= free - ONE
        rmask = geo.ringmask[z]
        if popcount(m & rmask) <= popcount(p & rmask):
            legal &= ~(ONE << z)
    return legal


@njit(cache=True, _nrt=False, inline="always")
def pivot_children(m, p, s, z, geo, out_m, out_p, out_mv, n, distinct):
    """The child generator: the positions after each turn ``k`` of the ring around the
    legal point ``z`` (:func:`apply_move`), as seen by the next mover (side ``1 - s``), into
    ``out_m[n:], out_p[n:]`` (mover, opponent) with the move code ``z * 6 + k`` in
    ``out_mv[n:]``, in the order of k; returns the new end ``n``.

    With ``distinct``, a child that an earlier k at the same point already gave (turning a
    symmetric ring) is left out; otherwise duplicates are kept. The searches walk
    :func:`legal_pivots` in increasing order and take each point's children from here —
    one point at a time, so that a search can stop early and the table probes it starts
    spread out (``inline``: the searches' hot loop, compiled in place).
    """
    rmask = geo.ringmask[z]
    pat_m = ring_pattern(m, z, geo.ringmask)
    pat_p = ring_pattern(p, z, geo.ringmask)
    m_out = m & ~rmask
    p_out = p & ~rmask
    first = n
    for k in range(6):
        m2 = (m_out | geo.rot[z, k, pat_m]) & ~geo.traps[1 - s]  # apply_move, ring read once
        p2 = (p_out | geo.rot[z, k, pat_p]) & ~geo.traps[s]
        if distinct:
            dup = False
            for j in range(first, n):
                if out_m[j] == p2 and out_p[j] == m2:
                    dup = True
                    break
            if dup:
                continue
        out_m[n] = p2
        out_p[n] = m2
        out_mv[n] = z * 6 + k
        n += 1
    return n


@njit(cache=True)
def children(m, p, s, geo, out_m, out_p):
    """Every move's resulting position into ``out_m, out_p`` (mover, opponent) as seen by
    the next mover (side ``1 - s``); returns the count. Duplicates kept, order: points,
    then k. None if finished. Buffers hold ``6 * npoints``. (The searches' generator,
    :func:`pivot_children`, as the tests compare it with the rules.)"""
    if terminal(m, p, geo) != ONGOING_V:
        return 0
    mv = np.empty(out_m.shape[0], dtype=np.int64)
    n = 0
    legal = legal_pivots(m, p, geo)
    while legal:
        z = np.int64(ctz(legal))
        legal &= legal - ONE
        n = pivot_children(m, p, s, z, geo, out_m, out_p, mv, n, False)
    return n


@njit(cache=True, _nrt=False)
def parents(cm, cp, cs, geo, out_m, out_p):
    """Positions with a move to ``(cm, cp, cs)`` that loses no ball (same material).

    Written into ``out_m, out_p`` from the parent mover's view ``(mover, opponent)``,
    side ``1 - cs``; returns the count; duplicates kept. Parents that are finished
    (centre complete) have no moves and are left out, as are parents that cannot arise
    (a ball on the other colour's trap).
    """
    n = 0
    ps = 1 - cs
    c = geo.centre
    na = popcount(cp)
    nb = popcount(cm)
    mover_traps = geo.traps[1 - ps]
    other_traps = geo.traps[ps]
    null_done = False
    free = geo.pivots & ~(cm | cp)
    while free:  # the empty pivots, in increasing order
        z = ctz(free)
        free &= free - ONE
        rmask = geo.ringmask[z]
        # the parent's mover owned cp around z, and turning kept the counts around z
        if popcount(cp & rmask) <= popcount(cm & rmask):
            continue
        pat_p = ring_pattern(cp, z, geo.ringmask)
        pat_m = ring_pattern(cm, z, geo.ringmask)
        cp_out = cp & ~rmask
        cm_out = cm & ~rmask
        for k in range(6):
            if k == 0:
                if null_done:
                    continue  # the null rotation gives the same parent at every point
                null_done = True
            back = (6 - k) % 6
            pm = cp_out | geo.rot[z, back, pat_p]
            po = cm_out | geo.rot[z, back, pat_m]
            if popcount(pm) != na or popcount(po) != nb:
                continue  # a ball would have come in from off the board
            if pm & mover_traps or po & other_traps:
                continue
            if pm & c == c or po & c == c:
                continue
            out_m[n] = pm
            out_p[n] = po
            n += 1
    return n
