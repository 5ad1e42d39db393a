"""Retrograde kernels of the lean solve: one byte per canonical position.

The two-byte kernels (:mod:`solver.kernels.retro`) keep a position's distance in its
cell from the moment it is decided. Here a cell keeps only *where the position is* in
the solve; the distance of a position decided at ply L is L, and the driver writes the
positions each ply takes to disk (:mod:`solver.retro.lean`). Cell codes while a group
of tiers is solved::

    0                 unresolved, cannot be lost: a move leads to a draw in a lower tier
    1 .. MAXC         unresolved: the in-group moves not yet known to lead to a win for
                      the child's mover (at most 5 x 48 + 1 = 241 on hex(4) with edge)
    AT_LOSS + L % 2   lost in L plies, L the ply about to run or running (not yet
    AT_WIN + L % 2    won in L plies        propagated); the parity tells this ply's
                                            from the next one's
    FAR_LOSS          lost, or won, further ahead: decided through a lower tier at a
    FAR_WIN           distance the driver keeps on disk (a win may still shrink)
    DONE_LOSS         lost / won, propagated: its distance is on disk
    DONE_WIN
    BAD               not a position of the game (``capture``: a ball on a trap of the
                      other colour)

The counters count moves, as the two-byte ones do, but not scaled by the order K of the
symmetry group, so that they stay below 242. A decided child C takes off a parent P the
number N(P, C) of P's moves into C's orbit: the unmoves from C's representative that
land in P's orbit each carry the two-byte weight ``K |Stab P| / |Stab C|``, and their
sum over one parent is ``K N(P, C)`` (see :mod:`solver.kernels.retro`), so the weights
are summed per distinct parent and divided by K (:func:`_per_parent`). The counters
pass then ranks only the lower-tier children, as the two-byte one does. A position with
a drawn lower-tier child is never lost, so it needs no counter (0).

Finished groups — the lower tiers a group looks into — keep their exact value in one
byte where it fits (:func:`final_byte`: a draw, a loss or win in at most
:data:`FMAX` plies) and :data:`ESCAPE` with the value in a sorted side table where it
does not (:func:`lower_value`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solver.kernels.bits import ONE, ZERO, popcount, prefetch
from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT
from solver.kernels.encode import bsearch, index_of, next_subset, unrank, unrank_block
from solver.kernels.moves import apply_move, is_legal, terminal
from solver.kernels.retro import NO_WIN, _note_ahead, fold_lower, in_group_moves, parent_weights

MAXC = 246
AT_LOSS = 247  # + parity
AT_WIN = 249  # + parity
FAR_LOSS = 251
FAR_WIN = 252
DONE_LOSS = 253
DONE_WIN = 254
BAD = 255

FMAX = 125  # finished groups: distances 0..FMAX fit in the byte
F_LOSS = 1  # + d
F_WIN = 127  # + d
ESCAPE = 254


@intrinsic
def cas_u8(typingctx, arr, idx, expected, new):
    """Atomic compare-and-swap on ``arr[idx]`` (a uint8 array); returns the old value."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint8):
        return None
    sig = types.uint8(arr, idx, types.uint8, types.uint8)

    def codegen(context, builder, signature, args):
        arr_v, idx_v, exp_v, new_v = args
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, arr_v)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx_v], wraparound=False)
        res = builder.cmpxchg(ptr, exp_v, new_v, "monotonic", "monotonic")
        return builder.extract_value(res, 0)

    return sig, codegen


# ---------------------------------------------------------------------------- finished values


@njit(cache=True, _nrt=False)
def final_byte(code):
    """The byte of a finished position's uint16 ``code``; :data:`ESCAPE` where it does not fit."""
    if code == INVALID:
        return np.uint8(BAD)
    if not code & RESOLVED:
        return np.uint8(0)
    d = code & DMASK
    if d > FMAX:
        return np.uint8(ESCAPE)
    return np.uint8((F_WIN if code & WINBIT else F_LOSS) + d)


