"""The engine's second search: Monte-Carlo tree search with proven wins and losses (MCTS-Solver).

MCTS-Solver (Winands, Björnsson & Saito, 2008) grows a tree by PUCT selection and backs up,
besides the averaged values, results that are *proven*: a node with a child lost for the
child's mover is won for its own mover; a node all of whose children are won for their
movers is lost. Proven children are never selected again, so the search spends its time
where the result is still open. Distances follow the duel rule: a proven win takes the
fastest proven-lost child (``1 + min``), a proven loss the slowest proven-won one
(``1 + max``); a win's distance is the fastest one *found*, an upper bound of the true one.

The tree lives in preallocated arrays (:class:`Tree`), one row a node: the position from
its mover's view, the move that led to it, its first child and child count (children of
a node are consecutive rows, made on expansion by
:func:`solver.kernels.alphabeta.gen_children`), visits, the summed value *for the player
who moved into it*, the prior, the static evaluation, and the proven state and distance.
Row 0 is the root.

An expansion evaluates every child (:func:`solver.kernels.evaluate.evaluate`): the
evaluations give the priors (softmax of ``-eval(child) / PRIOR_T``) and the value of a
child not yet visited (sigmoid of its score: an informed first-play urgency). The value of
the node expanded (``LEAF_MODE``) is, by default, that of a short epsilon-greedy playout
from it — ``PLAYOUT_PLIES`` plies, each the child the evaluation likes best for the side
moving or with chance ``EPSILON`` a random one, an immediate win ending it, then the
sigmoid of the evaluation — or else the sigmoid of its own score, or of its best child's.
A child that is over (:func:`terminal`) or whose mover can fill the centre at once (a win
in 1, the evaluation's threat count) is proven at birth. A position seen earlier on the
path or in the game (``hist``) scores 0.5 — a draw — and is not expanded (looked at again
on each visit: the path to a node is fixed, but the game's history grows when a tree is
kept for the next move, see :func:`reroot`). Proofs never rest on such draws, so they
hold whatever the history.

:func:`search` stops when the root is proven, ``ctl[STOP]`` is set (by another thread: the
kernel releases the GIL; looked at every ``CHECK_EVERY`` iterations, after the first, which
always runs so that there is a move), or ``ctl[ITER_LIMIT]`` iterations are done. Once the
node arrays are full (``ctl[FULL]``) the tree stops growing and its leaves keep their
evaluations: the visits still settle on the best line of the tree there is.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.alphabeta import MAX_CHILDREN, gen_children, position_hash
from solver.kernels.code import LOSS_V, WIN_V
from solver.kernels.evaluate import EBUF, SCALE, evaluate
from solver.kernels.moves import terminal

# ctl slots
STOP, ITER_LIMIT, ITERS, NODES, FULL, MAXDEPTH = 0, 1, 2, 3, 4, 5
CTL_SIZE = 8
# parameter slots (float64)
C_PUCT, PRIOR_T, LEAF_MODE, PLAYOUT_PLIES, EPSILON, SEED = 0, 1, 2, 3, 4, 5
PRM_SIZE = 8
# leaf modes: the value of a node when it is expanded
LEAF_EVAL, LEAF_BEST_CHILD, LEAF_PLAYOUT = 0, 1, 2
# proven states, for the node's mover
UNKNOWN_P, WIN_P, LOSS_P = 0, 1, -1

MAX_PATH = 256
CHECK_EVERY = 16

Tree = namedtuple("Tree", "m p hash first nch move visits wsum prior ev proven dist")


def new_tree(cap: int) -> Tree:
    """Node arrays for ``cap`` nodes (about 53 bytes a node)."""
    return Tree(
        np.zeros(cap, np.uint64), np.zeros(cap, np.uint64), np.zeros(cap, np.uint64),
        np.full(cap, -1, np.int32), np.zeros(cap, np.int32), np.full(cap, -1, np.int32),
        np.zeros(cap, np.int32), np.zeros(cap, np.float64), np.zeros(cap, np.float32),
        np.zeros(cap, np.int16), np.zeros(cap, np.int8), np.zeros(cap, np.int16),
    )


def default_params(c_puct: float = 0.8, prior_t: float = 100.0, leaf_mode: int = LEAF_PLAYOUT, playout_plies: int = 4,
                   epsilon: float = 0.1, seed: int = 0) -> np.ndarray:
    """The kernel's parameter array (see the slot names). The defaults won the most in
    matches against the alpha-beta engine at 100 ms a move (scripts/compare_engines.py
    takes other values as ``--a mcts:c_puct=1.5,leaf_mode=0``); ``seed`` < 0 leaves
    numba's random generator unseeded."""
    prm = np.zeros(PRM_SIZE, np.float64)
    prm[C_PUCT] = c_puct
    prm[PRIOR_T] = prior_t
    prm[LEAF_MODE] = leaf_mode
    prm[PLAYOUT_PLIES] = playout_plies
    prm[EPSILON] = epsilon
    prm[SEED] = seed
    return prm


