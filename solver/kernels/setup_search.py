"""The setup game's search: alpha-beta over the placements, with the offer, the pick and
the first rotations searched at the end of the setup (docs/rules.md §5 ``setup``).

:func:`setup_search` is negamax over placement positions ``(m, p, s)`` (the side to place
``s``, its balls ``m``, the other side's ``p``), one depth a call, written with an explicit
stack (numba's cache and self-recursion do not mix). Scores use the rotation search's
integers (:mod:`solver.kernels.alphabeta`): hundredths of a logit for the side to move, a
win in ``d`` plies from the root ``MATE - d``.

* An inner node places a ball on every free point (not the centre, not a trap field of the
  other colour), the nearest to the centre first after the table's move and the history's.
* A node at the horizon with balls still to place scores the evaluation of its board from
  the view of the side that rotates first (light under ``offer``, the last placer under
  ``last``), negated for the other side: so every leaf reads the board as the rotation
  phase will begin it.
* A placement that completes the setup is scored at once, in the placer's view. Under
  ``offer`` (:func:`offer_score`): light with no legal point loses in 0; with one he turns
  there (one ply); with several he offers two, dark picks the worse for him and he turns
  there (three plies), so the offer is worth the second best of light's points, each worth
  its best turn. Every turn's position is searched by the rotation kernel
  (:func:`solver.kernels.alphabeta.search`) to the depth left after the last placement and
  the turn (the offer and the pick cost none; depth 0: the evaluation with the win-in-1
  test). Under ``last`` the placer rotates
  next: the rotation kernel searches that position itself.

A small transposition table holds placement positions (the same balls are reached by
placing them in any order). The search stops when the rotation kernel does
(``ctl[STOP]``, ``ctl[NODE_LIMIT]``); an aborted call says so in ``out[ABORTED_OUT]``
and only its root's best finished move (``out[BEST_MOVE]``, ``out[BEST_SCORE]``) means
anything.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.alphabeta import (
    ABORTED, EXACT, INF, LOWER, MATE, MATE_BOUND, NODE_LIMIT, NODES, SELDEPTH, STOP, UPPER, position_hash, search,
)
from solver.kernels.bits import ONE, ctz, popcount
from solver.kernels.evaluate import EBUF, evaluate
from solver.kernels.moves import apply_move, legal_pivots

OFFER, LAST = 0, 1  # the readings of setup (who rotates first)
MAX_SPLY = 72  # placement plies on the stack: more than any board of 64 points can take
MAX_FREE = 64  # children of a placement node: the kernels' boards have at most 64 points
# out slots
BEST_MOVE, BEST_SCORE, ABORTED_OUT = 0, 1, 2
OUT_SIZE = 3

SetupTables = namedtuple("SetupTables", "key move score depth flag")
SetupStack = namedtuple("SetupStack", "m p s hash alpha a0 beta depth best bestmv idx nch cur mv cord pv pvlen")


def new_setup_tables(bits: int) -> SetupTables:
    """An empty table of ``2**bits`` placement positions."""
    n = 1 << bits
    return SetupTables(np.zeros(n, np.uint64), np.full(n, -1, np.int16), np.zeros(n, np.int32), np.zeros(n, np.int8),
                       np.zeros(n, np.int8))


def new_setup_stack() -> SetupStack:
    """The placement search's per-ply working arrays."""
    d = MAX_SPLY + 2
    z32 = np.zeros(d, np.int32)
    return SetupStack(np.zeros(d, np.uint64), np.zeros(d, np.uint64), np.zeros(d, np.int32), np.zeros(d, np.uint64),
                      z32.copy(), z32.copy(), z32.copy(), z32.copy(), z32.copy(), z32.copy(), z32.copy(), z32.copy(),
                      z32.copy(), np.zeros((d, MAX_FREE), np.int32), np.zeros((d, MAX_FREE), np.int64),
                      np.zeros((d, d), np.int32), z32.copy())


def centre_priority(neighbours, centre: int) -> np.ndarray:
    """``prio[q]``: larger the nearer ``q`` is to the centre (rings by breadth-first steps)."""
    n = len(neighbours)
    dist = [-1] * n
    frontier = [q for q in range(n) if centre >> q & 1]
    for q in frontier:
        dist[q] = 0
    while frontier:
        nxt = []
        for q in frontier:
            for r in neighbours[q]:
                if r >= 0 and dist[r] < 0:
                    dist[r] = dist[q] + 1
                    nxt.append(r)
        frontier = nxt
    far = max(dist) + 1
    return np.array([(far - (d if d >= 0 else far)) * 16 for d in dist], dtype=np.int64)


