"""The engine's search: principal-variation alpha-beta over the rotation phase, one depth a call.

:func:`search` is negamax with a principal-variation (null-window) search, a transposition
table, killer and history move ordering, mate-distance pruning and a threat extension,
written with an explicit stack (numba's cache and self-recursion do not mix). Positions
are ``(m, p, s)`` from the mover's view (:mod:`solver.kernels.moves`); scores are the
mover's, in hundredths of a logit (:mod:`solver.kernels.evaluate`), and a win in ``d``
plies from the root scores ``MATE - d`` (a loss ``-(MATE - d)``): so among winning moves
the search prefers the fastest and among losing ones the slowest — the duel rule.

At depth 0 a position is scored by the evaluation, unless the mover can fill the centre
at once (a win in 1), or the opponent could (then the node is searched one ply more,
at most ``MAX_EXT`` times along a path). A position seen earlier on the path or in the
game (``hist``) is a draw: repeating is how a game that never ends goes on. It scores
``-ctl[CONTEMPT]`` for the side to move at the root (and the opposite for the other
side), so that an engine which thinks itself ahead, or only level, does not settle for
a repetition.

A position a database of the same rules holds (``dbinfo``, ``dbvals``, ``lay``: as df-pn
takes them, :mod:`solver.kernels.leaves`) is not searched: its stored value is exact, and
a win or loss in ``d`` there scores as one in ``ply + d`` from the root.

The search stops as soon as ``ctl[STOP]`` is set (by another thread: the kernel releases
the GIL; it looks every 1024 nodes) or ``ctl[NODE_LIMIT]`` nodes are spent; an aborted call says so in
``ctl[ABORTED]`` and its scores mean nothing, except the root moves it finished
(``root_score``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz, popcount
from solver.kernels.code import DMASK, LOSS_V, RESOLVED, WIN_V, WINBIT
from solver.kernels.evaluate import EBUF, evaluate, threat_points
from solver.kernels.leaves import db_probe
from solver.kernels.moves import legal_pivots, ring_pattern, terminal
from solver.kernels.table import line_records

MATE = 30000
MATE_BOUND = MATE - 1000  # scores beyond this are wins or losses with a distance
INF = 32000
MAX_PLY = 128
MAX_CHILDREN = 6 * 64
MAX_EXT = 8

# ctl slots
STOP, NODE_LIMIT, NODES, ABORTED, SELDEPTH, CONTEMPT, DB_HITS, REDUCE, LMR_FROM = 0, 1, 2, 3, 4, 5, 6, 7, 8
CTL_SIZE = 9
# node stages: picking the next child; a child searched with a null window, with the full
# window, reduced (late-move reduction), the pass searched shallow (null move), and the
# null move still to be tried
PICK, NULL_WINDOW, FULL_WINDOW, REDUCED, NULL_MOVE, NULL_PENDING = 0, 1, 2, 3, 4, 5
NULL_MIN_DEPTH = 3  # the null move is tried this deep and deeper
LMR_MIN_DEPTH = 3  # late moves are reduced this deep and deeper
LMR_FIRST = 3  # the child slots before this one are never reduced (ctl[LMR_FROM] where set)
# transposition-table bound kinds
EXACT, LOWER, UPPER = 1, 2, 3
# set in an entry's flag when a search with reductions stored it: a full-width search takes
# its move but not its score (a reduced line may hide a faster win), so that the full-width
# search after a proof needs no cleared table
REDUCED_BIT = 4

Tables = namedtuple("Tables", "key move score depth flag")
Stack = namedtuple(
    "Stack",
    "m p hash alpha a0 beta depth best bestmv stage cur nch idx ext cm cp cmv cord pv pvlen",
)

_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


# An entry is one 16-byte record (the arrays of ``Tables`` are views of its fields), four
# to a cache line: a probe reads one line, not one a field.
_ENTRY = np.dtype([("key", "<u8"), ("score", "<i4"), ("move", "<i2"), ("depth", "i1"), ("flag", "i1")])


def new_tables(bits: int) -> Tables:
    """An empty transposition table of ``2**bits`` entries (16 bytes each)."""
    rec = line_records(1 << bits, _ENTRY)
    rec[["key", "score", "depth", "flag"]] = 0
    rec["move"] = -1
    return Tables(rec["key"], rec["move"], rec["score"], rec["depth"], rec["flag"])


def new_stack() -> Stack:
    """The search's per-ply working arrays."""
    d = MAX_PLY + 2
    return Stack(
        np.zeros(d, np.uint64), np.zeros(d, np.uint64), np.zeros(d, np.uint64),
        np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int32),
        np.zeros(d, np.int32), np.zeros(d, np.int32), np.zeros(d, np.int8), np.zeros(d, np.int32), np.zeros(d, np.int32),
        np.zeros(d, np.int32), np.zeros(d, np.int32),
        np.zeros((d, MAX_CHILDREN), np.uint64), np.zeros((d, MAX_CHILDREN), np.uint64),
        np.zeros((d, MAX_CHILDREN), np.int32), np.zeros((d, MAX_CHILDREN), np.int32),
        np.zeros((d, d), np.int32), np.zeros(d, np.int32),
    )


