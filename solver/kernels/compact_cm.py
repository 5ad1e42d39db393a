"""The ``cm`` codec of the exported sets' WDL blocks: an adaptive context model driving a
binary arithmetic coder, written for this data.

A symbol (0 loss, 1 draw, 2 win) is coded as two binary decisions — draw or not, then win
or loss — each with the probability its context has seen so far in the block (counts,
halved past ``LIMIT`` so that the model follows the data along the block). The context
is the last four symbols and the symbol one *row* before: in a tier's index the
opponent's placements of one mover set follow each other, ``row`` of them, so the cell a
row before has a similar position. Cells the rules answer (:mod:`solver.kernels.compact`)
are not coded at all: both sides know them, and their value enters the context as it is.

The coder is the carry-less 32-bit binary arithmetic coder of the PAQ family: the range
``x1 .. x2`` is split in proportion to a 12-bit probability, and leading bytes are
written out as soon as both ends agree on them. Measured: docs (exported sets, codecs).
"""

from __future__ import annotations

import numpy as np
from numba import njit

LIMIT = 255  # counts are halved past this: adapts along a block (60 and 1023 measured worse or slower)
CONTEXTS = 1024  # last four symbols (8 bits) x the symbol a row before (2 bits)
_TOP = 0xFF000000
_MASK = 0xFFFFFFFF


# ceil(2**40 / b): ``a // b`` is ``(a * _RECIP[b]) >> 40`` exactly for a < 2**21 and b <= 512
# (the error a * (_RECIP[b] * b - 2**40) / (b * 2**40) < 2**-19 stays below the 1 / b
# from a / b to the next integer), the division's quotient without its latency
_RECIP = np.array([0] + [-(-(1 << 40) // b) for b in range(1, 2 * LIMIT + 3)], dtype=np.int64)


@njit(cache=True, _nrt=False, inline="always")
def _p1(cnt, c, node):
    """P(bit = 1) of a context node in 12 bits, from its counts: ``((2 * n1 + 1) << 12)
    // (2 * (n0 + n1) + 2)``, by a multiplication (counts stay within ``LIMIT``)."""
    n0 = np.int64(cnt[c, node, 0])
    n1 = np.int64(cnt[c, node, 1])
    p = (((2 * n1 + 1) << 12) * _RECIP[2 * (n0 + n1) + 2]) >> 40
    return min(max(p, 1), 4095)


@njit(cache=True, _nrt=False, inline="always")
def _learn(cnt, c, node, bit):
    cnt[c, node, bit] += 1
    if cnt[c, node, 0] + cnt[c, node, 1] > LIMIT:
        cnt[c, node, 0] = (cnt[c, node, 0] + 1) >> 1
        cnt[c, node, 1] = (cnt[c, node, 1] + 1) >> 1


@njit(cache=True, nogil=True, _nrt=False)
def cm_encode(sym, coded, row, cnt, out):
    """Code the symbols ``sym`` (uint8 0/1/2) of one block into ``out``; only cells where
    ``coded`` is true are coded (the others are known to the reader, and only enter the
    context). ``cnt``: int64 scratch of shape ``(CONTEXTS, 2, 2)``; ``out`` needs
    ``3 * len(sym) + 16`` bytes (the worst case: 12 bits for each of two decisions a
    symbol; a block takes well under a byte a symbol). Returns the bytes written."""
    cnt[:] = 0
    x1, x2, n, h = np.int64(0), np.int64(_MASK), 0, 0
    for i in range(sym.shape[0]):
        s = sym[i]
        if coded[i]:
            c = h * 4 + (sym[i - row] if i >= row else 3)
            for node in range(2):
                bit = (1 if s == 1 else 0) if node == 0 else (1 if s == 2 else 0)
                xmid = x1 + ((x2 - x1) >> 12) * _p1(cnt, c, node)
                if bit:
                    x2 = xmid
                else:
                    x1 = xmid + 1
                _learn(cnt, c, node, bit)
                while ((x1 ^ x2) & _TOP) == 0:
                    out[n] = x2 >> 24
                    n += 1
                    x1 = (x1 << 8) & _MASK
                    x2 = ((x2 << 8) & _MASK) | 255
                if node == 0 and bit:
                    break
        h = ((h << 2) | s) & 0xFF
    for _ in range(4):
        out[n] = x1 >> 24
        n += 1
        x1 = (x1 << 8) & _MASK
    return n


@njit(cache=True, nogil=True, _nrt=False)
def cm_decode(data, coded, known, row, cnt, sym):
    """Decode a block written by :func:`cm_encode` into ``sym`` (its length: the block's
    cells); ``known[i]`` is the symbol of a cell that is not coded. Reading past the end
    of ``data`` reads zeros (a damaged block decodes to some symbols; its checksum, checked
    before, is what refuses it)."""
    cnt[:] = 0
    x1, x2, x, pos, h = np.int64(0), np.int64(_MASK), np.int64(0), 0, 0
    for _ in range(4):
        x = (x << 8) | (data[pos] if pos < data.shape[0] else 0)
        pos += 1
    for i in range(sym.shape[0]):
        if not coded[i]:
            s = known[i]
        else:
            c = h * 4 + (sym[i - row] if i >= row else 3)
            s = 0
            for node in range(2):
                xmid = x1 + ((x2 - x1) >> 12) * _p1(cnt, c, node)
                bit = 1 if x <= xmid else 0
                if bit:
                    x2 = xmid
                else:
                    x1 = xmid + 1
                _learn(cnt, c, node, bit)
                while ((x1 ^ x2) & _TOP) == 0:
                    x1 = (x1 << 8) & _MASK
                    x2 = ((x2 << 8) & _MASK) | 255
                    x = ((x << 8) & _MASK) | (data[pos] if pos < data.shape[0] else 0)
                    pos += 1
                if node == 0:
                    if bit:
                        s = 1
                        break
                else:
                    s = 2 if bit else 0
        sym[i] = s
        h = ((h << 2) | s) & 0xFF
