"""The exporter's pipeline for the ``rans`` codec (:mod:`solver.kernels.compact_rans`).

A tier is coded in tasks of ``CHUNK_BLOCKS`` database blocks, each on a thread of the
pool where there is one: the main thread only takes each block's stored bytes out of
the database (a copy) and hands them on, so the decompression — the bulk of a read — is
shared by the threads like the coding. A task checks and decompresses its blocks,
finds their rule cells (:func:`solver.kernels.compact_rules.rule_codes_rows`) and codes
each exported block (:func:`~solver.kernels.compact_rans.rans_encode`); its values and
WDL symbols come back to the main thread, which hashes them in index order (the
headers' ``sha256`` and ``wdl_sha256``) and writes the blocks to the tier files
(:class:`~solver.db.compact_format.TierWriter`: header and index last, in the room kept
in front) while later tasks run. At most a few tasks per thread are ahead of it, so the
memory held stays a few of them whatever the tier's size.

The tier's frequencies are counted first, over every k-th database block (at least
``MODEL_BLOCKS`` where the tier has as many, a 64th of it at most), by tasks
submitted before the coding ones, which wait for the model.
"""

from __future__ import annotations

import hashlib
import threading
from collections import deque

import numpy as np

from solver.db.compact_format import pack_model
from solver.db.store import BLOCK as STORE_BLOCK
from solver.db.store import unpack_block
from solver.errors import StoreError
from solver.kernels import compact_rans as ra
from solver.kernels.compact import rule_codes_known
from solver.kernels.compact_rules import ENUM, fits, point_vectors, ring_tables, rule_codes_rows

CHUNK_BLOCKS = 16  # database blocks a task: 1M positions, a few MB of buffers
MODEL_BLOCKS = 32  # the model is counted over every k-th database block, at least this many
MODEL_STEP = 64  # and a 64th of the tier at most (hex(3) 5v5: counted over all, 0.1 % smaller)
AHEAD = 4  # tasks a thread may be ahead of the hashing
SYNC_BYTES = 32 << 20  # the files are pushed to the disk each time this much more is written


class _Buffers:
    """What a thread codes with, kept between its tasks (fresh pages each task would be
    faulted in each time)."""

    def __init__(self, block: int):
        self.block = block
        self.rules = np.empty(STORE_BLOCK, dtype=np.int32)
        self.sym = np.empty(block, dtype=np.uint8)
        self.wdl = np.empty(block, dtype=np.uint8)
        self.qb = np.empty(block, dtype=np.uint8)
        self.rare = np.empty(block, dtype=np.uint8)
        self.wx = np.empty(block, dtype=np.int32)
        self.dx = np.empty(block, dtype=np.int32)
        self.wtok = np.empty(block, dtype=np.int32)
        self.dtok = np.empty(3 * block, dtype=np.int32)
        self.wout = np.empty(ra.out_words(block), dtype=np.uint16)
        self.dout = np.empty(ra.out_words(block), dtype=np.uint16)


_THREAD = threading.local()


def _buffers(block: int) -> _Buffers:
    w = getattr(_THREAD, "buffers", None)
    if w is None or w.block != block:
        w = _THREAD.buffers = _Buffers(block)
    return w


class _Rules:
    """The rule cells of a range (the faster kernel where the board fits it)."""

    def __init__(self, layout):
        from solver.kernels.compact import win_needs

        self.layout = layout
        self.need = win_needs(layout.geo)
        self.fast = fits(layout.geo)
        self.tab = ring_tables(layout.geo) if self.fast else None
        self.pv = point_vectors(layout.geo) if self.fast else None

    def __call__(self, lo: int, hi: int, codes: np.ndarray, out: np.ndarray) -> None:
        lay = self.layout
        if self.fast:
            w = _THREAD.__dict__.get("rows")
            if w is None:
                w = _THREAD.rows = (np.zeros((4, 256), dtype=np.uint64), np.zeros(64, dtype=np.uint64),
                                    np.full(ENUM + 2, -1, dtype=np.int64))
            rule_codes_rows(lo, hi, lay.geo, lay.lay, self.need, self.tab, self.pv, *w, out)
        else:
            rule_codes_known(lo, hi, codes, lay.geo, lay.lay, self.need, out)


def _values(raw, size: int, lo: int) -> np.ndarray:
    """Check and decompress a database block (``raw_block``'s answer) of a tier of
    ``size`` values whose first is at ``lo``: its values (read-only, not copied)."""
    data, where, key = raw
    v = unpack_block(data, where, key)
    want = min(STORE_BLOCK, size - lo)
    if len(v) != want:
        raise StoreError(f"{where} is damaged: {len(v)} values, expected {want}")
    return v


class _Model:
    """The tier's frequencies, summed and turned into tables when first asked for."""

    def __init__(self, parts: list, wdl_only: bool):
        self._parts = parts
        self._wdl_only = wdl_only
        self._tables = None
        self._lock = threading.Lock()

    def get(self):
        with self._lock:
            if self._tables is None:
                counts = [p.result() if hasattr(p, "result") else p for p in self._parts]
                wf = ra.rans_freqs(sum(c[0] for c in counts), 3)
                df = ra.rans_freqs(sum(c[1] for c in counts), ra.DSYM)
                empty = np.empty((0, 4), dtype=np.int64)
                self._tables = (wf, df, ra.rans_tables(wf), empty if self._wdl_only else ra.rans_tables(df, ra.FLAT))
            return self._tables


