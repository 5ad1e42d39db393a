"""Proven results on disk (LMDB), so that proofs survive and resume.

One environment per configuration (a folder)::

    meta     b"rules"        JSON: store_rules(cfg) (checked on open)
    ttc      writer (8 B) + chunk number (8 B, BE) -> up to CHUNK table entries, each k1
             (8 B, BE) + k2 (8 B, BE) + <IIHHhI: pn, dn, dist, lb, best, effort (34 bytes),
             then a crc32 of the chunk: the table entries of df-pn (canonical position +
             question, see solver.kernels.table) at each writer's last checkpoint:
             resolved ones above a small effort, open ones above a larger one.
             Path-dependent disproofs are never in the table, so never here.
    tt       k1 + k2 -> <IIHHhI (+ crc32): one table entry a record, as stores written
             before the chunks hold it; read, and emptied by the next checkpoint
    results  k1 + k2 of the question "mover wins" -> JSON of a ProofResult (root proofs)
    book     same key -> JSON of a book node (solver.search.book)

Loading the stored entries into a fresh table before a search is what makes an interrupted
proof resume: the search continues from the stored proof and disproof numbers. A
checkpoint replaces its writer's entries with the table's worthwhile ones, a few large
records written from arrays (a record an entry cost a Python step each: 50-60 s a
checkpoint of 10 million entries, as long as the minute between two). Each opened store
is a writer of its own (a random tag): provers that share a store at once (``prove -j``'s
workers) keep their own records, and a writer's first checkpoint also removes the records
of the writers it loaded, whose entries its table now holds (a writer still running
writes its own again at its next checkpoint). Each process opens the environment itself;
one writer at a time (LMDB's lock).

Damage and full disks (:mod:`solver.db.guard`): a store made by this version (``meta``
``b"format"`` = 2) keeps a crc32 after every chunk of table entries (after every entry,
in the one-record-an-entry layout), the JSON records end in a checksum line, the page tree is checked on opening; a damaged store is
refused in one line naming it (and the table and key), never read as a wrong proof. A
write that does not fit says how much it needed; what was written before stays.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import lmdb
import numpy as np

from solver.db.guard import MapBounds, check_tree, lmdb_reason, map_limit, pack_json, read_txn, sync, unpack_json
from solver.db.store import make_folder, write_txn
from solver.errors import StoreError
from solver.game.config import Config

REC = struct.Struct("<IIHHhI")
CHUNK = 1 << 20  # table entries a ``ttc`` record (34 MB)
_ENT = np.dtype([("a", ">u8"), ("b", ">u8"), ("pn", "<u4"), ("dn", "<u4"), ("dist", "<u2"), ("lb", "<u2"), ("best", "<i2"),
                 ("effort", "<u4")])
CRC = struct.Struct("<I")  # after each table record of a format 2 store: crc32(key + record)
FORMAT = b"2"
_DT = np.dtype([("pn", "<u4"), ("dn", "<u4"), ("dist", "<u2"), ("lb", "<u2"), ("best", "<i2"), ("effort", "<u4")])


def store_rules(cfg: Config) -> dict:
    """The rules a store holds proofs for: :meth:`Config.key` without the balls per side
    (a proof is about positions, which carry their material, so one store serves every
    material of its rules, as its folder name :func:`solver.db.catalog.rules_name` says),
    except in the setup game, whose rules include them (how many balls are placed).
    Stores written before this normalisation hold the balls too; they are compared the same way."""
    key = dict(cfg.key())
    if not key.get("setup"):
        key["balls"] = None
    return key


def _normal(key: dict) -> dict:
    """A stored rules record, normalised as :func:`store_rules` (older stores kept ``balls``)."""
    key = dict(key)
    if not key.get("setup"):
        key["balls"] = None
    return key


def rules_difference(have: dict, want: dict) -> str:
    """How two rules records differ, in words: ``edge is on there, off here; ...``."""

    def word(field: str, v) -> str:
        if isinstance(v, bool):
            return "on" if v else "off"
        if isinstance(v, list):
            return ",".join(v) if v else "none"
        return "none" if v is None else str(v)

    parts = []
    for f in sorted(set(have) | set(want)):
        a, b = have.get(f), want.get(f)
        if a != b:
            parts.append(f"{f.replace('_', ' ')} {'is ' if isinstance(a, bool) else ''}{word(f, a)} there, {word(f, b)} here")
    return "; ".join(parts) or "the records differ"


def kbytes(k1: int, k2: int) -> bytes:
    return struct.pack(">QQ", int(k1), int(k2))


class ProofStore:
    def __init__(self, path: str | os.PathLike, cfg: Config):
        self.path = Path(path)
        self.writer = os.urandom(8)  # the prefix of this store object's table records
        self._loaded: set[bytes] = set()  # other writers whose records load_table read
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path} is a file, not a proof store folder")
        make_folder(self.path)
        try:
            limit = map_limit()  # ROTARY_MAP_MAX: the tests' small "disk"
            size = 1 << 32 if limit is None else min(1 << 32, limit)  # write_txn doubles it when full
            self.env = lmdb.open(str(self.path), map_size=size, max_dbs=5, max_readers=256)
        except lmdb.Error as e:
            raise StoreError(f"cannot open the proof store {self.path}: {lmdb_reason(e)}") from None
        try:
            check_tree(self.env, self.path)
            self._bounds = MapBounds(self.path)
            self._open(cfg)
        except BaseException:
            self.env.close()
            raise

    def _open(self, cfg: Config) -> None:
        try:
            self.meta = self.env.open_db(b"meta")
            self.tt = self.env.open_db(b"tt")
            self.ttc = self.env.open_db(b"ttc")
            self.results = self.env.open_db(b"results")
            self.book = self.env.open_db(b"book")
        except lmdb.Error as e:
            raise StoreError(f"proof store {self.path} is damaged: {lmdb_reason(e)}") from None
        rules = store_rules(cfg)
        found: dict = {}

        def work(txn):
            have = txn.get(b"rules", db=self.meta)
            fmt = txn.get(b"format", db=self.meta)
            if have is None:  # a new store
                txn.put(b"rules", pack_json(rules), db=self.meta)
                txn.put(b"format", FORMAT, db=self.meta)
                fmt = FORMAT
            found["rules"] = None if have is None else bytes(have)
            found["format"] = None if fmt is None else bytes(fmt)

        write_txn(self.env, work, self.path, 4096, "the proof store's header")
        if found["format"] not in (None, FORMAT):
            raise StoreError(f"proof store {self.path} is damaged: its format record reads {found['format'][:20]!r}")
        self.checked = found["format"] == FORMAT  # table records carry a checksum
        if found["rules"] is not None:
            have = unpack_json(found["rules"], f"proof store {self.path}: its rules record")
            if not isinstance(have, dict):
                raise StoreError(f"proof store {self.path} is damaged: its rules record is not a record")
            if json.dumps(_normal(have), sort_keys=True) != json.dumps(rules, sort_keys=True):
                raise StoreError(f"{self.path} holds proofs for other rules ({rules_difference(_normal(have), rules)}); "
                                 f"name another store with --store")

    def close(self) -> None:
        self.env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _write(self, work, need: int = 0, what: str = "the next step") -> None:
        write_txn(self.env, work, self.path, need, what)

    # ------------------------------------------------------------------ table entries

    def save_table(self, tt, min_resolved: int = 1, min_open: int = 1000) -> int:
        """Replace this writer's stored entries (and those of the writers it loaded) by the
        table's worthwhile ones; returns how many. Written a chunk at a time: the memory
        beyond the table is the selection's indices and one chunk."""
        from solver.kernels.table import tt_select

        idx = np.zeros(len(tt.dw), dtype=np.int64)
        n = tt_select(tt, min_resolved, min_open, idx)
        idx = idx[:n]
        gone = self._loaded | {self.writer}

        def work(txn):
            txn.drop(self.tt, delete=False)  # one record an entry, as older versions wrote
            cur = txn.cursor(db=self.ttc)
            old = [bytes(k) for k in cur.iternext(keys=True, values=False) if bytes(k[:8]) in gone]
            for k in old:
                txn.delete(k, db=self.ttc)
            for c in range(0, n, CHUNK):
                raw = _entries(tt, idx[c : c + CHUNK]).tobytes()
                txn.put(self.writer + struct.pack(">Q", c // CHUNK), raw + CRC.pack(zlib.crc32(raw)), db=self.ttc)

        need = n * _ENT.itemsize + (n // CHUNK + 1) * 8192 + 8192
        self._write(work, need, f"{n:,} table entries")
        sync(self.env, self.path, need, f"{n:,} table entries")
        self._loaded = set()
        return n

    def load_table(self, tt) -> int:
        """Put every stored entry into ``tt``, a chunk at a time; returns how many."""
        n = _load(tt, self._old_entries())
        for k, v in self._iter_items(self.ttc, "table"):
            body = v[: -CRC.size]
            if len(k) != 16 or len(v) < CRC.size or len(body) % _ENT.itemsize or \
                    CRC.unpack_from(v, len(body))[0] != zlib.crc32(body):
                raise StoreError(f"proof store {self.path} is damaged: table chunk {k.hex()} fails its checksum")
            n += _load(tt, np.frombuffer(body, dtype=_ENT))
            if k[:8] != self.writer:
                self._loaded.add(k[:8])
        return n

    def _old_entries(self) -> np.ndarray:
        """The entries of a store written one record an entry (before the chunks)."""
        items = self._items(self.tt, "table")
        size = REC.size + CRC.size if self.checked else REC.size
        for k, v in items:
            if len(k) != 16 or len(v) != size or (self.checked and CRC.unpack_from(v, REC.size)[0] != zlib.crc32(v[: REC.size], zlib.crc32(k))):
                raise StoreError(f"proof store {self.path} is damaged: table entry {k.hex()} fails its checksum")
        ent = np.empty(len(items), dtype=_ENT)
        if items:
            keys = np.frombuffer(b"".join(k for k, _ in items), dtype=[("a", ">u8"), ("b", ">u8")])
            vals = np.frombuffer(b"".join(v[: REC.size] for _, v in items), dtype=_DT)
            ent["a"], ent["b"] = keys["a"], keys["b"]
            for name in ("pn", "dn", "dist", "lb", "best", "effort"):
                ent[name] = vals[name]
        return ent

    # ------------------------------------------------------------------ JSON records

    def put(self, table: str, key: bytes, value: dict) -> None:
        raw = pack_json(value)
        self._write(lambda txn: txn.put(key, raw, db=getattr(self, table)), len(raw) + 8192, f"a {table} record")

    def put_many(self, table: str, items: list[tuple[bytes, dict]]) -> None:
        packed = [(k, pack_json(v)) for k, v in items]

        def work(txn):
            for k, raw in packed:
                txn.put(k, raw, db=getattr(self, table))

        need = sum(len(k) + len(raw) + 16 for k, raw in packed) + 8192
        self._write(work, need, f"{len(packed):,} {table} records")
        sync(self.env, self.path, need, f"{len(packed):,} {table} records")

    def get(self, table: str, key: bytes) -> dict | None:
        what = f"proof store {self.path}: {table} record {bytes(key).hex()}"
        try:
            with read_txn(self.env, getattr(self, table)) as txn:
                raw = txn.get(key)
                raw = None if raw is None else self._bounds.copy(raw, what)
        except lmdb.Error as e:
            raise StoreError(f"{what} is damaged: {lmdb_reason(e)}") from None
        return None if raw is None else self._record(raw, what)

    def items(self, table: str) -> list[tuple[bytes, dict]]:
        return [
            (k, self._record(v, f"proof store {self.path}: {table} record {k.hex()}"))
            for k, v in self._items(getattr(self, table), table)
        ]

    def _items(self, db, table: str) -> list[tuple[bytes, bytes]]:
        return list(self._iter_items(db, table))

    def _iter_items(self, db, table: str):
        """``(key, value)`` of every record of ``db``, copied, one at a time in one read transaction."""
        what = f"proof store {self.path}: the {table}"
        try:
            with read_txn(self.env, db) as txn:
                for k, v in txn.cursor():
                    yield self._bounds.copy(k, what), self._bounds.copy(v, what)
        except lmdb.Error as e:
            raise StoreError(f"{what} is damaged: {lmdb_reason(e)}") from None

    @staticmethod
    def _record(raw: bytes, what: str) -> dict:
        value = unpack_json(raw, what)
        if not isinstance(value, dict):
            raise StoreError(f"{what} is damaged: not a record")
        return value


def _entries(tt, idx: np.ndarray) -> np.ndarray:
    """Table entries ``idx`` as records of the ``ttc`` layout."""
    from solver.kernels.table import tt_export

    n = len(idx)
    f = {name: np.zeros(n, dtype=np.uint64 if name in ("k1", "k2") else np.int64)
         for name in ("k1", "k2", "pn", "dn", "dist", "lb", "best", "effort")}
    tt_export(tt, idx, f["k1"], f["k2"], f["pn"], f["dn"], f["dist"], f["lb"], f["best"], f["effort"])
    rec = np.empty(n, dtype=_ENT)
    rec["a"], rec["b"] = f["k1"], f["k2"]
    for name in ("pn", "dn", "dist", "lb", "best", "effort"):
        rec[name] = np.minimum(f[name], 0xFFFFFFFF) if name == "effort" else f[name]
    return rec


def _load(tt, ent: np.ndarray) -> int:
    """Records of the ``ttc`` layout into the table; how many."""
    from solver.kernels.table import tt_load

    if len(ent):
        tt_load(tt, ent["a"].astype(np.uint64), ent["b"].astype(np.uint64),
                *(ent[name].astype(np.int64) for name in ("pn", "dn", "dist", "lb", "best", "effort")))
    return len(ent)