@njit(cache=True, _nrt=False, inline="always")
def _sigmoid(score):
    return 1.0 / (1.0 + math.exp(-score / SCALE))


@njit(cache=True, _nrt=False)
def _init_node(tree, i, m, p, s, mv):
    tree.m[i] = m
    tree.p[i] = p
    tree.hash[i] = position_hash(m, p, s)
    tree.first[i] = -1
    tree.nch[i] = 0
    tree.move[i] = mv
    tree.visits[i] = 0
    tree.wsum[i] = 0.0
    tree.prior[i] = 0.0
    tree.ev[i] = 0
    tree.proven[i] = UNKNOWN_P
    tree.dist[i] = 0


@njit(cache=True, _nrt=False)
def _settle(tree, node):
    """Prove ``node`` from its children if they allow it; True if it is (now) proven."""
    if tree.proven[node] != UNKNOWN_P:
        return True
    f = tree.first[node]
    if f < 0:
        return False
    best_loss = -1
    worst_win = -1
    all_won = True
    for c in range(f, f + tree.nch[node]):
        pv = tree.proven[c]
        if pv == LOSS_P:
            d = np.int32(tree.dist[c])
            if best_loss < 0 or d < best_loss:
                best_loss = d
        elif pv == WIN_P:
            d = np.int32(tree.dist[c])
            if d > worst_win:
                worst_win = d
        else:
            all_won = False
    if best_loss >= 0:
        tree.proven[node] = WIN_P
        tree.dist[node] = best_loss + 1
        return True
    if all_won:
        tree.proven[node] = LOSS_P
        tree.dist[node] = worst_win + 1
        return True
    return False


@njit(cache=True, _nrt=False)
def _expand(tree, node, s, geo, zones, w, prm, ebuf, bm, bp, bmv, ctl):
    """Make and score the children of ``node`` (side ``s`` to move); False if the arrays are full."""
    m = tree.m[node]
    p = tree.p[node]
    n = gen_children(m, p, s, geo, bm, bp, bmv)
    f = ctl[NODES]
    if f + n > tree.m.shape[0]:
        ctl[FULL] = 1
        return False
    ctl[NODES] = f + n
    t = prm[PRIOR_T]
    top = -1e300
    for j in range(n):
        c = f + j
        _init_node(tree, c, bm[j], bp[j], 1 - s, bmv[j])
        r = terminal(bm[j], bp[j], geo)
        if r == LOSS_V:
            tree.proven[c] = LOSS_P  # the move fills the mover's centre or leaves no legal point
        elif r == WIN_V:
            tree.proven[c] = WIN_P  # the move fills the opponent's centre
        else:
            e = evaluate(bm[j], bp[j], geo, zones, w, ebuf)
            tree.ev[c] = e
            if ebuf[6] > 0:  # the child's mover fills his centre next: a win in 1
                tree.proven[c] = WIN_P
                tree.dist[c] = 1
            elif -e / t > top:
                top = -e / t
    total = 0.0
    for j in range(n):
        c = f + j
        if tree.proven[c] == UNKNOWN_P:
            x = math.exp(-tree.ev[c] / t - top)
            tree.prior[c] = x
            total += x
    if total > 0.0:
        for j in range(n):
            tree.prior[f + j] /= total
    tree.first[node] = f
    tree.nch[node] = n
    _settle(tree, node)
    return True