@njit(cache=True, _nrt=False)
def lower_value(cells, gi, esc_idx, esc_val):
    """The uint16 code of the finished position ``gi`` (a lower tier's)."""
    c = cells[gi]
    if c == 0:
        return np.uint16(0)
    if c < F_WIN:
        return np.uint16(RESOLVED | np.uint16(c - F_LOSS))
    if c < ESCAPE:
        return np.uint16(RESOLVED | WINBIT | np.uint16(c - F_WIN))
    if c == BAD:
        return INVALID
    return esc_val[bsearch(esc_idx, 0, esc_idx.shape[0], gi)]


@njit(cache=True, nogil=True, _nrt=False)
def encode_final(values, cells, base, esc_idx, esc_val):
    """Finished values ``values`` (uint16) into ``cells[base:]``; those that do not fit
    go to ``esc_idx`` / ``esc_val`` (room for all of them). Returns the escapes' count."""
    n = 0
    for i in range(values.shape[0]):
        b = final_byte(values[i])
        cells[base + i] = b
        if b == ESCAPE:
            esc_idx[n] = base + i
            esc_val[n] = values[i]
            n += 1
    return n


@njit(cache=True, nogil=True, _nrt=False)
def decode_final(cells, lo, hi, esc_idx, esc_val, out):
    """``out[:hi - lo]``: the uint16 codes of the finished cells ``lo..hi``."""
    for gi in range(lo, hi):
        out[gi - lo] = lower_value(cells, gi, esc_idx, esc_val)


@njit(cache=True, nogil=True, _nrt=False)
def window_codes(cells, lo, hi, out):
    """``out[:hi - lo]``: a finished group's cells without their distances — a win
    ``0xC000``, a loss ``0x8000``, no position ``0x4000``, a draw 0 (every cell still
    unresolved); the driver adds each ply's distance to the positions it took."""
    for gi in range(lo, hi):
        c = cells[gi]
        if c == DONE_WIN:
            out[gi - lo] = RESOLVED | WINBIT
        elif c == DONE_LOSS:
            out[gi - lo] = RESOLVED
        elif c == BAD:
            out[gi - lo] = INVALID
        elif c <= MAXC:
            out[gi - lo] = 0
        else:
            out[gi - lo] = 0xFFFF  # decided, never taken by a ply: a bug (the driver checks)


# ---------------------------------------------------------------------------- counters


@njit(cache=True, _nrt=False)
def _moves(m, p, s, cells, esc_idx, esc_val, geo, lay, buf):
    """``(in-group moves, best win, slowest loss, drawn lower child)`` of a live position,
    as :func:`solver.kernels.retro.scan_moves` tells them, lower tiers read from bytes."""
    n, nl = in_group_moves(m, p, s, geo, lay, buf)
    for i in range(nl):
        prefetch(cells, buf[i])
    best_win = NO_WIN
    max_loss = 0
    draw_below = 0
    for i in range(nl):
        best_win, max_loss, draw_below = fold_lower(lower_value(cells, buf[i], esc_idx, esc_val), best_win, max_loss,
                                                    draw_below)
    return n, best_win, max_loss, draw_below


@njit(cache=True, nogil=True, _nrt=False)
def lean_init(cells, lo, hi, glo, ghi, geo, lay, buf, esc_idx, esc_val, far_idx, far_d):
    """Counters and immediate values for ``lo..hi`` of group ``glo..ghi``.

    A position decided through a lower tier is written ``FAR_*`` and listed in
    ``far_idx`` / ``far_d`` (room for ``hi - lo``) with its distance. Returns
    ``(positions listed far, cells that are no position, largest distance or -1)``."""
    nfar = 0
    invalid = 0
    top = -1
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            cells[gi] = BAD
            invalid += 1
            continue
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            cells[gi] = AT_WIN if t == WIN_V else AT_LOSS  # decided at ply 0 (parity 0)
            top = max(top, 0)
            continue
        n, best_win, max_loss, draw_below = _moves(m, p, s, cells, esc_idx, esc_val, geo, lay, buf)
        if best_win != NO_WIN:
            cells[gi] = FAR_WIN
            far_idx[nfar] = gi
            far_d[nfar] = best_win
            nfar += 1
            top = max(top, best_win)
        elif n + draw_below == 0:
            cells[gi] = FAR_LOSS
            far_idx[nfar] = gi
            far_d[nfar] = max_loss
            nfar += 1
            top = max(top, max_loss)
        elif draw_below:
            cells[gi] = 0
        else:
            cells[gi] = n
    return nfar, invalid, top


