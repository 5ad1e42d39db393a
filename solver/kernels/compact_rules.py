"""The rule cells of a range of positions, a few bit operations a cell.

:func:`rule_codes_rows` gives :func:`solver.kernels.compact.rule_code` of every cell of a
range — the same answers as :func:`~solver.kernels.compact.rule_codes` — without a loop
over the pivots. In a tier's index the opponent's placements of one mover set follow
each other (a *row*), so what depends on the mover alone is worked out once a row:
whether it is on a trap or holds the centre, the pivots whose turn would complete its
centre (``need``), and its balls on each pivot's ring. A pivot ``z`` is a legal move
when it is empty and the mover has more balls on its ring than the opponent; the
opponent's balls on every ring at once are a sum of table entries, one for each byte of
its set (:func:`ring_tables`), packed five bits a pivot, and one subtraction from the
row's packed counts leaves a pivot's top bit set exactly where the move is legal. So a
cell costs the walk to its opponent set (:func:`~solver.kernels.encode.next_subset`),
a few loads and arithmetic, and no branch on the data but the answer.

Boards of more than :data:`MAX_PIVOTS` pivots or rings of more than six points do not
fit the packing: :func:`fits` says so, and the callers use ``rule_codes`` there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, ctz, pext, popcount
from solver.kernels.code import INVALID, RESOLVED, WINBIT
from solver.kernels.compact import NO_RULE
from solver.kernels.encode import next_subset, unrank_block

MAX_PIVOTS = 12  # 5-bit fields in a uint64
_W = 5


@njit(cache=True, _nrt=False)
def _fits(geo):
    if popcount(geo.pivots) > MAX_PIVOTS or popcount(geo.centre) > 3 or geo.npoints > 32:
        return False
    piv = geo.pivots
    while piv:
        z = ctz(piv)
        piv &= piv - ONE
        if popcount(geo.ringmask[z]) > 6:
            return False
    return True


def fits(geo) -> bool:
    """Whether :func:`rule_codes_rows` handles the board of ``geo``."""
    return bool(_fits(geo))


@njit(cache=True)
def ring_tables(geo):
    """``t[k, byte]``: for the opponent's points ``byte << 8k``, its balls on the ring of
    each pivot (the ``j``-th pivot, by point number, in bits ``5j ..``), plus 8 where a
    ball is on the pivot itself (an occupied pivot is no move)."""
    nk = (geo.npoints + 7) // 8
    t = np.zeros((nk, 256), dtype=np.uint64)
    for k in range(nk):
        for byte in range(256):
            acc = ZERO
            for bit in range(8):
                q = 8 * k + bit
                if (byte >> bit) & 1 and q < geo.npoints:
                    acc += _ring_vector(geo, q)
            t[k, byte] = acc
    return t


@njit(cache=True, inline="always")
def _ring_vector(geo, q):
    """An opponent ball on point ``q`` in the packed counts: one in the field of each
    pivot whose ring holds ``q``, 8 in the pivot's own."""
    qb = ONE << np.uint64(q)
    acc = ZERO
    piv = geo.pivots
    j = 0
    while piv:
        z = ctz(piv)
        piv &= piv - ONE
        if geo.ringmask[z] & qb:
            acc += ONE << np.uint64(_W * j)
        if z == q:
            acc += np.uint64(8) << np.uint64(_W * j)
        j += 1
    return acc


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _row(m, s, geo, need):
    """What a row's cells share: ``(mtrap, mcentre, mcb, winf)`` — the mover on a trap,
    holding the centre; ``mcb``: in each pivot's field ``15 + `` the mover's balls on its
    ring (``15``: a pivot the mover is on); ``winf``: the top bit of each field whose
    pivot's turn completes the mover's centre."""
    mtrap = (m & geo.traps[1 - s]) != ZERO
    c = geo.centre
    mcentre = m & c == c
    wins = ZERO if c & geo.traps[1 - s] else need[pext(m, c), 0] & ~m
    mcb = ZERO
    winf = ZERO
    piv = geo.pivots
    j = 0
    while piv:
        z = ctz(piv)
        piv &= piv - ONE
        sh = np.uint64(_W * j)
        mc = ZERO if m & (ONE << np.uint64(z)) else popcount(m & geo.ringmask[z])
        mcb |= (np.uint64(15) + mc) << sh
        if wins & (ONE << np.uint64(z)):
            for k in range(1, 6):
                nd = need[z, k]
                if nd and m & nd == nd:
                    winf |= np.uint64(16) << sh
                    break
        j += 1
    return mtrap, mcentre, mcb, winf