@njit(cache=True, _nrt=False, inline="always")
def _from_root(score, ply):
    """A score of a rotation search rooted ``ply`` plies below the setup root, in the root's frame."""
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


@njit(cache=True, nogil=True)
def offer_score(x, o, ply, depth, alpha, beta, geo, zones, w, tt, st, ctl, killers, history, root_score, dbinfo,
                dbvals, lay, hist):
    """Light's score of the offer position ``(x, o)`` at ``ply`` (all balls placed, light to
    move), its turns searched ``depth`` deep; fail-soft within ``alpha..beta``. Check
    ``ctl[ABORTED]`` after it."""
    legal = legal_pivots(x, o, geo)
    n = popcount(legal)
    if n == 0:
        return -(MATE - ply)
    handover = 1 if n == 1 else 3  # the turn itself; or the offer, the pick and the turn
    kid_ply = ply + handover
    plain = abs(alpha) < MATE_BOUND and abs(beta) < MATE_BOUND  # a window the child frame shares
    first = -INF  # the best point's score so far, and the second best's
    second = -INF
    xs = np.zeros(6, np.uint64)  # the turns' positions at the point, to skip repeats
    os_ = np.zeros(6, np.uint64)
    while legal:
        z = ctz(legal)
        legal &= legal - ONE
        # this point matters only above the second best so far (with several points)
        lo = alpha if n == 1 else max(alpha, second)
        if n > 1 and second >= beta:
            break
        bz = -INF
        for k in range(6):
            x2, o2 = apply_move(x, o, 0, z, k, geo)
            dup = False
            for j in range(k):
                if xs[j] == x2 and os_[j] == o2:
                    dup = True
            xs[k] = x2
            os_[k] = o2
            if dup:
                continue
            a = max(lo, bz)
            wa, wb = (-beta, -a) if plain and a < beta else (-INF, INF)
            raw = search(o2, x2, 1, depth, wa, wb, geo, zones, w, tt, st, hist, 0, ctl, killers, history, False,
                         root_score, dbinfo, dbvals, lay)
            if ctl[ABORTED]:
                return 0
            v = -_from_root(raw, kid_ply)
            if v > bz:
                bz = v
            if bz >= beta:
                if n == 1:
                    return bz
                break  # this point is above the window: how far above does not matter
        if bz > first:
            second = first
            first = bz
        elif bz > second:
            second = bz
    return first if n == 1 else second


@njit(cache=True, nogil=True)
def _final(m2, p, s, reading, ply, depth, alpha, beta, geo, zones, w, tt, st, ctl, killers, history, root_score,
           dbinfo, dbvals, lay, hist):
    """The placer's score (side ``s``, balls ``m2`` now all placed) of the position its last
    ball leaves, one ply below ``ply``; fail-soft within ``alpha..beta``."""
    d = depth - 1 if depth > 0 else 0
    if reading == LAST:
        # the placer rotates next: the same side to move, one ply later
        raw = search(m2, p, s, d, -INF, INF, geo, zones, w, tt, st, hist, 0, ctl, killers, history, False,
                     root_score, dbinfo, dbvals, lay)
        return _from_root(raw, ply + 1)
    if s == 0:
        x, o = m2, p
        return offer_score(x, o, ply + 1, d - 1 if d > 0 else 0, alpha, beta, geo, zones, w, tt, st, ctl, killers,
                           history, root_score, dbinfo, dbvals, lay, hist)
    x, o = p, m2
    return -offer_score(x, o, ply + 1, d - 1 if d > 0 else 0, -beta, -alpha, geo, zones, w, tt, st, ctl, killers,
                        history, root_score, dbinfo, dbvals, lay, hist)


@njit(cache=True, _nrt=False)
def _store(stt, h, mv, score, depth, flag, ply):
    i = np.int64(h & np.uint64(stt.key.shape[0] - 1))
    if stt.key[i] == h and stt.depth[i] > depth and flag != EXACT:
        return
    if score > MATE_BOUND:
        score += ply
    elif score < -MATE_BOUND:
        score -= ply
    stt.key[i] = h
    stt.move[i] = np.int16(mv)
    stt.score[i] = np.int32(score)
    stt.depth[i] = np.int8(min(depth, 127))
    stt.flag[i] = np.int8(flag)