@njit(cache=True, _nrt=False, inline="always")
def _mix(x):
    x ^= x >> np.uint64(30)
    x *= _M1
    x ^= x >> np.uint64(27)
    x *= _M2
    x ^= x >> np.uint64(31)
    return x


@njit(cache=True, _nrt=False)
def position_hash(m, p, s):
    """A 64-bit key of ``(m, p, s)``; never 0."""
    h = _mix(m ^ _K1) ^ _mix(p ^ _K2) * _K1 ^ np.uint64(s + 1)
    return h if h != np.uint64(0) else _K1


@njit(cache=True, _nrt=False)
def gen_children(m, p, s, geo, out_m, out_p, out_mv):
    """The distinct children of ``(m, p, s)`` (next mover's view) with move codes ``z*6+k``:
    the pass (``k = 0``) once, at the first legal point; a turn that gives the same
    position as an earlier turn at that point, or as the pass, is left out."""
    legal = legal_pivots(m, p, geo)
    n = 0
    first = True
    while legal:
        z = ctz(legal)
        legal &= legal - ONE
        rm = geo.ringmask[z]
        pat_m = ring_pattern(m, z, geo.ringmask)
        pat_p = ring_pattern(p, z, geo.ringmask)
        m_out = m & ~rm
        p_out = p & ~rm
        start = n
        for k in range(6):
            if k == 0 and not first:
                continue
            m2 = (m_out | geo.rot[z, k, pat_m]) & ~geo.traps[1 - s]
            p2 = (p_out | geo.rot[z, k, pat_p]) & ~geo.traps[s]
            if k > 0 and m2 == m and p2 == p:
                continue  # the same as the pass
            dup = False
            for j in range(start, n):
                if out_m[j] == p2 and out_p[j] == m2:
                    dup = True
                    break
            if dup:
                continue
            out_m[n] = p2
            out_p[n] = m2
            out_mv[n] = np.int32(z * 6 + k)
            n += 1
        first = False
    return n


@njit(cache=True, _nrt=False)
def _tt_store(tt, h, mv, score, depth, flag, ply, reduced):
    i = np.int64(h & np.uint64(tt.key.shape[0] - 1))
    if tt.key[i] == h:
        if tt.depth[i] > depth and flag != EXACT and (reduced or (tt.flag[i] & REDUCED_BIT) == 0):
            return  # keep the deeper entry of the same position (a full-width one over a reduced one)
        if mv < 0:
            mv = tt.move[i]  # a cutoff without a move (the null move) keeps the move known
    if score > MATE_BOUND:
        score += ply  # stored as a distance from this node
    elif score < -MATE_BOUND:
        score -= ply
    tt.key[i] = h
    tt.move[i] = np.int16(mv)
    tt.score[i] = np.int32(score)
    tt.depth[i] = np.int8(min(depth, 127))
    tt.flag[i] = np.int8(flag | (REDUCED_BIT if reduced else 0))