def tier_rans(store, no: int, t, layout, block: int, row: int, wdl_only: bool, pool, open_writers):
    """Read tier number ``no``, code it and write its blocks (see the module docstring):
    ``open_writers({"wdl": model, "dist": model})`` gives the files'
    :class:`~solver.db.compact_format.TierWriter` by kind once the models are counted.
    Returns ``(rule cells, header fields)``: the counts and checksums, known at the end."""
    rules_of = _Rules(layout)
    nl = -(-t.size // STORE_BLOCK)
    step = max(1, min(MODEL_STEP, nl // MODEL_BLOCKS))

    def count(lo_blocks: list[int], raws):
        w = _buffers(block)
        wcnt = np.zeros(ra.WCTX * 3, dtype=np.int64)
        dcnt = np.zeros(ra.DCTX * ra.DSYM, dtype=np.int64)
        tally = np.zeros(4, dtype=np.int64)
        dtok = w.dtok[:0] if wdl_only else w.dtok
        for b, raw in zip(lo_blocks, raws):
            lo = b * STORE_BLOCK
            n = min(STORE_BLOCK, t.size - lo)
            codes = _values(raw, t.size, lo)
            rules = w.rules[:n]
            rules_of(t.base + lo, t.base + lo + n, codes, rules)
            for s in range(0, n, block):
                e = min(n, s + block)
                ra.rans_count(codes[s:e], rules[s:e], row, w.sym, w.wdl, w.qb, w.wx, w.dx, w.rare, tally, w.wtok, dtok,
                              wcnt, dcnt)
        return wcnt, dcnt

    picks = list(range(0, nl, step))
    groups = [picks[i : i + CHUNK_BLOCKS] for i in range(0, len(picks), CHUNK_BLOCKS)]
    parts = []
    for g in groups:  # each group counted as soon as it is read
        raws = [store.raw_block(no, b) for b in g]
        parts.append(pool.submit(count, g, raws) if pool is not None else count(g, raws))
    model = _Model(parts, wdl_only)

    spare: deque = deque()  # tasks' WDL arrays, hashed and free again (fresh pages would be faulted in)

    def code(lo: int, raws):
        """A task: its database blocks decompressed, their rule cells found and coded, one
        database block at a time (a block's arrays stay in the processor's cache)."""
        w = _buffers(block)
        n = min(CHUNK_BLOCKS * STORE_BLOCK, t.size - lo)
        try:
            wdl = spare.pop()[:n]
        except IndexError:
            wdl = np.empty(CHUNK_BLOCKS * STORE_BLOCK, dtype=np.uint8)[:n]
        rules = w.rules[:STORE_BLOCK]
        values = []  # each database block's, as decompressed: the main thread hashes them
        _, _, wtab, dtab = model.get()
        dtok = w.dtok[:0] if wdl_only else w.dtok
        tally = np.zeros(4, dtype=np.int64)
        wb: list[bytes] = []
        db: list[bytes] = []
        rc = 0
        for k, raw in enumerate(raws):
            a = k * STORE_BLOCK
            z = min(n, a + STORE_BLOCK)
            codes = _values(raw, t.size, lo + a)
            values.append(codes)
            rules_of(t.base + lo + a, t.base + lo + z, codes, rules[: z - a])
            for s in range(a, z, block):  # an exported block lies in one database block
                e = min(z, s + block)
                ws, ds, r = ra.rans_encode(codes[s - a : e - a], rules[s - a : e - a], row, w.sym, wdl[s:e], w.qb, w.wx,
                                           w.dx, w.rare, tally, w.wtok, dtok, wtab, dtab, w.wout, w.dout)
                rc += r
                wb.append(w.wout[ws:].tobytes())
                if not wdl_only:
                    db.append(w.dout[ds:].tobytes())
        return rc, wb, db, values, wdl, tally

    digest, wdl_digest = hashlib.sha256(), hashlib.sha256()
    counts = np.zeros(4, dtype=np.int64)
    rule_cells = 0
    waiting: deque = deque()
    writers: dict = {}
    written = 0

    def start() -> None:
        if not writers:  # the model is in the headers: the files start once it is counted
            wf, df, _, _ = model.get()
            writers.update(open_writers({"wdl": pack_model(wf), "dist": None if wdl_only else pack_model(df)}))

    def take() -> None:
        nonlocal rule_cells, written
        start()
        p = waiting.popleft()
        rc, wb, db, values, wdl, tally = p.result() if pool is not None else p
        for v in values:
            digest.update(v)  # little-endian uint16, as stored
        wdl_digest.update(wdl)
        spare.append(wdl.base if wdl.base is not None else wdl)
        counts[:] += tally
        rule_cells += rc
        for kind, blobs in (("wdl", wb), ("dist", db)):
            for b in blobs:
                writers[kind].add(b)
                written += len(b)
        if written > SYNC_BYTES:
            for f in writers.values():
                f.sync()
            written = 0

    ahead = AHEAD * (pool._max_workers if pool is not None else 1)
    span = CHUNK_BLOCKS * STORE_BLOCK
    try:
        for lo in range(0, t.size, span):
            raws = [store.raw_block(no, b) for b in range(lo // STORE_BLOCK, min(nl, (lo + span) // STORE_BLOCK))]
            waiting.append(pool.submit(code, lo, raws) if pool is not None else code(lo, raws))
            while waiting and (pool is None or len(waiting) > ahead or waiting[0].done()):
                take()
        while waiting:
            take()
    except BaseException:  # a damaged block, Ctrl-C: the tasks not started are not run
        for p in list(waiting) + parts:
            if hasattr(p, "cancel"):
                p.cancel()
        raise
    start()
    headers = {
        "counts": {"positions": t.size, "losses": int(counts[0]), "draws": int(counts[1]), "wins": int(counts[2]),
                   "invalid": int(counts[3]), "rule_cells": rule_cells},
        "sha256": digest.hexdigest(),
        "wdl_sha256": wdl_digest.hexdigest(),
    }
    return rule_cells, headers