@njit(cache=True, _nrt=False)
def _playout(m, p, s, plies, eps, geo, zones, w, ebuf, bm, bp, bmv):
    """The mover's expected score from ``(m, p)`` after up to ``plies`` epsilon-greedy
    plies (each the child the evaluation likes best for the side moving, or with chance
    ``eps`` a random one); an immediate win ends it."""
    flip = False
    for _ in range(plies):
        n = gen_children(m, p, s, geo, bm, bp, bmv)
        best = -1
        best_e = 1 << 30
        for j in range(n):
            r = terminal(bm[j], bp[j], geo)
            if r == LOSS_V:
                return 0.0 if flip else 1.0
            if r == WIN_V:
                continue
            e = evaluate(bm[j], bp[j], geo, zones, w, ebuf)
            if e < best_e:
                best_e = e
                best = j
        if best < 0:
            return 1.0 if flip else 0.0  # every move hands over the centre
        if np.random.random() < eps:
            j = np.random.randint(0, n)
            if terminal(bm[j], bp[j], geo) != WIN_V:  # a random move, but not one that hands over the centre
                best = j
        m = bm[best]
        p = bp[best]
        s = 1 - s
        flip = not flip
    v = _sigmoid(evaluate(m, p, geo, zones, w, ebuf))
    return 1.0 - v if flip else v


@njit(cache=True, _nrt=False)
def _select(tree, node, c_puct):
    """The unproven child of ``node`` with the highest PUCT score."""
    f = tree.first[node]
    sq = math.sqrt(max(tree.visits[node], 1))
    best = -1
    best_u = -1e300
    for c in range(f, f + tree.nch[node]):
        if tree.proven[c] != UNKNOWN_P:
            continue
        nv = tree.visits[c]
        q = tree.wsum[c] / nv if nv > 0 else _sigmoid(-np.float64(tree.ev[c]))
        u = q + c_puct * tree.prior[c] * sq / (1.0 + nv)
        if u > best_u:
            best_u = u
            best = c
    return best


@njit(cache=True, _nrt=False)
def _repeated(tree, path, depth, hist, nhist):
    h = tree.hash[path[depth]]
    for i in range(depth):
        if tree.hash[path[i]] == h:
            return True
    for i in range(nhist):
        if hist[i] == h:
            return True
    return False