@njit(cache=True, _nrt=False)
def _enter(st, ply, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s_root, out_ret, dbinfo, dbvals, lay):
    """Set up the node at ``ply`` (its position, window and depth already in ``st``).

    Returns 1 when the node is settled at once (its score in ``out_ret[0]``), 0 when its
    children are generated and waiting to be searched."""
    ctl[NODES] += 1
    if ply > ctl[SELDEPTH]:
        ctl[SELDEPTH] = ply
    m = st.m[ply]
    p = st.p[ply]
    s = (s_root + ply) & 1
    st.pvlen[ply] = 0
    t = terminal(m, p, geo)
    if t == WIN_V:
        out_ret[0] = MATE - ply
        return 1
    if t == LOSS_V:
        out_ret[0] = -(MATE - ply)
        return 1
    if ply > 0:
        code = db_probe(m, p, s, geo, dbinfo, dbvals, lay)
        if code >= 0:  # a database answers: the exact value, whatever the path
            ctl[DB_HITS] += 1
            d = np.int32(code & DMASK)
            if code & RESOLVED == 0:
                out_ret[0] = 0
            elif code & WINBIT:
                out_ret[0] = MATE - ply - d
            else:
                out_ret[0] = -(MATE - ply - d)
            return 1
    h = st.hash[ply]
    if ply > 0:
        # a repetition is a draw, worth -contempt to the side to move at the root
        draw = -ctl[CONTEMPT] if (ply & 1) == 0 else ctl[CONTEMPT]
        for j in range(ply - 1, -1, -1):
            if st.hash[j] == h:
                out_ret[0] = draw
                return 1
        for j in range(nhist):
            if hist[j] == h:
                out_ret[0] = draw
                return 1
    alpha = st.alpha[ply]
    beta = st.beta[ply]
    if alpha < -(MATE - ply):
        alpha = -(MATE - ply)
    if beta > MATE - ply - 1:
        beta = MATE - ply - 1
    if alpha >= beta:
        out_ret[0] = alpha
        return 1
    st.alpha[ply] = alpha
    st.a0[ply] = alpha
    st.beta[ply] = beta
    depth = st.depth[ply]
    ttmove = -1
    i = np.int64(h & np.uint64(tt.key.shape[0] - 1))
    if tt.key[i] == h:
        ttmove = np.int32(tt.move[i])
        if ply > 0 and tt.depth[i] >= depth:
            sc = np.int32(tt.score[i])
            if sc > MATE_BOUND:
                sc -= ply
            elif sc < -MATE_BOUND:
                sc += ply
            f = np.int64(tt.flag[i])
            if f & REDUCED_BIT:
                f = f - REDUCED_BIT if ctl[REDUCE] != 0 else 0
            if f == EXACT or (f == LOWER and sc >= beta) or (f == UPPER and sc <= alpha):
                out_ret[0] = sc
                return 1
    if depth <= 0:
        legal = legal_pivots(m, p, geo)
        if threat_points(m, p, legal, geo, zones) > 0:
            out_ret[0] = MATE - ply - 1
            return 1
        stand = evaluate(m, p, geo, zones, w, ebuf)
        if ebuf[7] > 0 and st.ext[ply] < MAX_EXT and ply < MAX_PLY - 2:
            st.depth[ply] = 1  # the opponent threatens to fill the centre: look one ply more
            st.ext[ply] += 1
            depth = 1
        else:
            out_ret[0] = stand
            return 1
    if ply >= MAX_PLY - 1:
        out_ret[0] = evaluate(m, p, geo, zones, w, ebuf)
        return 1
    n = gen_children(m, p, s, geo, st.cm[ply], st.cp[ply], st.cmv[ply])
    c = geo.centre
    k0 = killers[ply, 0]
    k1 = killers[ply, 1]
    for j in range(n):
        mv = st.cmv[ply, j]
        if mv == ttmove:
            o = 1 << 30
        elif st.cp[ply, j] & c == c:
            o = 1 << 29  # fills the mover's centre
        elif mv == k0:
            o = 1 << 28
        elif mv == k1:
            o = (1 << 28) - 1
        else:
            o = history[s, mv] + popcount(st.cp[ply, j] & c) * 64
        st.cord[ply, j] = o
    st.nch[ply] = n
    st.idx[ply] = 0
    st.best[ply] = -INF
    st.bestmv[ply] = -1
    st.stage[ply] = PICK
    # the null move: the pass (k = 0) is a legal move here, so the pass searched shallow is
    # a true lower bound, and no zugzwang can make it unsound; not twice in a row, not in
    # principal-variation nodes, not near a proven score, not when the opponent could fill
    # the centre after it
    if (ctl[REDUCE] != 0 and ply > 0 and depth >= NULL_MIN_DEPTH and beta - alpha == 1
            and st.stage[ply - 1] != NULL_MOVE and abs(beta) < MATE_BOUND):
        if evaluate(m, p, geo, zones, w, ebuf) >= beta and ebuf[7] == 0:
            st.stage[ply] = NULL_PENDING
    return 0


