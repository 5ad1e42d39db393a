"""Rebuild the shipped store of known values (data/known/) from the proof trees and books.

    python scripts/build_known.py [--trees data/proofs] [--books data/books] [--out data/known]
                                  [--release N] [--check]

Inputs: every proof tree (``*.jsonl``, ``*.jsonl.gz``, written by ``rotary prove --tree``)
under ``--trees`` and every book export (``*.json``, ``*.json.gz``, written by ``rotary book
--export``) under ``--books``. Each tree is checked by the rules first (as ``rotary
check-tree`` checks it); a tree that fails stops the build. The output is the same bytes for
the same inputs (sorted records, gzip without a time stamp), so ``--check`` compares a fresh
build with the store in ``--out`` and exits 1 where they differ. Format: docs/results.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solver.known.build import build_store  # noqa: E402
from solver.search.tree_check import check_tree_file  # noqa: E402


def inputs(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffixes)) if folder.is_dir() else []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trees", type=Path, default=ROOT / "data" / "proofs")
    ap.add_argument("--books", type=Path, default=ROOT / "data" / "books")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "known")
    ap.add_argument("--release", type=int, help="the store's release number (default: the current one)")
    ap.add_argument("--check", action="store_true", help="build in a temporary folder and compare with --out")
    args = ap.parse_args(argv)
    trees = inputs(args.trees, (".jsonl", ".jsonl.gz"))
    books = inputs(args.books, (".json", ".json.gz"))
    for t in trees:
        report = check_tree_file(t)
        if not report.ok:
            print(f"{t}: not a valid proof tree: {report.line()}", file=sys.stderr)
            return 1
    old = args.out / "manifest.json"
    release = args.release or (json.loads(old.read_text())["release"] if old.exists() else 1)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            files = build_store(trees, books, Path(tmp), release)
            fresh = (Path(tmp) / "manifest.json").read_text()
        same = old.exists() and old.read_text() == fresh
        print(f"{'same as' if same else 'differs from'} {args.out} ({len(files)} files)")
        return 0 if same else 1
    files = build_store(trees, books, args.out, release)
    for f in files:
        print(f"{args.out / f['name']}: {f['positions']:,} positions, {f['proven']:,} proven, {f['bytes']:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
