"""Proven results on disk (LMDB), so that proofs survive and resume.

One environment per configuration (a folder)::

    meta     b"rules"        JSON: Config.key() (checked on open)
    tt       k1 (8 B, BE) + k2 (8 B, BE) -> struct <IIHHhI: pn, dn, dist, lb, best, effort
             table entries of df-pn (canonical position + question, see
             solver.kernels.search): resolved ones above a small effort, open ones above a
             larger one. Path-dependent disproofs are never in the table, so never here.
    results  k1 + k2 of the question "mover wins" -> JSON of a ProofResult (root proofs)
    book     same key -> JSON of a book node (solver.search.book)

Loading the ``tt`` records into a fresh table before a search is what makes an interrupted
proof resume: the search continues from the stored proof and disproof numbers. Each process
opens the environment itself; one writer at a time (LMDB's lock).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import lmdb
import numpy as np

from solver.errors import StoreError
from solver.game.config import Config
from solver.db.store import write_txn

REC = struct.Struct("<IIHHhI")
_DT = np.dtype([("pn", "<u4"), ("dn", "<u4"), ("dist", "<u2"), ("lb", "<u2"), ("best", "<i2"), ("effort", "<u4")])


def kbytes(k1: int, k2: int) -> bytes:
    return struct.pack(">QQ", int(k1), int(k2))


class ProofStore:
    def __init__(self, path: str | os.PathLike, cfg: Config):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.env = lmdb.open(str(self.path), map_size=1 << 32, max_dbs=4, max_readers=256)
        self.meta = self.env.open_db(b"meta")
        self.tt = self.env.open_db(b"tt")
        self.results = self.env.open_db(b"results")
        self.book = self.env.open_db(b"book")
        rules = json.dumps(cfg.key(), sort_keys=True).encode()
        with self.env.begin(write=True) as txn:
            have = txn.get(b"rules", db=self.meta)
            if have is None:
                txn.put(b"rules", rules, db=self.meta)
            elif bytes(have) != rules:
                self.env.close()
                raise StoreError(f"{self.path} holds proofs for other rules: {json.loads(have)}")

    def close(self) -> None:
        self.env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _write(self, work) -> None:
        write_txn(self.env, work)

    # ------------------------------------------------------------------ table entries

    def save_table(self, tt, min_resolved: int = 1, min_open: int = 1000) -> int:
        """Write the table's worthwhile entries; returns how many."""
        from solver.kernels.search import tt_select

        idx = np.zeros(len(tt.k1), dtype=np.int64)
        n = tt_select(tt, min_resolved, min_open, idx)
        idx = idx[:n]
        k1, k2 = tt.k1[idx].astype(">u8"), tt.k2[idx].astype(">u8")
        keys = np.empty(n, dtype=[("a", ">u8"), ("b", ">u8")])
        keys["a"], keys["b"] = k1, k2
        vals = np.empty(n, dtype=_DT)
        for f, arr in (("pn", tt.pn), ("dn", tt.dn), ("dist", tt.dist), ("lb", tt.lb), ("best", tt.best), ("effort", tt.effort)):
            vals[f] = arr[idx]
        kb, vb = keys.tobytes(), vals.tobytes()
        items = [(kb[16 * i : 16 * i + 16], vb[REC.size * i : REC.size * (i + 1)]) for i in range(n)]

        def work(txn):
            cur = txn.cursor(db=self.tt)
            cur.putmulti(items)

        self._write(work)
        self.env.sync(True)
        return n

    def load_table(self, tt) -> int:
        """Put every stored entry into ``tt``; returns how many."""
        from solver.kernels.search import tt_load

        with self.env.begin(db=self.tt) as txn:
            items = list(txn.cursor())
        if not items:
            return 0
        keys = np.frombuffer(b"".join(bytes(k) for k, _ in items), dtype=[("a", ">u8"), ("b", ">u8")])
        vals = np.frombuffer(b"".join(bytes(v) for _, v in items), dtype=_DT)
        tt_load(
            tt,
            keys["a"].astype(np.uint64),
            keys["b"].astype(np.uint64),
            vals["pn"].astype(np.int64),
            vals["dn"].astype(np.int64),
            vals["dist"].astype(np.int64),
            vals["lb"].astype(np.int64),
            vals["best"].astype(np.int64),
            vals["effort"].astype(np.int64),
        )
        return len(items)

    def count_table(self) -> int:
        with self.env.begin(db=self.tt) as txn:
            return txn.stat(self.tt)["entries"]

    # ------------------------------------------------------------------ JSON records

    def put(self, table: str, key: bytes, value: dict) -> None:
        self._write(lambda txn: txn.put(key, json.dumps(value).encode(), db=getattr(self, table)))

    def put_many(self, table: str, items: list[tuple[bytes, dict]]) -> None:
        def work(txn):
            for k, v in items:
                txn.put(k, json.dumps(v).encode(), db=getattr(self, table))

        self._write(work)
        self.env.sync(True)

    def get(self, table: str, key: bytes) -> dict | None:
        with self.env.begin(db=getattr(self, table)) as txn:
            raw = txn.get(key)
        return None if raw is None else json.loads(bytes(raw))

    def items(self, table: str) -> list[tuple[bytes, dict]]:
        with self.env.begin(db=getattr(self, table)) as txn:
            return [(bytes(k), json.loads(bytes(v))) for k, v in txn.cursor()]