@njit(cache=True, nogil=True)
def search(m0, p0, s0, geo, zones, w, tree, hist, nhist, ctl, prm):
    """Grow the tree of ``(m0, p0, s0)`` (mover's view, not over) until a stop condition
    (module docstring); returns the number of iterations done. The tree is kept if row 0
    already holds that position and ``ctl[NODES]`` its size (:func:`reroot`), else started
    afresh.

    Afterwards ``tree`` rows ``0 .. ctl[NODES]-1`` hold the tree; ``ctl[MAXDEPTH]`` is the
    deepest node reached."""
    ebuf = np.zeros(EBUF, np.float64)
    bm = np.zeros(MAX_CHILDREN, np.uint64)
    bp = np.zeros(MAX_CHILDREN, np.uint64)
    bmv = np.zeros(MAX_CHILDREN, np.int32)
    path = np.zeros(MAX_PATH, np.int64)
    if prm[SEED] >= 0:
        np.random.seed(np.int64(prm[SEED]))
    c_puct = prm[C_PUCT]
    mode = np.int64(prm[LEAF_MODE])
    plies = np.int64(prm[PLAYOUT_PLIES])
    ctl[ITERS] = 0
    ctl[FULL] = 0
    ctl[MAXDEPTH] = 0
    if ctl[NODES] < 1 or tree.hash[0] != position_hash(m0, p0, s0):
        ctl[NODES] = 1
        _init_node(tree, 0, m0, p0, s0, -1)
        tree.ev[0] = evaluate(m0, p0, geo, zones, w, ebuf)
    it = 0
    while tree.proven[0] == UNKNOWN_P:
        if it >= ctl[ITER_LIMIT] or (it % CHECK_EVERY == 0 and it > 0 and ctl[STOP] != 0):
            break  # the first iteration always runs: it expands the root, so there is a move
        # ---- selection: down the tree to a node not yet expanded (or a repetition)
        node = 0
        depth = 0
        path[0] = 0
        v = 0.5  # the value for the mover at path[depth]
        while True:
            if tree.first[node] < 0:
                if depth > 0 and _repeated(tree, path, depth, hist, nhist):
                    v = 0.5
                elif depth >= MAX_PATH - 1:
                    v = _sigmoid(np.float64(tree.ev[node]))
                else:
                    s = (s0 + depth) & 1
                    if not _expand(tree, node, s, geo, zones, w, prm, ebuf, bm, bp, bmv, ctl):
                        v = _sigmoid(np.float64(tree.ev[node]))  # no room: the tree stops growing
                    elif tree.proven[node] == WIN_P:
                        v = 1.0
                    elif tree.proven[node] == LOSS_P:
                        v = 0.0
                    elif mode == LEAF_BEST_CHILD:
                        v = 0.0
                        f = tree.first[node]
                        for c in range(f, f + tree.nch[node]):
                            if tree.proven[c] == UNKNOWN_P:
                                v = max(v, _sigmoid(-np.float64(tree.ev[c])))
                    elif mode == LEAF_PLAYOUT and plies > 0:
                        v = _playout(tree.m[node], tree.p[node], s, plies, prm[EPSILON], geo, zones, w, ebuf,
                                     bm, bp, bmv)
                    else:
                        v = _sigmoid(np.float64(tree.ev[node]))
                break
            c = _select(tree, node, c_puct)
            depth += 1
            path[depth] = c
            node = c
        if depth > ctl[MAXDEPTH]:
            ctl[MAXDEPTH] = depth
        # ---- backup: values for the player who moved into each node, proofs upward
        for i in range(depth, -1, -1):
            node = path[i]
            tree.visits[node] += 1
            tree.wsum[node] += 1.0 - v
            v = 1.0 - v
            if i > 0 and tree.proven[node] != UNKNOWN_P:
                parent = path[i - 1]
                if _settle(tree, parent):
                    v = 1.0 if tree.proven[parent] == WIN_P else 0.0
        it += 1
        ctl[ITERS] = it
    return it


@njit(cache=True, _nrt=False)
def _copy_row(src, i, dst, j):
    dst.m[j] = src.m[i]
    dst.p[j] = src.p[i]
    dst.hash[j] = src.hash[i]
    dst.first[j] = -1 if src.first[i] < 0 else 0
    dst.nch[j] = src.nch[i]
    dst.move[j] = src.move[i]
    dst.visits[j] = src.visits[i]
    dst.wsum[j] = src.wsum[i]
    dst.prior[j] = src.prior[i]
    dst.ev[j] = src.ev[i]
    dst.proven[j] = src.proven[i]
    dst.dist[j] = src.dist[i]


@njit(cache=True)
def reroot(src, dst, root, ctl):
    """Copy the subtree of ``src`` under row ``root`` into ``dst`` with ``root`` at row 0
    (children blocks in breadth-first order); ``ctl[NODES]`` becomes its size."""
    n = ctl[NODES]
    qs = np.empty(n, np.int64)
    qd = np.empty(n, np.int64)
    _copy_row(src, root, dst, 0)
    qs[0] = root
    qd[0] = 0
    head, tail, used = 0, 1, 1
    while head < tail:
        s = qs[head]
        d = qd[head]
        head += 1
        f = src.first[s]
        if f < 0:
            continue
        k = src.nch[s]
        dst.first[d] = used
        for j in range(k):
            _copy_row(src, f + j, dst, used + j)
            qs[tail] = f + j
            qd[tail] = used + j
            tail += 1
        used += k
    ctl[NODES] = used
    return used

