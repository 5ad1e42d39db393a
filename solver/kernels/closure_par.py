"""The draw closure (:mod:`solver.kernels.closure`) on several threads.

The closure's cost is growing its region: every node's moves generated, its children
classified and keyed, their table entries probed (cache misses). That part of a node does
not depend on the other nodes, so the region grows a chunk of nodes at a time: the chunk's
nodes are *expanded* on the threads (:func:`expand`, ``nogil``, each thread its own range
and :class:`Exp` buffer), then *merged* in node order on one (:func:`merge`): the region's
bookkeeping — children given node numbers the first time they are met, edges, counters,
the buffers' limits — exactly as :func:`solver.kernels.closure.close` does it node by node.
On a table nobody writes meanwhile the region, and so the disproofs, are those of
``close``; under searching threads each conclusion rests on facts read checked, as there.
The attractor and the stores follow on one thread (:func:`solver.kernels.closure.conclude`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz
from solver.kernels.closure import add_edge, conclude, region_node, region_slot, settle
from solver.kernels.leaves import NOT_LEAF, leaf
from solver.kernels.moves import legal_pivots, pivot_children
from solver.kernels.symkeys import canon, decode_key
from solver.kernels.table import tt_prefetch, tt_probe

# a recorded child: a candidate (open, in the table, no region node when the chunk was
# expanded: the merge adds it, or finds it added meanwhile), the node's deciding child
# (may-win at an attacker node, not-win at a defender node), or a region node already (its
# number in ``ci``: marks are only added while a region grows, so what the expansion read
# of them stays true, and the merge need not look again)
CAND, DECIDE, KNOWN = 0, 1, 2
# run state: nodes, edges, full, the most nodes, the most edges
NN, NE, FULL, MAXN, MAXE = range(5)

# one thread's expansion of up to ``q.shape[0]`` nodes: each node's question and pass-1
# state, then its recorded children (start offsets, kind, entry, key); and its scratch for
# one point's children (positions, moves, keys)
Exp = namedtuple("Exp", "q pre start kind ci k1 k2 sm sp smv sk1 sk2")


def new_exp(nodes: int, max_children: int) -> Exp:
    """Buffers for one thread's expansion of at most ``nodes`` nodes."""
    n = nodes * max_children
    u = lambda k: np.zeros(k, dtype=np.uint64)  # noqa: E731
    return Exp(np.zeros(nodes, dtype=np.int8), np.zeros(nodes, dtype=np.int8), np.zeros(nodes + 1, dtype=np.int64),
               np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int64), u(n), u(n),
               u(max_children), u(max_children), np.zeros(max_children, dtype=np.int64), u(max_children),
               u(max_children))


@njit(cache=True, _nrt=False, nogil=True)
def begin(ctx, cl, rk1, rk2, limit, run):
    """Start a region at the root key (``run`` gets the state): 0 when there is nothing to
    close (the root not in the table, or settled), else 1."""
    tt = ctx.tt
    ri, rpn, rdn, _, _ = tt_probe(tt, rk1, rk2)
    if ri < 0 or rpn == 0 or rdn == 0:
        return 0
    run[NN] = 1
    run[NE] = 0
    run[FULL] = 0
    run[MAXN] = min(cl.node.shape[0], limit)
    run[MAXE] = cl.edge.shape[0]
    cl.k1[0] = rk1
    cl.k2[0] = rk2
    cl.node[0] = region_slot(cl, rk1, rk2)
    cl.mark[cl.node[0]] = 0
    return 1


