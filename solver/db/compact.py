"""``rotary export``: a finished LMDB database as a compact read-only set of tier files.

WDL (win/draw/loss) and distances are kept apart, so that a WDL-only set (``--wdl-only``)
is a fraction of the size; the format is :mod:`solver.db.compact_format`, the readers
:mod:`solver.db.compact_reader`. Positions the rules answer — no position (a ball on a
trap of the other colour), a finished game, a win in one move by completing the centre
(:func:`solver.kernels.compact.rule_code`) — are not stored: the ``cm`` WDL coder skips
them, a byte codec stores the symbol that joins the neighbouring runs there ("don't
care"), no distance is stored for them, and every reader answers them by the rules.

Every file is written under a temporary name and renamed; the manifest comes last, so a
folder with a manifest always holds the files it names.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from math import comb
from pathlib import Path

import numpy as np

from solver.db.compact_format import (
    DEFAULT_BLOCK, DIST_CODECS, FORMAT_NAME, MANIFEST, VERSION, WDL_CODECS, TierWriter, compressor, file_bytes,
    tier_file, write_atomic,
)
from solver.db.guard import pack_json
from solver.db.store import BLOCK as STORE_BLOCK
from solver.db.store import make_folder
from solver.errors import StoreError
from solver.kernels import compact_dcm as dcm
from solver.kernels.compact import (
    NO_RULE, dist_encode, fill_runs, pack2, rule_codes_known, wdl_symbols, wdl_tally, win_needs,
)
from solver.kernels.compact_cm import CONTEXTS
from solver.kernels.compact_enc import encode_block

_NO_MODEL = np.empty(0, dtype=np.uint16)  # encode_block without distances
CHUNK_BLOCKS = 16  # blocks a task codes (its rule cells found in one kernel call): bounds the memory, balances threads
MODEL_BLOCKS = 32  # the distance model is counted over every k-th database block, at least this many (1/8
# of a tier at most: hex(3) 4v4's distances 0.07 % larger than counted over all)


@dataclass
class TierReport:
    key: str
    positions: int
    rule_cells: int
    wdl_bytes: int
    dist_bytes: int


@dataclass
class ExportReport:
    description: str
    path: Path
    wdl_only: bool
    codec: str
    block: int
    seconds: float
    tiers: list[TierReport] = field(default_factory=list)

    @property
    def positions(self) -> int:
        return sum(t.positions for t in self.tiers)

    @property
    def wdl_bytes(self) -> int:
        return sum(t.wdl_bytes for t in self.tiers)

    @property
    def dist_bytes(self) -> int:
        return sum(t.dist_bytes for t in self.tiers)


def default_codec() -> str:
    """The codec of both streams: ``rans``, the tier's static context model coded by rANS
    (the fastest to write, within the size goals: measured in docs)."""
    return "rans"


def export_db(
    db_path: str | os.PathLike, out: str | os.PathLike, wdl_only: bool = False, block: int = DEFAULT_BLOCK,
    codec: str | None = None, progress: bool = False, wdl_codec: str | None = None, jobs: int = 1,
) -> ExportReport:
    """Export the finished database at ``db_path`` into the folder ``out``.

    ``wdl_codec``: ``rans`` (:mod:`solver.kernels.compact_rans`, the default), ``cm`` (the
    arithmetic coder of :mod:`solver.kernels.compact_cm`) or a byte codec for 2-bit packed
    symbols; ``codec``: the distances' — ``rans`` (the default), ``cm``
    (:mod:`solver.kernels.compact_dcm`) or a byte codec. ``rans`` goes with ``rans`` (one
    model and pass for both streams); where one is given as another codec, the other
    defaults to ``cm``.
    ``jobs``: threads coding blocks at once (the kernels and the byte codecs run without
    the GIL).

    :class:`StoreError` in one line for a database still being solved (a tier not
    finished), a setup-game database, an ``out`` that is the database itself or holds one.
    """
    from solver.db.database import Database

    # rans codes both streams; a byte codec or cm named for one gets cm for the other
    rans = default_codec()
    codec, wdl_codec = (codec or (rans if wdl_codec in (None, rans) else "cm"),
                        wdl_codec or (rans if codec in (None, rans) else "cm"))
    if wdl_codec not in WDL_CODECS:
        raise StoreError(f"unknown WDL codec {wdl_codec!r} (one of {', '.join(WDL_CODECS)})")
    if codec not in DIST_CODECS:
        raise StoreError(f"unknown distance codec {codec!r} (one of {', '.join(DIST_CODECS)})")
    if not wdl_only and (wdl_codec == "rans") != (codec == "rans"):
        raise StoreError(f"the rans codec codes both streams: WDL codec {wdl_codec!r} with distance codec {codec!r} "
                         "is not a pair (give both as rans, or neither)")
    pack = None if codec in ("cm", "rans") else compressor(codec)
    pack_wdl = None if wdl_codec in ("cm", "rans") else compressor(wdl_codec)
    if block < 4 or block & (block - 1):
        raise StoreError(f"block size {block} is not a power of two of at least 4")
    out = Path(out)
    start = time.perf_counter()
    with Database(db_path) as db:
        if db.cfg.setup is not None:
            raise StoreError(f"{db_path} is a setup-game database ({db.description}): export reads rotation-phase databases only")
        if getattr(db, "compact", False):
            raise StoreError(f"{db_path} is already an exported set")
        if (out / "data.mdb").exists() or (out.exists() and out.resolve() == Path(db_path).resolve()):
            raise StoreError(f"{out} holds an LMDB database: export into another folder")
        layout = db.layout
        unfinished = [t.key for t in layout.tiers if not db.finished(t.key)]
        if unfinished:
            raise StoreError(f"{db_path} is still being solved: tier {unfinished[0]} is not finished (export it when 'rotary solve' is done)")
        make_folder(out)
        old = _old_files(out)
        report = ExportReport(db.description, out, wdl_only, wdl_codec if wdl_only else f"{wdl_codec} + {codec}", block, 0.0)
        base = {
            "format": FORMAT_NAME, "version": VERSION, "rules": db.header["rules"], "material": list(db.material),
            "description": db.description, "block": block,
        }
        files: dict[str, list] = {}
        from tqdm import tqdm

        pool = ThreadPoolExecutor(max(1, jobs)) if jobs > 1 else None

        def emit(no: int, t, finish) -> None:
            """Write tier ``no``'s files once its tasks are done."""
            rep, headers, blobs = finish()
            model = headers.pop("model", None)
            meta = dict(db.tier_meta[t.key])
            names = []
            for kind in ("wdl", "dist")[: 1 if wdl_only else 2]:
                extra = {"model": model} if kind == "dist" and model is not None else {}
                header = dict(base, kind=kind, tier=t.key, tier_no=no, base=t.base, size=t.size,
                              blocks=len(blobs[kind]), codec=wdl_codec if kind == "wdl" else codec,
                              **headers, **extra, meta=meta)
                path = tier_file(out, t.key, kind)
                write_atomic(path, file_bytes(header, blobs[kind]))
                names.append(path.name)
            files[t.key] = names
            report.tiers.append(rep)

        try:
            pending = None  # with threads, a tier's last tasks are coded while the next tier is read
            for no, t in enumerate(tqdm(layout.tiers, desc="export", disable=not progress, leave=False)):
                if wdl_codec == "rans":  # writes its files as it codes (no tier left to finish)
                    files[t.key], rep = _tier_rans(db.store, no, t, layout, block, wdl_only, pool, out, base,
                                                   dict(db.tier_meta[t.key]))
                    report.tiers.append(rep)
                    continue
                finish = _tier(db.store, no, t, layout, block, pack_wdl, pack, wdl_only, pool)
                if pending is not None:
                    emit(*pending)
                pending = (no, t, finish)
                if pool is None:
                    emit(*pending)
                    pending = None
            if pending is not None:
                emit(*pending)
        finally:
            if pool is not None:
                pool.shutdown()
        manifest = dict(base, tiers=db.header["tiers"], wdl_only=wdl_only, files=files,
                        codec={"wdl": wdl_codec, "dist": None if wdl_only else codec})
        write_atomic(out / MANIFEST, pack_json(manifest))
        for name in old - {n for names in files.values() for n in names}:
            (out / name).unlink(missing_ok=True)  # a file of the set exported there before
    report.seconds = time.perf_counter() - start
    return report


