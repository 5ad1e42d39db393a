"""df-pn against the retrograde database on every position of a configuration.

    python scripts/check_pns.py --board hex3 --balls 3                      # base
    python scripts/check_pns.py --board hex3 --balls 3 --edge
    python scripts/check_pns.py --board hex3 --balls 3 --capture --traps-x a1,e3 --traps-o c5,a3
    python scripts/check_pns.py ... --db rotary-db/<name> --limit 100000 --nodes 2000000

Without ``--db`` the configuration is solved first (into a temporary folder). Prints the
figures of :class:`solver.search.check.CheckReport` and exits 1 when any answer is wrong or
open, or when an audited table entry is wrong.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from solver.cli.options import add_rule_options, config_from_args
from solver.db.database import open_db
from solver.search.check import check_all, check_budget
from solver.retro.driver import solve
from solver.db.store import StoreError


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_rule_options(ap)
    ap.add_argument("--db", type=Path, help="a solved database of these rules (default: solve one now)")
    ap.add_argument("--nodes", type=int, default=2_000_000, help="df-pn budget per searched position")
    ap.add_argument("--tt-bits", type=int, default=23, help="table size: 2^bits entries (36 bytes each)")
    ap.add_argument("--limit", type=int, help="only the first N positions of the fixed-seed order")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    cfg, _ = config_from_args(args)
    check_budget(args.nodes, args.tt_bits, args.limit)  # before a solve, not after it
    tmp = None
    path = args.db
    if path is None:
        tmp = Path(tempfile.mkdtemp(prefix="rotary-check-"))
        path = tmp / "db"
        t = time.monotonic()
        solve(cfg, path, jobs=1, material=(cfg.balls, cfg.balls), progress=True)
        print(f"solved {cfg.describe()} in {time.monotonic() - t:.0f} s")
    try:
        with open_db(path) as db:
            print(f"checking df-pn against {db.description}")
            rep = check_all(cfg, db, nodes=args.nodes, tt_bits=args.tt_bits, limit=args.limit, seed=args.seed,
                            progress=True)
        print(rep.line())
        for w in rep.wrong[:10]:
            print("wrong:", w)
        return 0 if rep.ok else 1
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (StoreError, ValueError) as e:  # a user's mistake: one line, no traceback
        print(f"check_pns: {e}", file=sys.stderr)
        sys.exit(2)