# ---------------------------------------------------------------------------- plies


@njit(cache=True, _nrt=False)
def _loss_plies(gi, level, cells, esc_idx, esc_val, geo, lay):
    """As :func:`solver.kernels.retro._loss_plies`, lower tiers read from bytes."""
    m, p, s = unrank(gi, geo, lay)
    max_loss = level + 1
    balls = popcount(m) + popcount(p)
    for z in range(geo.npoints):
        if not is_legal(m, p, z, geo):
            continue
        for k in range(6):
            m2, p2 = apply_move(m, p, s, z, k, geo)
            if popcount(m2) + popcount(p2) == balls:
                continue
            v = lower_value(cells, index_of(p2, m2, 1 - s, geo, lay), esc_idx, esc_val)
            if v & RESOLVED and v & WINBIT:
                max_loss = max(max_loss, int(v & DMASK) + 1)
    return max_loss


@njit(cache=True, _nrt=False)
def _per_parent(par, wts, n, k_sym):
    """The unmoves ``par[:n]`` (weights ``wts``) as distinct parents, in place, each with
    the moves it has into the child's orbit (its weights' sum over ``k_sym``); their count."""
    m = 0
    seen = ZERO
    for i in range(n):
        q = par[i]
        bit = ONE << (np.uint64(q) * np.uint64(0x9E3779B97F4A7C15) >> np.uint64(58))
        j = m
        if seen & bit:
            for t in range(m):
                if par[t] == q:
                    j = t
                    break
        if j < m:
            wts[j] += wts[i]
        else:
            par[m] = q
            wts[m] = wts[i]
            m += 1
            seen |= bit
    for t in range(m):
        wts[t] //= k_sym
    return m


@njit(cache=True, _nrt=False)
def _update(cells, par, wts, n, loss, level, glo, geo, lay, esc_idx, esc_val, ahead, far_idx, far_d, nfar):
    """Tell the distinct parents ``par[:n]`` that a child was decided at ``level``: a
    loss makes each a win at ``level + 1``, a win takes ``wts[i]`` moves off each
    counter (compare-and-swap: they may be in another thread's range). A parent decided at
    ``level + 1`` is noted in ``ahead``; one lost further ahead in ``far_idx`` /
    ``far_d``. Returns ``(nfar, largest distance written or -1)``."""
    top = -1
    nxt = (level + 1) & 1
    for i in range(n):
        q = par[i]
        while True:
            old = cells[q]
            if loss:
                if old > MAXC and old != FAR_WIN:
                    break  # decided: lost, or won no later than level + 1
                new = AT_WIN + nxt
                d = level + 1
            else:
                if old == 0 or old > MAXC:
                    break  # cannot be lost, or decided
                if old == wts[i]:
                    d = level + 1 if glo == 0 else _loss_plies(q, level, cells, esc_idx, esc_val, geo, lay)
                    new = AT_LOSS + nxt if d == level + 1 else FAR_LOSS
                else:
                    d = -1
                    new = old - wts[i]
            if cas_u8(cells, q, np.uint8(old), np.uint8(new)) == old:
                top = max(top, d)
                if d == level + 1:
                    _note_ahead(ahead, q)
                elif d > level + 1:
                    far_idx[nfar] = q
                    far_d[nfar] = d
                    nfar += 1
                break
    return nfar, top


LANES8 = np.uint64(0x0101010101010101)
TOP8 = np.uint64(0x8080808080808080)


