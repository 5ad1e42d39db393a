"""Draw closure: path-independent disproofs by a fixpoint over df-pn's table.

df-pn's weak spot is the draw. A disproof that rests on a repetition is path-dependent, so
:func:`solver.kernels.dfpn.dfpn` never stores it (graph-history interaction) and every
other path re-searches it. But the explored graph already holds the answer: the table's
open entries and the moves between them form a finite AND/OR graph, and on a finite graph
"the attacker cannot force a win" is a greatest fixpoint that needs no path at all
(it is retrograde analysis of the explored part — the attractor construction).

From the root, :func:`close` collects the open (unresolved) table entries reachable
through open entries, regenerating each one's moves. Every other child is a constant:

* *may win* (``W``): a terminal or database win for the attacker, a proven win in the
  table, or a position not in the table (unexplored: it might be a win);
* *does not win* (``N``): a terminal or database non-win, a stored (path-independent)
  disproof in the table.

``W`` is then the least set holding the may-win constants and closed under "an attacker
node with a child in ``W``" and "a defender node with every child in ``W``" (a worklist
with counters over the reverse edges). An explored node outside ``W`` is a true,
path-independent disproof: from it the defender can keep the play outside ``W`` for ever
(an attacker node outside has every child outside, a defender node outside has a child
outside), and outside ``W`` there is no attacker win, only non-wins and endless play —
a draw (docs/rules.md §4). Those nodes are stored as disproofs (with the pass argument), so
df-pn reads them from the table like any other result.

Nothing here is a heuristic: an unexplored or evicted child only makes ``W`` larger, so
the fixpoint proves less, never something false. When the region or its edges outgrow the
buffers, the nodes not yet expanded are treated as may-win for the same reason.

It may run while df-pn threads search the same table (:mod:`solver.search.parallel`): every
fact is read checked (:func:`solver.kernels.table.tt_probe`; a record that fails counts as
unexplored), a region node keeps the key it was found under (an entry can be replaced
meanwhile: a child met at that entry under another key is taken as may-win), and the
disproofs are stored under those keys. The region's nodes are found by key (``mark``, an
open-addressing map of the region's own, :func:`region_slot`), never by table entry. Each conclusion rests only on facts true when they
were read (proofs and stored disproofs never become false) and on the moves, so what the
searches find meanwhile cannot make one false.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz
from solver.kernels.leaves import NOT_LEAF, leaf
from solver.kernels.moves import legal_pivots, pivot_children
from solver.kernels.shared import load_i64
from solver.kernels.symkeys import canon, decode_key
from solver.kernels.table import DMAX, INF, pass_store, tt_prefetch, tt_probe, tt_store

# region buffers: mark[slot] -> region node (-1: none; a map by key hash, linear probing,
# twice the nodes); per node: its slot in mark, state, counter, edges, its key (then the
# proven keys); one point's children (position, move) and a node's keys
Closure = namedtuple("Closure", "mark node state cnt estart edge rstart redge queue k1 k2 cm cp cmv ck1 ck2")


def new_closure(tt, max_nodes: int, max_edges: int, max_children: int) -> Closure:
    """Buffers for a region of ``max_nodes`` nodes and ``max_edges`` edges over table
    ``tt`` (a :class:`solver.kernels.table.TT`); ``max_children``: a node's most children
    (``6 * npoints``)."""
    slots = 1 << max(4, (2 * max_nodes - 1).bit_length())
    return Closure(
        np.full(slots, -1, dtype=np.int32),
        np.zeros(max_nodes, dtype=np.int64),
        np.zeros(max_nodes, dtype=np.int8),
        np.zeros(max_nodes, dtype=np.int32),
        np.zeros(max_nodes + 1, dtype=np.int64),
        np.zeros(max_edges, dtype=np.int32),
        np.zeros(max_nodes + 1, dtype=np.int64),
        np.zeros(max_edges, dtype=np.int32),
        np.zeros(max_nodes, dtype=np.int32),
        np.zeros(max_nodes, dtype=np.uint64),
        np.zeros(max_nodes, dtype=np.uint64),
        np.zeros(max_children, dtype=np.uint64),
        np.zeros(max_children, dtype=np.uint64),
        np.zeros(max_children, dtype=np.int64),
        np.zeros(max_children, dtype=np.uint64),
        np.zeros(max_children, dtype=np.uint64),
    )


@njit(cache=True, _nrt=False, inline="always")
def region_slot(cl, k1, k2):
    """The slot of ``mark`` that holds key ``(k1, k2)``'s region node, or the free slot
    where it would go."""
    k1 = np.uint64(k1)  # a root key from Python arrives as int64
    k2 = np.uint64(k2)
    mask = np.uint64(cl.mark.shape[0] - 1)
    h = ((k1 * np.uint64(0x9E3779B97F4A7C15)) ^ k2) * np.uint64(0xC2B2AE3D27D4EB4F)
    i = np.int64((h >> np.uint64(20)) & mask)
    while True:
        v = cl.mark[i]
        if v < 0 or (cl.k1[v] == k1 and cl.k2[v] == k2):
            return i
        i = np.int64((np.uint64(i) + np.uint64(1)) & mask)


@njit(cache=True, _nrt=False, inline="always")
def region_node(cl, k1, k2):
    """Key ``(k1, k2)``'s region node, or -1."""
    return cl.mark[region_slot(cl, k1, k2)]


