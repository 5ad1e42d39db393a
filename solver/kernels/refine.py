"""Distance refinement: "does the attacker win within n plies?"

Refinement of a proven distance by a depth-limited AND/OR search, iterated over n by
:meth:`solver.search.prover.Prover.refine`.
No repetition test is needed: the depth bounds the tree, and its value is the value of
the finite game "attacker wins within n plies", independent of the path. So every
completed node is stored, in a table of its own (``RTT``) keyed by the canonical key of
df-pn (position + question) with two depth-aware facts per entry::

    ub  -- the attacker wins within ub plies (hence within every n >= ub); DMAX: unknown
    nw  -- the attacker does not win within nw plies (hence not within n <= nw); -1: none

Facts from the df-pn table are used too (all sound): a proof with distance <= n, a
path-independent disproof (never a win), a lower bound > n. A node cut off by the budget
stores nothing.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz
from solver.kernels.code import ONGOING_V, WIN_V
from solver.kernels.leaves import db_probe, leaf_value
from solver.kernels.moves import legal_pivots, pivot_children, terminal
from solver.kernels.symkeys import canon
from solver.kernels.table import DMAX, EMPTY, bucket, key_find, line_records, tt_probe

RTT = namedtuple("RTT", "k1 k2 ub nw")
RStack = namedtuple("RStack", "f_m f_p f_s f_q f_n f_cur f_cnt f_k1 f_k2 c_m c_p c_mv c_sc c_k1 c_k2")


# An entry is one 24-byte record (the arrays of ``RTT`` are views of its fields): a probe
# reads its bucket's two or three cache lines, not one line per field.
_ENTRY = np.dtype({"names": ["k1", "k2", "ub", "nw"], "formats": ["<u8", "<u8", "<u2", "<i2"],
                   "offsets": [0, 8, 16, 18], "itemsize": 24})


def new_rtt(bits: int) -> RTT:
    """An empty distance table of ``2 ** bits`` entries (probed with
    :func:`solver.kernels.table.key_find`, written with :func:`rtt_put`)."""
    rec = line_records(1 << bits, _ENTRY)
    rec["k1"] = EMPTY
    rec["k2"] = EMPTY
    rec["ub"] = DMAX
    rec["nw"] = -1
    return RTT(rec["k1"], rec["k2"], rec["ub"], rec["nw"])


def new_rstack(maxd: int, maxc: int) -> RStack:
    """The search's stack: ``maxd`` frames of ``maxc`` children (``6 * npoints``)."""
    u = lambda n: np.zeros(n, dtype=np.uint64)  # noqa: E731
    i = lambda n: np.zeros(n, dtype=np.int64)  # noqa: E731
    return RStack(
        u(maxd), u(maxd), i(maxd), i(maxd), i(maxd), i(maxd), i(maxd), u(maxd), u(maxd),
        u(maxd * maxc), u(maxd * maxc), i(maxd * maxc), i(maxd * maxc), u(maxd * maxc), u(maxd * maxc),
    )