@njit(cache=True, _nrt=False)
def next_at8(cells, words, gi, hi, a, b):
    """The first index in ``gi..hi`` whose cell holds ``a`` or ``b``; ``hi`` if none.
    ``words``: the cells as uint64, eight a word; a word none of whose bytes is ``a``
    or ``b`` is passed whole (the has-zero-byte test, exact)."""
    while gi < hi and gi & 7:
        if cells[gi] == a or cells[gi] == b:
            return gi
        gi += 1
    pa = np.uint64(a) * LANES8
    pb = np.uint64(b) * LANES8
    end = min(hi, words.shape[0] * 8)
    while gi + 8 <= end:
        w = words[gi >> 3]
        x = w ^ pa
        y = w ^ pb
        if ((x - LANES8) & ~x & TOP8) | ((y - LANES8) & ~y & TOP8):
            break
        gi += 8
    while gi < hi:
        if cells[gi] == a or cells[gi] == b:
            return gi
        gi += 1
    return hi


def as_words8(cells: np.ndarray) -> np.ndarray:
    """The cells as uint64 words of eight, for :func:`next_at8`."""
    return cells[: len(cells) // 8 * 8].view(np.uint64)


@njit(cache=True, nogil=True, _nrt=False)
def lean_level(cells, words, lo, hi, idx, glo, level, geo, lay, buf, buf2, wts, wts2, pm, pp, esc_idx, esc_val,
               ahead, far_idx, far_d, taken):
    """Propagate the positions of ``lo..hi`` decided at ``level`` (a scan of the cells,
    or ``idx[lo:hi]`` where ``idx`` is not empty), as
    :func:`solver.kernels.retro.level_range` does; each is marked done and written to
    ``taken`` (in index order: room for ``hi - lo``).

    Stops early where ``far_idx`` (``far_d``) might not hold the parents of one more
    position. Returns ``(where to go on from: hi when done, positions taken, positions
    listed far, largest distance written or -1)``."""
    top = -1
    ntaken = 0
    nfar = 0
    k_sym = geo.permbits.shape[0]
    room = far_idx.shape[0] - 2 * buf.shape[0]
    a = AT_LOSS + (level & 1)
    b = AT_WIN + (level & 1)
    listed = idx.shape[0] > 0
    waiting = 0
    waiting_loss = False
    k = lo
    while True:
        if nfar > room:
            break
        if listed:
            if k >= hi:
                break
            gi = idx[k]
            k += 1
            if cells[gi] != a and cells[gi] != b:
                continue
        else:
            gi = next_at8(cells, words, k, hi, a, b)
            if gi >= hi:
                k = hi
                break
            k = gi + 1
        v = cells[gi]
        cells[gi] = DONE_LOSS if v == a else DONE_WIN  # nobody else writes a cell decided at this ply
        taken[ntaken] = gi
        ntaken += 1
        n = parent_weights(gi, geo, lay, pm, pp, buf, wts)
        for i in range(n):
            prefetch(cells, buf[i])
        n = _per_parent(buf, wts, n, k_sym)
        nfar, t = _update(cells, buf2, wts2, waiting, waiting_loss, level, glo, geo, lay, esc_idx, esc_val, ahead,
                          far_idx, far_d, nfar)
        top = max(top, t)
        buf, buf2 = buf2, buf
        wts, wts2 = wts2, wts
        waiting = n
        waiting_loss = v == a
    nfar, t = _update(cells, buf2, wts2, waiting, waiting_loss, level, glo, geo, lay, esc_idx, esc_val, ahead,
                      far_idx, far_d, nfar)
    top = max(top, t)
    return k, ntaken, nfar, top


@njit(cache=True, nogil=True, _nrt=False)
def lean_arrive(cells, idx, n, level):
    """The positions ``idx[:n]`` listed far ahead at ``level``: those still ``FAR_*``
    are decided now (``AT_*`` of the level's parity) and kept at the front of ``idx``; a
    win that shrank since is dropped. Returns how many were kept."""
    kept = 0
    for i in range(n):
        gi = idx[i]
        c = cells[gi]
        if c == FAR_WIN:
            cells[gi] = AT_WIN + (level & 1)
        elif c == FAR_LOSS:
            cells[gi] = AT_LOSS + (level & 1)
        else:
            continue
        idx[kept] = gi
        kept += 1
    return kept


@njit(cache=True, nogil=True, _nrt=False)
def count_open(cells, lo, hi):
    """Cells of ``lo..hi`` still unresolved (draws once the plies are done)."""
    n = 0
    for gi in range(lo, hi):
        if cells[gi] <= MAXC:
            n += 1
    return n
