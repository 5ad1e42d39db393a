"""Decoding one block of an exported set (:mod:`solver.db.compact_format`) into codes,
and a tier's blocks on several threads.

A block's codes come from three places: the rules (:func:`~solver.kernels.compact.rule_codes`:
the cells the rules answer, which are not stored), its WDL block (``cm``:
:mod:`solver.kernels.compact_cm`; or 2 bits a cell, byte-compressed) and, in a set with
distances, its distance block (``cm``: :mod:`solver.kernels.compact_dcm`, from the
tier's model in the file header; or byte planes); ``rans`` blocks
(:mod:`solver.kernels.compact_rans`) give both in one pass, from the models in the two
files' headers. Every kernel here runs without the
GIL, and every buffer a block needs is in a :class:`Scratch`, one a thread.
"""

from __future__ import annotations

import base64
import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from threading import local
from typing import Callable

import numpy as np

from solver.db.compact_format import TierFile, unpack_model
from solver.errors import StoreError
from solver.kernels import compact_dcm as dcm
from solver.kernels import compact_rans as ra
from solver.kernels.compact import (
    NO_RULE, block_codes, count_decided, pack2, rule_codes, rule_symbols, unpack_symbols,
)
from solver.kernels.compact_cm import CONTEXTS, cm_decode
from solver.kernels.compact_rules import ENUM, fits, point_vectors, ring_tables, rule_codes_rows

THREAD_BLOCKS = 8  # a tier of fewer blocks is decoded on the calling thread