@njit(cache=True)
def point_vectors(geo):
    """``pv[q]``: an opponent ball on point ``q`` in the packed counts — one in the field of
    each pivot whose ring holds ``q``, 8 in the pivot's own, and one at bit 60 (the
    centre's count) where ``q`` is a centre point."""
    pv = np.zeros(geo.npoints, dtype=np.uint64)
    for q in range(geo.npoints):
        acc = _ring_vector(geo, q)
        if geo.centre & (ONE << np.uint64(q)):
            acc += ONE << np.uint64(60)
        pv[q] = acc
    return pv


ROW_MIN = 1024  # rows this long or more are walked over the opponent's set packed (tables a row)
ENUM = 1 << 16  # rows of at most this many cells read their packed sets from a list made once


@njit(cache=True, nogil=True, _nrt=False)
def _enumerated(en, n, b, lay):
    """Make ``en`` (int64, ``ENUM + 2``) list the ``b``-subsets of ``n`` points in colex
    order, as integers (its last two cells: the ``n`` and ``b`` it lists, kept between
    calls); False where there are more than ``ENUM``."""
    k = en.shape[0] - 2
    if en[k] == n and en[k + 1] == b:
        return True
    if b < 1 or n > 62 or lay.binom[n, b] > k:
        return False
    x = (np.int64(1) << b) - 1
    for j in range(lay.binom[n, b]):
        en[j] = x
        t = x | (x - 1)  # Gosper: the next integer with as many bits
        x = (t + 1) | (((~t & (t + 1)) - 1) >> (np.int64(ctz(np.uint64(x))) + 1))
    en[k] = n
    en[k + 1] = b
    return True


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _answer(legal, winf, centre3, mtrap, mcentre, ptrap):
    """The rule code from a cell's legal pivots and the rest, the answers' order (later
    overriding earlier) as arithmetic: a branch here would be mispredicted as often as
    the answers change."""
    r = np.int64(RESOLVED) + np.int64(legal != ZERO) * np.int64(NO_RULE - RESOLVED)
    r += np.int64((legal & winf) != ZERO) * (np.int64(RESOLVED | WINBIT | 1) - r)
    r += np.int64(centre3) * (np.int64(RESOLVED) - r)
    r += np.int64(mcentre) * (np.int64(RESOLVED | WINBIT) - r)
    r += np.int64(mtrap or ptrap) * (np.int64(INVALID) - r)
    return r


@njit(cache=True, nogil=True, _nrt=False)
def _listed(xs, rt, mcb, top, winf, ncen, out):
    """The rule codes of a run of a row's cells, their packed opponent sets ``xs``: a loop
    of its own, no cell depending on another (the compiler may run it on vectors)."""
    for j in range(xs.shape[0]):
        x = xs[j]
        cnt = rt[0, x & 255] + rt[1, (x >> 8) & 255] + rt[2, (x >> 16) & 255] + rt[3, (x >> 24) & 255]
        legal = (mcb - cnt) & top
        lost = (legal == ZERO) | ((cnt & (np.uint64(3) << np.uint64(60))) == ncen)
        won = (legal & winf) != ZERO
        out[j] = np.int32(RESOLVED) if lost else (np.int32(RESOLVED | WINBIT | 1) if won else np.int32(NO_RULE))


