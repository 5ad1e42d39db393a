"""The ``cm`` codec of the exported sets' distance blocks: a context model of the tier,
adapting along each block, driving the binary arithmetic coder of
:mod:`solver.kernels.compact_cm`.

Each position the rules leave open that is won or lost (its WDL symbol, decoded first,
says which) gets ``q = d >> 1`` and a flag for the unusual parity of ``d`` (odd for a
win, even for a loss: :mod:`solver.kernels.compact`). ``v = q + 1`` is coded as its
bit length ``L`` in unary, then the bits of ``v`` below its leading one: binary
decisions, each with the probability its context has. The flag costs no decision: a
distance of the unusual parity (it happens where the rules answer: a win in 0) comes
after an escape, the bit length ``LMAX + 1``. The contexts:

* the result (win or loss);
* ``A``: the ``q`` of the cell one *row* before when it has the same result (the same
  opponent placement under the previous mover set: a similar position), bucketed;
* ``B``: the ``q`` of the last cell of the block with the same result, bucketed;
* the decision's place: the unary step, or the bits of ``v`` read so far.

Every block starts from the tier's probabilities (:func:`dcm_count` over a sample of its
blocks, then :func:`dcm_model`; stored once in the tier file's header), so that its
sixteen thousand contexts need not be learnt anew in each block, and each decision moves
its context's probability a little towards it (``RATE``): a shift, no division. Cells
the rules answer are not coded; their distance (0 or 1) enters the contexts as it is.
Measured: docs (exported sets, codecs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import DMASK, RESOLVED, WINBIT

NB = 17  # buckets of a q: 0..11 as they are, 12..15, 16..31, 32..63, 64 and more; 16: none
NONE = NB - 1
LMAX = 14  # bit length of v = q + 1 <= 8192 (d <= 0x3FFF)
MLOW = 6  # mantissas of up to MLOW - 1 bits are coded with A and the bits read so far
U_SIZE = 2 * NB * NB * LMAX
M_SIZE = 2 * NB * MLOW * 32
H_SIZE = 2 * (LMAX + 1) * 16
CONTEXTS = U_SIZE + M_SIZE + H_SIZE
RATE = 5  # a context learns 1/32 of each decision (4: 0.4 % larger on hex(3) 4v4; 6: 0.5 %)
_TOP = 0xFF000000
_MASK = 0xFFFFFFFF


# the buckets of q < 64 (q >= 64: 15) and the bit lengths of v < 256, looked up: the
# comparisons and loops they replace were unpredictable branches, the coders' main cost
_BUCKETS = np.array([min(q, 12) if q < 16 else (13 if q < 32 else 14) for q in range(64)], dtype=np.int64)
_BITLEN = np.array([v.bit_length() for v in range(256)], dtype=np.int64)


@njit(cache=True, _nrt=False, inline="always")
def _bucket(q):
    """0..11 as they are, 12..15: 12, 16..31: 13, 32..63: 14, more: 15."""
    return _BUCKETS[q] if q < 64 else 15


@njit(cache=True, _nrt=False, inline="always")
def _prev_bucket(qs, rules, sym, i, row, s):
    """``A``: the bucket of the ``q`` of the cell a row before when its result is ``s``."""
    j = max(i - row, 0)
    r = np.int64(rules[j])
    cj = r if r >= 0 else np.int64(qs[j])
    bq = _bucket((cj & DMASK) >> 1)
    return bq if i >= row and sym[j] == s else NONE


@njit(cache=True, _nrt=False, inline="always")
def _ctx_u(w, a, b, k):
    return ((w * NB + a) * NB + b) * LMAX + k - 1


@njit(cache=True, _nrt=False, inline="always")
def _ctx_m(w, a, L, node, bitpos):
    if L <= MLOW:
        return U_SIZE + ((w * NB + a) * MLOW + L - 1) * 32 + node
    return U_SIZE + M_SIZE + (w * (LMAX + 1) + L) * 16 + bitpos


@njit(cache=True, _nrt=False, inline="always")
def _split(v):
    """The bit length of ``v`` (< 65536)."""
    return _BITLEN[v] if v < 256 else 8 + _BITLEN[v >> 8]


@njit(cache=True, _nrt=False, inline="always")
def _learn(st, c, bit):
    """Move context ``c``'s probability (16 bits) a ``1 / 2**RATE`` of the way to ``bit``:
    it stays within 31 .. 65504, so that its 12 bits are never 0 nor 4096."""
    if bit:
        st[c] += (65536 - st[c]) >> RATE
    else:
        st[c] -= st[c] >> RATE


@njit(cache=True, _nrt=False, inline="always")
def _put(x1, x2, st, c, bit, out, n):
    """Code one decision in context ``c`` (then learn it); returns the range and the bytes
    written so far."""
    xmid = x1 + ((x2 - x1) >> 12) * (st[c] >> 4)
    _learn(st, c, bit)
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    while ((x1 ^ x2) & _TOP) == 0:
        out[n] = x2 >> 24
        n += 1
        x1 = (x1 << 8) & _MASK
        x2 = ((x2 << 8) & _MASK) | 255
    return x1, x2, n


@njit(cache=True, _nrt=False, inline="always")
def _get(x1, x2, x, st, c, data, pos):
    """Read one decision in context ``c`` (then learn it): ``(bit, x1, x2, x, pos)``."""
    xmid = x1 + ((x2 - x1) >> 12) * (st[c] >> 4)
    bit = 1 if x <= xmid else 0
    _learn(st, c, bit)
    if bit:
        x2 = xmid
    else:
        x1 = xmid + 1
    while ((x1 ^ x2) & _TOP) == 0:
        x1 = (x1 << 8) & _MASK
        x2 = ((x2 << 8) & _MASK) | 255
        x = ((x << 8) & _MASK) | (data[pos] if pos < data.shape[0] else 0)
        pos += 1
    return bit, x1, x2, x, pos


@njit(cache=True, nogil=True, _nrt=False)
def dcm_count(codes, rules, sym, row, n1, n):
    """Add the decisions of one block to the counts ``n1`` (ones), ``n`` (all) of each
    context (int64, :data:`CONTEXTS` long). ``sym``: the block's WDL symbols, a rule
    cell's its own (``wdl_symbols(..., fill=False)``); ``rules``: :func:`rule_codes`."""
    last0 = NONE  # bucket of the last q of a loss
    last2 = NONE  # and of a win
    for i in range(sym.shape[0]):
        s = sym[i]
        if s == 1:
            continue
        w = 1 if s == 2 else 0
        d = np.int64(rules[i] if rules[i] >= 0 else codes[i]) & DMASK
        if rules[i] < 0:
            a = _prev_bucket(codes, rules, sym, i, row, s)
            b = last2 if w else last0
            v = (d >> 1) + 1
            L = _split(v)
            if (d & 1) ^ w:  # the escape: a bit length of LMAX + 1
                for k in range(1, LMAX + 1):
                    c = _ctx_u(w, a, b, k)
                    n[c] += 1
                    n1[c] += 1
            for k in range(1, L + 1):
                c = _ctx_u(w, a, b, k)
                n[c] += 1
                n1[c] += 1 if L > k else 0
            for bitpos in range(L - 2, -1, -1):
                c = _ctx_m(w, a, L, v >> (bitpos + 1), bitpos)
                n[c] += 1
                n1[c] += (v >> bitpos) & 1
        bq = _bucket(d >> 1)
        last2 = bq if w else last2
        last0 = last0 if w else bq


