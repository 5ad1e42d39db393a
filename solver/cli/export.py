"""``rotary export``: a finished database as a compact read-only set (docs/compact.md).

The set opens wherever a database is named (``--db DIR``): ``query``, ``stats``,
``verify``, ``checksums``, ``serve`` and ``play`` read it as they read the LMDB database.
"""

from __future__ import annotations

import argparse
import json

from solver.cli.options import add_json_option, add_quiet_option, check_jobs
from solver.db.compact_format import BLOCK_SIZES, DEFAULT_BLOCK, DIST_CODECS, WDL_CODECS
from solver.errors import UsageError


def cmd_export(args: argparse.Namespace) -> int:
    from solver.db.compact import export_db

    check_jobs(args.jobs)
    if args.block not in BLOCK_SIZES:
        raise UsageError(f"--block {args.block}: one of {', '.join(map(str, BLOCK_SIZES))} positions")
    report = export_db(args.db, args.out, wdl_only=args.wdl_only, block=args.block, codec=args.codec,
                       wdl_codec=args.wdl_codec, progress=not args.quiet, jobs=args.jobs)
    n = max(report.positions, 1)
    if args.json:
        print(json.dumps({
            "description": report.description, "path": str(report.path), "wdl_only": report.wdl_only,
            "codec": report.codec, "block": report.block, "seconds": round(report.seconds, 3),
            "positions": report.positions, "wdl_bytes": report.wdl_bytes, "dist_bytes": report.dist_bytes,
            "tiers": [vars(t) for t in report.tiers],
        }))
        return 0
    rules = sum(t.rule_cells for t in report.tiers)
    print(f"{report.description}  ->  {report.path}  ({len(report.tiers)} tiers, {report.positions:,} positions, "
          f"{rules / n:.1%} answered by the rules)")
    line = f"WDL {report.wdl_bytes / 1e6:.2f} MB ({8 * report.wdl_bytes / n:.3f} bits a position)"
    if not report.wdl_only:
        total = report.wdl_bytes + report.dist_bytes
        line += f", distances {report.dist_bytes / 1e6:.2f} MB, together {8 * total / n:.3f} bits a position"
    print(f"{line}; codec {report.codec}, blocks of {report.block:,}, {report.seconds:.1f} s")
    return 0


def register(sub, commands: dict) -> None:
    """Add ``export`` to the ``rotary`` parser."""
    p = sub.add_parser(
        "export", help="write a finished database as a compact read-only set (WDL and distances apart)",
        description="Write a finished database as a compact read-only set: per tier a WDL file (2 bits a position "
        "before compression) and a distance file, each in checksummed blocks with an index. Positions the rules "
        "answer (finished games, a win by completing the centre in one move, no position) are not stored. "
        "Every command that takes --db reads the set; a database still being solved is refused.",
    )
    p.add_argument("--db", metavar="PATH", required=True, help="the value database to export (a finished LMDB database)")
    p.add_argument("--out", metavar="DIR", required=True, help="the folder to write the set into (created if needed)")
    p.add_argument("--wdl-only", action="store_true", help="write win/draw/loss only, without distances")
    p.add_argument("--block", type=int, default=DEFAULT_BLOCK, metavar="N",
                   help=f"positions a block, one of {', '.join(map(str, BLOCK_SIZES))} (default {DEFAULT_BLOCK}): "
                   "smaller blocks read less for one probe, larger ones compress better")
    p.add_argument("--wdl-codec", choices=WDL_CODECS, default=None,
                   help="WDL blocks: rans, the tier's static context model coded by rANS (default: the fastest to "
                   "write), cm, the adaptive context-model arithmetic coder (the smallest), or 2 bits a position "
                   "compressed by a byte codec")
    p.add_argument("--codec", choices=DIST_CODECS, default=None,
                   help="distance blocks: rans (default; with rans WDL), cm (the smallest), or a byte codec; a codec "
                   "other than rans for one stream makes cm the other's default")
    p.add_argument("-j", "--jobs", type=int, default=1, help="threads coding blocks (default 1)")
    add_quiet_option(p)
    add_json_option(p, "one JSON object: sizes, seconds and each tier's bytes")
    commands["export"] = cmd_export
