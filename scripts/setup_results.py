"""Solve the setup game (docs/rules.md §5 ``setup``) on small boards and print the results table.

    python scripts/setup_results.py                       # hex2 2..4, hex3 2..4, both readings
    python scripts/setup_results.py --db-root /tmp/db -j 2
    python scripts/setup_results.py --case hex3:5 --reading offer

Each case is solved with ``rotary solve --setup R --board B --balls K`` into
``<db-root>/<rules>`` (an already solved database is reused: the solve resumes and has
nothing to do), then the empty board is asked with ``rotary query --setup R ... --json``.
The time in the table is the solver's own, summed over the database's tier records
(rotation phase and placement layers), so it is the same whether the database was solved
now or earlier (``--json`` also gives ``wall_s``, the whole ``rotary solve`` command, when it
solved something in this run); the size is the database folder on disk.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_CASES = ["hex2:2", "hex2:3", "hex2:4", "hex3:2", "hex3:3", "hex3:4"]


def rotary(*argv: str) -> str:
    """Run ``rotary`` (this Python's solver.cli.main) and return its standard output."""
    cmd = [sys.executable, "-c", "import sys; from solver.cli.main import main; sys.exit(main(sys.argv[1:]))", *argv]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def db_path(root: Path, board: str, balls: int, reading: str) -> Path:
    from solver.db.catalog import db_name
    from solver.game.config import make_config

    return root / db_name(make_config(board, balls, setup=reading), (balls, balls))


def solve_case(root: Path, board: str, balls: int, reading: str, jobs: int) -> dict:
    from solver.db.database import open_db

    path = db_path(root, board, balls, reading)
    rules = ["--setup", reading, "--board", board, "--balls", str(balls), "--db", str(path)]
    t0 = time.perf_counter()
    out = rotary("solve", *rules, "-j", str(jobs), "-q")
    wall = None if "already solved" in out else time.perf_counter() - t0
    answer = json.loads(rotary("query", *rules, "--json").splitlines()[0])
    with open_db(path) as db:
        tiers = db.tier_meta.values()
        seconds = sum(t["seconds"] for t in tiers)
        positions = sum(t["positions"] for t in tiers)
        rotation = sum(t["positions"] for k, t in db.tier_meta.items() if not k.startswith("place:"))
        size = db.store.size_on_disk()
    best = [m["move"] for m in answer["moves"] if (m["value"], m["plies"]) == (answer["value"], answer["plies"])]
    return {
        "board": board,
        "balls": balls,
        "reading": reading,
        "value": answer["value"],
        "plies": answer["plies"],
        "best": best,
        "placements": len(answer["moves"]),
        "positions": positions,
        "rotation_positions": rotation,
        "seconds": seconds,
        "wall_s": wall,
        "db_bytes": size,
        "path": str(path),
    }


def winner(row: dict) -> str:
    """The root value is light's (light places first): win -> light, loss -> dark."""
    if row["value"] == "draw":
        return "draw"
    who = "light (x)" if row["value"] == "win" else "dark (o)"
    return f"{who} in {row['plies']}"


def table(rows: list[dict]) -> str:
    head = (
        "| board | balls | setup | result (empty board, light to place) | best first placements "
        "| positions (rotation + placement) | solve time | database |\n"
        "|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        if len(r["best"]) == r["placements"]:
            best = f"any of {r['placements']}"
        elif len(r["best"]) <= 6:
            best = " ".join(r["best"])
        else:
            best = " ".join(r["best"][:6]) + f" … ({len(r['best'])} of {r['placements']})"
        lines.append(
            f"| {r['board']} | {r['balls']}v{r['balls']} | {r['reading']} | {winner(r)} | {best} "
            f"| {r['rotation_positions']:,} + {r['positions'] - r['rotation_positions']:,} "
            f"| {r['seconds']:.1f} s | {r['db_bytes'] / 1e6:.1f} MB |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db-root", default="rotary-db", help="folder of the databases (default rotary-db)")
    ap.add_argument("--case", action="append", metavar="BOARD:K", help=f"cases to solve (default {' '.join(DEFAULT_CASES)})")
    ap.add_argument("--reading", action="append", choices=("offer", "last"), help="setup readings (default both)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="worker processes for each solve (default 2)")
    ap.add_argument("--json", action="store_true", help="also print one JSON line per case")
    args = ap.parse_args()
    root = Path(args.db_root)
    rows = []
    for case in args.case or DEFAULT_CASES:
        board, balls = case.split(":")
        for reading in args.reading or ("offer", "last"):
            row = solve_case(root, board, int(balls), reading, args.jobs)
            rows.append(row)
            print(f"solved {board} {balls}v{balls} setup={reading}: {winner(row)} ({row['seconds']:.1f} s)", file=sys.stderr, flush=True)
            if args.json:
                print(json.dumps(row), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
