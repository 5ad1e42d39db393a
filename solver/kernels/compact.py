"""Kernels of the compact exported format (:mod:`solver.db.compact`): the values the rules
give without a stored value, and the per-block symbol transforms.

*Rule values.* Some positions need no stored value: a cell that is no position
(``capture``: a ball on a trap field of the other colour), a finished game (win or loss
in 0) and a position whose mover completes the centre in one move (win in 1: a child is
lost in 0, and no win is faster). :func:`rule_code` answers those from the position
alone — one pass over the empty pivots — so the exporter stores filler there ("don't
care", chosen to lengthen runs) and no distance, and the reader puts the rules' value
back when it decodes a block (:func:`rule_codes`, :func:`block_codes`).

*Symbols.* WDL: 0 loss, 1 draw, 2 win (the order of :mod:`solver.kernels.code`'s
``LOSS_V < DRAW_V < WIN_V``), packed four to a byte (:func:`pack2`). Distances: for each
cell the rules leave open whose WDL symbol is a win or a loss, ``q = d >> 1`` and a flag
for the unusual parity (:func:`dist_encode`; :mod:`solver.db.compact_format` gives the
byte layout).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, ctz, pext, popcount
from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT
from solver.kernels.encode import next_subset, unrank_block
from solver.kernels.moves import ring_pattern, terminal
from solver.kernels.retro import child_indices

NO_RULE = -1  # rule_code's answer for a position the rules leave open
CARE = 0  # care mask: the stored symbol is the value
DONT_CARE = 1  # the rules give the value (the stored symbol is filler)


@njit(cache=True)
def win_needs(geo):
    """``need[z, k]``: the balls the mover must hold for turning the ring around ``z`` by
    ``k`` to complete the centre — the centre points off that ring, and the ring points
    that the turn carries onto the centre points on it; 0 where that turn never completes
    it (``z`` is a centre point, or a turn carries no ball onto a centre point of the ring).
    Column 0 (no turn) holds no need: ``need[j, 0]`` (``j < 8``) is where a mover whose
    balls on the three centre points are ``j`` (``pext(m, centre)``) can win: the pivots
    some of whose needs take no other centre point. :func:`rule_code` looks there first,
    so that most positions are answered at their first legal pivot."""
    n = geo.npoints
    need = np.zeros((n, 6), dtype=np.uint64)
    c = geo.centre
    for z in range(n):
        rm = geo.ringmask[z]
        if c & (ONE << np.uint64(z)):
            continue
        for k in range(1, 6):
            pre = ZERO
            for q in range(n):
                qb = ONE << np.uint64(q)
                if rm & qb and geo.rot[z, k, ring_pattern(qb, z, geo.ringmask)] & c:
                    pre |= qb
            onring = c & rm
            got = ZERO
            for q in range(n):
                qb = ONE << np.uint64(q)
                if pre & qb:
                    got |= geo.rot[z, k, ring_pattern(qb, z, geo.ringmask)]
            if got & onring == onring:
                need[z, k] = (c & ~rm) | pre
    for j in range(8):
        have = ZERO  # the centre points j names, in order (pext's packing)
        i = 0
        for q in range(n):
            qb = ONE << np.uint64(q)
            if c & qb:
                if (j >> i) & 1:
                    have |= qb
                i += 1
        for z in range(n):
            for k in range(1, 6):
                nd = need[z, k]
                if nd and nd & c & ~have == 0:
                    need[j, 0] |= ONE << np.uint64(z)
    return need


@njit(cache=True, nogil=True, _nrt=False)
def rule_code(m, p, s, geo, need):
    """The uint16 code of ``(m, p, s)`` when the rules alone give it, else ``NO_RULE``.

    ``INVALID`` for a ball on a trap field of the other colour; win/loss in 0 for a
    finished game (:func:`~solver.kernels.moves.terminal`); win in 1 when a legal move
    completes the mover's centre (``need``: :func:`win_needs`). One pass over the empty
    pivots answers both of the last two."""
    if m & geo.traps[1 - s] or p & geo.traps[s]:
        return np.int64(INVALID)
    c = geo.centre
    if m & c == c:
        return np.int64(RESOLVED | WINBIT)
    if p & c == c:
        return np.int64(RESOLVED)
    # a ball turned onto the mover's trap leaves the board; elsewhere only the pivots whose
    # needs take no centre point the mover lacks can complete it
    wins = ZERO if c & geo.traps[1 - s] else need[pext(m, c), 0]
    legal = False
    free = geo.pivots & ~(m | p)
    while free:
        z = ctz(free)
        free &= free - ONE
        rm = geo.ringmask[z]
        if popcount(m & rm) <= popcount(p & rm):
            continue
        legal = True
        if wins >> np.uint64(z) & ONE:
            for k in range(1, 6):
                nd = need[z, k]
                if nd and m & nd == nd:
                    return np.int64(RESOLVED | WINBIT | 1)
        if not wins & free:
            return np.int64(NO_RULE)  # a legal move, and no pivot left can win
    return np.int64(NO_RULE) if legal else np.int64(RESOLVED)


@njit(cache=True, nogil=True, _nrt=False)
def rule_codes(lo, hi, geo, lay, need, out):
    """``out[i] = rule_code`` of global index ``lo + i`` for ``lo <= index < hi``
    (incremental unranking, as :func:`solver.kernels.verify.verify_range` walks)."""
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        out[gi - lo] = rule_code(m, p, s, geo, need)


@njit(cache=True, nogil=True, _nrt=False)
def rule_codes_known(lo, hi, codes, geo, lay, need, out):
    """:func:`rule_codes` for the exporter, which knows the cells' ``codes``: a rule code
    is the cell's own value, so only a cell holding one a rule can give (no position, a
    win or loss in 0, a win in 1) is looked at; the others get ``NO_RULE`` without the
    pass over their pivots. The same answers as :func:`rule_codes` where ``codes`` are
    the solver's values."""
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        c = codes[gi - lo]
        if c == INVALID or c == RESOLVED or c == RESOLVED | WINBIT or c == RESOLVED | WINBIT | 1:
            out[gi - lo] = _rule_code_wins_first(m, p, s, geo, need)
        else:
            out[gi - lo] = NO_RULE


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _rule_code_wins_first(m, p, s, geo, need):
    """:func:`rule_code` in another order: the pivots that can win, their needs before
    their legality (bit tests before popcounts), then any legal pivot. The same answer:
    a win in 1 where a legal pivot's turn completes the centre, else no rule if some
    pivot is legal, else a loss in 0. Faster where most cells looked at are won in 1
    by other moves (the exporter's candidates)."""
    if m & geo.traps[1 - s] or p & geo.traps[s]:
        return np.int64(INVALID)
    c = geo.centre
    if m & c == c:
        return np.int64(RESOLVED | WINBIT)
    if p & c == c:
        return np.int64(RESOLVED)
    free = geo.pivots & ~(m | p)
    wins = ZERO if c & geo.traps[1 - s] else need[pext(m, c), 0] & free
    while wins:
        z = ctz(wins)
        wins &= wins - ONE
        for k in range(1, 6):
            nd = need[z, k]
            if nd and m & nd == nd:
                rm = geo.ringmask[z]
                if popcount(m & rm) > popcount(p & rm):
                    return np.int64(RESOLVED | WINBIT | 1)
                break
    while free:
        z = ctz(free)
        free &= free - ONE
        rm = geo.ringmask[z]
        if popcount(m & rm) > popcount(p & rm):
            return np.int64(NO_RULE)
    return np.int64(RESOLVED)