@njit(cache=True, _nrt=False, inline="always")
def _start(model, st):
    for c in range(model.shape[0]):
        st[c] = (np.int64(model[c]) << 4) | 8


@njit(cache=True, nogil=True, _nrt=False)
def dcm_encode(codes, rules, sym, row, model, st, out):
    """Code the distances of one block into ``out`` (:func:`out_size` bytes hold any
    block), starting from the tier's ``model`` (:func:`dcm_model`; ``st``: int64 scratch
    of :data:`CONTEXTS`); ``sym``, ``rules`` as for :func:`dcm_count`. Returns the bytes
    written."""
    _start(model, st)
    x1, x2, n = np.int64(0), np.int64(_MASK), 0
    last0 = NONE
    last2 = NONE
    for i in range(sym.shape[0]):
        s = sym[i]
        if s == 1:
            continue
        w = 1 if s == 2 else 0
        d = np.int64(rules[i] if rules[i] >= 0 else codes[i]) & DMASK
        if rules[i] < 0:
            a = _prev_bucket(codes, rules, sym, i, row, s)
            b = last2 if w else last0
            v = (d >> 1) + 1
            L = _split(v)
            if (d & 1) ^ w:  # the escape: a bit length of LMAX + 1
                for k in range(1, LMAX + 1):
                    x1, x2, n = _put(x1, x2, st, _ctx_u(w, a, b, k), 1, out, n)
            for k in range(1, L + 1):
                x1, x2, n = _put(x1, x2, st, _ctx_u(w, a, b, k), 1 if L > k else 0, out, n)
            for bitpos in range(L - 2, -1, -1):
                x1, x2, n = _put(x1, x2, st, _ctx_m(w, a, L, v >> (bitpos + 1), bitpos), (v >> bitpos) & 1, out, n)
        bq = _bucket(d >> 1)
        last2 = bq if w else last2
        last0 = last0 if w else bq
    for _ in range(4):
        out[n] = x1 >> 24
        n += 1
        x1 = (x1 << 8) & _MASK
    return n


