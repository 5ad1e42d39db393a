"""The ``rans`` codec of the exported sets: a static context model of each tier, coded
by rANS, for the WDL and the distance blocks alike.

Each tier's frequencies are counted once (:func:`rans_count` over a sample of its
blocks, then :func:`rans_freqs`) and stored in its files' headers; a block is then coded
with them as they are — no adaptation, so a symbol is a table lookup and one rANS step,
not a chain of binary decisions:

* **WDL** (0 loss, 1 draw, 2 win): one symbol a cell the rules leave open (cells the
  rules answer are not coded; their value enters the context as it is), under the
  context of :mod:`solver.kernels.compact_cm`: the last four symbols and the symbol a
  *row* before (1,024 contexts of three symbols).
* **Distances**: for each win or loss the rules leave open, ``v = (d >> 1) + 1`` as one
  symbol — ``1 .. 63`` themselves, ``0`` for a larger ``v`` (then ``v - 64`` as a flat
  13-bit symbol), ``64`` the escape of a distance whose parity is not the usual (odd for
  a win, even for a loss: it happens where the rules answer), after which ``v`` comes —
  under the context of the result, the bucketed ``q`` (as :mod:`solver.kernels.compact_dcm`
  buckets it) of the cell a row before and of the cell before, each where it has the
  same result (578 contexts of 65 symbols).

rANS codes backwards, so a block is coded in two passes: :func:`rans_tokens` walks it
forwards, finding each symbol and its context (every context is the cells before it, as
the reader sees them) and listing their table entries; :func:`_put_both` then codes the
two lists from their ends, side by side. The state is 31 bits with 15-bit frequencies and 16-bit words out:
at most one word a symbol, so the step has no loop and no branch (ryg's rans_byte, with
the division by a reciprocal). Two states take each stream's symbols in turn (even and
odd), so that four steps are under way at once. A stream is the two final states (4
bytes each, little-endian) and then its 16-bit words in the order the reader takes
them. Every frequency is at least 1 (:func:`rans_freqs`): any symbol can be coded in any
context. Reading past the end of a block reads zeros (a damaged block is refused by its
checksum before it is decoded; the decoder never leaves its arrays).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import DMASK, INVALID, RESOLVED, WINBIT
from solver.kernels.compact import NO_RULE
from solver.kernels.compact_dcm import NB, NONE, _bucket

SCALE = 15
TOTAL = 1 << SCALE
LOW = 1 << 15  # the state stays in LOW .. 2**31
WCTX = 1024  # last four symbols (8 bits) x the symbol a row before (2 bits)
DCTX = 2 * NB * NB  # result x bucket a row before x bucket of the cell before
DSYM = 65  # 0: v >= 64 (then FLAT flat bits), 1..63: v, 64: the parity escape
BIG = 64
ESC = 64
FLAT = 13  # v - 64 < 2**13: d <= 0x3FFF
RAW0 = DCTX * DSYM  # the distance table's entries of the flat symbols follow its contexts'


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _sym(c):
    """WDL symbol of a code (no position: 1, as the rules' cells enter the contexts)."""
    return 1 if not c & RESOLVED else (2 if c & WINBIT else 0)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _wctx(h, sym, i, row):
    return h * 4 + (np.int64(sym[i - row]) if i >= row else 3)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _dctx(codes, sym, i, row, s, w, b):
    """The distance context of cell ``i`` (result ``s``, ``w``: 1 for a win; ``b``: the
    bucket of the cell before where it has the same result); ``codes``: the block's
    codes so far (a rule cell's its rule's)."""
    a = NONE
    if i >= row and sym[i - row] == s:
        a = _bucket((np.int64(codes[i - row]) & DMASK) >> 1)
    return (w * NB + a) * NB + b


@njit(cache=True, nogil=True, _nrt=False)
def _cells(codes, sym, wdl, qb, tally):
    """Each cell's symbol, win/draw/loss (3: no position) and bucketed ``q`` (a draw's:
    0), their counts added to ``tally``: no cell depends on another, so the compiler
    runs it on vectors."""
    n0 = n2 = n3 = 0
    for i in range(codes.shape[0]):
        c = np.int64(codes[i])
        r = (c >> 15) & 1  # resolved
        wb = (c >> 14) & 1
        s = 1 + r * (2 * wb - 1)  # 1 draw (and no position), 2 win, 0 loss
        iv = np.int64(c == INVALID)
        sym[i] = s
        wdl[i] = s + iv * 2
        q = (c & DMASK) >> 1
        qb[i] = min(q, 12) + (q >= 16) + (q >= 32) + (q >= 64)
        n0 += s == 0
        n2 += s == 2
        n3 += iv
    tally[0] += n0
    tally[1] += codes.shape[0] - n0 - n2 - n3
    tally[2] += n2
    tally[3] += n3


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _context(codes, sym, qb, row, i, edge):
    """Cell ``i``'s WDL table entry and distance table entry (``v`` or 0 for a long one)
    and whether it needs a rare symbol (the escape, a long distance); ``edge``: ``i`` may
    be within a row or four cells of the block's start."""
    s = np.int64(sym[i])
    if edge:
        h = 0
        for k in range(1, 5):
            h |= (np.int64(sym[i - k]) if i >= k else 0) << (2 * k - 2)
        sr = np.int64(sym[i - row]) if i >= row else 3
        ar = np.int64(qb[i - row]) if i >= row else NONE
        s1 = np.int64(sym[i - 1]) if i >= 1 else 3
        b1 = np.int64(qb[i - 1]) if i >= 1 else NONE
    else:
        h = (np.int64(sym[i - 1]) | (np.int64(sym[i - 2]) << 2) | (np.int64(sym[i - 3]) << 4)
             | (np.int64(sym[i - 4]) << 6))
        sr = np.int64(sym[i - row])
        ar = np.int64(qb[i - row])
        s1 = np.int64(sym[i - 1])
        b1 = np.int64(qb[i - 1])
    w = s >> 1
    a = ar if sr == s else NONE
    b = b1 if s1 == s else NONE
    d = np.int64(codes[i]) & DMASK
    v = (d >> 1) + 1
    big = v >= BIG
    rare = ((d & 1) ^ w) | big
    return (h * 4 + sr) * 3 + s, ((w * NB + a) * NB + b) * DSYM + (0 if big else v), rare


@njit(cache=True, nogil=True, _nrt=False)
def _wdl_entries(s0, s1, s2, s3, s4, sr, wx):
    """WDL table entries from the symbols of the cells, the four before and the one a row
    before (each array shifted so that index ``j`` is cell ``j``'s)."""
    for j in range(s0.shape[0]):
        h = np.int32(s1[j]) | (np.int32(s2[j]) << 2) | (np.int32(s3[j]) << 4) | (np.int32(s4[j]) << 6)
        wx[j] = (h * np.int32(4) + np.int32(sr[j])) * np.int32(3) + np.int32(s0[j])


@njit(cache=True, nogil=True, _nrt=False)
def _dist_entries(s0, sr, s1, qr, q1, c0, dx):
    """Distance table entries (``v``, or 0 for a long one) from the cells' symbols and
    codes and the symbols and buckets of the cells a row before and one before."""
    for j in range(s0.shape[0]):
        s = np.int32(s0[j])
        a = np.int32(qr[j]) if np.int32(sr[j]) == s else np.int32(NONE)
        b = np.int32(q1[j]) if np.int32(s1[j]) == s else np.int32(NONE)
        v = ((np.int32(c0[j]) & np.int32(DMASK)) >> 1) + np.int32(1)
        x = ((s >> 1) * np.int32(NB) + a) * np.int32(NB) + b
        dx[j] = x * np.int32(DSYM) + (np.int32(0) if v >= np.int32(BIG) else v)


@njit(cache=True, nogil=True, _nrt=False)
def _rare(s0, c0, rare):
    """Whether a cell's distance needs a rare symbol: the escape, a long distance."""
    for j in range(s0.shape[0]):
        d = np.int32(c0[j]) & np.int32(DMASK)
        rare[j] = np.uint8(((d & 1) ^ (np.int32(s0[j]) >> 1)) | (d >= np.int32(2 * BIG - 2)))


@njit(cache=True, nogil=True, _nrt=False)
def _contexts(codes, sym, qb, row, wx, dx, rare, dist):
    """:func:`_context` of every cell (only the WDL entries without ``dist``). Past the
    first row each entry is a loop of its own over arrays shifted to line up (a cell a
    row before, one before): no cell depends on another and each loop writes one array,
    so the compiler runs them on vectors (ten times the speed of one loop)."""
    n = codes.shape[0]
    k0 = min(n, max(row, 4))
    for i in range(k0):
        wx[i], dx[i], rare[i] = _context(codes, sym, qb, row, i, True)
    if k0 == n:
        return
    s0, s1, sr = sym[k0:n], sym[k0 - 1 : n - 1], sym[k0 - row : n - row]
    _wdl_entries(s0, s1, sym[k0 - 2 : n - 2], sym[k0 - 3 : n - 3], sym[k0 - 4 : n - 4], sr, wx[k0:n])
    if dist:
        _dist_entries(s0, sr, s1, qb[k0 - row : n - row], qb[k0 - 1 : n - 1], codes[k0:n], dx[k0:n])
        _rare(s0, codes[k0:n], rare[k0:n])


@njit(cache=True, nogil=True, _nrt=False)
def rans_tokens(codes, rules, row, sym, wdl, qb, wx, dx, rare, tally, wtok, dtok):
    """The forward pass over a block: ``codes`` (uint16 values), ``rules`` (their rule
    codes). Writes each cell's symbol into ``sym``, win/draw/loss (3: no position) into
    ``wdl`` and bucketed ``q`` into ``qb`` (adding their counts to ``tally``, int64 4),
    its table entries into ``wx``, ``dx`` (int32) and ``rare`` (uint8), and then the WDL
    entries of the cells the rules leave open into ``wtok`` and, where ``dtok`` is not
    empty (3 entries a cell at most), their distance entries into ``dtok``. Returns
    ``(WDL entries, distance entries)``.

    Every cell's contexts are worked out in passes with no cell depending on another
    (:func:`_cells`, :func:`_contexts`); the last pass only keeps the entries of the
    cells that are coded — an entry is written in any case and kept by moving the
    count: whether a cell is a draw or a rule cell is as good as random, and a
    mispredicted branch costs more than the work it would skip."""
    _cells(codes, sym, wdl, qb, tally)
    dist = dtok.shape[0] > 0
    _contexts(codes, sym, qb, row, wx, dx, rare, dist)
    nw = 0
    nd = 0
    if not dist:
        for i in range(codes.shape[0]):
            wtok[nw] = wx[i]
            nw += rules[i] == NO_RULE
        return nw, nd
    for i in range(codes.shape[0]):
        open_ = rules[i] == NO_RULE
        wtok[nw] = wx[i]
        nw += open_
        coded = open_ & (sym[i] != 1)
        e = dx[i]
        if rare[i] and coded:
            d = np.int64(codes[i]) & DMASK
            x = e - e % DSYM
            if (d & 1) ^ (sym[i] >> 1):  # the parity escape
                dtok[nd] = x + ESC
                nd += 1
            v = (d >> 1) + 1
            if v >= BIG:  # a long distance
                dtok[nd] = x
                dtok[nd + 1] = RAW0 + v - BIG
                nd += 2
                continue
        dtok[nd] = e
        nd += coded
    return nw, nd


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _step(x, e, tab, out, p):
    """One encoder step of state ``x`` for table entry ``e`` (``tab[e]``: the reciprocal,
    the state's limit, the shift, bias | complement << 32), its word (if any) written
    below ``p``."""
    flag = np.int64(x >= tab[e, 1])
    out[p - 1] = np.uint16(x & 0xFFFF)
    p -= flag
    x >>= flag << 4
    bc = tab[e, 3]
    return x + (bc & 0xFFFFFFFF) + ((x * tab[e, 0]) >> tab[e, 2]) * (bc >> 32), p


@njit(cache=True, nogil=True, _nrt=False)
def _put_all(tok, n, tab, out):
    """Code entries ``tok[:n]`` (from the last) with two states taking them in turn into
    the end of ``out`` (uint16: ``n + 5`` words hold any); returns where the stream
    starts: its two states, then its words."""
    p = out.shape[0]
    x0 = np.int64(LOW)
    x1 = np.int64(LOW)
    k = n - 1
    if n & 1:
        x0, p = _step(x0, tok[k], tab, out, p)
        k -= 1
    while k > 0:
        x1, p = _step(x1, tok[k], tab, out, p)
        x0, p = _step(x0, tok[k - 1], tab, out, p)
        k -= 2
    return _finish(x0, x1, out, p)


@njit(cache=True, nogil=True, _nrt=False)
def _put_both(wtok, nw, wtab, wout, dtok, nd, dtab, dout):
    """:func:`_put_all` of both streams side by side (four states: one step of each
    runs while the others wait); returns where each starts."""
    wp = wout.shape[0]
    dp = dout.shape[0]
    w0 = np.int64(LOW)
    w1 = np.int64(LOW)
    d0 = np.int64(LOW)
    d1 = np.int64(LOW)
    kw = nw - 1
    kd = nd - 1
    if nw & 1:
        w0, wp = _step(w0, wtok[kw], wtab, wout, wp)
        kw -= 1
    if nd & 1:
        d0, dp = _step(d0, dtok[kd], dtab, dout, dp)
        kd -= 1
    while kw > 0 and kd > 0:
        w1, wp = _step(w1, wtok[kw], wtab, wout, wp)
        d1, dp = _step(d1, dtok[kd], dtab, dout, dp)
        w0, wp = _step(w0, wtok[kw - 1], wtab, wout, wp)
        d0, dp = _step(d0, dtok[kd - 1], dtab, dout, dp)
        kw -= 2
        kd -= 2
    while kw > 0:
        w1, wp = _step(w1, wtok[kw], wtab, wout, wp)
        w0, wp = _step(w0, wtok[kw - 1], wtab, wout, wp)
        kw -= 2
    while kd > 0:
        d1, dp = _step(d1, dtok[kd], dtab, dout, dp)
        d0, dp = _step(d0, dtok[kd - 1], dtab, dout, dp)
        kd -= 2
    return _finish(w0, w1, wout, wp), _finish(d0, d1, dout, dp)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _finish(x0, x1, out, p):
    out[p - 4] = np.uint16(x0 & 0xFFFF)
    out[p - 3] = np.uint16(x0 >> 16)
    out[p - 2] = np.uint16(x1 & 0xFFFF)
    out[p - 1] = np.uint16(x1 >> 16)
    return p - 4


@njit(cache=True, nogil=True, _nrt=False)
def rans_encode(codes, rules, row, sym, wdl, qb, wx, dx, rare, tally, wtok, dtok, wtab, dtab, wout, dout):
    """Code one block (:func:`rans_tokens`, then each list from its end): returns where
    the WDL stream starts in ``wout`` and the distance stream in ``dout`` (each runs to
    the array's end; ``dout`` untouched where ``dtok`` is empty), and the block's rule
    cells. ``wtab``, ``dtab``: the
    tier's :func:`rans_tables`; ``wout``, ``dout``: uint16, :func:`out_words` long."""
    nw, nd = rans_tokens(codes, rules, row, sym, wdl, qb, wx, dx, rare, tally, wtok, dtok)
    if dtok.shape[0] == 0:
        return _put_all(wtok, nw, wtab, wout), dout.shape[0], codes.shape[0] - nw
    ws, ds = _put_both(wtok, nw, wtab, wout, dtok, nd, dtab, dout)
    return ws, ds, codes.shape[0] - nw


@njit(cache=True, nogil=True, _nrt=False)
def rans_count(codes, rules, row, sym, wdl, qb, wx, dx, rare, tally, wtok, dtok, wcnt, dcnt):
    """Add one block's table entries to the counts ``wcnt`` (``WCTX * 3``) and, where
    ``dtok`` is not empty, ``dcnt`` (``DCTX * DSYM``; the flat symbols not counted)."""
    nw, nd = rans_tokens(codes, rules, row, sym, wdl, qb, wx, dx, rare, tally, wtok, dtok)
    for k in range(nw):
        wcnt[wtok[k]] += 1
    for k in range(nd):
        e = dtok[k]
        if e < RAW0:
            dcnt[e] += 1


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _state(data, at):
    n = data.shape[0]
    lo = np.int64(data[at]) if at < n else 0
    hi = np.int64(data[at + 1]) if at + 1 < n else 0
    return lo | (hi << 16)


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _renorm(x, data, pos):
    """The decoder's refill: one word where the state fell below :data:`LOW`."""
    if x < LOW:
        x = (x << 16) | (np.int64(data[pos]) if pos < data.shape[0] else 0)
        pos += 1
    return x, pos


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _dnext(x0, x1, k, data, pos, df, dc, x, flat):
    """The next distance symbol (context ``x``; ``flat``: a flat one) from state ``k & 1``."""
    st = x1 if k & 1 else x0
    slot = st & (TOTAL - 1)
    if flat:
        v = slot >> (SCALE - FLAT)
        st, pos = _renorm((st >> SCALE) * (1 << (SCALE - FLAT)) + slot - (v << (SCALE - FLAT)), data, pos)
    else:
        v = 0
        while v < DSYM - 1 and dc[x, v + 1] <= slot:
            v += 1
        st, pos = _renorm(np.int64(df[x, v]) * (st >> SCALE) + slot - dc[x, v], data, pos)
    if k & 1:
        x1 = st
    else:
        x0 = st
    return v, x0, x1, k + 1, pos


@njit(cache=True, nogil=True, _nrt=False)
def rans_decode(wdata, ddata, rules, row, wf, wc, df, dc, sym, out):
    """The codes of a block into ``out`` (its length: the block's cells) from its WDL
    stream ``wdata`` and, given distance tables of at least one row, its distance stream
    ``ddata`` (uint16 words; else wins and losses get distance 0); ``rules``: the
    block's rule codes; ``wf``/``wc``, ``df``/``dc``: frequencies and cumulative
    frequencies (:func:`rans_decode_tables`); ``sym``: uint8 scratch. False if a
    distance does not fit a code."""
    dist = df.shape[0] > 0
    wx0, wx1, wpos, wk = _state(wdata, 0), _state(wdata, 2), 4, 0
    dx0, dx1, dpos, dk = _state(ddata, 0), _state(ddata, 2), 4, 0
    h = 0
    bprev = NONE  # the bucketed q of the cell before (a win or a loss)
    sprev = 3  # and its symbol
    for i in range(out.shape[0]):
        r = rules[i]
        if r != NO_RULE:
            c = np.int64(r)
            s = _sym(c)
            sym[i] = s
            out[i] = np.uint16(c)
        else:
            x = _wctx(h, sym, i, row)
            st = wx1 if wk & 1 else wx0
            slot = st & (TOTAL - 1)
            s = (1 if slot >= wc[x, 1] else 0) + (1 if slot >= wc[x, 2] else 0)
            st, wpos = _renorm(np.int64(wf[x, s]) * (st >> SCALE) + slot - wc[x, s], wdata, wpos)
            if wk & 1:
                wx1 = st
            else:
                wx0 = st
            wk += 1
            sym[i] = s
            out[i] = 0
        h = ((h << 2) | s) & 0xFF
        same = sprev == s
        sprev = s
        if s == 1:
            continue
        w = 1 if s == 2 else 0
        if r != NO_RULE:
            d = np.int64(r) & DMASK
        else:
            d = 0
            if dist:
                x = _dctx(out, sym, i, row, s, w, bprev if same else NONE)
                v, dx0, dx1, dk, dpos = _dnext(dx0, dx1, dk, ddata, dpos, df, dc, x, False)
                unusual = 0
                if v == ESC:
                    unusual = 1
                    v, dx0, dx1, dk, dpos = _dnext(dx0, dx1, dk, ddata, dpos, df, dc, x, False)
                    if v == ESC:
                        return False  # two escapes: no distance of the format
                if v == 0:
                    v, dx0, dx1, dk, dpos = _dnext(dx0, dx1, dk, ddata, dpos, df, dc, x, True)
                    v += BIG
                d = 2 * (v - 1) + (unusual ^ w)
                if d > DMASK:
                    return False
            out[i] = (RESOLVED | WINBIT | np.uint16(d)) if w else (RESOLVED | np.uint16(d))
        bprev = _bucket(d >> 1)
    return True


def out_words(cells: int) -> int:
    """uint16 words :func:`rans_encode` may write for a block of ``cells`` into either
    stream (at most three symbols a cell, a word each, and the states)."""
    return 3 * cells + 8


def rans_freqs(counts: np.ndarray, k: int) -> np.ndarray:
    """Frequencies out of :data:`TOTAL` for ``counts`` (contexts x ``k`` symbols, flat):
    in proportion to the counts, every symbol at least 1 (one never counted can still be
    coded), the rounding's remainder on the most frequent; uint16, contexts x ``k``."""
    counts = np.asarray(counts, dtype=np.int64).reshape(-1, k)
    tot = counts.sum(axis=1, keepdims=True)
    f = 1 + (counts * (TOTAL - k)) // np.maximum(tot, 1)
    f[tot[:, 0] == 0] = TOTAL // k
    rest = TOTAL - f.sum(axis=1)
    f[np.arange(len(f)), np.argmax(f, axis=1)] += rest
    return f.astype(np.uint16)


def rans_tables(freqs: np.ndarray, flat: int = 0) -> np.ndarray:
    """The encoder's table of ``freqs`` (contexts x symbols), one row an entry (context *
    symbols + symbol), then ``2**flat`` entries of the flat symbols: the reciprocal of
    the frequency, the state's limit, the shift, the bias and the complement (ryg's
    rans_byte): 32 bytes an entry, each a load."""
    f = np.asarray(freqs, dtype=np.int64)
    cum = np.concatenate([np.zeros((f.shape[0], 1), dtype=np.int64), np.cumsum(f, axis=1)[:, :-1]], axis=1).ravel()
    f = f.ravel()
    if flat:
        w = TOTAL >> flat
        f = np.concatenate([f, np.full(1 << flat, w, dtype=np.int64)])
        cum = np.concatenate([cum, np.arange(1 << flat, dtype=np.int64) * w])
    shift = np.array([int(v - 1).bit_length() for v in f.tolist()], dtype=np.int64)  # ceil(log2 f)
    rcp = np.where(f >= 2, ((np.int64(1) << (shift + 31)) + f - 1) // np.maximum(f, 1), 0xFFFFFFFF)
    sh = np.where(f >= 2, 32 + shift - 1, 32)
    bias = np.where(f >= 2, cum, cum + TOTAL - 1)
    tab = np.empty((len(f), 4), dtype=np.int64)
    tab[:, 0] = rcp
    tab[:, 1] = f << 16  # a state this large or more puts out a word first
    tab[:, 2] = sh
    tab[:, 3] = bias | ((TOTAL - f) << 32)
    return tab


def rans_decode_tables(freqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(frequencies, cumulative)`` as :func:`rans_decode` takes them (int32; the
    cumulative one column longer, its last :data:`TOTAL`)."""
    f = np.ascontiguousarray(freqs, dtype=np.int32)
    c = np.zeros((f.shape[0], f.shape[1] + 1), dtype=np.int32)
    np.cumsum(f, axis=1, out=c[:, 1:])
    return f, c