@njit(cache=True, nogil=True, _nrt=False)
def wdl_symbols(codes, rules, fill, out):
    """WDL symbols of ``codes`` into ``out`` (uint8: 0 loss, 1 draw, 2 win); a cell the
    rules give (``rules[i] != NO_RULE``) gets a filler: with ``fill``, the symbol of the
    cell before (0 at the start), else its own value's symbol (an invalid cell: a draw).
    Returns the number of cells the rules give."""
    prev = np.uint8(1)
    n = 0
    for i in range(codes.shape[0]):
        c = codes[i]
        if rules[i] != NO_RULE:
            n += 1
            if fill:
                out[i] = prev
                continue
        if not c & RESOLVED:
            sym = np.uint8(1)
        elif c & WINBIT:
            sym = np.uint8(2)
        else:
            sym = np.uint8(0)
        out[i] = sym
        prev = sym
    return n


@njit(cache=True, nogil=True, _nrt=False)
def fill_runs(sym, rules):
    """Give each rule cell of ``sym`` the symbol that joins the longer neighbouring run:
    the symbol before it, or the next stored symbol after it when that run is longer.
    In place; returns nothing."""
    n = sym.shape[0]
    i = 0
    last = np.uint8(1)
    while i < n:
        if rules[i] == NO_RULE:
            last = sym[i]
            i += 1
            continue
        j = i
        while j < n and rules[j] != NO_RULE:
            j += 1
        nxt = sym[j] if j < n else last
        # the run before the gap ends in `last`; the one after starts with `nxt`: join both
        # when they agree, else the gap takes the symbol of the run after it (it starts there)
        val = last if last == nxt else nxt
        for k in range(i, j):
            sym[k] = val
        i = j


