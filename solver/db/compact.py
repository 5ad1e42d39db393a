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

import hashlib
import os
from math import comb
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from solver.db.compact_format import (
    DEFAULT_BLOCK, FORMAT_NAME, MANIFEST, VERSION, WDL_CODECS, compressor, file_bytes, tier_file, write_atomic,
)
from solver.db.guard import pack_json
from solver.db.store import make_folder
from solver.errors import StoreError
from solver.kernels.compact_cm import CONTEXTS, cm_encode
from solver.kernels.compact import (
    NO_RULE, dist_encode, fill_runs, pack2, rule_codes, wdl_of_codes, wdl_symbols, win_needs,
)

CHUNK_BLOCKS = 64  # blocks whose rule cells are found in one kernel call (bounds the memory)


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
    """zstd where the package is installed (smaller and faster to read than zlib,
    measured in docs), else zlib."""
    from solver.db.compact_format import codecs

    return "zstd" if "zstd" in codecs() else "zlib"


def export_db(
    db_path: str | os.PathLike, out: str | os.PathLike, wdl_only: bool = False, block: int = DEFAULT_BLOCK,
    codec: str | None = None, progress: bool = False, wdl_codec: str = "cm",
) -> ExportReport:
    """Export the finished database at ``db_path`` into the folder ``out``.

    ``wdl_codec``: ``cm`` (the arithmetic coder of :mod:`solver.kernels.compact_cm`) or a
    byte codec for 2-bit packed symbols; ``codec``: the distances' byte codec (and the
    WDL's, if ``wdl_codec`` is None), default zstd.

    :class:`StoreError` in one line for a database still being solved (a tier not
    finished), a setup-game database, an ``out`` that is the database itself or holds one.
    """
    from solver.db.database import Database

    codec = codec or default_codec()
    wdl_codec = wdl_codec or codec
    if wdl_codec not in WDL_CODECS:
        raise StoreError(f"unknown WDL codec {wdl_codec!r} (one of {', '.join(WDL_CODECS)})")
    pack = compressor(codec)
    pack_wdl = None if wdl_codec == "cm" else compressor(wdl_codec)
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

        for no, t in enumerate(tqdm(layout.tiers, desc="export", disable=not progress, leave=False)):
            codes = db.store.read_tier(no, t.size)
            rep, headers, blobs = _tier(codes, t, layout, block, pack_wdl, pack, wdl_only)
            meta = dict(db.tier_meta[t.key])
            names = []
            for kind in ("wdl", "dist")[: 1 if wdl_only else 2]:
                header = dict(base, kind=kind, tier=t.key, tier_no=no, base=t.base, size=t.size,
                              blocks=len(blobs[kind]), codec=wdl_codec if kind == "wdl" else codec,
                              **headers, meta=meta)
                path = tier_file(out, t.key, kind)
                write_atomic(path, file_bytes(header, blobs[kind]))
                names.append(path.name)
            files[t.key] = names
            report.tiers.append(rep)
        manifest = dict(base, tiers=db.header["tiers"], wdl_only=wdl_only, files=files,
                        codec={"wdl": wdl_codec, "dist": None if wdl_only else codec})
        write_atomic(out / MANIFEST, pack_json(manifest))
        for name in old - {n for names in files.values() for n in names}:
            (out / name).unlink(missing_ok=True)  # a file of the set exported there before
    report.seconds = time.perf_counter() - start
    return report


def _old_files(out: Path) -> set[str]:
    """The tier files named by a manifest already in ``out`` (replaced by this export)."""
    from solver.db.guard import unpack_json

    try:
        old = unpack_json((out / MANIFEST).read_bytes(), str(out / MANIFEST))
        return {n for names in old.get("files", {}).values() for n in names if n and "/" not in n}
    except (OSError, StoreError, AttributeError, TypeError):
        return set()


def _tier(codes: np.ndarray, t, layout, block: int, pack_wdl, pack, wdl_only: bool):
    """The compressed blocks of one tier and what its headers record (``pack_wdl`` None:
    the ``cm`` coder)."""
    blobs: dict[str, list[bytes]] = {"wdl": [], "dist": []}
    need = win_needs(layout.geo)
    rule_cells = 0
    sym = np.empty(min(t.size, CHUNK_BLOCKS * block), dtype=np.uint8)
    rules = np.empty(len(sym), dtype=np.int32)
    qlo, qhi, par = (np.empty(block, dtype=np.uint8) for _ in range(3))
    packed = np.empty((block + 3) // 4, dtype=np.uint8)
    row = comb(layout.geo.npoints - t.a, t.b)  # the cm coder's context: a row of opponent placements before
    cnt = np.empty((CONTEXTS, 2, 2), dtype=np.int64)
    coded = np.empty(block, dtype=np.bool_)
    out = np.empty(3 * block + 16, dtype=np.uint8)  # the coder's worst case: 12 bits a decision, two a symbol
    for lo in range(0, t.size, CHUNK_BLOCKS * block):
        hi = min(t.size, lo + CHUNK_BLOCKS * block)
        r, s = rules[: hi - lo], sym[: hi - lo]
        rule_codes(t.base + lo, t.base + hi, layout.geo, layout.lay, need, r)
        rule_cells += int(np.count_nonzero(r != NO_RULE))
        for b in range(lo, hi, block):
            e = min(hi, b + block)
            bs, br, bc = s[b - lo : e - lo], r[b - lo : e - lo], codes[b:e]
            if pack_wdl is None:
                wdl_symbols(bc, br, False, bs)  # a rule cell's own symbol: the context the reader sees
                cd = coded[: e - b]
                np.equal(br, NO_RULE, out=cd)
                blobs["wdl"].append(out[: cm_encode(bs, cd, row, cnt, out)].tobytes())
            else:
                wdl_symbols(bc, br, True, bs)
                fill_runs(bs, br)
                pk = packed[: (e - b + 3) // 4]
                pack2(bs, pk)
                blobs["wdl"].append(pack_wdl(pk.tobytes()))
            if not wdl_only:
                n = dist_encode(bc, br, bs, qlo, qhi, par)
                raw = qlo[:n].tobytes() + qhi[:n].tobytes() + np.packbits(par[:n]).tobytes()
                blobs["dist"].append(pack(raw))
    wdl = np.empty(t.size, dtype=np.uint8)
    wdl_of_codes(codes, wdl)
    counts = np.bincount(wdl, minlength=4)
    headers = {
        "counts": {"positions": t.size, "losses": int(counts[0]), "draws": int(counts[1]), "wins": int(counts[2]),
                   "invalid": int(counts[3]), "rule_cells": rule_cells},
        "sha256": hashlib.sha256(codes.astype("<u2", copy=False).tobytes()).hexdigest(),
        "wdl_sha256": hashlib.sha256(wdl.tobytes()).hexdigest(),
        "row": row,
    }
    rep = TierReport(t.key, t.size, rule_cells, sum(map(len, blobs["wdl"])), sum(map(len, blobs["dist"])))
    return rep, headers, blobs
