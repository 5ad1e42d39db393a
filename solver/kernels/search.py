"""Compiled df-pn (Nagai 2002) over the move kernels: the inner loop of :mod:`solver.search.prover`.

One AND/OR search answers "does the *attacker* win?". A node is a position seen from its
mover ``(m, p, s)`` plus ``q``: 0 when the mover is the attacker (OR node), 1 when the
mover defends (AND node). Proof numbers are always for "the attacker wins".

Everything is written without recursion (an explicit stack of frames; DESIGN.md
pitfalls) and without allocation: the caller passes every buffer, so the kernels can be
compiled ``_nrt=False`` (no reference counting of the namedtuple arrays at each call).

Transposition table (``TT``): 4-way buckets keyed by the canonical position (minimum over
the plain board symmetries; side-``o`` positions folded by a colour-swapping symmetry where
one exists; the side dropped when there is no ``capture``, where it has no effect) plus
``q``. Entries hold pn, dn, ``dist`` (an upper bound on the attacker's fastest win, valid
when pn = 0), ``lb`` (a lower bound on it), the best move and the effort (nodes).

Cycles and the graph-history-interaction problem
------------------------------------------------
A position that repeats one on the current path is a *non-win* for the attacker (endless
play is a draw, RULES.md §4), never a win. Such a disproof is only valid below that
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

Threshold control: the 1+ε trick (Pawlewicz & Lew 2007) for the child's threshold.
The pass argument (RULES.md §10) is applied when storing: a board lost for X to move is
won for Y to move (Y passes), and a board not won for X to move is not lost for Y to move.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solver.kernels.bits import ONE, ZERO, ctz, popcount
from solver.index import index_of
from solver.kernels.moves import LOSS0, ONGOING, WIN0, apply_move, is_legal

INF = 1 << 30
NOPATH = -1
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
DMAX = 0xFFFF  # "no distance known"

TT = namedtuple("TT", "k1 k2 pn dn dist lb best onpath effort")
Stack = namedtuple(
    "Stack",
    "f_m f_p f_s f_q f_thpn f_thdn f_n f_best f_tt f_nodes0 f_k1 f_k2 "
    "c_m c_p c_k1 c_k2 c_pn c_dn c_r c_dist c_lb c_mv buf_m buf_p",
)
# stats: [0] nodes, [1] children generated, [2] max depth, [3] aborted by depth, [4] db hits
DbInfo = namedtuple("DbInfo", "use var A B")


def new_tt(bits: int) -> TT:
    n = 1 << bits
    return TT(
        np.full(n, EMPTY, dtype=np.uint64),
        np.full(n, EMPTY, dtype=np.uint64),
        np.ones(n, dtype=np.uint32),
        np.ones(n, dtype=np.uint32),
        np.full(n, DMAX, dtype=np.uint16),
        np.zeros(n, dtype=np.uint16),
        np.full(n, -1, dtype=np.int16),
        np.full(n, NOPATH, dtype=np.int16),
        np.zeros(n, dtype=np.uint32),
    )


def new_stack(maxd: int, maxc: int) -> Stack:
    u = lambda n: np.zeros(n, dtype=np.uint64)  # noqa: E731
    i = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    return Stack(
        u(maxd), u(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), u(maxd), u(maxd),
        u(maxd * maxc), u(maxd * maxc), u(maxd * maxc), u(maxd * maxc), i(maxd * maxc), i(maxd * maxc),
        i(maxd * maxc), i(maxd * maxc), i(maxd * maxc), i(maxd * maxc), u(maxc), u(maxc),
    )


# ---------------------------------------------------------------------------- keys and table


def sym_tables(geo) -> np.ndarray:
    """``symtab[g, b, v]``: the image under symmetry ``g`` of the points ``8b..8b+7`` given
    by the byte ``v`` — a set is permuted with one lookup per byte instead of one per bit.
    Row ``G`` (after the plain symmetries) is the colour-swapping map used to fold side ``o``
    (the identity where there is none)."""
    n = geo.npoints
    nb = (n + 7) // 8
    perms = [geo.perm[g] for g in range(geo.perm.shape[0])] + [geo.swap]
    tab = np.zeros((len(perms), nb, 256), dtype=np.uint64)
    vals = np.arange(256)
    for g, perm in enumerate(perms):
        for b in range(nb):
            for i in range(8):
                pt = 8 * b + i
                if pt < n:
                    tab[g, b, (vals >> i) & 1 == 1] |= np.uint64(1) << np.uint64(perm[pt])
    return tab


@njit(cache=True, _nrt=False)
def permute8(bits, g, symtab):
    """Image of a point set under symmetry ``g`` (see :func:`sym_tables`)."""
    out = ZERO
    b = 0
    while bits:
        out |= symtab[g, b, np.int64(bits & np.uint64(0xFF))]
        bits >>= np.uint64(8)
        b += 1
    return out


@njit(cache=True, _nrt=False)
def canon(m, p, s, q, geo, symtab):
    """Canonical key ``(k1, k2)`` of ``(m, p, s)`` with question ``q``: the smallest
    (mover image, opponent image) over the plain symmetries (the identity is the first)."""
    ng = geo.perm.shape[0]
    if (geo.traps[0] | geo.traps[1]) == ZERO:
        s = 0  # without traps the side to move changes nothing
    elif geo.sides == 1 and s == 1:
        m = permute8(m, ng, symtab)
        p = permute8(p, ng, symtab)
        s = 0
    bm = m
    bp = p
    for g in range(1, ng):
        mg = permute8(m, g, symtab)
        if mg > bm:
            continue
        pg = permute8(p, g, symtab)
        if mg < bm or pg < bp:
            bm = mg
            bp = pg
    k1 = bm | (np.uint64(s) << np.uint64(63)) | (np.uint64(q) << np.uint64(62))
    return k1, bp


@njit(cache=True, _nrt=False)
def decode_key(k1, k2):
    """``(m, p, s, q)`` of a key made by :func:`canon`: a position the key stands for (its
    canonical image; ``s`` is 0 where :func:`canon` dropped the side)."""
    m = k1 & np.uint64((1 << 62) - 1)
    s = np.int64((k1 >> np.uint64(63)) & ONE)
    q = np.int64((k1 >> np.uint64(62)) & ONE)
    return m, k2, s, q


@njit(cache=True, _nrt=False)
def terminal(m, p, geo):
    """``WIN0`` / ``LOSS0`` for the mover if the position is over, else ``ONGOING``
    (:func:`solver.kernels.moves.terminal`, visiting only the empty pivots)."""
    c = geo.centre
    if m & c == c:
        return WIN0
    if p & c == c:
        return LOSS0
    free = geo.pivots & ~(m | p)
    while free:
        z = ctz(free)
        rm = geo.ringmask[z]
        if popcount(m & rm) > popcount(p & rm):
            return ONGOING
        free &= free - ONE
    return LOSS0


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the cache to load ``arr[idx]`` (LLVM ``prefetch``, read, high locality)."""
    if not isinstance(arr, types.Array):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        name = "llvm.prefetch.p0" if str(i8p.type) == "ptr" else "llvm.prefetch.p0i8"  # opaque pointers or not
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, _nrt=False)
def tt_prefetch(tt, k1, k2):
    """Start loading the bucket of a key (all the fields a probe reads)."""
    mask = np.uint64((tt.k1.shape[0] >> 2) - 1)
    b = _bucket(k1, k2, mask)
    prefetch(tt.k1, b)
    prefetch(tt.k2, b)
    prefetch(tt.pn, b)
    prefetch(tt.dn, b)
    prefetch(tt.onpath, b)
    prefetch(tt.dist, b)
    prefetch(tt.lb, b)