@njit(cache=True, _nrt=False)
def rtt_put(rt, k1, k2, win, n):
    """Record "the attacker wins within n" (``win``) or "does not win within n"."""
    b = bucket(rt, k1, k2)
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
def _r_child(cm, cp, cs, cq, rem, ctx, rt):
    """A child seen from its mover: ``(v, k1, k2, score)`` where v is 1 (the attacker wins
    within ``rem`` plies), 0 (he does not) or -1 (search it); lower scores are searched
    first."""
    geo = ctx.geo
    tt = ctx.tt
    t = terminal(cm, cp, geo)
    if t != ONGOING_V:
        return (1 if (t == WIN_V) == (cq == 0) else 0), EMPTY, EMPTY, 0
    if rem <= 0:
        return 0, EMPTY, EMPTY, 0
    code = db_probe(cm, cp, cs, geo, ctx.dbinfo, ctx.dbvals, ctx.lay)
    if code >= 0:
        a, b, dd = leaf_value(code, cq)
        return (1 if a == 0 and dd <= rem else 0), EMPTY, EMPTY, 0
    k1, k2 = canon(cm, cp, cs, cq, geo, ctx.symtab)
    lo = 0
    i = key_find(rt, k1, k2)
    if i >= 0:
        if np.int64(rt.ub[i]) <= rem:
            return 1, k1, k2, 0
        if np.int64(rt.nw[i]) >= rem:
            return 0, k1, k2, 0
        lo = np.int64(rt.nw[i]) + 1
    pn = np.int64(1)
    dn = np.int64(1)
    up = np.int64(DMAX)
    j, tpn, tdn, tdist, tlb = tt_probe(tt, k1, k2)
    if j >= 0:
        pn = np.int64(tpn)
        dn = np.int64(tdn)
        if pn == 0:
            up = np.int64(tdist)
            if up <= rem:
                return 1, k1, k2, 0
        elif dn == 0:
            return 0, k1, k2, 0
        if np.int64(tlb) > rem:
            return 0, k1, k2, 0
        if np.int64(tlb) > lo:
            lo = np.int64(tlb)
    if cq == 1:
        # the attacker chooses this child: proven ones first, then the most provable
        sc = up if pn == 0 else np.int64(0x10000) + min(pn, np.int64(0xFFFFFF))
    else:
        # the defender chooses this child: the one whose lower bound is nearest n first
        sc = (rem - lo) * np.int64(0x1000000) + min(dn, np.int64(0xFFFFFF))
    return -1, k1, k2, sc


@njit(cache=True, _nrt=False)
def win_within(ctx, rt, st, rm, rp, rs, rq, n, budget, out):
    """Does the attacker win within ``n`` plies of the non-finished ``(rm, rp, rs)``,
    question ``rq`` (0: the mover attacks; 1: the mover defends)?

    ``ctx``: a :class:`solver.kernels.dfpn.Ctx` (its table's facts are used, never
    changed); ``rt``: the distance table (:func:`new_rtt`); ``st``: a :func:`new_rstack`
    of at least ``n + 1`` frames. Returns 1 / 0, or -1 when ``budget`` nodes were spent
    first. ``out[0]`` receives the root's deciding move (the winning one at an OR root,
    the refuting one at an AND root), -1 if none."""
    geo = ctx.geo
    symtab = ctx.symtab
    stats = ctx.stats
    maxc = st.c_m.shape[0] // st.f_m.shape[0]
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
            i = key_find(rt, st.f_k1[d], st.f_k2[d])
            if i >= 0 and np.int64(rt.ub[i]) <= rem:
                decided = 1
            elif i >= 0 and np.int64(rt.nw[i]) >= rem:
                decided = 0
            cnt = 0
            if decided < 0:
                cq = 1 - q
                legal = legal_pivots(m, p, geo)
                while legal and decided < 0:
                    z = np.int64(ctz(legal))
                    legal &= legal - ONE
                    first = off + cnt
                    end = pivot_children(m, p, s, z, geo, st.c_m, st.c_p, st.c_mv, first, True)
                    for j in range(first, end):
                        cm = st.c_m[j]
                        cp = st.c_p[j]
                        cmv = st.c_mv[j]
                        stats[1] += 1
                        v, ck1, ck2, sc = _r_child(cm, cp, 1 - s, cq, rem - 1, ctx, rt)
                        if v < 0:  # to search: kept in order at the front (``c <= j``)
                            c = off + cnt
                            cnt += 1
                            st.c_m[c] = cm
                            st.c_p[c] = cp
                            st.c_mv[c] = cmv
                            st.c_sc[c] = sc
                            st.c_k1[c] = ck1
                            st.c_k2[c] = ck2
                        elif v == 1 - q:  # OR: a child won; AND: a child not won
                            decided = v
                            if d == 0:
                                mv = cmv
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
