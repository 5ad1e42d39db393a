"""Ranking kernels: the dense, symmetry-reduced index of a tier.

A tier ``(s, a, b)`` holds the positions whose mover (colour ``s``) has ``a`` balls and
whose opponent has ``b``. Its index is built in two levels::

    mover set M  --colex rank-->  r  --orbit table-->  (orbit o, map g with g·M = rep[o])
    opponent P   --g-->  g·P  --rank among the points free of rep[o]-->  local l

    index = block_offset[o] + l          (trivial stabiliser: every l in 0..C(N-a, b))
    index = block_offset[o] + pos(l)     (rep[o] symmetric: l minimised over its
                                          stabiliser, pos = place in the sorted list of
                                          such canonical l)

Canonical form is therefore "smallest M image, then smallest P image among the maps
that give it" — a total order on the images, as GamesmanOne asks. Only mover sets with a
non-trivial stabiliser (rare) carry an explicit list, so the index stays within a few per
cent of raw / |G|.

The layout arrays (``Lay``, built by :class:`solver.index.Layout`) are flat: per-``a``
tables are slices given by start arrays. :func:`index_of` and :func:`unrank` are the
index of a single position and its inverse.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, ctz, popcount

MAXN = 64

Lay = namedtuple(
    "Lay",
    "binom orb_start orbit_of map_of rep_start reps stabs tier_base blk_start blk_off "
    "sym_start symidx symlist t_lo t_s t_a t_b swapbits",
)

# Hot kernels are compiled with ``_nrt=False``: they never allocate, and without it numba
# reference-counts every array of the layout tuples at each call (measured: 200 ns per
# index computation instead of 10 ns).


@njit(cache=True, _nrt=False)
def bsearch(arr, lo, hi, x):
    """First position in ``arr[lo:hi]`` (sorted) whose value is >= ``x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if arr[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def binomials() -> np.ndarray:
    """``C[n, k]`` for ``0 <= n, k <= 64`` as int64."""
    c = np.zeros((MAXN + 1, MAXN + 1), dtype=np.int64)
    for n in range(MAXN + 1):
        c[n, 0] = 1
        for k in range(1, n + 1):
            c[n, k] = c[n - 1, k - 1] + c[n - 1, k]
    return c


@njit(cache=True, _nrt=False)
def colex_rank(bits, binom):
    """Colex rank of a set among sets of its size: ``sum C(c_i, i+1)`` over its members."""
    r = 0
    i = 1
    while bits:
        c = ctz(bits)
        r += binom[c, i]
        i += 1
        bits &= bits - ONE
    return r


@njit(cache=True, _nrt=False)
def colex_unrank(r, k, n, binom):
    """The ``k``-subset of ``0..n-1`` with colex rank ``r``, as bits."""
    out = ZERO
    c = n - 1
    for i in range(k, 0, -1):
        while binom[c, i] > r:
            c -= 1
        r -= binom[c, i]
        out |= ONE << np.uint64(c)
        c -= 1
    return out


@njit(cache=True, _nrt=False)
def permute(bits, g, permbits):
    """Image of a point set under symmetry ``g``."""
    out = ZERO
    while bits:
        out |= permbits[g, ctz(bits)]
        bits &= bits - ONE
    return out


@njit(cache=True, _nrt=False)
def local_rank(p, rep, binom):
    """Colex rank of ``p`` counted over the points not in ``rep`` only."""
    r = 0
    i = 1
    while p:
        c = ctz(p)
        below = rep & ((ONE << c) - ONE)
        r += binom[c - popcount(below), i]
        i += 1
        p &= p - ONE
    return r


@njit(cache=True, _nrt=False)
def expand(local, rep, npoints):
    """Map a set over the free points of ``rep`` back onto the board."""
    out = ZERO
    free = ~rep
    if npoints < 64:
        free &= (ONE << np.uint64(npoints)) - ONE
    j = ZERO
    while free:  # the j-th free point takes bit j of local (no branch on the bits)
        q = ctz(free)
        free &= free - ONE
        out |= ((local >> j) & ONE) << q
        j += ONE
    return out


# ---------------------------------------------------------------------------- building


@njit(cache=True)
def build_orbits(a, npoints, permbits, binom):
    """For every ``a``-subset (by colex rank): its orbit id and a map to the orbit's rep.

    Returns ``(orbit_of, map_of, reps, stabs)``; reps are the smallest-rank images, orbit
    ids follow rep rank, ``stabs[o]`` is the stabiliser of ``reps[o]`` as a bit mask of
    group elements.
    """
    total = binom[npoints, a]
    ng = permbits.shape[0]
    rep_rank = np.empty(total, dtype=np.int64)
    map_of = np.empty(total, dtype=np.int8)
    for r in range(total):
        m = colex_unrank(r, a, npoints, binom)
        best = r
        bestg = 0
        for g in range(ng):
            rg = colex_rank(permute(m, g, permbits), binom)
            if rg < best:
                best = rg
                bestg = g
        rep_rank[r] = best
        map_of[r] = bestg
    is_rep = rep_rank == np.arange(total)
    norb = int(is_rep.sum())
    orbit_id = np.full(total, -1, dtype=np.int32)
    reps = np.empty(norb, dtype=np.uint64)
    stabs = np.zeros(norb, dtype=np.int64)
    o = 0
    for r in range(total):
        if is_rep[r]:
            orbit_id[r] = o
            m = colex_unrank(r, a, npoints, binom)
            reps[o] = m
            for g in range(ng):
                if permute(m, g, permbits) == m:
                    stabs[o] |= 1 << g
            o += 1
    orbit_of = np.empty(total, dtype=np.int32)
    for r in range(total):
        orbit_of[r] = orbit_id[rep_rank[r]]
    return orbit_of, map_of, reps, stabs


@njit(cache=True, _nrt=False)
def canonical_local(p, rep, stab, permbits, binom):
    """Smallest local rank of ``p`` over the stabiliser of ``rep`` (``p`` already mapped)."""
    best = local_rank(p, rep, binom)
    g = 1
    s = stab >> 1
    while s:
        if s & 1:
            lr = local_rank(permute(p, g, permbits), rep, binom)
            if lr < best:
                best = lr
        s >>= 1
        g += 1
    return best


@njit(cache=True)
def symmetric_list(rep, stab, b, npoints, permbits, binom):
    """Sorted canonical local ranks of opponent sets next to a symmetric ``rep``."""
    free = npoints - int(popcount(rep))
    total = binom[free, b]
    keep = np.empty(total, dtype=np.int64)
    n = 0
    for l in range(total):
        p = expand(colex_unrank(l, b, free, binom), rep, npoints)
        if canonical_local(p, rep, stab, permbits, binom) == l:
            keep[n] = l
            n += 1
    return keep[:n].copy()


# ---------------------------------------------------------------------------- positions


@njit(cache=True, _nrt=False)
def fold(m, p, s, geo, lay):
    """Fold a side-``o`` position onto side ``x`` where only one side is stored."""
    if geo.sides == 1 and s == 1:
        if not geo.swap_identity:
            m2 = np.uint64(0)
            p2 = np.uint64(0)
            x = m
            while x:
                lo = x & (~x + ONE)
                m2 |= lay.swapbits[int(popcount(lo - ONE))]
                x ^= lo
            x = p
            while x:
                lo = x & (~x + ONE)
                p2 |= lay.swapbits[int(popcount(lo - ONE))]
                x ^= lo
            return m2, p2, 0
        return m, p, 0
    return m, p, s


@njit(cache=True, _nrt=False, inline="always")
def mover_block(m, b, s, geo, lay):
    """The part of an index fixed by the (folded) mover set ``m``, the opponent's ball
    count ``b`` and the side ``s``: ``(g, rep, base, ss, size, ro)`` — the map ``g`` onto
    the orbit's representative ``rep`` (row ``ro``), the global index of the block's
    first cell, the block's list start ``ss`` (-1: a plain block) and its size. The
    counters pass keeps it while a position's children share their mover set."""
    a = int(popcount(m))
    i = lay.orb_start[a] + colex_rank(m, lay.binom)
    o = lay.orbit_of[i]
    g = lay.map_of[i]
    ro = lay.rep_start[a] + o
    bs = lay.blk_start[a, b] + o
    start = lay.blk_off[bs]
    ss = lay.symidx[lay.sym_start[a, b] + o]
    return g, lay.reps[ro], lay.tier_base[s, a, b] + start, ss, lay.blk_off[bs + 1] - start, ro


@njit(cache=True, _nrt=False, inline="always")
def block_offset(p, g, rep, ss, size, ro, geo, lay):
    """The place of the (folded) opponent set ``p`` in the block of :func:`mover_block`."""
    pg = permute(p, g, geo.permbits)
    if ss < 0:
        return local_rank(pg, rep, lay.binom)
    l = canonical_local(pg, rep, lay.stabs[ro], geo.permbits, lay.binom)
    return bsearch(lay.symlist, ss, ss + size, l) - ss


@njit(cache=True, _nrt=False, inline="always")
def stab_order(pg, stab, permbits):
    """Order of the stabiliser of a position ``(rep, pg)``: the maps of ``rep``'s
    stabiliser (the bit mask ``stab``, identity = bit 0) that also fix ``pg``."""
    n = 1
    g = 1
    rest = stab >> 1
    while rest:
        if rest & 1 and permute(pg, g, permbits) == pg:
            n += 1
        rest >>= 1
        g += 1
    return n


@njit(cache=True, _nrt=False)
def index_stab(m, p, s, geo, lay):
    """:func:`index_of`, and the order of the position's stabiliser in the plain group
    (1 unless the mover set is symmetric: rare)."""
    m, p, s = fold(m, p, s, geo, lay)
    g, rep, base, ss, size, ro = mover_block(m, int(popcount(p)), s, geo, lay)
    pg = permute(p, g, geo.permbits)
    if ss < 0:
        return base + local_rank(pg, rep, lay.binom), 1
    stab = lay.stabs[ro]
    l = canonical_local(pg, rep, stab, geo.permbits, lay.binom)
    return base + bsearch(lay.symlist, ss, ss + size, l) - ss, stab_order(pg, stab, geo.permbits)


@njit(cache=True, _nrt=False)
def stab_of_canonical(m, p, s, geo, lay):
    """Order of the plain stabiliser of a canonical position (as :func:`unrank` gives it)."""
    _, _, _, ss, _, ro = mover_block(m, int(popcount(p)), s, geo, lay)
    if ss < 0:
        return 1
    return stab_order(p, lay.stabs[ro], geo.permbits)


@njit(cache=True, _nrt=False)
def index_of(m, p, s, geo, lay):
    """Global canonical index of ``(mover m, opponent p, side s)``."""
    m, p, s = fold(m, p, s, geo, lay)
    g, rep, base, ss, size, ro = mover_block(m, int(popcount(p)), s, geo, lay)
    return base + block_offset(p, g, rep, ss, size, ro, geo, lay)


@njit(cache=True, _nrt=False)
def next_subset(x, mask):
    """The set after ``x`` (non-empty, within ``mask``) in colex order over the points of
    ``mask`` with as many members: the colex successor, as :func:`expand` keeps the order.
    The carry of ``x + lowest`` runs through the points outside ``mask`` (filled with ones)
    and through ``x``'s lowest run; the run, less one, then restarts at ``mask``'s lowest
    points. ``x`` must not be the last such set."""
    low = x & (~x + ONE)
    r = ((x | ~mask) + low) & mask
    k = popcount(x) - popcount(r)  # the run's length less one
    f = mask
    while k:
        b = f & (~f + ONE)
        r |= b
        f ^= b
        k -= ONE
    return r


@njit(cache=True, _nrt=False)
def unrank_block(gidx, geo, lay):
    """:func:`unrank`, and where the next indices can be had by :func:`next_subset`: the
    end of the block of ``gidx`` (its mover set's orbit) and the points free of the mover,
    ``end = gidx + 1`` where the block is a list (a symmetric mover set)."""
    t = bsearch(lay.t_lo, 0, len(lay.t_lo), gidx + 1) - 1
    s = lay.t_s[t]
    a = lay.t_a[t]
    b = lay.t_b[t]
    idx = gidx - lay.t_lo[t]
    norb = lay.rep_start[a + 1] - lay.rep_start[a]
    bs = lay.blk_start[a, b]
    o = bsearch(lay.blk_off, bs, bs + norb + 1, idx + 1) - 1 - bs
    l = idx - lay.blk_off[bs + o]
    ss = lay.symidx[lay.sym_start[a, b] + o]
    if ss >= 0:
        end = gidx + 1
        l = lay.symlist[ss + l]
    else:
        end = gidx - l + lay.blk_off[bs + o + 1] - lay.blk_off[bs + o]
    rep = lay.reps[lay.rep_start[a] + o]
    p = expand(colex_unrank(l, b, geo.npoints - a, lay.binom), rep, geo.npoints)
    free = ~rep
    if geo.npoints < 64:
        free &= (ONE << np.uint64(geo.npoints)) - ONE
    return rep, p, s, end, free


@njit(cache=True, _nrt=False)
def unrank(gidx, geo, lay):
    """``(mover, opponent, side)`` of the canonical position at a global index."""
    t = bsearch(lay.t_lo, 0, len(lay.t_lo), gidx + 1) - 1
    s = lay.t_s[t]
    a = lay.t_a[t]
    b = lay.t_b[t]
    idx = gidx - lay.t_lo[t]
    norb = lay.rep_start[a + 1] - lay.rep_start[a]
    bs = lay.blk_start[a, b]
    o = bsearch(lay.blk_off, bs, bs + norb + 1, idx + 1) - 1 - bs
    l = idx - lay.blk_off[bs + o]
    ss = lay.symidx[lay.sym_start[a, b] + o]
    if ss >= 0:
        l = lay.symlist[ss + l]
    rep = lay.reps[lay.rep_start[a] + o]
    p = expand(colex_unrank(l, b, geo.npoints - a, lay.binom), rep, geo.npoints)
    return rep, p, s
