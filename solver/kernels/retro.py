"""Retrograde-analysis kernels: one uint16 per canonical position, updated in place.

Cell encoding (the value code of :mod:`solver.kernels.code`) while a group of tiers is
being solved (RESOLVED bit clear = working state)::

    0x0000 | n          unresolved; n = K x (moves into the group not yet known to lead
                        to a win for the child's mover), +1 if some move leads to a draw
                        in a lower tier; K = the order of the plain symmetry group
    0x8000 | d          loss in d plies (final)
    0xC000 | d          win in d plies (a win found through a lower tier may still shrink
                        until ply d is reached; one found in-group is final)

    0x4000              not a position of the game: a ball on a trap field of the other
                        colour (``capture``); such cells are indexed but never solved

After the group is finished every cell still unresolved becomes 0x0000: a draw.

The counting method: ``init_range`` gives every position its counter (or its value if
finished or decided by lower tiers); then ``level_range(L)`` takes every position decided
at exactly L plies — found by a scan, or, late in a group, from the list the ply before
made of the positions it decided — and updates its in-group parents — a loss makes each parent a win in
L+1; a win takes a weight off each parent's counter, and the counter reaching zero makes
it a loss. Parents may belong to another worker's range, so updates are atomic
compare-and-swap loops: the outcome does not depend on the order in which workers run.

Why moves, weighted, and not distinct children: counting a position's distinct canonical
children means ranking every child in the counters pass (most of its time). Counting its
moves needs no ranking — only whether a move keeps the material. The propagation must then
take off, for a decided child C and a canonical parent P, the number N(P, C) of P's moves
into C's orbit, while what it sees are the unmoves from C's representative: U(P, C) pairs
(Q, move) with Q in P's orbit. Counting the pairs (g, move) of the group G both ways,
``|Stab P| * U = |Stab C| * N`` — so each unmove takes ``K * |Stab P| / |Stab C|`` off a
counter scaled by K (an integer: |Stab C| divides K). Stabilisers are trivial but for
symmetric mover sets. The counter stays below 0x4000: K <= 12 and a position has at most
5 x 64 + 1 moves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO, cas_u16, ctz, popcount, prefetch
from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT, loss_code, win_code
from solver.kernels.encode import (
    block_offset, fold, index_of, index_stab, mover_block, next_subset, stab_of_canonical, unrank, unrank_block,
)
from solver.kernels.moves import apply_move, is_legal, legal_pivots, parents, ring_pattern, terminal

NO_WIN = 1 << 30


@njit(cache=True, _nrt=False)
def parent_weights(gi, geo, lay, pm, pp, buf, wts):
    """Every unmove of the position at ``gi``: its parent's index into ``buf`` and the
    weight it takes off that parent's counter if the position is a win for its mover,
    ``K * |Stab parent| / |Stab position|``, into ``wts`` (see the module's note); their
    count. A parent reached by several unmoves is listed as often. ``pm``, ``pp``: uint64
    scratch of ``6 * npoints``."""
    m, p, s = unrank(gi, geo, lay)
    k_sym = geo.permbits.shape[0]
    stab = stab_of_canonical(m, p, s, geo, lay)
    npar = parents(m, p, s, geo, pm, pp)
    for i in range(npar):
        q, sq = index_stab(pm[i], pp[i], 1 - s, geo, lay)
        buf[i] = q
        wts[i] = k_sym * sq // stab
    return npar


@njit(cache=True, _nrt=False)
def child_indices(m, p, s, geo, lay, buf):
    """The canonical indices of a live position's children into ``buf`` (duplicates kept
    but for the null turn, which gives the same child at every point); their count.

    The children's mover set is the position's opponent set turned on one ring: most
    turns leave it alone, so its block is kept while it lasts."""
    n = 0
    null_done = False
    own_traps = geo.traps[s]
    their_traps = geo.traps[1 - s]
    key_m, key_b = ~ZERO, -1  # the child mover set whose block is at hand: none yet
    g, rep, base, ss, size, ro = lay.map_of[0], ZERO, np.int64(0), np.int64(-1), np.int64(0), np.int64(0)
    legal = legal_pivots(m, p, geo)
    while legal:  # in increasing order
        z = ctz(legal)
        legal &= legal - ONE
        keep = ~geo.ringmask[z]
        pat_m = ring_pattern(m, z, geo.ringmask)
        pat_p = ring_pattern(p, z, geo.ringmask)
        for k in range(6):
            if k == 0:
                if null_done:
                    continue
                null_done = True
            m2 = ((m & keep) | geo.rot[z, k, pat_m]) & ~their_traps
            p2 = ((p & keep) | geo.rot[z, k, pat_p]) & ~own_traps
            cm, cp, cs = fold(p2, m2, 1 - s, geo, lay)
            b = int(popcount(cp))
            if cm != key_m or b != key_b:
                key_m, key_b = cm, b
                g, rep, base, ss, size, ro = mover_block(cm, b, cs, geo, lay)
            buf[n] = base + block_offset(cp, g, rep, ss, size, ro, geo, lay)
            n += 1
    return n


@njit(cache=True, _nrt=False)
def in_group_moves(m, p, s, geo, lay, buf):
    """``(in-group moves, lower-tier children)`` of a live position: its moves that keep
    every ball (the null rotation once), counted, and the index of the child of each
    other move (a capture: a lower tier) into ``buf``."""
    n = 0
    nl = 0
    balls = popcount(m) + popcount(p)
    null_done = False
    own_traps = geo.traps[s]
    their_traps = geo.traps[1 - s]
    legal = legal_pivots(m, p, geo)
    while legal:
        z = ctz(legal)
        legal &= legal - ONE
        keep = ~geo.ringmask[z]
        pat_m = ring_pattern(m, z, geo.ringmask)
        pat_p = ring_pattern(p, z, geo.ringmask)
        for k in range(6):
            if k == 0:
                if null_done:
                    continue
                null_done = True
            m2 = ((m & keep) | geo.rot[z, k, pat_m]) & ~their_traps
            p2 = ((p & keep) | geo.rot[z, k, pat_p]) & ~own_traps
            if popcount(m2) + popcount(p2) == balls:
                n += 1
            else:
                buf[nl] = index_of(p2, m2, 1 - s, geo, lay)
                nl += 1
    return n, nl


@njit(cache=True, _nrt=False)
def fold_lower(v, best_win, max_loss, draw_below):
    """The fastest win, slowest loss and any draw so far, with one more lower-tier child
    of value ``v`` (a uint16 code)."""
    if v & RESOLVED:
        d = int(v & DMASK) + 1
        if v & WINBIT:
            if d > max_loss:
                max_loss = d
        elif d < best_win:
            best_win = d
    else:
        draw_below = 1
    return best_win, max_loss, draw_below


@njit(cache=True, _nrt=False)
def scan_moves(m, p, s, vals, geo, lay, buf):
    """Moves of a live position: how many stay in the group (same material); a summary of
    the rest, whose children (lower tiers, already solved) are ranked and looked up.

    Returns ``(moves_in_group, best_win, max_loss, draw_below)`` where ``best_win`` is the
    fastest win through a lower-tier child lost for its mover and ``max_loss`` the
    slowest loss among lower-tier children won for theirs. The null turn counts once
    (it gives the same child at every point), as :func:`parents` lists it once.

    The loop of :func:`in_group_moves`, with each lower-tier child's cell prefetched as it
    is ranked: calling that and prefetching after took the counters pass from 405–416 to
    460–482 ns a position (``scripts/bench_counters.py --board hex3 --balls 5``).
    """
    n = 0
    nl = 0
    balls = popcount(m) + popcount(p)
    null_done = False
    own_traps = geo.traps[s]
    their_traps = geo.traps[1 - s]
    legal = legal_pivots(m, p, geo)
    while legal:
        z = ctz(legal)
        legal &= legal - ONE
        keep = ~geo.ringmask[z]
        pat_m = ring_pattern(m, z, geo.ringmask)
        pat_p = ring_pattern(p, z, geo.ringmask)
        for k in range(6):
            if k == 0:
                if null_done:
                    continue
                null_done = True
            m2 = ((m & keep) | geo.rot[z, k, pat_m]) & ~their_traps
            p2 = ((p & keep) | geo.rot[z, k, pat_p]) & ~own_traps
            if popcount(m2) + popcount(p2) == balls:
                n += 1
            else:
                buf[nl] = index_of(p2, m2, 1 - s, geo, lay)
                prefetch(vals, buf[nl])
                nl += 1
    best_win = NO_WIN
    max_loss = 0
    draw_below = 0
    for i in range(nl):
        best_win, max_loss, draw_below = fold_lower(vals[buf[i]], best_win, max_loss, draw_below)
    return n, best_win, max_loss, draw_below


@njit(cache=True, nogil=True, _nrt=False)
def init_range(vals, lo, hi, glo, ghi, geo, lay, buf):
    """Counters and immediate values for global indices ``lo..hi`` of group ``glo..ghi``.

    ``buf``: int64 scratch of ``6 * npoints``. Returns the largest distance written
    (-1 if none).
    """
    top = -1
    k_sym = geo.permbits.shape[0]
    end = lo  # the mover set's block ends here: unrank again
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)  # incremental: the next opponent set of the block
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            vals[gi] = INVALID
            continue
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            vals[gi] = (RESOLVED | WINBIT) if t == WIN_V else RESOLVED
            if top < 0:
                top = 0
            continue
        n, best_win, max_loss, draw_below = scan_moves(m, p, s, vals, geo, lay, buf)
        if best_win != NO_WIN:
            vals[gi] = win_code(best_win)
            top = max(top, best_win)
        elif n + draw_below == 0:
            vals[gi] = loss_code(max_loss)
            top = max(top, max_loss)
        else:
            vals[gi] = np.uint16(k_sym * n + draw_below)
    return top


@njit(cache=True, _nrt=False)
def _loss_plies(gi, level, vals, geo, lay):
    """Distance of a position all of whose children are wins, the last in-group at ``level``:
    ``level + 1`` or the slowest loss through a lower-tier child (only those are ranked)."""
    m, p, s = unrank(gi, geo, lay)
    max_loss = level + 1
    balls = popcount(m) + popcount(p)
    for z in range(geo.npoints):
        if not is_legal(m, p, z, geo):
            continue
        for k in range(6):
            m2, p2 = apply_move(m, p, s, z, k, geo)
            if popcount(m2) + popcount(p2) == balls:
                continue  # in the group
            v = vals[index_of(p2, m2, 1 - s, geo, lay)]
            if v & RESOLVED and v & WINBIT:
                max_loss = max(max_loss, int(v & DMASK) + 1)
    return max_loss


@njit(cache=True, _nrt=False, inline="always")
def _note_ahead(ahead, q):
    """List ``q`` as decided at the next ply: ``ahead[0]`` counts, ``ahead[1:]`` holds the
    indices; a count past the buffer says the list overflowed (the next ply scans)."""
    k = ahead[0] + 1
    ahead[0] = k
    if k < ahead.shape[0]:
        ahead[k] = q


@njit(cache=True, _nrt=False)
def _update_parents(vals, par, wts, n, loss, level, glo, geo, lay, ahead, far):
    """Tell the parents ``par[:n]`` that a child was decided at ``level``: a loss
    (``loss``) makes each a win in ``level + 1``, a win takes ``wts[i]`` off each
    counter (reaching zero makes a loss). Compare-and-swap: parents may be in another
    worker's range. Returns the largest distance written or -1.

    Every parent decided here is noted for the plies to come: one decided at ``level +
    1`` in ``ahead`` (:func:`_note_ahead`), one further out (a loss through a lower tier)
    as ``far[d] = 1``. A parent is decided once (the compare-and-swap that decides it
    succeeds once), so the list holds each position at most once."""
    top = -1
    win_next = win_code(level + 1)
    for i in range(n):
        q = par[i]
        if loss:
            while True:
                old = vals[q]
                if old & RESOLVED and (not old & WINBIT or (old & DMASK) <= level + 1):
                    break
                if cas_u16(vals, q, old, win_next) == old:
                    top = max(top, level + 1)
                    _note_ahead(ahead, q)
                    break
        else:
            w = np.uint16(wts[i])
            while True:
                old = vals[q]
                if old & RESOLVED:
                    break
                if old == w:
                    # the first group (glo == 0) has no lower tiers to look into
                    d = level + 1 if glo == 0 else _loss_plies(q, level, vals, geo, lay)
                    new = loss_code(d)
                else:
                    d = -1
                    new = old - w
                if cas_u16(vals, q, old, new) == old:
                    top = max(top, d)
                    if d == level + 1:
                        _note_ahead(ahead, q)
                    elif d > level + 1:
                        far[d] = 1
                    break
    return top


LANES_ONE = np.uint64(0x0001000100010001)
LANES_TOP = np.uint64(0x8000800080008000)


@njit(cache=True, _nrt=False, inline="always")
def _lane_equal(w, pattern):
    """Non-zero when one of the four 16-bit lanes of ``w`` equals the lane of ``pattern``
    (the has-zero-lane test on ``w ^ pattern``: exact about whether one does)."""
    x = w ^ pattern
    return (x - LANES_ONE) & ~x & LANES_TOP


@njit(cache=True, _nrt=False)
def next_at(vals, words, gi, hi, a, b):
    """The first index in ``gi..hi`` whose cell holds ``a`` or ``b``; ``hi`` if none.

    ``words``: the same cells as uint64, four a word (``vals[:len // 4 * 4]`` viewed). A
    ply's scan reads most cells only to pass them by; four at a time, a word none of whose
    lanes holds ``a`` or ``b`` is passed whole (hex(3) 4v4: the scan is 15 % of a ``-j 2``
    solve — 77 plies over 26 M cells)."""
    while gi < hi and gi & 3:
        if vals[gi] == a or vals[gi] == b:
            return gi
        gi += 1
    pa = np.uint64(a) * LANES_ONE
    pb = np.uint64(b) * LANES_ONE
    end = min(hi, words.shape[0] * 4)
    while gi + 4 <= end:
        w = words[gi >> 2]
        if _lane_equal(w, pa) | _lane_equal(w, pb):
            break
        gi += 4
    while gi < hi:
        if vals[gi] == a or vals[gi] == b:
            return gi
        gi += 1
    return hi


def as_words(vals: np.ndarray) -> np.ndarray:
    """The cells of ``vals`` as uint64 words of four, for :func:`next_at`."""
    return vals[: len(vals) // 4 * 4].view(np.uint64)


@njit(cache=True, nogil=True, _nrt=False)
def level_range(vals, words, lo, hi, idx, glo, level, geo, lay, buf, buf2, wts, wts2, pm, pp, ahead, far):
    """Propagate every position of ``lo..hi`` decided at exactly ``level`` plies.

    ``words``: ``vals`` as uint64 (:func:`as_words`), for the scan. ``idx``: empty to scan
    the cells ``lo..hi``; else the positions ``idx[lo:hi]`` are taken instead of a scan
    (a list of every position decided at ``level``, made by the ply before: see
    ``ahead``). Scratch: ``buf``, ``buf2``, ``wts``, ``wts2`` int64 and ``pm``, ``pp``
    uint64, each ``6 * npoints``. ``ahead`` (int64, ``ahead[0] == 0``) and ``far`` (uint8,
    ``DMASK + 2`` zeros) receive the positions this ply decides (:func:`_update_parents`).
    Returns ``(largest distance written or -1, positions seen at this level)``.

    Software pipelined: the parents of one decided position are ranked and their cells
    prefetched, and only then are the parents of the one before updated — their cache
    misses were overlapped with that ranking. The updates of one ply commute (a loss
    child lowers a win to ``level + 1`` at most, a win child only counts down), so the
    order does not change the outcome, nor does taking a list instead of a scan.
    """
    top = -1
    seen = 0
    target_loss = loss_code(level)
    target_win = win_code(level)
    listed = idx.shape[0] > 0
    waiting = 0  # parents of the position before, in buf2, prefetched, not yet updated
    waiting_loss = False
    k = lo
    while True:
        if listed:
            if k >= hi:
                break
            gi = idx[k]
            k += 1
            if vals[gi] != target_loss and vals[gi] != target_win:
                continue  # not in this ply's list in a correct run; taken as a scan would
        else:
            # no cell takes either target during this ply (updates write level + 1 and up),
            # so other workers' writes cannot be missed or double-counted here
            gi = next_at(vals, words, k, hi, target_loss, target_win)
            if gi >= hi:
                break
            k = gi + 1
        v = vals[gi]
        seen += 1
        n = parent_weights(gi, geo, lay, pm, pp, buf, wts)
        for i in range(n):
            prefetch(vals, buf[i])
        top = max(top, _update_parents(vals, buf2, wts2, waiting, waiting_loss, level, glo, geo, lay, ahead, far))
        buf, buf2 = buf2, buf
        wts, wts2 = wts2, wts
        waiting = n
        waiting_loss = v == target_loss
    top = max(top, _update_parents(vals, buf2, wts2, waiting, waiting_loss, level, glo, geo, lay, ahead, far))
    return top, seen


@njit(cache=True, nogil=True, _nrt=False)
def finish_range(vals, lo, hi):
    """Unresolved cells become draws (0)."""
    for gi in range(lo, hi):
        if not vals[gi] & RESOLVED and vals[gi] != INVALID:
            vals[gi] = 0


@njit(cache=True)
def count_values(vals, lo, hi, maxd):
    """Histogram ``(wins[d], losses[d], draws, invalid)`` of a finished range."""
    wins = np.zeros(maxd + 1, dtype=np.int64)
    losses = np.zeros(maxd + 1, dtype=np.int64)
    draws = 0
    invalid = 0
    for gi in range(lo, hi):
        v = vals[gi]
        if v == INVALID:
            invalid += 1
        elif not v & RESOLVED:
            draws += 1
        elif v & WINBIT:
            wins[v & DMASK] += 1
        else:
            losses[v & DMASK] += 1
    return wins, losses, draws, invalid