@njit(cache=True, nogil=True)
def _enter(ss, ply, K, first_rotator, free_mask, geo, zones, w, ebuf, stt, ctl, shist, prio, ret):
    """Set up the placement node at ``ply``; 1 when it is settled at once (score in
    ``ret[0]``), 0 when its children are ready."""
    ctl[NODES] += 1
    if ply > ctl[SELDEPTH]:
        ctl[SELDEPTH] = ply
    m = ss.m[ply]
    p = ss.p[ply]
    s = ss.s[ply]
    ss.pvlen[ply] = 0
    h = ss.hash[ply]
    depth = ss.depth[ply]
    alpha = ss.alpha[ply]
    beta = ss.beta[ply]
    ttmove = -1
    i = np.int64(h & np.uint64(stt.key.shape[0] - 1))
    if stt.key[i] == h:
        ttmove = np.int32(stt.move[i])
        if ply > 0 and stt.depth[i] >= depth:
            sc = np.int32(stt.score[i])
            if sc > MATE_BOUND:
                sc -= ply
            elif sc < -MATE_BOUND:
                sc += ply
            f = stt.flag[i]
            if f == EXACT or (f == LOWER and sc >= beta) or (f == UPPER and sc <= alpha):
                ret[0] = sc
                return 1
    free = free_mask & ~(m | p) & ~geo.traps[1 - s]
    if depth <= 0 or free == 0 or ply >= MAX_SPLY:
        # the board as the first rotator will meet it: his evaluation, from s's side
        x = m if s == 0 else p
        o = p if s == 0 else m
        v = evaluate(x, o, geo, zones, w, ebuf) if first_rotator == 0 else evaluate(o, x, geo, zones, w, ebuf)
        ret[0] = v if s == first_rotator else -v
        return 1
    n = 0
    while free and n < MAX_FREE:
        q = np.int32(ctz(free))
        free &= free - ONE
        ss.mv[ply, n] = q
        if q == ttmove:
            ss.cord[ply, n] = 1 << 40
        else:
            ss.cord[ply, n] = shist[s, q] + prio[q]
        n += 1
    ss.nch[ply] = n
    ss.idx[ply] = 0
    ss.best[ply] = -INF
    ss.bestmv[ply] = -1
    ss.a0[ply] = alpha
    return 0