class Scratch:
    """The buffers one thread decodes a block with."""

    def __init__(self, block: int):
        self.rules = np.empty(block, dtype=np.int32)
        self.sym = np.empty(block, dtype=np.uint8)
        self.known = np.empty(block, dtype=np.uint8)
        self.coded = np.empty(block, dtype=np.bool_)
        self.packed = np.empty((block + 3) // 4, dtype=np.uint8)
        self.cnt = np.empty((CONTEXTS, 2, 2), dtype=np.int64)
        self.st = np.empty(dcm.CONTEXTS, dtype=np.int64)
        self.rows = None  # rule_codes_rows' tables of the board, where it fits it (else False)
        self.rt, self.ptv = np.zeros((4, 256), dtype=np.uint64), np.zeros(64, dtype=np.uint64)
        self.en = np.full(ENUM + 2, -1, dtype=np.int64)


def dist_model(f: TierFile) -> np.ndarray:
    """The distance model of a ``cm`` distance file (its header's), read once."""
    model = getattr(f, "model", None)
    if model is None:
        try:
            model = np.frombuffer(zlib.decompress(base64.b64decode(f.header["model"], validate=True)), dtype="<u2")
        except (KeyError, TypeError, ValueError, zlib.error):
            model = None
        if model is None or len(model) != dcm.CONTEXTS or model.min(initial=1) < 1 or model.max(initial=1) > 4095:
            raise StoreError(f"{f.where} is damaged: its distance model does not read")
        f.model = model = model.astype(np.uint16)
    return model


def decode_block(files: tuple[TierFile, TierFile | None], layout, lo: int, need: np.ndarray, b: int,
                 dest: np.ndarray, sc: Scratch) -> None:
    """The codes of block ``b`` of a tier (``files``: its WDL and distance files; ``lo``:
    the block's first global index) into ``dest``; distance 0 in a WDL-only set.
    :class:`StoreError` naming the file, tier and block if it is damaged."""
    wf, df = files
    n = wf.raw_length(b)
    rules = sc.rules[:n]
    if sc.rows is None:
        sc.rows = (ring_tables(layout.geo), point_vectors(layout.geo)) if fits(layout.geo) else False
    if sc.rows:  # the same codes, a row at a time
        rule_codes_rows(lo, lo + n, layout.geo, layout.lay, need, *sc.rows, sc.rt, sc.ptv, sc.en, rules)
    else:
        rule_codes(lo, lo + n, layout.geo, layout.lay, need, rules)
    if wf.codec == "rans":
        _decode_rans(wf, df, b, rules, dest, sc)
        return
    sym = sc.sym[:n]  # a rule cell's own symbol
    packed = None
    if wf.codec == "cm":
        known = sc.known[:n]
        rule_symbols(rules, known)
        coded = sc.coded[:n]
        np.equal(rules, NO_RULE, out=coded)
        cm_decode(np.frombuffer(wf.read(b), dtype=np.uint8), coded, known, int(wf.header["row"]), sc.cnt, sym)
    else:
        packed = np.frombuffer(wf.read(b, (n + 3) // 4), dtype=np.uint8)
    damaged = f"{wf.where}: tier {wf.key}, block {b} is damaged: its symbols do not read"
    if df is not None and df.codec == "cm":
        if packed is not None and not unpack_symbols(packed, rules, sym):
            raise StoreError(damaged)
        if not dcm.dcm_decode(np.frombuffer(df.read(b), dtype=np.uint8), rules, sym, int(df.header["row"]),
                              dist_model(df), sc.st, dest):
            raise StoreError(f"{df.where}: tier {df.key}, block {b} is damaged: its distances do not read")
        return
    if packed is None:
        packed = sc.packed[: (n + 3) // 4]
        pack2(sym, packed)
    if df is not None:
        nw, nl = count_decided(packed, n, rules)
        k = nw + nl
        raw = np.frombuffer(df.read(b, 2 * k + (k + 7) // 8), dtype=np.uint8)
        qlo, qhi, par = raw[:k], raw[k : 2 * k], np.unpackbits(raw[2 * k :], count=k)
    else:
        nw, qlo = 0, np.zeros(0, dtype=np.uint8)
        qhi = par = qlo
    if not block_codes(packed, n, qlo, qhi, par, df is not None, nw, rules, dest):
        raise StoreError(damaged)


def rans_tables(f: TierFile) -> tuple[np.ndarray, np.ndarray]:
    """The decoder's tables of a ``rans`` file (its header's model), read once."""
    tables = getattr(f, "rans", None)
    if tables is None:
        shape = (ra.WCTX, 3) if f.kind == "wdl" else (ra.DCTX, ra.DSYM)
        tables = f.rans = ra.rans_decode_tables(unpack_model(f.header.get("model"), shape, ra.TOTAL, f.where))
    return tables


def _words(f: TierFile, b: int) -> np.ndarray:
    raw = f.read(b)
    if len(raw) % 2:
        raise StoreError(f"{f.where}: tier {f.key}, block {b} is damaged: an odd number of bytes")
    return np.frombuffer(raw, dtype="<u2")


def _decode_rans(wf: TierFile, df: TierFile | None, b: int, rules: np.ndarray, dest: np.ndarray, sc: Scratch) -> None:
    """A ``rans`` block (:mod:`solver.kernels.compact_rans`): both streams in one pass."""
    if df is not None and df.codec != "rans":
        raise StoreError(f"{df.where} is damaged: codec {df.codec!r} with rans WDL blocks")
    wt = rans_tables(wf)
    none = np.empty((0, ra.DSYM + 1), dtype=np.int32)
    dt = rans_tables(df) if df is not None else (none, none)
    words = _words(df, b) if df is not None else np.empty(0, dtype=np.uint16)
    if not ra.rans_decode(_words(wf, b), words, rules, int(wf.header["row"]), *wt, *dt, sc.sym[: len(dest)], dest):
        raise StoreError(f"{(df or wf).where}: tier {wf.key}, block {b} is damaged: its distances do not read")


def read_blocks(decode: Callable, no: int, nblocks: int, block: int, size: int, out: np.ndarray,
                scratch: Callable[[], Scratch]) -> None:
    """``decode(no, b, dest, scratch)`` of every block of tier ``no`` into its place in
    ``out``, on one thread a core (each with its own scratch); the first error raised."""
    jobs = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1,
               max(1, nblocks // THREAD_BLOCKS))
    if jobs <= 1:
        sc = scratch()
        for b in range(nblocks):
            decode(no, b, out[b * block : min(size, (b + 1) * block)], sc)
        return
    mine = local()

    def one(b: int) -> None:
        sc = getattr(mine, "sc", None)
        if sc is None:
            sc = mine.sc = scratch()
        decode(no, b, out[b * block : min(size, (b + 1) * block)], sc)

    with ThreadPoolExecutor(jobs) as pool:
        for _ in pool.map(one, range(nblocks)):
            pass
