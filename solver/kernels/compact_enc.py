"""The exporter's block coder: a block's WDL symbols and both ``cm`` streams in one pass.

:func:`encode_block` writes the same bytes as :func:`~solver.kernels.compact.wdl_symbols`,
:func:`~solver.kernels.compact_cm.cm_encode` and
:func:`~solver.kernels.compact_dcm.dcm_encode` called one after the other (the tests
compare them), but walks the block once: each cell's symbol is found, its WDL decisions
coded and then its distance's. The two arithmetic coders are independent, so the
processor overlaps one's work with the other's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import DMASK, RESOLVED, WINBIT
from solver.kernels.compact import NO_RULE
from solver.kernels.compact_cm import _learn as _cm_learn
from solver.kernels.compact_cm import _p1
from solver.kernels.compact_dcm import LMAX, NONE, _bucket, _ctx_m, _ctx_u, _prev_bucket, _put, _split, _start

_TOP = 0xFF000000
_MASK = 0xFFFFFFFF


@njit(cache=True, nogil=True, _nrt=False)
def encode_block(codes, rules, row, sym, cnt, wout, model, st, dout):
    """Code one block: ``codes`` (uint16 values), ``rules`` (:func:`rule_codes`; a rule
    cell is not coded). Writes the WDL symbols (a rule cell's own) into ``sym``, the WDL
    stream into ``wout`` (``3 * n + 16`` bytes) and, with a ``model`` of at least one
    context, the distance stream into ``dout`` (:func:`~solver.kernels.compact_dcm.out_size`);
    ``cnt``, ``st``: the coders' scratch. Returns ``(WDL bytes, distance bytes)`` (0
    distance bytes without a model)."""
    n = codes.shape[0]
    for i in range(n):
        c = codes[i]
        sym[i] = np.uint8(1) if not c & RESOLVED else (np.uint8(2) if c & WINBIT else np.uint8(0))
    dist = model.shape[0] > 0
    cnt[:] = 0
    if dist:
        _start(model, st)
    y1, y2, nw, h = np.int64(0), np.int64(_MASK), 0, 0
    x1, x2, nd = np.int64(0), np.int64(_MASK), 0
    last0 = NONE
    last2 = NONE
    for i in range(n):
        s = sym[i]
        r = rules[i]
        if r == NO_RULE:
            cx = h * 4 + (sym[i - row] if i >= row else 3)
            for node in range(2):
                bit = (1 if s == 1 else 0) if node == 0 else (1 if s == 2 else 0)
                ymid = y1 + ((y2 - y1) >> 12) * _p1(cnt, cx, node)
                if bit:
                    y2 = ymid
                else:
                    y1 = ymid + 1
                _cm_learn(cnt, cx, node, bit)
                while ((y1 ^ y2) & _TOP) == 0:
                    wout[nw] = y2 >> 24
                    nw += 1
                    y1 = (y1 << 8) & _MASK
                    y2 = ((y2 << 8) & _MASK) | 255
                if node == 0 and bit:
                    break
        h = ((h << 2) | s) & 0xFF
        if not dist or s == 1:
            continue
        w = 1 if s == 2 else 0
        d = np.int64(r if r >= 0 else codes[i]) & DMASK
        if r < 0:
            a = _prev_bucket(codes, rules, sym, i, row, s)
            b = last2 if w else last0
            v = (d >> 1) + 1
            L = _split(v)
            if (d & 1) ^ w:  # the escape: a bit length of LMAX + 1
                for k in range(1, LMAX + 1):
                    x1, x2, nd = _put(x1, x2, st, _ctx_u(w, a, b, k), 1, dout, nd)
            for k in range(1, L + 1):
                x1, x2, nd = _put(x1, x2, st, _ctx_u(w, a, b, k), 1 if L > k else 0, dout, nd)
            for bitpos in range(L - 2, -1, -1):
                x1, x2, nd = _put(x1, x2, st, _ctx_m(w, a, L, v >> (bitpos + 1), bitpos), (v >> bitpos) & 1, dout, nd)
        bq = _bucket(d >> 1)
        last2 = bq if w else last2
        last0 = last0 if w else bq
    for _ in range(4):
        wout[nw] = y1 >> 24
        nw += 1
        y1 = (y1 << 8) & _MASK
        if dist:
            dout[nd] = x1 >> 24
            nd += 1
            x1 = (x1 << 8) & _MASK
    return nw, nd