@njit(cache=True, nogil=True, _nrt=False)
def rule_codes_rows(lo, hi, geo, lay, need, tab, pv, rt, ptv, en, out):
    """``out[i]``: :func:`~solver.kernels.compact.rule_code` of global index ``lo + i``
    (``tab``: :func:`ring_tables`, ``pv``: :func:`point_vectors`; the board must
    :func:`fits`; ``rt``: uint64 scratch of ``(4, 256)``, ``ptv`` of 64; ``en``: int64
    scratch of ``ENUM + 2``, its last two cells -1 the first time).

    A long row (:data:`ROW_MIN` cells, the opponent on no trap it could take) is walked
    over the opponent's set packed onto the points free of the mover — a run of cells
    moves its lowest ball alone (the others' counts summed once from tables built for the
    row from ``pv``, a byte of the packed set each, the lowest ball's added), and the
    next run starts at the colex successor, the next integer with as many bits (Gosper's
    step: no loop); other rows step the set itself (:func:`~solver.kernels.encode.next_subset`)
    and sum ``tab``."""
    top = ZERO
    for j in range(popcount(geo.pivots)):
        top |= np.uint64(16) << np.uint64(_W * j)
    nk = tab.shape[0]
    c = geo.centre
    nc = popcount(c)
    m, s = ZERO, -1
    mtrap, mcentre, mcb, winf = False, False, ZERO, ZERO
    built = ZERO  # the free points rt was built for (ZERO: none)
    gi = lo
    while gi < hi:
        m2, p, s2, end, free = unrank_block(gi, geo, lay)
        if m2 != m or s2 != s:
            m, s = m2, s2
            mtrap, mcentre, mcb, winf = _row(m, s, geo, need)
        stop = min(end, hi)
        if end - gi >= ROW_MIN and geo.traps[s] & free == ZERO:
            if built != free:
                f = free
                n = 0
                while f:
                    ptv[n] = pv[ctz(f)]
                    f &= f - ONE
                    n += 1
                for k in range(4):
                    rt[k, 0] = ZERO
                    for byte in range(1, 256):
                        at = 8 * k + int(ctz(np.uint64(byte)))
                        rt[k, byte] = rt[k, byte & (byte - 1)] + (ptv[at] if at < n else ZERO)
                built = free
            nfree = np.int64(popcount(free))
            nb = np.int64(popcount(p))
            if mtrap or mcentre:  # the mover alone answers the row
                fixed = np.int64(INVALID) if mtrap else np.int64(RESOLVED | WINBIT)
                for g in range(gi, stop):
                    out[g - lo] = fixed
            elif _enumerated(en, nfree, nb, lay):
                # every row of the tier lists the same packed sets: read, not stepped
                j = gi - (end - lay.binom[nfree, nb])  # the first cell's place in its row
                _listed(en[j : j + stop - gi], rt, mcb, top, winf, np.uint64(nc) << np.uint64(60), out[gi - lo : stop - lo])
            else:
                x = np.int64(pext(p, free))
                ncen = np.uint64(nc) << np.uint64(60)
                g = gi
                while g < stop:
                    # colex order moves the lowest ball first: a run of cells shares the
                    # others (their counts summed once), the lowest on point k0, k0 + 1, ...
                    k0 = np.int64(ctz(np.uint64(x)))
                    rest = x & (x - 1)
                    up = np.int64(ctz(np.uint64(rest))) if rest else nfree
                    run = min(up - k0, stop - g)
                    others = rt[0, rest & 255] + rt[1, (rest >> 8) & 255] + rt[2, (rest >> 16) & 255] + rt[3, (rest >> 24) & 255]
                    for k in range(run):
                        cnt = others + ptv[k0 + k]
                        legal = (mcb - cnt) & top
                        lost = (legal == ZERO) | ((cnt & (np.uint64(3) << np.uint64(60))) == ncen)
                        won = (legal & winf) != ZERO
                        out[g - lo + k] = np.int64(RESOLVED) if lost else (np.int64(RESOLVED | WINBIT | 1) if won else np.int64(NO_RULE))
                    g += run
                    x = rest | (np.int64(1) << (k0 + run - 1))  # the run's last set
                    t = x | (x - 1)  # Gosper: the next integer with as many bits
                    x = (t + 1) | (((~t & (t + 1)) - 1) >> (np.int64(ctz(np.uint64(x))) + 1))
        else:
            for g in range(gi, stop):
                if g > gi:
                    p = next_subset(p, free)
                cnt = ZERO
                for k in range(nk):
                    cnt += tab[k, (p >> np.uint64(8 * k)) & np.uint64(255)]
                legal = (mcb - cnt) & top
                out[g - lo] = _answer(legal, winf, p & c == c, mtrap, mcentre, (p & geo.traps[s]) != ZERO)
        gi = stop
