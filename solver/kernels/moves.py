"""Move and unmove generation on bitboards, from the mover's view (compiled RULES.md §3–§5).

A position is ``(m, p, s)``: the mover's balls, the opponent's, the mover's colour. These
kernels are optimisations of :mod:`solver.game.rules` and are tested against it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, popcount

ONGOING, WIN0, LOSS0 = 0, 1, 2


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


@njit(cache=True, _nrt=False)
def ring_pattern(bits, z, nbr):
    """Bit i set when neighbour i of ``z`` holds a ball of ``bits``."""
    pat = 0
    for i in range(6):
        q = nbr[z, i]
        if q >= 0 and (bits >> np.uint64(q)) & ONE:
            pat |= 1 << i
    return pat


@njit(cache=True, _nrt=False)
def is_legal(m, p, z, geo):
    """Empty pivot around which the mover has a strict majority."""
    zb = ONE << np.uint64(z)
    if (m | p) & zb or not geo.pivots & zb:
        return False
    rm = geo.ringmask[z]
    return popcount(m & rm) > popcount(p & rm)


@njit(cache=True, _nrt=False)
def has_legal(m, p, geo):
    for z in range(geo.npoints):
        if is_legal(m, p, z, geo):
            return True
    return False


@njit(cache=True, _nrt=False)
def apply_move(m, p, s, z, k, geo):
    """Rotate, then trap captures; returns ``(m', p')`` still from the mover's view."""
    keep = ~geo.ringmask[z]
    m2 = (m & keep) | geo.rot[z, k, ring_pattern(m, z, geo.nbr)]
    p2 = (p & keep) | geo.rot[z, k, ring_pattern(p, z, geo.nbr)]
    m2 &= ~geo.traps[1 - s]
    p2 &= ~geo.traps[s]
    return m2, p2


@njit(cache=True, _nrt=False)
def terminal(m, p, geo):
    """``WIN0`` / ``LOSS0`` for the mover if the position is over, else ``ONGOING``."""
    c = geo.centre
    if m & c == c:
        return WIN0
    if p & c == c:
        return LOSS0
    if not has_legal(m, p, geo):
        return LOSS0
    return ONGOING


@njit(cache=True, _nrt=False)
def children(m, p, s, geo, out_m, out_p):
    """Every move's resulting position into ``out_m, out_p`` (mover, opponent) as seen by
    the next mover (side ``1 - s``); returns the count. Duplicates kept, order: points,
    then k. None if finished. Buffers hold ``6 * npoints``."""
    n = 0
    if terminal(m, p, geo) != ONGOING:
        return 0
    for z in range(geo.npoints):
        if not is_legal(m, p, z, geo):
            continue
        for k in range(6):
            m2, p2 = apply_move(m, p, s, z, k, geo)
            out_m[n] = p2
            out_p[n] = m2
            n += 1
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
    null_done = False
    for z in range(geo.npoints):
        # the parent's mover owned cp around z, and turning kept the counts around z
        if not is_legal(cp, cm, z, geo):
            continue
        keep = ~geo.ringmask[z]
        pat_p = ring_pattern(cp, z, geo.nbr)
        pat_m = ring_pattern(cm, z, geo.nbr)
        for k in range(6):
            if k == 0:
                if null_done:
                    continue  # the null rotation gives the same parent at every point
                null_done = True
            back = (6 - k) % 6
            pm = (cp & keep) | geo.rot[z, back, pat_p]
            po = (cm & keep) | geo.rot[z, back, pat_m]
            if popcount(pm) != na or popcount(po) != nb:
                continue  # a ball would have come in from off the board
            if pm & geo.traps[1 - ps] or po & geo.traps[ps]:
                continue
            if pm & c == c or po & c == c:
                continue
            out_m[n] = pm
            out_p[n] = po
            n += 1
    return n