@njit(cache=True, _nrt=False, nogil=True)
def expand(ctx, cl, lo, hi, ex):
    """Expand region nodes ``lo .. hi - 1`` into ``ex`` (reads the table, its marks and the
    region's keys; writes nothing shared)."""
    geo = ctx.geo
    symtab = ctx.symtab
    tt = ctx.tt
    cm, cp, cmv, ck1, ck2 = ex.sm, ex.sp, ex.smv, ex.sk1, ex.sk2
    ne = 0
    for i in range(hi - lo):
        v = lo + i
        ex.start[i] = ne
        m, p, s, q = decode_key(cl.k1[v], cl.k2[v])
        ex.q[i] = q
        state = 0
        nc = 0
        legal = legal_pivots(m, p, geo)
        while legal and state == 0:
            z = np.int64(ctz(legal))
            legal &= legal - ONE
            nk = pivot_children(m, p, s, z, geo, cm, cp, cmv, 0, True)
            for j in range(nk):
                kind, a, _, _ = leaf(cm[j], cp[j], 1 - s, 1 - q, geo, ctx.dbinfo, ctx.dbvals, ctx.lay)
                if kind == NOT_LEAF:
                    k1, k2 = canon(cm[j], cp[j], 1 - s, 1 - q, geo, symtab)
                    ck1[nc] = k1
                    ck2[nc] = k2
                    nc += 1
                    tt_prefetch(tt, k1, k2)
                elif a == 0 and q == 0:
                    state = 1
                    break
                elif a != 0 and q == 1:
                    state = 2
                    break
        ex.pre[i] = state
        if state != 0:
            continue
        for j in range(nc):
            ci, cpn, cdn, _, _ = tt_probe(tt, ck1[j], ck2[j])
            if ci < 0 or cpn == 0:  # may win: decides an attacker node, nothing at a defender's
                if q == 0:
                    ex.kind[ne] = DECIDE
                    ne += 1
                    break
                continue
            if cdn == 0:  # does not win: decides a defender node
                if q == 1:
                    ex.kind[ne] = DECIDE
                    ne += 1
                    break
                continue
            cv = region_node(cl, ck1[j], ck2[j])
            if cv >= 0:
                ex.kind[ne] = KNOWN
                ex.ci[ne] = cv
                ne += 1
                continue
            ex.kind[ne] = CAND
            ex.ci[ne] = ci
            ex.k1[ne] = ck1[j]
            ex.k2[ne] = ck2[j]
            ne += 1
    ex.start[hi - lo] = ne


@njit(cache=True, _nrt=False, nogil=True)
def merge(cl, lo, hi, ex, run):
    """Add the expansions of nodes ``lo .. hi - 1`` to the region, in node order."""
    nn = run[NN]
    ne = run[NE]
    full = run[FULL] != 0
    maxn = run[MAXN]
    maxe = run[MAXE]
    for i in range(hi - lo):
        v = lo + i
        cl.estart[v] = ne
        if full:  # not expanded (``ex`` holds nothing of it): may win
            ne = settle(cl, v, 0, 1, 0, ne)
            continue
        q = ex.q[i]
        state = ex.pre[i]
        cnt = 0
        e = ex.start[i]
        while state == 0 and e < ex.start[i + 1]:
            kind = ex.kind[e]
            if kind == DECIDE:
                state = 1 if q == 0 else 2
                break
            if kind == KNOWN:
                if ne >= maxe:
                    full = True
                    state = 1
                    break
                cl.edge[ne] = ex.ci[e]
                ne += 1
                cnt += 1
            else:
                nn2, ne = add_edge(cl, ex.k1[e], ex.k2[e], nn, ne, maxn, maxe)
                if nn2 < 0:
                    full = True
                    state = 1
                    break
                nn = nn2
                cnt += 1
            e += 1
        ne = settle(cl, v, q, state, cnt, ne)
    run[NN] = nn
    run[NE] = ne
    run[FULL] = 1 if full else 0


@njit(cache=True, _nrt=False, nogil=True)
def abandon(cl, run):
    """Leave a region half grown: its marks cleared, nothing proven."""
    for u in range(run[NN]):
        cl.mark[cl.node[u]] = -1


@njit(cache=True, _nrt=False, nogil=True)
def finish(ctx, cl, run, stats):
    """The attractor and the stores (:func:`solver.kernels.closure.conclude`)."""
    return conclude(ctx, cl, run[NN], run[NE], run[FULL] != 0, stats)