def _tier_rans(store, no: int, t, layout, block: int, wdl_only: bool, pool, out: Path, base: dict, meta: dict):
    """:func:`_tier` for the ``rans`` codec (:mod:`solver.db.compact_export_rans`), its files
    written as its blocks are coded: ``(file names, report)``."""
    from solver.db.compact_export_rans import tier_rans

    row = comb(layout.geo.npoints - t.a, t.b)
    nblocks = -(-t.size // block)
    kinds = ("wdl",) if wdl_only else ("wdl", "dist")
    heads: dict[str, dict] = {}
    writers: dict[str, TierWriter] = {}
    big = 10**19  # the header's counts and checksums are known at the end: room for any
    room = {"counts": {k: big for k in ("positions", "losses", "draws", "wins", "invalid", "rule_cells")},
            "sha256": "0" * 64, "wdl_sha256": "0" * 64}

    def open_writers(models: dict) -> dict:
        for kind in kinds:
            heads[kind] = dict(base, kind=kind, tier=t.key, tier_no=no, base=t.base, size=t.size, blocks=nblocks,
                               codec="rans", row=row, model=models[kind], meta=meta)
            size = len(json.dumps(dict(heads[kind], **room), sort_keys=True).encode())
            writers[kind] = TierWriter(tier_file(out, t.key, kind), kind, t.key, nblocks, size)
        return writers

    try:
        with store.reading():  # one read transaction for the tier's blocks
            rule_cells, fields = tier_rans(store, no, t, layout, block, row, wdl_only, pool, open_writers)
        for kind in kinds:
            writers[kind].close(dict(heads[kind], **fields))
    except BaseException:
        for w in writers.values():
            w.abort()
        raise
    rep = TierReport(t.key, t.size, rule_cells, writers["wdl"].data_bytes,
                     writers["dist"].data_bytes if "dist" in writers else 0)
    return [tier_file(out, t.key, kind).name for kind in kinds], rep


def _old_files(out: Path) -> set[str]:
    """The tier files named by a manifest already in ``out`` (replaced by this export)."""
    from solver.db.guard import unpack_json

    try:
        old = unpack_json((out / MANIFEST).read_bytes(), str(out / MANIFEST))
        return {n for names in old.get("files", {}).values() for n in names if n and "/" not in n}
    except (OSError, StoreError, AttributeError, TypeError):
        return set()


def _tier(store, no: int, t, layout, block: int, pack_wdl, pack, wdl_only: bool, pool):
    """Read tier number ``no`` and start coding it; returns a function giving its
    compressed blocks and what its headers record once they are done (``pack_wdl`` None:
    the ``cm`` WDL coder; ``pack`` None: the ``cm`` distance coder, whose model the
    headers carry). The tier is read from the database block by block; each
    ``CHUNK_BLOCKS`` blocks read are coded in one task, on ``pool``'s threads where there
    is one — while the next are read, and the distance model is counted meanwhile."""
    need = win_needs(layout.geo)
    row = comb(layout.geo.npoints - t.a, t.b)  # the cm coders' context: a row of opponent placements before
    model = None if wdl_only or pack is not None else _model(store, no, t, layout, block, need, row, pool)
    codes = np.empty(t.size, dtype=np.uint16)
    span = CHUNK_BLOCKS * block
    digest, wdl_digest = hashlib.sha256(), hashlib.sha256()
    counts = np.zeros(4, dtype=np.int64)
    wdl = np.empty(STORE_BLOCK, dtype=np.uint8)

    def code(lo: int):
        m = None if model is None else model.get()
        return _chunk(codes, t, layout, (lo, min(t.size, lo + span)), block, need, row, pack_wdl, pack, m, wdl_only)

    parts = []
    done = 0
    for lo, values in store.tier_blocks(no, t.size):
        codes[lo : lo + len(values)] = values
        digest.update(values.astype("<u2", copy=False))
        w = wdl[: len(values)]
        wdl_tally(values, w, counts)
        wdl_digest.update(w)
        read = lo + len(values)
        while done < read and (done + span <= read or read == t.size):
            parts.append(pool.submit(code, done) if pool is not None else code(done))
            done += span

    def finish():
        done = [p.result() for p in parts] if pool is not None else parts
        blobs = {"wdl": [b for p in done for b in p[1]], "dist": [b for p in done for b in p[2]]}
        rule_cells = sum(p[0] for p in done)
        headers = {
            "counts": {"positions": t.size, "losses": int(counts[0]), "draws": int(counts[1]), "wins": int(counts[2]),
                       "invalid": int(counts[3]), "rule_cells": rule_cells},
            "sha256": digest.hexdigest(),
            "wdl_sha256": wdl_digest.hexdigest(),
            "row": row,
        }
        if model is not None:
            headers["model"] = base64.b64encode(zlib.compress(model.get().astype("<u2").tobytes(), 9)).decode()
        rep = TierReport(t.key, t.size, rule_cells, sum(map(len, blobs["wdl"])), sum(map(len, blobs["dist"])))
        return rep, headers, blobs

    return finish


class _Model:
    """A tier's distance model, its counts summed when first asked for (on ``pool``'s
    threads they are counted while the tier is read: the coding tasks, submitted after
    the counting ones, wait for them)."""

    def __init__(self, parts: list):
        self._parts = parts
        self._model: np.ndarray | None = None
        self._lock = threading.Lock()

    def get(self) -> np.ndarray:
        with self._lock:
            if self._model is None:
                counts = [p.result() if hasattr(p, "result") else p for p in self._parts]
                self._model = dcm.dcm_model(sum(c[0] for c in counts), sum(c[1] for c in counts))
            return self._model


def _model(store, no: int, t, layout, block: int, need, row: int, pool) -> _Model:
    """The distance model of the tier (:mod:`solver.kernels.compact_dcm`), counted over
    every k-th database block: at least ``MODEL_BLOCKS`` of them where the tier has as many,
    and an eighth of the tier at most."""
    nl = -(-t.size // STORE_BLOCK)
    step = max(1, min(8, nl // MODEL_BLOCKS))
    picks = [(b * STORE_BLOCK, store.read_block(no, b)) for b in range(0, nl, step)]
    for lo, values in picks:
        if len(values) != min(STORE_BLOCK, t.size - lo):
            raise StoreError(f"database {store.path}: tier {t.key}, block {lo // STORE_BLOCK} is damaged: "
                             f"{len(values)} values, expected {min(STORE_BLOCK, t.size - lo)}")
    groups = [picks[i : i + CHUNK_BLOCKS] for i in range(0, len(picks), CHUNK_BLOCKS)]
    if pool is None:
        return _Model([_count(g, t, layout, block, need, row) for g in groups])
    return _Model([pool.submit(_count, g, t, layout, block, need, row) for g in groups])


def _count(picks, t, layout, block: int, need, row: int):
    """The distance model's counts over the blocks of the given database blocks."""
    n1 = np.zeros(dcm.CONTEXTS, dtype=np.int64)
    n = np.zeros(dcm.CONTEXTS, dtype=np.int64)
    rules = np.empty(block, dtype=np.int32)
    sym = np.empty(block, dtype=np.uint8)
    for start, values in picks:
        for lo in range(0, len(values), block):
            hi = min(len(values), lo + block)
            r, s, c = rules[: hi - lo], sym[: hi - lo], values[lo:hi]
            rule_codes_known(t.base + start + lo, t.base + start + hi, c, layout.geo, layout.lay, need, r)
            wdl_symbols(c, r, False, s)
            dcm.dcm_count(c, r, s, row, n1, n)
    return n1, n


class _Buffers:
    """What a thread codes blocks with, kept between its tasks: a task's own arrays
    would be fresh pages to fault in each time, and threads faulting pages in wait for
    each other."""

    def __init__(self, block: int):
        self.block = block
        self.rules = np.empty(CHUNK_BLOCKS * block, dtype=np.int32)
        self.sym = np.empty(block, dtype=np.uint8)
        self.cnt = np.empty((CONTEXTS, 2, 2), dtype=np.int64)
        self.out = np.empty(3 * block + 16, dtype=np.uint8)  # the WDL coder's worst case: 12 bits a decision, two a symbol
        self.packed = np.empty((block + 3) // 4, dtype=np.uint8)
        self.st = np.empty(dcm.CONTEXTS, dtype=np.int32)  # small: the contexts stay in the cache
        self.dout = np.empty(dcm.out_size(block), dtype=np.uint8)
        self.qlo, self.qhi, self.par = (np.empty(block, dtype=np.uint8) for _ in range(3))


_THREAD = threading.local()


def _buffers(block: int) -> _Buffers:
    w = getattr(_THREAD, "buffers", None)
    if w is None or w.block != block:
        w = _THREAD.buffers = _Buffers(block)
    return w


def _chunk(codes, t, layout, lohi: tuple[int, int], block: int, need, row: int, pack_wdl, pack, model, wdl_only: bool):
    """``(rule cells, WDL blocks, distance blocks)`` of the tier's positions ``lo..hi``."""
    lo, hi = lohi
    w = _buffers(block)
    rules = w.rules[: hi - lo]
    rule_codes_known(t.base + lo, t.base + hi, codes[lo:hi], layout.geo, layout.lay, need, rules)
    sym, cnt, out, packed, st, dout, qlo, qhi, par = w.sym, w.cnt, w.out, w.packed, w.st, w.dout, w.qlo, w.qhi, w.par
    wdl: list[bytes] = []
    dist: list[bytes] = []
    for b in range(lo, hi, block):
        e = min(hi, b + block)
        bs, br, bc = sym[: e - b], rules[b - lo : e - lo], codes[b:e]
        if pack_wdl is None:  # both cm streams in one pass (a rule cell's own symbol: the context the reader sees)
            nw, nd = encode_block(bc, br, row, bs, cnt, out, _NO_MODEL if model is None else model, st, dout)
            wdl.append(out[:nw].tobytes())
            if model is not None:
                dist.append(dout[:nd].tobytes())
        else:
            wdl_symbols(bc, br, True, bs)
            fill_runs(bs, br)
            pk = packed[: (e - b + 3) // 4]
            pack2(bs, pk)
            wdl.append(pack_wdl(pk.tobytes()))
            wdl_symbols(bc, br, False, bs)  # the distances read a rule cell's own symbol
            if model is not None:
                dist.append(dout[: dcm.dcm_encode(bc, br, bs, row, model, st, dout)].tobytes())
        if model is None and not wdl_only:
            n = dist_encode(bc, br, bs, qlo, qhi, par)
            dist.append(pack(qlo[:n].tobytes() + qhi[:n].tobytes() + np.packbits(par[:n]).tobytes()))
    return int(np.count_nonzero(rules != NO_RULE)), wdl, dist
