"""Build the shipped store (:mod:`solver.known.store`) from proof trees and book exports.

    files = build_store(trees=[...], books=[...], out=folder, release=1)

Every node of a proof tree (``rotary prove --tree``, checked by ``rotary check-tree``) is a
proven value with its exact distance: a win for the side to move where the winner is to
move, else a loss. Every node of an opening book's export (``rotary book --export``) gives
its backed-up value where something is known of it, and its backed-up engine score where
the value is not proven. Positions are merged by canonical text; a proven value beats a
half-known one, an exact distance a bound, and a tree's value and a book's that disagree
stop the build (one of them is wrong). ``max_setup_depth`` keeps a setup book's placement
positions to so many plies from its start (the store stays small).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from solver.errors import StoreError
from solver.game.config import config_from_key
from solver.game.position import PLAY, Position
from solver.game.values import PROVEN, Value
from solver.known.canon import canonical
from solver.known.store import FORMAT, VERSION, rules_id
from solver.search.tree_check import read_tree


def _rank(v: Value) -> int:
    """How much a value says: exact proven 3, a proven bound 2, half known 1, unknown 0."""
    if v.proven:
        return 3 if v.exact else 2
    return 0 if v.result == "unknown" else 1


class _Table:
    """The records of one set of rules while building."""

    def __init__(self, rules: dict):
        self.rules = rules
        self.cfg = config_from_key(dict(rules, balls=rules.get("balls")))
        self.sources: list[dict] = []
        self.records: dict[str, dict] = {}

    def source(self, path: Path, kind: str) -> int:
        self.sources.append({"name": path.name, "kind": kind, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
        return len(self.sources) - 1

    def add(self, pos: Position, value: Value, source: str, origin: int, score: dict | None = None) -> None:
        key = canonical(self.cfg, pos)
        old = self.records.get(key)
        if old is not None:
            ov = Value(old["value"], old["plies"], old["exact"])
            if ov.proven and value.proven and (ov.result != value.result or ov.exact and value.exact and ov.plies != value.plies):
                raise StoreError(f"{pos.text()}: {self.sources[old['from']]['name']} says {ov}, "
                                 f"{self.sources[origin]['name']} says {value}")
            if _rank(ov) >= _rank(value) and not (_rank(ov) == _rank(value) == 2 and value.plies < ov.plies):
                return
        rec = {"position": key, "value": value.result, "plies": value.plies, "exact": value.exact, "source": source,
               "from": origin}
        if score is not None and not value.proven:
            rec["score"] = {"kind": score["kind"], "value": int(score["value"]), "depth": int(score.get("depth") or 0)}
        self.records[key] = rec


def add_tree(tables: dict[str, _Table], path: Path) -> int:
    """Every node of a proof tree file; returns how many."""
    header, nodes = read_tree(path)
    table = tables.setdefault(rules_id(header["rules"]), _Table(header["rules"]))
    origin = table.source(path, "proof tree")
    winner = "xo".index(header["winner"])
    for rec in nodes:
        pos = Position(rec["position"])
        table.add(pos, Value("win" if pos.turn == winner else "loss", rec["plies"]), "proof", origin)
    return len(nodes)


def add_book(tables: dict[str, _Table], path: Path, max_setup_depth: int | None = None) -> int:
    """Every node of a book export that says something; returns how many."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as f:
        book = json.load(f)
    if book.get("format") != "rotary-book":
        raise StoreError(f"{path}: not a book export (rotary book --export)")
    table = tables.setdefault(rules_id(book["rules"]), _Table(book["rules"]))
    origin = table.source(path, "opening book")
    added = 0
    for node in book["nodes"].values():
        pos = Position(node["position"])
        if pos.phase != PLAY and max_setup_depth is not None and node.get("depth", 0) > max_setup_depth:
            continue
        v = node.get("value") or {}
        value = Value(v["result"], v.get("plies"), bool(v.get("exact"))) if v.get("result") else Value("unknown")
        score = node.get("score")
        if value.result == "unknown" and not score:
            continue
        table.add(pos, value, "book", origin, score)
        added += 1
    return added


def build_store(trees: list[Path], books: list[Path], out: Path, release: int = 1,
                max_setup_depth: int | None = 2) -> list[dict]:
    """Write the store's files and manifest to ``out``; returns the manifest's file list."""
    tables: dict[str, _Table] = {}
    for t in trees:
        add_tree(tables, Path(t))
    for b in books:
        add_book(tables, Path(b), max_setup_depth)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for table in sorted(tables.values(), key=lambda t: file_name(t.rules)):
        name = file_name(table.rules)
        header = {"format": FORMAT, "version": VERSION, "rules": table.rules, "sources": table.sources,
                  "positions": len(table.records)}
        lines = [json.dumps(header, sort_keys=True)] + [json.dumps(table.records[k], sort_keys=True)
                                                        for k in sorted(table.records)]
        raw = gzip.compress(("\n".join(lines) + "\n").encode(), compresslevel=9, mtime=0)  # the same bytes each build
        (out / name).write_bytes(raw)
        files.append({"name": name, "rules": table.rules, "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw),
                      "positions": len(table.records), "proven": sum(r["value"] in PROVEN for r in table.records.values()),
                      "sources": table.sources})
    manifest = {"format": FORMAT, "version": VERSION, "release": release, "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return files


def file_name(rules: dict) -> str:
    """``hex4-base.jsonl.gz``, ``hex4-capture.jsonl.gz``, ``hex4-setup-offer-13v13.jsonl.gz``, ...
    (traps other than the standard ones are not told apart: the store ships the standard ones)"""
    parts = [rules["board"]]
    parts += [v for v in ("edge", "capture") if rules.get(v)]
    if len(parts) == 1 and not rules.get("setup"):
        parts.append("base")
    if rules.get("setup"):
        parts += ["setup", rules["setup"], f"{rules['balls']}v{rules['balls']}"]
    return "-".join(parts) + ".jsonl.gz"