@njit(cache=True, _nrt=False)
def _bucket(k1, k2, mask):
    h = k1 * np.uint64(0x9E3779B97F4A7C15) ^ (k2 * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    return int(h & mask) * 4


@njit(cache=True, _nrt=False)
def tt_find(tt, k1, k2):
    mask = np.uint64((tt.k1.shape[0] >> 2) - 1)
    b = _bucket(k1, k2, mask)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
    return -1


@njit(cache=True, _nrt=False)
def tt_slot(tt, k1, k2):
    """The entry of a key, made if absent (replacing the least valuable); -1 if none free."""
    mask = np.uint64((tt.k1.shape[0] >> 2) - 1)
    b = _bucket(k1, k2, mask)
    victim = -1
    vscore = np.int64(1) << np.int64(62)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
        if tt.onpath[i] != NOPATH:
            continue
        if tt.k2[i] == EMPTY:
            score = np.int64(-1)
        else:
            score = np.int64(tt.effort[i])
            if tt.pn[i] == 0 or tt.dn[i] == 0:
                score += np.int64(1) << np.int64(40)
        if score < vscore:
            vscore = score
            victim = i
    if victim >= 0:
        i = victim
        tt.k1[i] = k1
        tt.k2[i] = k2
        tt.pn[i] = 1
        tt.dn[i] = 1
        tt.dist[i] = DMAX
        tt.lb[i] = 0
        tt.best[i] = -1
        tt.effort[i] = 0
    return victim


@njit(cache=True, _nrt=False)
def tt_store(tt, k1, k2, pn, dn, dist, lb, best, effort):
    i = tt_slot(tt, k1, k2)
    if i < 0:
        return i
    if tt.pn[i] == 0 or tt.dn[i] == 0:  # resolved: keep, only tighten the distances
        if pn == 0 and tt.pn[i] == 0:
            if dist < tt.dist[i]:
                tt.dist[i] = dist
                tt.best[i] = best
            if lb > tt.lb[i]:
                tt.lb[i] = min(lb, DMAX)
        return i
    tt.pn[i] = min(pn, INF)
    tt.dn[i] = min(dn, INF)
    tt.dist[i] = min(dist, DMAX)
    tt.lb[i] = min(max(lb, np.int64(tt.lb[i])), DMAX)
    tt.best[i] = best
    tt.effort[i] = min(np.int64(tt.effort[i]) + effort, np.int64(0xFFFFFFFF))
    return i


# ---------------------------------------------------------------------------- leaves


@njit(cache=True, _nrt=False)
def db_probe(m, p, s, geo, dbinfo, dbvals, lay):
    """Stored value code of a position a database answers for, else -1."""
    if not dbinfo.use:
        return -1
    x = m if s == 0 else p
    o = p if s == 0 else m
    nx = popcount(x)
    no = popcount(o)
    if dbinfo.var:
        if nx > dbinfo.A or no > dbinfo.B:
            return -1
    elif nx != dbinfo.A or no != dbinfo.B:
        return -1
    return _db_code(m, p, s, geo, dbvals, lay)


@njit(cache=True, _nrt=False)
def _db_code(m, p, s, geo, dbvals, lay):
    return np.int64(dbvals[index_of(m, p, s, geo, lay)])


@njit(cache=True, _nrt=False)
def leaf_value(code, q):
    """(pn, dn, plies) for the attacker from a database code (draw: disproven)."""
    if code & 0x8000 == 0:
        return INF, 0, DMAX
    d = code & 0x3FFF
    mover_wins = (code & 0x4000) != 0
    if mover_wins == (q == 0):
        return 0, INF, d
    return INF, 0, DMAX


# ---------------------------------------------------------------------------- df-pn


@njit(cache=True, _nrt=False)
def _pass_store(tt, m, p, s, q, pn, dn, dist, geo, symtab):
    """RULES.md §10 applied to a path-independent result of non-terminal ``(m, p, s)``."""
    if q == 1 and pn == 0:
        # the mover X loses: for Y to move on the same board, Y wins by passing
        if terminal(p, m, geo) == ONGOING:
            k1, k2 = canon(p, m, 1 - s, 0, geo, symtab)
            tt_store(tt, k1, k2, 0, INF, min(dist + 1, DMAX - 1), 1, -1, 0)
    elif q == 0 and dn == 0:
        # X to move does not win: Y to move on the same board does not lose
        if terminal(p, m, geo) == ONGOING:
            k1, k2 = canon(p, m, 1 - s, 1, geo, symtab)
            tt_store(tt, k1, k2, INF, 0, DMAX, 0, -1, 0)


@njit(cache=True, _nrt=False)
def dfpn(rm, rp, rs, rq, budget, maxd, maxc, geo, symtab, tt, st, stats, dbinfo, dbvals, lay, out, naive):
    """df-pn from ``(rm, rp, rs)`` with question ``rq`` for at most ``budget`` new nodes.

    ``out`` receives ``[pn, dn, dist, lb, best move]`` of the root. Returns 0 when it
    stopped normally (resolved or budget spent), 1 when the stack depth ran out.
    ``naive`` stores path-dependent disproofs like any other (wrong; for tests only).
    """
    nodes0 = stats[0]
    npts = geo.npoints
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
            ti = tt_slot(tt, k1, k2)
            st.f_tt[d] = ti
            if ti >= 0:
                tt.onpath[ti] = d
            n = 0
            cq = 1 - q
            # pass 1: the children, terminal and database ones settled, the others keyed
            # and their table buckets prefetched (the probes are the main cost: misses)
            free = geo.pivots & ~(m | p)
            while free:
                z = np.int64(ctz(free))
                free &= free - ONE
                rmask = geo.ringmask[z]
                if popcount(m & rmask) <= popcount(p & rmask):
                    continue
                first = n
                for k in range(6):
                    m2, p2 = apply_move(m, p, s, z, k, geo)
                    cm = p2  # next mover's balls
                    cp = m2
                    dup = False
                    for j in range(off + first, off + n):
                        if st.c_m[j] == cm and st.c_p[j] == cp:
                            dup = True
                            break
                    if dup:
                        continue
                    j = off + n
                    n += 1
                    st.c_m[j] = cm
                    st.c_p[j] = cp
                    st.c_mv[j] = z * 6 + k
                    st.c_r[j] = INF
                    stats[1] += 1
                    t = terminal(cm, cp, geo)
                    if t != ONGOING:
                        if (t == WIN0) == (cq == 0):
                            st.c_pn[j] = 0
                            st.c_dn[j] = INF
                            st.c_dist[j] = 0
                            st.c_lb[j] = 0
                        else:
                            st.c_pn[j] = INF
                            st.c_dn[j] = 0
                            st.c_dist[j] = DMAX
                            st.c_lb[j] = INF
                        st.c_k1[j] = EMPTY
                        continue
                    code = db_probe(cm, cp, 1 - s, geo, dbinfo, dbvals, lay)
                    if code >= 0:
                        stats[4] += 1
                        a, b, dd = leaf_value(code, cq)
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
            # pass 2: the table probes
            for j in range(off, off + n):
                ck1 = st.c_k1[j]
                if ck1 == EMPTY:
                    continue
                ci = tt_find(tt, ck1, st.c_k2[j])
                if ci >= 0:
                    cpn = np.int64(tt.pn[ci])
                    cdn = np.int64(tt.dn[ci])
                    if cpn != 0 and cdn != 0 and tt.onpath[ci] != NOPATH:
                        st.c_pn[j] = INF  # repetition: a draw, never a win
                        st.c_dn[j] = 0
                        st.c_r[j] = tt.onpath[ci]
                        st.c_dist[j] = DMAX
                        st.c_lb[j] = 0  # says nothing about the true distance
                    else:
                        st.c_pn[j] = cpn
                        st.c_dn[j] = cdn
                        st.c_dist[j] = tt.dist[ci]
                        st.c_lb[j] = INF if cdn == 0 else tt.lb[ci]
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
            # refresh the other unresolved children from the table
            for jj in range(off, off + st.f_n[d]):
                if jj == j or st.c_pn[jj] == 0 or st.c_dn[jj] == 0:
                    continue
                ci = tt_find(tt, st.c_k1[jj], st.c_k2[jj])
                if ci >= 0:
                    st.c_pn[jj] = tt.pn[ci]
                    st.c_dn[jj] = tt.dn[ci]
                    st.c_dist[jj] = tt.dist[ci]
                    st.c_lb[jj] = INF if tt.dn[ci] == 0 else tt.lb[ci]
        # ---- node values from the children
        q = st.f_q[d]
        n = st.f_n[d]
        pn = 0
        dn = 0
        r = INF
        dist = DMAX
        lb = INF
        best = -1
        v1 = INF + 1
        v2 = INF + 1
        # weak proof numbers (Ueda et al. 2008) on the summing side: max + (unresolved - 1)
        # instead of the sum, so that cycles and transpositions cannot blow numbers up
        u = 0
        if q == 0:  # OR: pn = min pn, dn = weak sum of dn
            dmaxc = 0
            for jj in range(off, off + n):
                cpn = st.c_pn[jj]
                cdn = st.c_dn[jj]
                if cdn != 0:
                    u += 1
                    if cdn > dmaxc:
                        dmaxc = cdn
                if cpn < v1:
                    v2 = v1
                    v1 = cpn
                    best = jj - off
                elif cpn < v2:
                    v2 = cpn
                if cpn == 0:
                    if st.c_dist[jj] + 1 < dist:
                        dist = st.c_dist[jj] + 1
                        best = jj - off
                if st.c_r[jj] < r:
                    r = st.c_r[jj]
                if st.c_lb[jj] < lb:
                    lb = st.c_lb[jj]
            pn = min(v1, INF)
            if pn == 0:
                dn = INF
            elif u == 0:
                dn = 0
                pn = INF
            else:
                dn = min(dmaxc + u - 1, INF - 1)
            lb = min(lb + 1, INF)
        else:  # AND: pn = weak sum of pn, dn = min dn
            pmaxc = 0
            dmax = 0
            rbest = -1
            lbmax = 0
            for jj in range(off, off + n):
                cdn = st.c_dn[jj]
                cpn = st.c_pn[jj]
                if cpn != 0:
                    u += 1
                    if cpn > pmaxc:
                        pmaxc = cpn
                if cdn < v1:
                    v2 = v1
                    v1 = cdn
                    best = jj - off
                elif cdn < v2:
                    v2 = cdn
                if cdn == 0 and st.c_r[jj] > rbest:
                    rbest = st.c_r[jj]
                if st.c_dist[jj] > dmax:
                    dmax = st.c_dist[jj]
                if st.c_lb[jj] > lbmax:
                    lbmax = st.c_lb[jj]
            dn = min(v1, INF)
            if dn == 0:
                pn = INF
                r = rbest
            elif u == 0:
                pn = 0
                dn = INF
            else:
                pn = min(pmaxc + u - 1, INF - 1)
            if pn == 0:
                dist = min(dmax + 1, DMAX)
                # the defender's slowest line: report it as the best move
                for jj in range(off, off + n):
                    if st.c_dist[jj] == dmax:
                        best = jj - off
                        break
            lb = min(lbmax + 1, INF)
        if stats[0] - nodes0 >= budget:
            abort = 1
        if d + 1 >= maxd and pn != 0 and dn != 0:
            abort = 2
        if pn >= st.f_thpn[d] or dn >= st.f_thdn[d] or pn == 0 or dn == 0 or abort:
            # ---- return
            ti = st.f_tt[d]
            effort = stats[0] - st.f_nodes0[d] + 1
            m = st.f_m[d]
            p = st.f_p[d]
            s = st.f_s[d]
            resolved = pn == 0 or dn == 0
            if dn == 0 and r < d and not naive:
                rr = r  # path-dependent: not stored, lives in the parent's frame only
            else:
                rr = INF
                bm = st.c_mv[off + best] if best >= 0 else -1
                tt_store(tt, st.f_k1[d], st.f_k2[d], pn, dn, dist if pn == 0 else DMAX, min(lb, DMAX), bm, effort)
                if resolved:
                    _pass_store(tt, m, p, s, q, pn, dn, dist, geo, symtab)
            if ti >= 0:
                tt.onpath[ti] = NOPATH
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
                return 1 if abort == 2 else 0
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
            st.f_thpn[cd] = min(st.f_thpn[d], max(v2 + 1, v2 + (v2 >> 2)))
            st.f_thdn[cd] = min(st.f_thdn[d] - (u - 1), INF)
        else:
            st.f_thdn[cd] = min(st.f_thdn[d], max(v2 + 1, v2 + (v2 >> 2)))
            st.f_thpn[cd] = min(st.f_thpn[d] - (u - 1), INF)
        d = cd
        entering = True


# ---------------------------------------------------------------------------- persistence


@njit(cache=True, _nrt=False)
def tt_select(tt, min_resolved, min_open, out_idx):
    """Indices of entries worth keeping: resolved with effort >= ``min_resolved``, open
    with effort >= ``min_open``; entries on the current path are skipped. Returns count."""
    n = 0
    for i in range(tt.k1.shape[0]):
        if tt.k2[i] == EMPTY or tt.onpath[i] != NOPATH:
            continue
        e = np.int64(tt.effort[i])
        if tt.pn[i] == 0 or tt.dn[i] == 0:
            if e >= min_resolved:
                out_idx[n] = i
                n += 1
        elif e >= min_open:
            out_idx[n] = i
            n += 1
    return n


@njit(cache=True, _nrt=False)
def tt_load(tt, k1, k2, pn, dn, dist, lb, best, effort):
    for j in range(k1.shape[0]):
        tt_store(tt, k1[j], k2[j], np.int64(pn[j]), np.int64(dn[j]), np.int64(dist[j]), np.int64(lb[j]),
                 np.int64(best[j]), np.int64(effort[j]))


# ---------------------------------------------------------------------------- distances
#
# Refinement of a proven distance: "does the attacker win within n plies?" by a
# depth-limited AND/OR search, iterated over n by :meth:`solver.search.prover.Prover.refine`.
# No repetition test is needed: the depth bounds the tree, and its value is the value of
# the finite game "attacker wins within n plies", independent of the path. So every
# completed node is stored, in a table of its own (``RTT``) keyed by the canonical key of
# df-pn (position + question) with two depth-aware facts per entry:
#   ub  -- the attacker wins within ub plies (hence within every n >= ub); DMAX: unknown
#   nw  -- the attacker does not win within nw plies (hence not within n <= nw); -1: none
# Facts from the df-pn table are used too (all sound): a proof with distance <= n, a
# path-independent disproof (never a win), a lower bound > n. A node cut off by the budget
# stores nothing.

RTT = namedtuple("RTT", "k1 k2 ub nw")
RStack = namedtuple("RStack", "f_m f_p f_s f_q f_n f_cur f_cnt f_k1 f_k2 c_m c_p c_mv c_sc c_k1 c_k2")


def new_rtt(bits: int) -> RTT:
    n = 1 << bits
    return RTT(
        np.full(n, EMPTY, dtype=np.uint64),
        np.full(n, EMPTY, dtype=np.uint64),
        np.full(n, DMAX, dtype=np.uint16),
        np.full(n, -1, dtype=np.int16),
    )


def new_rstack(maxd: int, maxc: int) -> RStack:
    u = lambda n: np.zeros(n, dtype=np.uint64)  # noqa: E731
    i = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    return RStack(
        u(maxd), u(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), u(maxd), u(maxd),
        u(maxd * maxc), u(maxd * maxc), i(maxd * maxc), i(maxd * maxc), u(maxd * maxc), u(maxd * maxc),
    )


@njit(cache=True, _nrt=False)
def rtt_find(rt, k1, k2):
    mask = np.uint64((rt.k1.shape[0] >> 2) - 1)
    b = _bucket(k1, k2, mask)
    for i in range(b, b + 4):
        if rt.k1[i] == k1 and rt.k2[i] == k2:
            return i
    return -1


@njit(cache=True, _nrt=False)
def rtt_put(rt, k1, k2, win, n):
    """Record "the attacker wins within n" (``win``) or "does not win within n"."""
    mask = np.uint64((rt.k1.shape[0] >> 2) - 1)
    b = _bucket(k1, k2, mask)
    victim = -1
    vscore = np.int64(1) << np.int64(40)
    for i in range(b, b + 4):
        if rt.k1[i] == k1 and rt.k2[i] == k2:
            victim = i
            break
        if rt.k2[i] == EMPTY:
            score = np.int64(-2)
        else:  # depth-aware replacement: the shallowest fact is the cheapest to redo
            score = np.int64(rt.nw[i])
            if rt.ub[i] != DMAX and np.int64(rt.ub[i]) > score:
                score = np.int64(rt.ub[i])
        if score < vscore:
            vscore = score
            victim = i
    i = victim
    if rt.k1[i] != k1 or rt.k2[i] != k2:
        rt.k1[i] = k1
        rt.k2[i] = k2
        rt.ub[i] = DMAX
        rt.nw[i] = -1
    if win:
        if n < rt.ub[i]:
            rt.ub[i] = n
    elif n > rt.nw[i]:
        rt.nw[i] = min(n, 0x7FFF)


@njit(cache=True, _nrt=False)
def _r_child(cm, cp, cs, cq, rem, geo, symtab, tt, rt, dbinfo, dbvals, lay):
    """A child seen from its mover: ``(v, k1, k2, score)`` where v is 1 (the attacker wins
    within ``rem`` plies), 0 (he does not) or -1 (search it); lower scores are searched
    first."""
    t = terminal(cm, cp, geo)
    if t != ONGOING:
        return (1 if (t == WIN0) == (cq == 0) else 0), EMPTY, EMPTY, 0
    if rem <= 0:
        return 0, EMPTY, EMPTY, 0
    code = db_probe(cm, cp, cs, geo, dbinfo, dbvals, lay)
    if code >= 0:
        a, b, dd = leaf_value(code, cq)
        return (1 if a == 0 and dd <= rem else 0), EMPTY, EMPTY, 0
    k1, k2 = canon(cm, cp, cs, cq, geo, symtab)
    lo = 0
    i = rtt_find(rt, k1, k2)
    if i >= 0:
        if np.int64(rt.ub[i]) <= rem:
            return 1, k1, k2, 0
        if np.int64(rt.nw[i]) >= rem:
            return 0, k1, k2, 0
        lo = np.int64(rt.nw[i]) + 1
    pn = np.int64(1)
    dn = np.int64(1)
    up = np.int64(DMAX)
    j = tt_find(tt, k1, k2)
    if j >= 0:
        pn = np.int64(tt.pn[j])
        dn = np.int64(tt.dn[j])
        if pn == 0:
            up = np.int64(tt.dist[j])
            if up <= rem:
                return 1, k1, k2, 0
        elif dn == 0:
            return 0, k1, k2, 0
        if np.int64(tt.lb[j]) > rem:
            return 0, k1, k2, 0
        if np.int64(tt.lb[j]) > lo:
            lo = np.int64(tt.lb[j])
    if cq == 1:
        # the attacker chooses this child: proven ones first, then the most provable
        sc = up if pn == 0 else np.int64(0x10000) + min(pn, np.int64(0xFFFFFF))
    else:
        # the defender chooses this child: the one whose lower bound is nearest n first
        sc = (rem - lo) * np.int64(0x1000000) + min(dn, np.int64(0xFFFFFF))
    return -1, k1, k2, sc


@njit(cache=True, _nrt=False)
def win_within(rm, rp, rs, rq, n, budget, maxc, geo, symtab, tt, rt, st, stats, dbinfo, dbvals, lay, out):
    """Does the attacker win within ``n`` plies of the non-finished ``(rm, rp, rs)``,
    question ``rq`` (0: the mover attacks; 1: the mover defends)?

    Returns 1 / 0, or -1 when ``budget`` nodes were spent first. ``out[0]`` receives the
    root's deciding move (the winning one at an OR root, the refuting one at an AND
    root), -1 if none. The stack must hold ``n + 1`` frames."""
    nodes = np.int64(0)
    d = 0
    st.f_m[0] = rm
    st.f_p[0] = rp
    st.f_s[0] = rs
    st.f_q[0] = rq
    st.f_n[0] = n
    k1, k2 = canon(rm, rp, rs, rq, geo, symtab)
    st.f_k1[0] = k1
    st.f_k2[0] = k2
    out[0] = -1
    entering = True
    res = 0
    mv = -1
    while True:
        off = d * maxc
        q = st.f_q[d]
        decided = -1
        if entering:
            entering = False
            nodes += 1
            stats[0] += 1
            stats[5] += 1
            if nodes > budget:
                return -1
            m = st.f_m[d]
            p = st.f_p[d]
            s = st.f_s[d]
            rem = st.f_n[d]
            i = rtt_find(rt, st.f_k1[d], st.f_k2[d])
            if i >= 0 and np.int64(rt.ub[i]) <= rem:
                decided = 1
            elif i >= 0 and np.int64(rt.nw[i]) >= rem:
                decided = 0
            cnt = 0
            if decided < 0:
                cq = 1 - q
                for z in range(geo.npoints):
                    if decided >= 0:
                        break
                    if not is_legal(m, p, z, geo):
                        continue
                    first = cnt
                    for k in range(6):
                        m2, p2 = apply_move(m, p, s, z, k, geo)
                        cm = p2
                        cp = m2
                        dup = False
                        for j in range(off + first, off + cnt):
                            if st.c_m[j] == cm and st.c_p[j] == cp:
                                dup = True
                                break
                        if dup:
                            continue
                        stats[1] += 1
                        v, ck1, ck2, sc = _r_child(cm, cp, 1 - s, cq, rem - 1, geo, symtab, tt, rt, dbinfo,
                                                   dbvals, lay)
                        if v < 0:
                            j = off + cnt
                            cnt += 1
                            st.c_m[j] = cm
                            st.c_p[j] = cp
                            st.c_mv[j] = z * 6 + k
                            st.c_sc[j] = sc
                            st.c_k1[j] = ck1
                            st.c_k2[j] = ck2
                        elif v == 1 - q:  # OR: a child won; AND: a child not won
                            decided = v
                            if d == 0:
                                mv = z * 6 + k
                            break
                if decided < 0 and cnt == 0:
                    decided = q  # OR: nothing wins; AND: everything wins
                if decided < 0:
                    # order the children to search (insertion sort by score)
                    for a in range(off + 1, off + cnt):
                        xm = st.c_m[a]
                        xp = st.c_p[a]
                        xv = st.c_mv[a]
                        xs = st.c_sc[a]
                        xk1 = st.c_k1[a]
                        xk2 = st.c_k2[a]
                        b = a - 1
                        while b >= off and st.c_sc[b] > xs:
                            st.c_m[b + 1] = st.c_m[b]
                            st.c_p[b + 1] = st.c_p[b]
                            st.c_mv[b + 1] = st.c_mv[b]
                            st.c_sc[b + 1] = st.c_sc[b]
                            st.c_k1[b + 1] = st.c_k1[b]
                            st.c_k2[b + 1] = st.c_k2[b]
                            b -= 1
                        st.c_m[b + 1] = xm
                        st.c_p[b + 1] = xp
                        st.c_mv[b + 1] = xv
                        st.c_sc[b + 1] = xs
                        st.c_k1[b + 1] = xk1
                        st.c_k2[b + 1] = xk2
                    st.f_cnt[d] = cnt
                    st.f_cur[d] = 0
        else:
            # back from child f_cur - 1 with result ``res``
            if res == 1 - q:
                decided = res
                if d == 0:
                    mv = st.c_mv[off + st.f_cur[d] - 1]
            elif st.f_cur[d] >= st.f_cnt[d]:
                decided = q
        if decided >= 0:
            rtt_put(rt, st.f_k1[d], st.f_k2[d], decided == 1, st.f_n[d])
            res = decided
            if d == 0:
                out[0] = mv
                return res
            d -= 1
            continue
        # ---- descend into the next child
        c = off + st.f_cur[d]
        st.f_cur[d] += 1
        cd = d + 1
        st.f_m[cd] = st.c_m[c]
        st.f_p[cd] = st.c_p[c]
        st.f_s[cd] = 1 - st.f_s[d]
        st.f_q[cd] = 1 - q
        st.f_n[cd] = st.f_n[d] - 1
        st.f_k1[cd] = st.c_k1[c]
        st.f_k2[cd] = st.c_k2[c]
        d = cd
        entering = True
