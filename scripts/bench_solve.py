"""Benchmark the retrograde solver: wall time, positions per second per core, peak memory.

    python scripts/bench_solve.py                      # hex3 4v4, -j 1 and -j 2
    python scripts/bench_solve.py --board hex3 --balls 5 --jobs 2

Each run solves from scratch into a temporary database, in a fresh process so that the
peak-memory figures (``ru_maxrss``) belong to that run alone.
"""

from __future__ import annotations

import argparse

from _bench import run_child

CHILD = r"""
import json, resource, sys, time
from solver.game.config import make_config
from solver.retro.driver import solve
board, balls, edge, jobs, path = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4]), sys.argv[5]
cfg = make_config(board, balls, edge=edge)
t = time.perf_counter()
r = solve(cfg, path, jobs=jobs, progress=False)
wall = time.perf_counter() - t
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"positions": sum(s.positions for s in r.tiers), "wall": wall, "db_bytes": r.db_bytes,
                  "peak_main_kb": own, "peak_worker_kb": kids, "description": r.description}))
"""


def run(board: str, balls: int, edge: bool, jobs: int) -> dict:
    return run_child(CHILD, board, str(balls), "1" if edge else "0", str(jobs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="hex3")
    ap.add_argument("--balls", type=int, default=4)
    ap.add_argument("--edge", action="store_true")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    # warm the numba cache so that no run pays for compilation
    run("hex2", 2, args.edge, 1)
    rows = []
    for jobs in args.jobs:
        r = run(args.board, args.balls, args.edge, jobs)
        rows.append((jobs, r))
        rate = r["positions"] / r["wall"] / jobs
        print(
            f"{r['description']}  -j {jobs}: {r['positions']:,} canonical positions, {r['wall']:.1f} s wall, "
            f"{rate:,.0f} positions/s per core, peak memory main {r['peak_main_kb'] / 1024:.0f} MB / "
            f"worker {r['peak_worker_kb'] / 1024:.0f} MB, database {r['db_bytes'] / 1e6:.1f} MB",
            flush=True,
        )
    if len(rows) > 1:
        base = rows[0][1]["wall"]
        for jobs, r in rows[1:]:
            print(f"speed-up -j {jobs} over -j {rows[0][0]}: {base / r['wall']:.2f}x")


if __name__ == "__main__":
    main()
