"""``rotary checksums``: a database's tiers compared with the published SHA-256 of each.

Exit status 0 when every published tier is equal, 1 when one is different or missing, 2
for a usage error (no database, no or an unreadable checksums file).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from solver.cli.db import DB_BALLS_HELP, DB_BOARD_HELP
from solver.cli.find import open_database
from solver.cli.options import add_db_option, add_json_option, add_rule_options
from solver.db.checksums import DIFFERENT, EQUAL, MISSING, compare, published_file, read_checksums, unpublished


def cmd_checksums(args: argparse.Namespace) -> int:
    with open_database(args) as db:
        path = Path(args.against) if args.against else published_file(db)
        published = read_checksums(path)
        checks = compare(db, published)
        extra = unpublished(db, published)
        counts = {s: [c.tier for c in checks if c.status == s] for s in (EQUAL, DIFFERENT, MISSING)}
        ok = len(counts[EQUAL]) == len(checks)
        if args.json:
            print(json.dumps({
                "path": str(db.path), "description": db.description, "against": str(path), "ok": ok,
                "tiers": [{"tier": c.tier, "status": c.status, "published": c.published, "sha256": c.found}
                          for c in checks],
                "unpublished": extra,
            }))
            return 0 if ok else 1
        print(f"{db.description}: {db.path} against {_shown(path)}")
        width = max(len(c.tier) for c in checks)
        for c in checks:
            note = ""
            if c.status == DIFFERENT:
                note = f"  this database {c.found}, published {c.published}"
            elif c.status == MISSING:
                note = f"  ({c.reason})"
            print(f"{c.tier:>{width}}  {c.status}{note}")
        print(summary(len(checks), counts, extra))
    return 0 if ok else 1


def summary(total: int, counts: dict[str, list[str]], extra: list[str]) -> str:
    """The last line: ``OK: …`` when every published tier is equal, else what is not."""
    tail = f"; {len(extra)} solved tiers not published ({_names(extra)})" if extra else ""
    if len(counts[EQUAL]) == total:
        return f"OK: all {total} published tiers equal{tail}"
    parts = [f"{len(counts[EQUAL])} equal"]
    for status in (DIFFERENT, MISSING):
        if counts[status]:
            parts.append(f"{len(counts[status])} {status} ({_names(counts[status])})")
    return f"NOT EQUAL: {', '.join(parts)} of {total} published tiers{tail}"


def _shown(path: Path) -> str:
    """``path`` relative to the current folder where it lies inside it (as it was found)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _names(tiers: list[str], most: int = 8) -> str:
    return ", ".join(tiers[:most]) + (f", … {len(tiers) - most} more" if len(tiers) > most else "")


def register(sub, commands: dict) -> None:
    """Add ``checksums`` to the ``rotary`` parser."""
    p = sub.add_parser(
        "checksums", help="compare a database's tiers with the published SHA-256 of each (data/checksums/)",
        description="Compare each tier of a database with its published SHA-256 (data/checksums/, one file per "
        "configuration, named as the database folder). Prints equal, different or missing for each published "
        "tier and a summary line. Exit status: 0 every published tier equal, 1 one different or missing, "
        "2 a usage error.",
    )
    add_rule_options(p, board_help=DB_BOARD_HELP, balls_help=DB_BALLS_HELP)
    add_db_option(p)
    p.add_argument(
        "--against", metavar="FILE",
        help="the checksums file, 'tier: sha256' lines (default: data/checksums/<database folder name>.sha256 "
        "of this rotary's source tree or of the current folder)",
    )
    add_json_option(p, "one JSON object: ok, and each published tier's status, published and found SHA-256")
    commands["checksums"] = cmd_checksums
