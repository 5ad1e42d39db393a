"""The shipped store of known values: read, checked against its manifest, looked up.

A folder (``data/known/`` of the checkout, or ``$ROTARY_KNOWN``; ``ROTARY_KNOWN=off``
turns it off) holding ``manifest.json`` and one gzip JSON Lines file per set of rules::

    manifest.json  {"format": "rotary-known", "version": 1, "release": N,
                    "files": [{"name", "rules", "sha256", "bytes", "positions",
                               "sources": [{"name", "kind", "sha256"}]}]}
    <rules>.jsonl.gz
        {"format": "rotary-known", "version": 1, "rules": {...}, "sources": [...], "positions": N}
        {"position": canonical text, "value", "plies", "exact", "source": "proof" | "book",
         "from": source index, "score": {"kind", "value", "depth"}?}

Values are the side to move's of the record's ``position`` (:func:`solver.known.canon.canonical`);
``score`` (a book's backed-up engine estimate) only where the value is not proven. A file
whose SHA-256 is not the manifest's is refused in one line, never read as a wrong value.
:mod:`solver.known.build` writes the folder (``scripts/build_known.py``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from solver.errors import StoreError
from solver.game.config import Config
from solver.game.position import Position
from solver.game.values import Value
from solver.known.canon import canonical

FORMAT = "rotary-known"
VERSION = 1
ENV = "ROTARY_KNOWN"
SOURCE_FOLDER = Path(__file__).resolve().parents[2] / "data" / "known"  # the checkout's shipped store


def rules_id(key: dict) -> str:
    """Rules as stores compare them: ``Config.key()`` without the balls outside the setup game."""
    key = dict(key)
    if not key.get("setup"):
        key["balls"] = None
    return json.dumps(key, sort_keys=True)


@dataclass(frozen=True)
class Known:
    """What the store knows of one position: its value for the side to move, who proved
    it (``source``: ``proof`` or ``book``), the file it came from, and a book's estimate
    (``score``, the side to move's) where the value is not proven."""

    value: Value
    source: str
    origin: str
    score: dict | None = None


class KnownStore:
    """A shipped store folder, its files read (and checked) when their rules are first asked."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)
        path = self.folder / "manifest.json"
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise StoreError(f"{path}: not a known-values manifest ({e.__class__.__name__})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            raise StoreError(f"{path}: not a {FORMAT} manifest of version {VERSION}")
        self.release = manifest.get("release")
        self.files = {rules_id(f["rules"]): f for f in manifest["files"]}
        self._tables: dict[str, dict[str, Known]] = {}
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"shipped store {self.folder} (release {self.release}, {len(self.files)} rule sets)"

    def table(self, cfg: Config) -> dict[str, Known]:
        """Every known position of ``cfg``'s rules, by canonical text (empty when none)."""
        rid = rules_id(cfg.key())
        with self._lock:
            if rid not in self._tables:
                entry = self.files.get(rid)
                self._tables[rid] = {} if entry is None else _read(self.folder / entry["name"], entry["sha256"])
            return self._tables[rid]

    def get(self, cfg: Config, pos: Position) -> Known | None:
        """What is known of ``pos`` under ``cfg``, or None."""
        table = self.table(cfg)
        return table.get(canonical(cfg, pos)) if table else None


def _read(path: Path, sha256: str) -> dict[str, Known]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise StoreError(f"{path}: cannot be read ({e.strerror or e})") from None
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise StoreError(f"{path} fails its checksum in manifest.json (damaged or edited: rebuild it with "
                         f"scripts/build_known.py)")
    lines = gzip.decompress(raw).decode().splitlines()
    header = json.loads(lines[0])
    names = [s["name"] for s in header["sources"]]
    out: dict[str, Known] = {}
    for line in lines[1:]:
        r = json.loads(line)
        out[r["position"]] = Known(Value(r["value"], r["plies"], r["exact"]), r["source"], names[r["from"]],
                                   r.get("score"))
    return out


_stores: dict[str | None, KnownStore | None] = {}  # by the value of $ROTARY_KNOWN, read once


def shipped() -> KnownStore | None:
    """The shipped store: ``$ROTARY_KNOWN`` (``off``: none), else ``data/known/`` of the
    checkout rotary runs from; None where there is none."""
    where = os.environ.get(ENV)
    if where not in _stores:
        if where is not None and where.strip().lower() in ("", "off", "none", "0"):
            _stores[where] = None
        else:
            folder = Path(where) if where else SOURCE_FOLDER
            _stores[where] = KnownStore(folder) if (folder / "manifest.json").exists() else None
    return _stores[where]


def known(pos: Position, cfg: Config | None = None) -> Known | None:
    """What the shipped store knows of ``pos`` under ``cfg`` (default: the base rules of
    its board), or None. ``print(known(standard_start()).value)`` prints ``win in 11``."""
    store = shipped()
    if store is None:
        return None
    if cfg is None:
        from solver.game.config import make_config

        cfg = make_config(pos.board)
    return store.get(cfg, pos)
