"""Print docs/checksums.md's tables: every tier's SHA-256 over its values.

    python scripts/tier_checksums.py                 # every database under rotary-db/
    python scripts/tier_checksums.py path/to/db ...

The same figures as ``rotary stats --checksums``: a tier's values as little-endian
uint16 in index order, hashed — independent of blocks and compression, so a database
rebuilt anywhere (any ``-j``, executor or machine) must give the same list. Nothing is
re-solved; a tier not solved yet is listed as such.
"""

from __future__ import annotations

import sys
from pathlib import Path

from solver.db.database import open_db


def table(path: Path) -> str:
    with open_db(path) as db:
        lines = [f"### {db.description}", "", "| tier | positions | sha256 |", "|---|---:|---|"]
        for key in db.tier_keys():
            if not db.finished(key):
                lines.append(f"| {key} | - | not solved |")
                continue
            t = db.tier_meta[key]
            lines.append(f"| {key} | {t['positions']:,} | `{db.tier_sha256(key)}` |")
        return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or sorted(p for p in Path("rotary-db").iterdir() if (p / "data.mdb").exists())
    print("\n".join(table(p) for p in paths), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