@njit(cache=True, nogil=True, _nrt=False)
def dcm_decode(data, rules, sym, row, model, st, out):
    """The codes of a block into ``out`` from its WDL symbols ``sym`` (a rule cell's own),
    ``rules``, its distance stream ``data`` and the tier's ``model`` (``st``: scratch, as
    for :func:`dcm_encode`). False if a distance does not fit a code (reading past the end
    of ``data`` reads zeros: the block's checksum, checked before, is what refuses a
    damaged one)."""
    _start(model, st)
    x1, x2, x, pos = np.int64(0), np.int64(_MASK), np.int64(0), 0
    for _ in range(4):
        x = (x << 8) | (data[pos] if pos < data.shape[0] else 0)
        pos += 1
    last0 = NONE
    last2 = NONE
    for i in range(sym.shape[0]):
        s = sym[i]
        r = rules[i]
        if r >= 0:
            out[i] = np.uint16(r)
        elif s == 1:
            out[i] = 0
        if s == 1:
            continue
        w = 1 if s == 2 else 0
        if r >= 0:
            d = np.int64(r) & DMASK
        else:
            a = _prev_bucket(out, rules, sym, i, row, s)
            b = last2 if w else last0
            unusual = 0
            for _ in range(2):  # a bit length, or the escape and then one
                L = 1
                while L <= LMAX:
                    bit, x1, x2, x, pos = _get(x1, x2, x, st, _ctx_u(w, a, b, L), data, pos)
                    if not bit:
                        break
                    L += 1
                if L <= LMAX:
                    break
                if unusual:
                    return False  # two escapes: no distance of the format
                unusual = 1
            v = 1
            for bitpos in range(L - 2, -1, -1):
                bit, x1, x2, x, pos = _get(x1, x2, x, st, _ctx_m(w, a, L, v, bitpos), data, pos)
                v = (v << 1) | bit
            d = 2 * (v - 1) + (unusual ^ w)
            if d > DMASK:
                return False
            out[i] = (RESOLVED | WINBIT | np.uint16(d)) if w else (RESOLVED | np.uint16(d))
        bq = _bucket(d >> 1)
        last2 = bq if w else last2
        last0 = last0 if w else bq
    return True


def out_size(cells: int) -> int:
    """Bytes :func:`dcm_encode` may write for a block of ``cells`` (the coder's worst case:
    12 bits for each of at most 41 decisions a cell: the escape, a bit length and its bits)."""
    return (cells * 41 * 12 + 7) // 8 + 16


def dcm_model(n1: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The 12-bit probability of a one in each context, from its counts (a context never
    seen: one half)."""
    p = ((2 * n1 + 1) << 12) // (2 * n + 2)
    return np.clip(p, 1, 4095).astype(np.uint16)