@njit(cache=True, nogil=True)
def search(m0, p0, s0, depth, alpha0, beta0, geo, zones, w, tt, st, hist, nhist, ctl, killers, history,
           root_full, root_score, dbinfo, dbvals, lay):
    """One iteration: the score of ``(m0, p0, s0)`` searched to ``depth`` within the
    window ``alpha0..beta0``; the principal variation in ``st.pv[0, :st.pvlen[0]]``.

    ``root_full``: search every root move with the full window, so that
    ``root_score[j]`` (by the root's child order ``st.cmv[0, j]``) is exact for each
    move and not a bound (for ranking all moves; slower). ``root_score[j]`` is ``-INF-1``
    for root moves not finished."""
    ebuf = np.zeros(EBUF, np.float64)
    ret = np.zeros(1, np.int32)
    st.m[0] = m0
    st.p[0] = p0
    st.hash[0] = position_hash(m0, p0, s0)
    st.alpha[0] = alpha0
    st.beta[0] = beta0
    st.depth[0] = depth
    st.ext[0] = 0
    ctl[ABORTED] = 0
    if _enter(st, 0, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s0, ret, dbinfo, dbvals, lay) == 1:
        return ret[0]
    for j in range(st.nch[0]):
        root_score[j] = -INF - 1
    ply = 0
    next_check = ctl[NODES]
    while True:
        stage = st.stage[ply]
        if stage == NULL_PENDING:
            # ---- the pass, searched with a null window at beta, R plies shallower
            c1 = ply + 1
            b = st.beta[ply]
            st.m[c1] = st.p[ply]
            st.p[c1] = st.m[ply]
            st.hash[c1] = position_hash(st.m[c1], st.p[c1], (s0 + c1) & 1)
            st.depth[c1] = st.depth[ply] - 3 - (1 if st.depth[ply] >= 7 else 0)
            st.ext[c1] = st.ext[ply]
            st.alpha[c1] = -b
            st.beta[c1] = -b + 1
            st.stage[ply] = NULL_MOVE
            st.cur[ply] = -1
            if _enter(st, c1, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s0, ret, dbinfo, dbvals, lay) == 0:
                ply = c1
                continue
            stage = NULL_MOVE
        if stage == NULL_MOVE:
            score = -ret[0]
            if score >= st.beta[ply]:
                _tt_store(tt, st.hash[ply], -1, score, st.depth[ply], LOWER, ply, ctl[REDUCE] != 0)
                ply -= 1
                ret[0] = score
                continue
            st.stage[ply] = PICK
            continue
        # ---- pick the next child of the node at ply, or finish the node
        if stage == PICK:
            if ctl[NODES] >= next_check:
                # a node count can step over a multiple of 1024 between two picks (a child
                # and its re-search): the next look is due 1024 nodes after this one
                next_check = ctl[NODES] + 1024
                if ctl[STOP] != 0 or ctl[NODES] >= ctl[NODE_LIMIT]:
                    ctl[ABORTED] = 1
                    return 0
            j = st.idx[ply]
            n = st.nch[ply]
            if j >= n:
                best = st.best[ply]
                flag = UPPER if best <= st.a0[ply] else EXACT
                _tt_store(tt, st.hash[ply], st.bestmv[ply], best, st.depth[ply], flag, ply, ctl[REDUCE] != 0)
                ret[0] = best
                if ply == 0:
                    return best
                ply -= 1
                continue
            # selection: the best-ordered remaining child goes to slot j
            bj = j
            bo = st.cord[ply, j]
            for q in range(j + 1, n):
                if st.cord[ply, q] > bo:
                    bo = st.cord[ply, q]
                    bj = q
            if bj != j:
                tm = st.cm[ply, j]
                st.cm[ply, j] = st.cm[ply, bj]
                st.cm[ply, bj] = tm
                tm = st.cp[ply, j]
                st.cp[ply, j] = st.cp[ply, bj]
                st.cp[ply, bj] = tm
                tv = st.cmv[ply, j]
                st.cmv[ply, j] = st.cmv[ply, bj]
                st.cmv[ply, bj] = tv
                to = st.cord[ply, j]
                st.cord[ply, j] = st.cord[ply, bj]
                st.cord[ply, bj] = to
            st.idx[ply] = j + 1
            st.cur[ply] = j
            a = st.alpha[ply]
            b = st.beta[ply]
            c1 = ply + 1
            st.m[c1] = st.cm[ply, j]
            st.p[c1] = st.cp[ply, j]
            st.hash[c1] = position_hash(st.m[c1], st.p[c1], (s0 + c1) & 1)
            st.depth[c1] = st.depth[ply] - 1
            st.ext[c1] = st.ext[ply]
            full = j == 0 or (ply == 0 and root_full)
            if ply == 0 and root_full:
                a = -INF
            if full:
                st.alpha[c1] = -b
                st.beta[c1] = -a
                st.stage[ply] = FULL_WINDOW
            else:
                st.alpha[c1] = -a - 1
                st.beta[c1] = -a
                st.stage[ply] = NULL_WINDOW
                # late-move reduction: a quiet move far down the order is searched a ply
                # (two, later still) shallower first, and again at full depth if it beats alpha
                d = st.depth[ply]
                if (ctl[REDUCE] != 0 and ply > 0 and d >= LMR_MIN_DEPTH and j >= max(LMR_FIRST, ctl[LMR_FROM])
                        and st.cord[ply, j] < (1 << 28) - 1 and abs(a) < MATE_BOUND):
                    st.depth[c1] = d - 2 - (1 if j >= 8 and d >= 5 else 0)
                    st.stage[ply] = REDUCED
            if _enter(st, c1, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s0, ret, dbinfo, dbvals, lay) == 0:
                ply = c1
                continue
            # settled at once: fall through to the return handling with ret[0]
        # ---- a child of the node at ply returned ret[0]
        j = st.cur[ply]
        score = -ret[0]
        a = st.alpha[ply]
        b = st.beta[ply]
        if st.stage[ply] == REDUCED and score > a:
            c1 = ply + 1  # the reduced search beat alpha: again at full depth
            st.m[c1] = st.cm[ply, j]
            st.p[c1] = st.cp[ply, j]
            st.depth[c1] = st.depth[ply] - 1
            st.ext[c1] = st.ext[ply]
            st.alpha[c1] = -a - 1
            st.beta[c1] = -a
            st.stage[ply] = NULL_WINDOW
            if _enter(st, c1, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s0, ret, dbinfo, dbvals, lay) == 0:
                ply = c1
            continue
        if st.stage[ply] == NULL_WINDOW and score > a and score < b:
            c1 = ply + 1
            st.m[c1] = st.cm[ply, j]
            st.p[c1] = st.cp[ply, j]
            st.depth[c1] = st.depth[ply] - 1
            st.ext[c1] = st.ext[ply]
            st.alpha[c1] = -b
            st.beta[c1] = -a
            st.stage[ply] = FULL_WINDOW
            if _enter(st, c1, geo, zones, w, ebuf, tt, hist, nhist, ctl, killers, history, s0, ret, dbinfo, dbvals, lay) == 0:
                ply = c1
            continue
        st.stage[ply] = PICK
        mv = st.cmv[ply, j]
        if ply == 0:
            root_score[j] = score
        if score > st.best[ply]:
            st.best[ply] = score
            st.bestmv[ply] = mv
            if score > a:
                st.pv[ply, 0] = mv
                ln = st.pvlen[ply + 1]
                for q in range(ln):
                    st.pv[ply, q + 1] = st.pv[ply + 1, q]
                st.pvlen[ply] = ln + 1
                if not (ply == 0 and root_full):
                    st.alpha[ply] = score
        if score >= b and not (ply == 0 and root_full):
            s = (s0 + ply) & 1
            if st.cord[ply, j] < (1 << 28) - 1:
                killers[ply, 1] = killers[ply, 0]
                killers[ply, 0] = mv
                history[s, mv] += st.depth[ply] * st.depth[ply]
                if history[s, mv] > (1 << 26):
                    for q in range(history.shape[1]):
                        history[0, q] >>= 1
                        history[1, q] >>= 1
            _tt_store(tt, st.hash[ply], mv, score, st.depth[ply], LOWER, ply, ctl[REDUCE] != 0)
            ret[0] = score
            if ply == 0:
                return score
            ply -= 1
            continue
