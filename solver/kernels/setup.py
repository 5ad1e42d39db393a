"""Kernels of the setup game (docs/rules.md §5 ``setup``): placement layers and the hand-over.

Placement positions never hold a ball on the centre, so they are indexed over the other
points only: ``squeeze`` drops the three centre bits, ``stretch`` puts them back. Values
use the uint16 codes of :mod:`solver.kernels.code`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, ctz, popcount
from solver.kernels.code import DMASK, INVALID, RESOLVED, WINBIT, after, merit
from solver.kernels.encode import index_of, unrank
from solver.kernels.moves import apply_move, is_legal

OFFER, LAST = 0, 1


@njit(cache=True, _nrt=False)
def remap(bits, to):
    """The point set ``{to[q] : q in bits}`` as bits."""
    out = ZERO
    while bits:
        out |= ONE << np.uint64(to[ctz(bits)])
        bits &= bits - ONE
    return out


# board bits -> bits over the points outside the centre: ``squeeze(bits, keep)``, ``keep[q]``
# is q's new place; and back: ``stretch(bits, back)``, ``back[j]`` is squeezed point j's place
squeeze = remap
stretch = remap


@njit(cache=True, _nrt=False)
def rotate_value(x, o, z, rot_vals, geo, lay):
    """Value for light of rotating at ``z`` (light to move, best k), from the rotation DB."""
    best = np.uint16(0)
    best_m = -1
    for k in range(6):
        x2, o2 = apply_move(x, o, 0, z, k, geo)
        v = after(rot_vals[index_of(o2, x2, 1, geo, lay)])
        if merit(v) > best_m:
            best_m = merit(v)
            best = v
    return best


@njit(cache=True, _nrt=False)
def offer_value(x, o, rot_vals, geo, lay, pts, vat):
    """Value for light of the position after the last placement under ``setup=offer``.

    No legal point: loss in 0. One: light rotates there at once. Several: light offers
    two, dark picks the one worse for light, light rotates there (one ply each).
    ``pts``, ``vat``: scratch arrays of ``npoints`` (int64, uint16).
    """
    n = 0
    for z in range(geo.npoints):
        if is_legal(x, o, z, geo):
            pts[n] = z
            vat[n] = rotate_value(x, o, z, rot_vals, geo, lay)
            n += 1
    if n == 0:
        return RESOLVED
    if n == 1:
        return vat[0]
    best = np.uint16(0)
    best_m = -1
    for i in range(n):
        for j in range(i + 1, n):
            a = after(vat[i])  # dark's view of "at P"
            b = after(vat[j])
            pick = a if merit(a) >= merit(b) else b
            v = after(pick)
            if merit(v) > best_m:
                best_m = merit(v)
                best = v
    return best


@njit(cache=True, nogil=True, _nrt=False)
def place_range(
    vals, lo, hi, K, reading, geo_c, lay_c, keep, back, full, centre, traps, rot_vals, geo, lay, pts, vat
):
    """Values of placement-layer positions ``lo..hi`` (their children are already known).

    The top layer (all balls placed, light to move) exists only for ``offer`` and is
    valued by :func:`offer_value`; below it the side to place takes the best placement.
    """
    for gi in range(lo, hi):
        mc, pc, s = unrank(gi, geo_c, lay_c)
        m = stretch(mc, back)
        p = stretch(pc, back)
        if m & traps[1 - s] or p & traps[s]:
            vals[gi] = INVALID
            continue
        a = int(popcount(m))
        b = int(popcount(p))
        if s == 0 and a == K and b == K:
            vals[gi] = offer_value(m, p, rot_vals, geo, lay, pts, vat)
            continue
        free = full & ~(m | p) & ~centre & ~traps[1 - s]
        best = np.uint16(0)
        best_m = -1
        while free:
            q = free & (~free + ONE)
            free ^= q
            m2 = m | q
            if s == 1 and a + 1 == K:
                if reading == LAST:
                    # dark placed the last ball and rotates first: same mover, one ply more
                    child = rot_vals[index_of(m2, p, 1, geo, lay)]
                    if child & RESOLVED:
                        v = (child & (RESOLVED | WINBIT)) | np.uint16((child & DMASK) + 1)
                    else:
                        v = np.uint16(0)
                else:
                    v = after(vals[index_of(squeeze(p, keep), squeeze(m2, keep), 0, geo_c, lay_c)])
            else:
                v = after(vals[index_of(squeeze(p, keep), squeeze(m2, keep), 1 - s, geo_c, lay_c)])
            if merit(v) > best_m:
                best_m = merit(v)
                best = v
        vals[gi] = best