@njit(cache=True, _nrt=False, inline="always")
def add_edge(cl, k1, k2, nn, ne, maxn, maxe):
    """An edge to the open child of key ``(k1, k2)``, which becomes region node ``nn`` the
    first time it is met: ``(nodes, edges)`` after it, or ``(-1, ne)`` when the buffers or
    the node limit are reached."""
    if ne >= maxe:
        return -1, ne
    sl = region_slot(cl, k1, k2)
    cv = cl.mark[sl]
    if cv < 0:
        if nn >= maxn:
            return -1, ne
        cv = nn
        cl.mark[sl] = cv
        cl.node[nn] = sl
        cl.k1[nn] = k1
        cl.k2[nn] = k2
        nn += 1
    cl.edge[ne] = cv
    return nn, ne + 1


@njit(cache=True, _nrt=False, inline="always")
def settle(cl, v, q, state, cnt, ne):
    """Record node ``v``'s state and counter once its children are in (``cnt`` edges, the
    last ending at ``ne``); returns the edge count after it (a decided node's are dropped)."""
    if state != 0:
        ne = cl.estart[v]  # its edges are not needed
        cnt = 0
    elif cnt == 0:
        state = 2 if q == 0 else 1  # every attacker move a non-win; every defender move may win
    cl.state[v] = state
    cl.cnt[v] = cnt if q == 1 else 1  # an attacker node's counter is 1: any child suffices
    return ne


@njit(cache=True, _nrt=False, nogil=True)
def close(ctx, cl, rk1, rk2, limit, stats, stop):
    """Prove every explored node reachable from the root key that the attacker cannot
    force to a win (see the module docstring); store those disproofs in ``ctx.tt``.

    ``ctx``: a :class:`solver.kernels.dfpn.Ctx`; ``cl``: the buffers (:func:`new_closure`).
    At most ``limit`` nodes are expanded (breadth first: the nearest ones); the rest of
    the region is treated as may-win. Returns the number of nodes proven; ``stats[0]``
    gets the region size, ``stats[1]`` the edges, ``stats[2]`` 1 when the limit or the
    buffers were reached. ``stop`` (int64[1+]): when another thread sets ``stop[0]``
    (the root settled, a deadline), the closure leaves at once and stores nothing — half a
    region proves nothing, and a long closure must not hold up a finished search.
    """
    geo = ctx.geo
    symtab = ctx.symtab
    tt = ctx.tt
    ri, rpn, rdn, _, _ = tt_probe(tt, rk1, rk2)
    if ri < 0 or rpn == 0 or rdn == 0:
        return 0
    maxn = min(cl.node.shape[0], limit)
    maxe = cl.edge.shape[0]
    nn = 1
    cl.k1[0] = rk1
    cl.k2[0] = rk2
    cl.node[0] = region_slot(cl, rk1, rk2)
    cl.mark[cl.node[0]] = 0
    ne = 0
    full = False
    # ---- expand the region breadth first; state: 0 undecided, 1 in W, 2 fixed outside W
    v = 0
    while v < nn:
        if (v & 255) == 0 and load_i64(stop, 0) != 0:
            for u in range(nn):
                cl.mark[cl.node[u]] = -1
            return 0
        cl.estart[v] = ne
        m, p, s, q = decode_key(cl.k1[v], cl.k2[v])
        state = 0
        cnt = 0
        if full:
            state = 1  # not expanded: may win
        else:
            # pass 1: constants settled, the other children keyed and their table buckets
            # prefetched (the probes are the main cost: cache misses); pass 2: the probes
            nc = 0
            legal = legal_pivots(m, p, geo)
            while legal and state == 0:
                z = np.int64(ctz(legal))
                legal &= legal - ONE
                nk = pivot_children(m, p, s, z, geo, cl.cm, cl.cp, cl.cmv, 0, True)
                for j in range(nk):
                    # a child settled without the table: a terminal or database (non-)win
                    kind, a, _, _ = leaf(cl.cm[j], cl.cp[j], 1 - s, 1 - q, geo, ctx.dbinfo, ctx.dbvals, ctx.lay)
                    if kind == NOT_LEAF:
                        ck1, ck2 = canon(cl.cm[j], cl.cp[j], 1 - s, 1 - q, geo, symtab)
                        cl.ck1[nc] = ck1
                        cl.ck2[nc] = ck2
                        nc += 1
                        tt_prefetch(tt, ck1, ck2)
                    elif a == 0 and q == 0:
                        state = 1  # the attacker moves there
                        break
                    elif a != 0 and q == 1:
                        state = 2  # the defender moves there
                        break
            for j in range(nc):
                if state != 0:
                    break
                ci, cpn, cdn, _, _ = tt_probe(tt, cl.ck1[j], cl.ck2[j])
                if ci < 0 or cpn == 0:  # unexplored or a proven win
                    if q == 0:
                        state = 1
                    continue
                if cdn == 0:
                    if q == 1:
                        state = 2
                    continue
                nn2, ne = add_edge(cl, cl.ck1[j], cl.ck2[j], nn, ne, maxn, maxe)
                if nn2 < 0:
                    full = True
                    state = 1
                    break
                nn = nn2
                cnt += 1
        ne = settle(cl, v, q, state, cnt, ne)
        v += 1
    return conclude(ctx, cl, nn, ne, full, stats)


