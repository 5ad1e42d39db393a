"""Write the published checksums files: every solved tier's SHA-256 over its values.

    python scripts/tier_checksums.py                          # every database under rotary-db/, to stdout
    python scripts/tier_checksums.py rotary-db/hex3-4v4 ...   # these databases
    python scripts/tier_checksums.py --out data/checksums rotary-db/hex3-4v4

A tier's values as little-endian uint16 in index order, hashed — independent of blocks
and compression, so a database rebuilt anywhere (any ``-j``, executor or machine) must
give the same list. Nothing is re-solved; a tier not solved yet is left out. With
``--out DIR`` each database's file is written as ``DIR/<database folder name>.sha256``
(the name ``rotary checksums`` looks for); without, the files are printed. Publish a
database's file only after a full ``rotary verify`` of it passed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from solver.db.catalog import databases, db_name
from solver.db.checksums import SUFFIX, format_checksums, tier_checksums
from solver.db.database import open_db


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="database folders (default: every one under rotary-db/)")
    ap.add_argument("--out", type=Path, help="write each file into this folder instead of printing it")
    args = ap.parse_args(argv)
    for path in args.paths or databases(Path("rotary-db")):
        with open_db(path) as db:
            text = format_checksums(db.description, tier_checksums(db))
            name = db_name(db.cfg, db.material) + SUFFIX
        if args.out is None:
            print(text, end="")
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / name).write_text(text)
        print(f"{path} -> {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