@njit(cache=True, nogil=True, _nrt=False)
def pack2(sym, out):
    """Four 2-bit symbols a byte, the first in the low bits; ``out`` holds ceil(n/4)."""
    n = sym.shape[0]
    for i in range(out.shape[0]):
        out[i] = 0
    for i in range(n):
        out[i >> 2] |= np.uint8(sym[i] & 3) << np.uint8(2 * (i & 3))


@njit(cache=True, nogil=True, _nrt=False)
def dist_encode(codes, rules, sym, qlo, qhi, par):
    """The distance streams of a block: for each cell the rules leave open whose WDL
    symbol ``sym`` is a win, then for each that is a loss (two runs of like values),
    ``q = d >> 1`` (low and high byte into ``qlo``, ``qhi``) and a parity flag ``par`` (1
    where ``d``'s parity is not the usual: odd for a win, even for a loss). Rule cells
    have no entry: the reader knows them. Returns the number of entries written."""
    n = 0
    for want in (2, 0):
        for i in range(codes.shape[0]):
            if sym[i] != want or rules[i] != NO_RULE:
                continue
            d = np.int64(codes[i] & DMASK)
            q = d >> 1
            qlo[n] = np.uint8(q & 0xFF)
            qhi[n] = np.uint8(q >> 8)
            par[n] = np.uint8((d & 1) ^ (1 if want == 2 else 0))
            n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def count_decided(packed, n, rules):
    """``(wins, losses)`` among the first ``n`` symbols of a packed WDL block, rule
    cells (``rules[i] != NO_RULE``) left out: the entries of its distance block."""
    w = 0
    lo = 0
    for i in range(n):
        if rules[i] != NO_RULE:
            continue
        s = (packed[i >> 2] >> np.uint8(2 * (i & 3))) & np.uint8(3)
        if s == 2:
            w += 1
        elif s == 0:
            lo += 1
    return w, lo


@njit(cache=True, nogil=True, _nrt=False)
def block_codes(packed, n, qlo, qhi, par, has_dist, nwins, rules, out):
    """The codes of a block's ``n`` cells into ``out``: a rule cell's from ``rules``
    (:func:`rule_codes`), the others' from the WDL symbols and, with ``has_dist``, the
    distance entries (``nwins``: the wins' entries, which come before the losses');
    without, wins and losses get distance 0. Returns False if a symbol is 3 (no symbol of
    the format) or the distance entries do not fit the symbols: the block is damaged."""
    kw = 0
    kl = nwins
    for i in range(n):
        s = (packed[i >> 2] >> np.uint8(2 * (i & 3))) & np.uint8(3)
        if s == 3:
            return False
        if rules[i] != NO_RULE:
            out[i] = np.uint16(rules[i])
            continue
        if s == 1:
            out[i] = 0
            continue
        d = 0
        if has_dist:
            k = kw if s == 2 else kl
            if k >= qlo.shape[0] or (s == 2 and k >= nwins):
                return False
            d = ((np.int64(qlo[k]) | (np.int64(qhi[k]) << 8)) << 1) | (np.int64(par[k]) ^ (1 if s == 2 else 0))
            if s == 2:
                kw += 1
            else:
                kl += 1
        out[i] = code_of(s, d)
    return not has_dist or (kw == nwins and kl == qlo.shape[0])