@njit(cache=True, nogil=True)
def setup_search(x0, o0, s0, K, reading, depth, alpha0, beta0, free_mask, prio, geo, zones, w, stt, ss, shist, out,
                 root_full, rscore, tt, st, ctl, killers, history, root_score, dbinfo, dbvals, lay):
    """One iteration: the score of the placement position (light ``x0``, dark ``o0``, side
    ``s0`` to place, ``K`` balls a side, ``reading`` OFFER or LAST) searched ``depth``
    placements deep within ``alpha0..beta0``; its best placement in ``out[BEST_MOVE]``,
    the principal variation (points) in ``ss.pv[0, :ss.pvlen[0]]``. ``root_full``: every
    root placement searched with the full window, its exact score in ``rscore[point]``
    (``-INF - 1`` where unfinished), for ranking them all."""
    ebuf = np.zeros(EBUF, np.float64)
    ret = np.zeros(1, np.int32)
    hist = np.zeros(1, np.uint64)
    first_rotator = 0 if reading == OFFER else 1  # light places first, so dark places the last ball
    out[BEST_MOVE] = -1
    out[BEST_SCORE] = -INF
    out[ABORTED_OUT] = 0
    ctl[ABORTED] = 0
    ss.m[0] = x0 if s0 == 0 else o0
    ss.p[0] = o0 if s0 == 0 else x0
    ss.s[0] = s0
    ss.hash[0] = position_hash(ss.m[0], ss.p[0], s0)
    ss.alpha[0] = alpha0
    ss.beta[0] = beta0
    ss.depth[0] = depth
    rscore[:] = -INF - 1
    if _enter(ss, 0, K, first_rotator, free_mask, geo, zones, w, ebuf, stt, ctl, shist, prio, ret) == 1:
        out[BEST_SCORE] = ret[0]
        return ret[0]
    ply = 0
    next_check = ctl[NODES] + 256
    returning = False  # the node at ply has a child's score in ret[0] to take
    while True:
        if not returning:
            if ctl[NODES] >= next_check:
                next_check = ctl[NODES] + 256
                if ctl[STOP] != 0 or ctl[NODES] >= ctl[NODE_LIMIT]:
                    out[ABORTED_OUT] = 1
                    out[BEST_MOVE] = ss.bestmv[0]
                    out[BEST_SCORE] = ss.best[0]
                    return 0
            j = ss.idx[ply]
            n = ss.nch[ply]
            if j >= n:
                # ---- every child searched: the node's score goes up
                best = ss.best[ply]
                _store(stt, ss.hash[ply], ss.bestmv[ply], best, ss.depth[ply],
                       UPPER if best <= ss.a0[ply] else EXACT, ply)
                if ply == 0:
                    out[BEST_MOVE] = ss.bestmv[0]
                    out[BEST_SCORE] = best
                    return best
                ret[0] = best
                ply -= 1
                returning = True
                continue
            # ---- the best-ordered remaining child goes to slot j
            bj = j
            bo = ss.cord[ply, j]
            for q in range(j + 1, n):
                if ss.cord[ply, q] > bo:
                    bo = ss.cord[ply, q]
                    bj = q
            if bj != j:
                tv = ss.mv[ply, j]
                ss.mv[ply, j] = ss.mv[ply, bj]
                ss.mv[ply, bj] = tv
                to = ss.cord[ply, j]
                ss.cord[ply, j] = ss.cord[ply, bj]
                ss.cord[ply, bj] = to
            ss.idx[ply] = j + 1
            ss.cur[ply] = j
            m = ss.m[ply]
            p = ss.p[ply]
            s = ss.s[ply]
            m2 = m | (ONE << np.uint64(ss.mv[ply, j]))
            a = ss.alpha[ply] if not (ply == 0 and root_full) else -INF
            b = ss.beta[ply]
            c1 = ply + 1
            ss.pvlen[c1] = 0
            if popcount(m2) >= K and popcount(p) >= K:
                # the setup is complete: scored at once, in the placer's view
                sc = _final(m2, p, np.int64(s), reading, ply, np.int64(ss.depth[ply]), np.int64(a), np.int64(b), geo,
                            zones, w, tt, st, ctl, killers, history, root_score, dbinfo, dbvals, lay, hist)
                if ctl[ABORTED]:
                    out[ABORTED_OUT] = 1
                    out[BEST_MOVE] = ss.bestmv[0]
                    out[BEST_SCORE] = ss.best[0]
                    return 0
                ret[0] = -sc
            else:
                ss.m[c1] = p
                ss.p[c1] = m2
                ss.s[c1] = 1 - s
                ss.hash[c1] = position_hash(p, m2, 1 - s)
                ss.alpha[c1] = -b
                ss.beta[c1] = -a
                ss.depth[c1] = ss.depth[ply] - 1
                if _enter(ss, c1, K, first_rotator, free_mask, geo, zones, w, ebuf, stt, ctl, shist, prio, ret) == 0:
                    ply = c1
                    continue
        # ---- a child of the node at ply returned ret[0]
        returning = False
        j = ss.cur[ply]
        score = -ret[0]
        mv = ss.mv[ply, j]
        if ply == 0:
            rscore[mv] = score
        if score > ss.best[ply]:
            ss.best[ply] = score
            ss.bestmv[ply] = mv
            if score > ss.alpha[ply]:
                ss.alpha[ply] = score
                ss.pv[ply, 0] = mv
                ln = ss.pvlen[ply + 1]
                for q in range(ln):
                    ss.pv[ply, q + 1] = ss.pv[ply + 1, q]
                ss.pvlen[ply] = ln + 1
        if score >= ss.beta[ply]:
            s = ss.s[ply]
            shist[s, mv] += ss.depth[ply] * ss.depth[ply]
            _store(stt, ss.hash[ply], mv, score, ss.depth[ply], LOWER, ply)
            if ply == 0:
                out[BEST_MOVE] = mv
                out[BEST_SCORE] = score
                return score
            ret[0] = score
            ply -= 1
            returning = True
