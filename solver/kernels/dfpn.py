"""Compiled df-pn (Nagai 2002) over the move kernels: the inner loop of :mod:`solver.search.prover`.

One AND/OR search answers "does the *attacker* win?". A node is a position seen from its
mover ``(m, p, s)`` plus ``q``: 0 when the mover is the attacker (OR node), 1 when the
mover defends (AND node). Proof numbers are always for "the attacker wins".

Everything is written without recursion (an explicit stack of frames: numba's cache can
crash on loading a self-recursive function) and without allocation: the caller passes
every buffer, so the kernels can be compiled ``_nrt=False`` (no reference counting of the
namedtuple arrays at each call).

Results are shared through the transposition table of :mod:`solver.kernels.table`, keyed
by the canonical key of :mod:`solver.kernels.symkeys` (position + question); the children
of a node come from :func:`solver.kernels.moves.pivot_children`, and those settled without
a search (finished, or held by a database) from :func:`solver.kernels.leaves.leaf`.

Cycles and the graph-history-interaction problem
------------------------------------------------
A position that repeats one on the current path is a *non-win* for the attacker (endless
play is a draw, docs/rules.md §4), never a win. Such a disproof is only valid below that
ancestor, so every disproof carries ``r``, the smallest ply of an ancestor it relies on
(``INF`` when it relies on none). A node at ply ``d`` whose disproof has ``r >= d`` relies
only on repetitions *of itself or of its own descendants*: its value is then the value of
the game tree rooted at it with "first repetition = draw", which equals its true value
(a winning strategy never needs to repeat — attractor argument — and forbidding the
attacker to repeat can only hurt him), so it is stored as a normal, path-independent
result. A disproof with ``r < d`` is *path-dependent*: it is never written to the table
(nor persisted); it lives only in the parent's frame (its child array), which is valid as
long as that frame lives, because the ancestors it relies on (plies ``<= r < d``) stay on
the stack as long as the parent does. This is the "mark results path-dependent with the
ply of the repeated ancestor" method (in the spirit of Kishimoto & Müller 2004, but
simpler: instead of verifying the path of a stored entry, path-dependent entries are
simply not shared). We chose it because it is obviously sound and cheap; the price is
re-searching such nodes from other paths. Proofs (attacker wins) never depend on the
path: an AND node is proven only when every defender move is, and a repetition child is a
disproof.

Threshold control: the 1+ε trick (Pawlewicz & Lew 2007) for the child's threshold, and an
edge cost of one a move on the picking side (``EDGE``, df-pn+), so that a long forcing line
is not followed to the path-length limit.

Guided initial numbers (df-pn+, Nagai & Kishimoto): with ``guide.on``, a child seen for
the first time (not finished, not in a database, not in the table) starts with proof and
disproof numbers from the engine's static evaluation (:func:`solver.kernels.evaluate.evaluate`)
instead of 1 and 1 (:func:`initial_numbers`): the better it looks for the attacker, the
smaller its proof number and the larger its disproof number. Both stay positive integers,
so a guided search proves and disproves exactly what an unguided one does: only the order
in which children are tried changes.
Several threads (:mod:`solver.kernels.shared`, driven by :mod:`solver.search.parallel`)
run this same kernel (compiled ``nogil``) on one root and one table: as :func:`dfpn_thread` each
thread keeps its own path (repetitions), marks the entries it is in so that the others
pick other children (virtual proof numbers), reads the table through checked records
(:func:`solver.kernels.table.tt_probe`), takes a node that another thread has settled
from the table, and leaves when ``par.ctl[0]`` is set.

The pass argument (docs/rules.md §10) is applied when storing
(:func:`solver.kernels.table.pass_store`): a board lost for X to move is won for Y to move
(Y passes), and a board not won for X to move is not lost for Y to move.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz
from solver.kernels.evaluate import EBUF, evaluate
from solver.kernels.leaves import DATABASE, NOT_LEAF, leaf
from solver.kernels.moves import legal_pivots, pivot_children
from solver.kernels.shared import busy_add, busy_slot, load_i64, maybe_spin, on_path, path_slot
from solver.kernels.symkeys import canon
from solver.kernels.table import DMAX, EMPTY, INF, NOPATH, pass_store, tt_prefetch, tt_probe, tt_store, tt_touch

# A move on the picking side costs EDGE (df-pn+'s edge cost, Nagai 2002): an unsettled OR
# node's proof number is its smallest child's plus EDGE, an AND node's disproof number its
# smallest child's plus EDGE, and the child's threshold is EDGE less. Without it a forcing
# line (the defender with one move that does not lose at once, the attacker's next position
# new) keeps proof number 1 however long it is, and the search can follow it to the
# path-length limit and then through every line near that limit: hundreds of thousands of
# cut lines where the proof needs none, most often on several threads. With it a line's
# numbers grow with its length and the thresholds turn the search back (docs/pns.md).
EDGE = 1

# What a search works on: the board (``geo``, :mod:`solver.kernels.geometry`) and its
# symmetry tables (``symtab``, :func:`solver.kernels.symkeys.sym_tables`), the table
# (``tt``), the database leaves (``dbinfo``, ``dbvals``, ``lay``: :mod:`solver.kernels.leaves`)
# and the counters ``stats``: [0] nodes, [1] children generated, [2] the deepest ply,
# [3] children looked up again on the way back to their parent, [4] database leaves,
# [5] nodes of the distance refinement, [6] lines cut at the path-length limit. Shared by
# :func:`dfpn`, :func:`solver.kernels.refine.win_within` and :func:`solver.kernels.closure.close`.
Ctx = namedtuple("Ctx", "geo symtab tt dbinfo dbvals lay stats")

# df-pn's explicit stack: per frame (f_*) the position, question, thresholds, child count,
# the child followed, the node count on entering and its key; per child (c_*, ``maxc``
# slots a frame) the position, key, numbers, repetition ply, distances, move and (several
# threads) how many other threads are in it.
Stack = namedtuple(
    "Stack",
    "f_m f_p f_s f_q f_thpn f_thdn f_n f_best f_nodes0 f_k1 f_k2 "
    "c_m c_p c_k1 c_k2 c_pn c_dn c_r c_dist c_lb c_mv c_b",
)


# The evaluation that guides a search (df-pn+): ``on`` (0: plain 1/1 numbers), the
# evaluation's zone masks and weights (:mod:`solver.kernels.evaluate`), its feature buffer,
# and ``step`` / ``cap`` of :func:`initial_numbers`.
Guide = namedtuple("Guide", "on zones w buf step cap")


def no_guide() -> Guide:
    """A guide that is off (the numbers of a new child are 1 and 1)."""
    return Guide(0, np.zeros(4, dtype=np.uint64), np.zeros(11, dtype=np.float64), np.zeros(EBUF, dtype=np.float64), 1, 0)


@njit(cache=True, _nrt=False, inline="always")
def initial_numbers(a, step, cap):
    """``(pn, dn)`` of a new child whose evaluation is ``a`` (hundredths of a logit) from the
    attacker's view: ``1 + min(cap, -a // step)`` for pn when ``a < 0``, the same of ``a``
    for dn when ``a > 0``, else 1 (integers >= 1: a guess never proves or disproves)."""
    pn = 1
    dn = 1
    if a < 0:
        pn += min(cap, (-a) // step)
    elif a > 0:
        dn += min(cap, a // step)
    return pn, dn


def new_stack(maxd: int, maxc: int) -> Stack:
    """A stack of ``maxd`` frames of ``maxc`` children (``6 * npoints``)."""
    u = lambda n: np.zeros(n, dtype=np.uint64)  # noqa: E731
    i = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    return Stack(
        u(maxd), u(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), u(maxd), u(maxd),
        u(maxd * maxc), u(maxd * maxc), u(maxd * maxc), u(maxd * maxc), i(maxd * maxc), i(maxd * maxc),
        i(maxd * maxc), i(maxd * maxc), i(maxd * maxc), i(maxd * maxc), i(maxd * maxc),
    )


# the threads' counts (virtual proof numbers) are kept for the first BUSY_DEPTH plies of a
# path only: they are shared memory, and counting every node's entry and exit moved their
# cache lines between the cores at every node (on two threads each thread expanded about
# half the nodes a second of one thread alone); the threads part near the root
BUSY_DEPTH = 16


@njit(cache=True, _nrt=False, nogil=True)
def dfpn(ctx, st, rm, rp, rs, rq, budget, out, naive, guide, par):
    """df-pn from ``(rm, rp, rs)`` with question ``rq`` for at most ``budget`` new nodes.

    ``ctx``: a :class:`Ctx`; ``st``: a :class:`Stack` (its size bounds the depth);
    ``guide``: a :class:`Guide` (:func:`no_guide` for plain df-pn); ``par``:
    :func:`solver.kernels.shared.no_par` (unused: the type of :func:`dfpn_thread`'s).
    ``out`` receives ``[pn, dn, dist, lb, best move]`` of the root. Returns 0 when it
    stopped normally (resolved or budget spent), 1 when the stack depth ran out.
    ``naive`` stores path-dependent disproofs like any other (wrong; for tests only).
    """
    return _search(ctx, st, rm, rp, rs, rq, budget, out, naive, guide, par, False)


@njit(cache=True, _nrt=False, nogil=True)
def dfpn_thread(ctx, st, rm, rp, rs, rq, budget, out, guide, par):
    """:func:`dfpn` as one of several threads on one table (``par``: this thread's
    :class:`solver.kernels.shared.Par`; the table made with ``new_tt(bits, checked=True)``)."""
    return _search(ctx, st, rm, rp, rs, rq, budget, out, False, guide, par, True)


@njit(_nrt=False, inline="always")
def _search(ctx, st, rm, rp, rs, rq, budget, out, naive, guide, par, multi):
    """The body of :func:`dfpn` and :func:`dfpn_thread`; ``multi`` is a constant of each, so
    the one-thread kernel compiles without the code for several."""
    geo = ctx.geo
    symtab = ctx.symtab
    tt = ctx.tt
    stats = ctx.stats
    maxd = st.f_m.shape[0]
    maxc = st.c_m.shape[0] // maxd
    nodes0 = stats[0]
    epoch = load_i64(par.ctl, 1) if multi else 0
    d = 0
    st.f_m[0] = rm
    st.f_p[0] = rp
    st.f_s[0] = rs
    st.f_q[0] = rq
    st.f_thpn[0] = INF
    st.f_thdn[0] = INF
    entering = True
    abort = 0
    # result of the frame just popped, passed to its parent
    rpn = 0
    rdn = 0
    rr = INF
    rdist = 0
    rlb = 0
    while True:
        off = d * maxc
        if entering:
            entering = False
            stats[0] += 1
            if d > stats[2]:
                stats[2] = d
            m = st.f_m[d]
            p = st.f_p[d]
            s = st.f_s[d]
            q = st.f_q[d]
            k1, k2 = canon(m, p, s, q, geo, symtab)
            st.f_k1[d] = k1
            st.f_k2[d] = k2
            st.f_nodes0[d] = stats[0]
            if multi and par.spin:
                maybe_spin(par)
            # the path (repetitions) is this search's own: counters by key hash
            par.path[path_slot(k1, k2)] += 1
            if multi and d < BUSY_DEPTH:
                busy_add(par.busy, busy_slot(par.busy, k1, k2), 1)
            cq = 1 - q
            # pass 1: the children, terminal and database ones settled, the others keyed
            # and their table buckets prefetched (the probes are the main cost: misses)
            n = off
            legal = legal_pivots(m, p, geo)
            while legal:
                z = np.int64(ctz(legal))
                legal &= legal - ONE
                first = n
                n = pivot_children(m, p, s, z, geo, st.c_m, st.c_p, st.c_mv, n, True)
                for j in range(first, n):
                    cm = st.c_m[j]
                    cp = st.c_p[j]
                    st.c_r[j] = INF
                    kind, a, b, dd = leaf(cm, cp, 1 - s, cq, geo, ctx.dbinfo, ctx.dbvals, ctx.lay)
                    if kind != NOT_LEAF:
                        if kind == DATABASE:
                            stats[4] += 1
                        st.c_pn[j] = a
                        st.c_dn[j] = b
                        st.c_dist[j] = dd
                        st.c_lb[j] = dd if a == 0 else INF
                        st.c_k1[j] = EMPTY
                        continue
                    ck1, ck2 = canon(cm, cp, 1 - s, cq, geo, symtab)
                    st.c_k1[j] = ck1
                    st.c_k2[j] = ck2
                    tt_prefetch(tt, ck1, ck2)
            n -= off
            stats[1] += n
            # pass 2: the table probes
            for j in range(off, off + n):
                ck1 = st.c_k1[j]
                if ck1 == EMPTY:
                    continue
                ci, cpn, cdn, cdist, clb = tt_probe(tt, ck1, st.c_k2[j])
                if multi:
                    st.c_b[j] = 0
                rep = NOPATH
                if ci < 0 or (cpn != 0 and cdn != 0):
                    # the path's frames are looked through only when the key's counter
                    # says one may hold it
                    if par.path[path_slot(ck1, st.c_k2[j])] != 0:
                        rep = on_path(st, d, ck1, st.c_k2[j])
                    if multi and rep == NOPATH and d + 1 < BUSY_DEPTH:
                        st.c_b[j] = par.busy[busy_slot(par.busy, ck1, st.c_k2[j])]
                if rep != NOPATH:
                    st.c_pn[j] = INF  # repetition: a draw, never a win
                    st.c_dn[j] = 0
                    st.c_r[j] = rep
                    st.c_dist[j] = DMAX
                    st.c_lb[j] = 0  # says nothing about the true distance
                elif ci >= 0:
                    st.c_pn[j] = cpn
                    st.c_dn[j] = cdn
                    st.c_dist[j] = cdist
                    st.c_lb[j] = INF if cdn == 0 else clb
                else:
                    if guide.on:
                        # the child's mover is the attacker when the child is an OR node
                        e = evaluate(st.c_m[j], st.c_p[j], geo, guide.zones, guide.w, guide.buf)
                        st.c_pn[j], st.c_dn[j] = initial_numbers(e if cq == 0 else -e, guide.step, guide.cap)
                    else:
                        st.c_pn[j] = 1
                        st.c_dn[j] = 1
                    st.c_dist[j] = DMAX
                    st.c_lb[j] = 0
            st.f_n[d] = n
        else:
            # back from child st.f_best[d]: take its result
            j = off + st.f_best[d]
            st.c_pn[j] = rpn
            st.c_dn[j] = rdn
            st.c_r[j] = rr
            st.c_dist[j] = rdist
            st.c_lb[j] = rlb
            if multi:
                st.c_b[j] = 0
            # refresh the other unresolved children from the table
            stats[3] += st.f_n[d]
            for jj in range(off, off + st.f_n[d]):
                if jj == j or st.c_pn[jj] == 0 or st.c_dn[jj] == 0:
                    continue
                ci, cpn, cdn, cdist, clb = tt_probe(tt, st.c_k1[jj], st.c_k2[jj])
                if ci >= 0:
                    st.c_pn[jj] = cpn
                    st.c_dn[jj] = cdn
                    st.c_dist[jj] = cdist
                    st.c_lb[jj] = INF if cdn == 0 else clb
                    if multi and d + 1 < BUSY_DEPTH:
                        st.c_b[jj] = par.busy[busy_slot(par.busy, st.c_k1[jj], st.c_k2[jj])]
        # ---- node values from the children
        q = st.f_q[d]
        n = st.f_n[d]
        pn = 0
        dn = 0
        r = INF
        dist = DMAX
        lb = INF
        best = -1
        # the child to follow: the smallest picking number (pn at OR, dn at AND) and the
        # second smallest, v1 and v2 (with several threads: virtual, see the module
        # docstring of solver.kernels.shared); rmin is the real smallest, the node's number
        v1 = INF + 1
        v2 = INF + 1
        rmin = INF + 1
        rbest = -1  # the child of the real smallest
        # several threads: a per-thread rotation of the order in which ties are met
        rot = 0
        if multi and par.rot and n > 1:
            rot = np.int64(((st.f_k1[d] ^ np.uint64(par.rot)) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) % n
        # weak proof numbers (Ueda et al. 2008) on the summing side: max + (unresolved - 1)
        # instead of the sum, so that cycles and transpositions cannot blow numbers up
        u = 0
        # the numbers an open OR node stores (``spn``, ``sdn``) when a child is disproven by
        # a repetition of a frame above this one (``leak``): that child counted as
        # unexplored (pn = dn = 1). The frame's own numbers hold only on this path; stored,
        # they would overstate the node's pn on every other path that reaches it
        spn = 0
        sdn = 0
        leak = False
        if q == 0:  # OR: pn = min pn, dn = weak sum of dn
            dmaxc = 0
            fmin = INF + 1
            fdmax = 0
            fu = 0
            for t in range(n):
                jj = off + t
                if multi:
                    jj += rot
                    if jj >= off + n:
                        jj -= n
                cpn = st.c_pn[jj]
                cdn = st.c_dn[jj]
                if cdn != 0:
                    u += 1
                    if cdn > dmaxc:
                        dmaxc = cdn
                fpn = cpn
                fdn = cdn
                if cdn == 0 and st.c_r[jj] < d:
                    leak = True
                    fpn = 1
                    fdn = 1
                if fdn != 0:
                    fu += 1
                    if fdn > fdmax:
                        fdmax = fdn
                if fpn < fmin:
                    fmin = fpn
                if multi and cpn < rmin:
                    rmin = cpn
                    rbest = jj - off
                vpn = cpn
                if multi and par.vnum and st.c_b[jj] > 0 and cpn != 0:
                    vpn = min(cpn * (1 + st.c_b[jj]), INF)
                if vpn < v1:
                    v2 = v1
                    v1 = vpn
                    best = jj - off
                elif vpn < v2:
                    v2 = vpn
                if cpn == 0:
                    if st.c_dist[jj] + 1 < dist:
                        dist = st.c_dist[jj] + 1
                        best = jj - off
                if st.c_r[jj] < r:
                    r = st.c_r[jj]
                if st.c_lb[jj] < lb:
                    lb = st.c_lb[jj]
            pn = min(rmin if multi else v1, INF)
            if pn == 0:
                dn = INF
            elif u == 0:
                dn = 0
                pn = INF
            else:
                dn = min(dmaxc + u - 1, INF - 1)
                pn = min(pn + EDGE, INF - 1)
            lb = min(lb + 1, INF)
            if leak and pn != 0 and dn != 0:
                spn = min(fmin + EDGE, INF - 1)
                sdn = min(fdmax + fu - 1, INF - 1)
            if multi and pn != 0 and dn != 0 and st.c_pn[off + best] >= st.f_thpn[d] - EDGE:
                best = rbest  # the virtual choice is over the threshold: the real one
                v1 = rmin
                v2 = INF + 1
                for jj in range(off, off + n):
                    if jj - off != rbest and st.c_pn[jj] < v2:
                        v2 = st.c_pn[jj]
        else:  # AND: pn = weak sum of pn, dn = min dn
            pmaxc = 0
            dmax = 0
            rdep = -1
            lbmax = 0
            for t in range(n):
                jj = off + t
                if multi:
                    jj += rot
                    if jj >= off + n:
                        jj -= n
                cdn = st.c_dn[jj]
                cpn = st.c_pn[jj]
                if cpn != 0:
                    u += 1
                    if cpn > pmaxc:
                        pmaxc = cpn
                if multi and cdn < rmin:
                    rmin = cdn
                    rbest = jj - off
                vdn = cdn
                if multi and par.vnum and st.c_b[jj] > 0 and cdn != 0:
                    vdn = min(cdn * (1 + st.c_b[jj]), INF)
                if vdn < v1:
                    v2 = v1
                    v1 = vdn
                    best = jj - off
                elif vdn < v2:
                    v2 = vdn
                if cdn == 0 and st.c_r[jj] > rdep:
                    rdep = st.c_r[jj]
                if st.c_dist[jj] > dmax:
                    dmax = st.c_dist[jj]
                if st.c_lb[jj] > lbmax:
                    lbmax = st.c_lb[jj]
            dn = min(rmin if multi else v1, INF)
            if dn == 0:
                pn = INF
                r = rdep
            elif u == 0:
                pn = 0
                dn = INF
            else:
                pn = min(pmaxc + u - 1, INF - 1)
                dn = min(dn + EDGE, INF - 1)
            if pn == 0:
                dist = min(dmax + 1, DMAX)
                # the defender's slowest line: report it as the best move
                for jj in range(off, off + n):
                    if st.c_dist[jj] == dmax:
                        best = jj - off
                        break
            lb = min(lbmax + 1, INF)
            if multi and pn != 0 and dn != 0 and st.c_dn[off + best] >= st.f_thdn[d] - EDGE:
                best = rbest  # the virtual choice is over the threshold: the real one
                v1 = rmin
                v2 = INF + 1
                for jj in range(off, off + n):
                    if jj - off != rbest and st.c_dn[jj] < v2:
                        v2 = st.c_dn[jj]
        if multi:
            if load_i64(par.ctl, 0) or load_i64(par.ctl, 1) != epoch:
                abort = 1  # another thread settled the root, the driver stops, or asks to start again
            elif d > 0 and pn != 0 and dn != 0:
                # settled meanwhile by another thread (a stored result is path-independent)
                ti, tpn, tdn, tdist, tlb = tt_probe(tt, st.f_k1[d], st.f_k2[d])
                if ti >= 0 and (tpn == 0 or tdn == 0):
                    pn = tpn
                    dn = tdn
                    r = INF
                    dist = tdist
                    lb = INF if tdn == 0 else tlb
                    best = -1
        if stats[0] - nodes0 >= budget:
            abort = 1
        if d + 1 >= maxd and pn != 0 and dn != 0:
            # the path-length limit: no deeper frame. The node is cut as a non-win that
            # relies on the whole path (r = -1 < every ply): like a repetition it is
            # never stored, so it says nothing beyond this path, and a proof never rests
            # on it; a root "disproof" with r = -1 is reported as cut, not as a disproof
            pn = INF
            dn = 0
            r = -1
            stats[6] += 1
        if pn >= st.f_thpn[d] or dn >= st.f_thdn[d] or pn == 0 or dn == 0 or abort:
            # ---- return
            effort = stats[0] - st.f_nodes0[d] + 1
            m = st.f_m[d]
            p = st.f_p[d]
            s = st.f_s[d]
            resolved = pn == 0 or dn == 0
            if dn == 0 and (r < 0 or (r < d and not naive)):
                rr = r  # path-dependent: not stored, lives in the parent's frame only
                tt_touch(tt, st.f_k1[d], st.f_k2[d])  # but explored (the draw closure reads it)
            else:
                rr = INF
                bm = st.c_mv[off + best] if best >= 0 else -1
                if leak and not resolved:
                    tt_store(tt, st.f_k1[d], st.f_k2[d], spn, sdn, DMAX, min(lb, DMAX), bm, effort)
                else:
                    tt_store(tt, st.f_k1[d], st.f_k2[d], pn, dn, dist if pn == 0 else DMAX, min(lb, DMAX), bm, effort)
                if resolved:
                    pass_store(tt, m, p, s, q, pn, dn, dist, geo, symtab)
            par.path[path_slot(st.f_k1[d], st.f_k2[d])] -= 1
            if multi and d < BUSY_DEPTH:
                busy_add(par.busy, busy_slot(par.busy, st.f_k1[d], st.f_k2[d]), -1)
            rpn = pn
            rdn = dn
            rdist = dist if pn == 0 else DMAX
            rlb = lb if rr == INF else 0
            if d == 0:
                out[0] = pn
                out[1] = dn
                out[2] = rdist
                out[3] = min(lb, DMAX)
                out[4] = st.c_mv[off + best] if best >= 0 else -1
                out[5] = rr
                if multi and resolved and rr == INF:
                    par.ctl[0] = 1  # settled: every thread stops
                return 1 if rr < 0 else 0
            d -= 1
            continue
        # ---- descend into the most proving child
        b = off + best
        st.f_best[d] = best
        cd = d + 1
        st.f_m[cd] = st.c_m[b]
        st.f_p[cd] = st.c_p[b]
        st.f_s[cd] = 1 - st.f_s[d]
        st.f_q[cd] = 1 - q
        if v2 > INF:
            v2 = INF
        if q == 0:
            st.f_thpn[cd] = min(st.f_thpn[d] - EDGE, max(v2 + 1, v2 + (v2 >> 2)))
            st.f_thdn[cd] = min(st.f_thdn[d] - (u - 1), INF)
        else:
            st.f_thdn[cd] = min(st.f_thdn[d] - EDGE, max(v2 + 1, v2 + (v2 >> 2)))
            st.f_thpn[cd] = min(st.f_thpn[d] - (u - 1), INF)
        d = cd
        entering = True