@njit(cache=True, nogil=True, _nrt=False)
def code_of(sym, d):
    """The uint16 code of WDL symbol ``sym`` and distance ``d``."""
    if sym == 2:
        return np.uint16(RESOLVED | WINBIT | np.uint16(d))
    if sym == 0:
        return np.uint16(RESOLVED | np.uint16(d))
    return np.uint16(0)


@njit(cache=True, nogil=True, _nrt=False)
def wdl_of_code(c):
    """0 loss, 1 draw, 2 win of a uint16 code; 3 for an invalid cell."""
    if c == INVALID:
        return np.uint8(3)
    if not c & RESOLVED:
        return np.uint8(1)
    return np.uint8(2) if c & WINBIT else np.uint8(0)


@njit(cache=True, nogil=True, _nrt=False)
def wdl_of_codes(codes, out):
    for i in range(codes.shape[0]):
        out[i] = wdl_of_code(codes[i])


@njit(cache=True, nogil=True, _nrt=False)
def wdl_tally(codes, out, counts):
    """:func:`wdl_of_codes`, adding the count of each symbol to ``counts`` (int64, 4)."""
    n0 = n1 = n2 = n3 = 0  # in registers: counts[w] += 1 would wait on its own store
    for i in range(codes.shape[0]):
        w = wdl_of_code(codes[i])
        out[i] = w
        n0 += w == 0
        n1 += w == 1
        n2 += w == 2
        n3 += w == 3
    counts[0] += n0
    counts[1] += n1
    counts[2] += n2
    counts[3] += n3


@njit(cache=True, nogil=True, _nrt=False)
def gather(pool, rows, cells, out):
    """``out[i] = pool[rows[i], cells[i]]``: a batch's answers from its decoded blocks."""
    for i in range(out.shape[0]):
        out[i] = pool[rows[i], cells[i]]


@njit(cache=True, nogil=True, _nrt=False)
def verify_wdl_range(wdl, lo, hi, geo, lay, buf):
    """First index in ``lo..hi`` whose WDL symbol (``wdl``: 0 loss, 1 draw, 2 win, 3 no
    position) does not follow from its children's, else -1: a win has a child lost for
    its mover, a loss has every child won, a draw neither. ``buf``: int64 scratch of
    ``6 * npoints``."""
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            want = 3
        else:
            t = terminal(m, p, geo)
            if t != ONGOING_V:
                want = 2 if t == WIN_V else 0
            else:
                n = child_indices(m, p, s, geo, lay, buf)
                want = 0
                for i in range(n):
                    c = wdl[buf[i]]
                    if c == 0:
                        want = 2
                        break
                    if c == 1:
                        want = 1
        if wdl[gi] != want:
            return gi
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def rule_symbols(rules, out):
    """``out[i]``: the WDL symbol of a rule cell's code (a cell that is no position: 1, as
    the exporter gives it), 1 for a cell the rules leave open (unused)."""
    for i in range(rules.shape[0]):
        r = rules[i]
        if r == NO_RULE or not r & RESOLVED:
            out[i] = 1
        else:
            out[i] = 2 if r & WINBIT else 0


@njit(cache=True, nogil=True, _nrt=False)
def unpack_symbols(packed, rules, out):
    """The symbols of a packed WDL block (:func:`pack2`) into ``out`` (one a cell), a rule
    cell's own (as :func:`rule_symbols` gives it) in place of its filler. False if a
    symbol is 3 (no symbol of the format: a damaged block)."""
    for i in range(out.shape[0]):
        s = (packed[i >> 2] >> np.uint8(2 * (i & 3))) & np.uint8(3)
        if s == 3:
            return False
        r = rules[i]
        if r != NO_RULE:
            s = np.uint8(1) if not r & RESOLVED else (np.uint8(2) if r & WINBIT else np.uint8(0))
        out[i] = s
    return True