@njit(cache=True, _nrt=False, nogil=True)
def conclude(ctx, cl, nn, ne, full, stats):
    """The closure's second half, once the region's ``nn`` nodes and ``ne`` edges are in
    ``cl`` (by :func:`close`, or by :mod:`solver.kernels.closure_par` on several threads):
    the attractor, then the disproofs stored. Returns the number of nodes proven."""
    geo = ctx.geo
    symtab = ctx.symtab
    tt = ctx.tt
    cl.estart[nn] = ne
    stats[0] = nn
    stats[1] = ne
    stats[2] = 1 if full else 0
    # ---- reverse edges (counting sort by child)
    for v in range(nn + 1):
        cl.rstart[v] = 0
    for e in range(ne):
        cl.rstart[cl.edge[e] + 1] += 1
    for v in range(nn):
        cl.rstart[v + 1] += cl.rstart[v]
    for v in range(nn):
        for e in range(cl.estart[v], cl.estart[v + 1]):
            c = cl.edge[e]
            cl.redge[cl.rstart[c]] = v
            cl.rstart[c] += 1
    for v in range(nn, 0, -1):
        cl.rstart[v] = cl.rstart[v - 1]
    cl.rstart[0] = 0
    # ---- the attractor W
    qn = 0
    for v in range(nn):
        if cl.state[v] == 1:
            cl.queue[qn] = v
            qn += 1
    h = 0
    while h < qn:
        c = cl.queue[h]
        h += 1
        for e in range(cl.rstart[c], cl.rstart[c + 1]):
            u = cl.redge[e]
            if cl.state[u] != 0:
                continue
            cl.cnt[u] -= 1  # an attacker node's counter starts at 1: any child suffices
            if cl.cnt[u] == 0:
                cl.state[u] = 1
                cl.queue[qn] = u
                qn += 1
    # ---- outside W: disproven, path-independently, under the keys the nodes were found by
    # (packed to the front of k1, k2: proven <= v)
    proven = 0
    for v in range(nn):
        cl.mark[cl.node[v]] = -1
        if cl.state[v] != 1:
            cl.k1[proven] = cl.k1[v]
            cl.k2[proven] = cl.k2[v]
            tt_store(tt, cl.k1[v], cl.k2[v], INF, 0, DMAX, DMAX, -1, 0)
            proven += 1
    for j in range(proven):
        m, p, s, q = decode_key(cl.k1[j], cl.k2[j])
        pass_store(tt, m, p, s, q, INF, 0, DMAX, geo, symtab)
    return proven
