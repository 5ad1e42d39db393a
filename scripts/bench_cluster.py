"""Benchmark the Ray executor against the process executor: wall time, peak memory per
actor, bytes exchanged per ply and in all.

    python scripts/bench_cluster.py                          # hex3 5v5, P = 1, 2, 4, and -j 2 processes
    python scripts/bench_cluster.py --board hex3 --balls 4 --parts 1 2
    python scripts/bench_cluster.py --parts 2 --process-jobs 0 --lean   # each P also with the actors' one byte a position

Each run solves from scratch into a temporary database in a fresh process (an embedded
Ray cluster per run), so that the peak-memory figures belong to that run alone.
"""

from __future__ import annotations

import argparse

from _bench import run_child

CHILD = r"""
import json, resource, sys, time
from solver.game.config import make_config
from solver.retro.driver import solve
board, balls, edge, executor, jobs, path = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4], int(sys.argv[5]), sys.argv[6]
cfg = make_config(board, balls, edge=edge)
lean = {"lean": True} if executor == "ray-lean" else {}
t = time.perf_counter()
r = solve(cfg, path, jobs=jobs, progress=False, executor=executor.removesuffix("-lean"), **lean)
wall = time.perf_counter() - t
out = {"positions": sum(s.positions for s in r.tiers), "wall": wall, "db_bytes": r.db_bytes,
       "driver_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
       "children_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
       "cpu": sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))}
for k in ("exchanged", "actor_peaks", "actor_cpu", "per_ply", "actor_resident"):
    if hasattr(r, k):
        out[k] = getattr(r, k)
print(json.dumps(out))
"""


def run(board: str, balls: int, edge: bool, executor: str, jobs: int) -> dict:
    return run_child(CHILD, board, str(balls), "1" if edge else "0", executor, str(jobs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", default="hex3")
    ap.add_argument("--balls", type=int, default=5)
    ap.add_argument("--edge", action="store_true")
    ap.add_argument("--parts", type=int, nargs="+", default=[1, 2, 4], help="actor counts to run")
    ap.add_argument("--process-jobs", type=int, default=2, help="-j of the process executor run (0: skip)")
    ap.add_argument("--lean", action="store_true", help="each actor count also with the lean actors (one byte a position)")
    args = ap.parse_args()
    name = f"{args.board} {args.balls}v{args.balls}{' edge' if args.edge else ''}"
    if args.process_jobs:
        r = run(args.board, args.balls, args.edge, "process", args.process_jobs)
        print(f"{name} process -j {args.process_jobs}: {r['positions']:,} positions, {r['wall']:.1f} s wall, "
              f"peak main {r['driver_peak'] / 1e6:.0f} MB / worker {r['children_peak'] / 1e6:.0f} MB; "
              f"CPU {r['cpu']:.0f} s ({r['cpu'] / r['positions'] * 1e9:,.0f} ns per position)", flush=True)
    for p, executor in [(p, e) for p in args.parts for e in ("ray", "ray-lean")[: 2 if args.lean else 1]]:
        r = run(args.board, args.balls, args.edge, executor, p)
        plies = [b for b in r["per_ply"]]
        actor_cpu = sum(r.get("actor_cpu", []))
        print(f"{name} {executor.replace('-', ' ')} P={p}: {r['wall']:.1f} s wall, {r['positions'] / r['wall']:,.0f} positions/s; "
              f"peak per actor {', '.join(f'{x / 1e6:.0f}' for x in r['actor_peaks'])} MB, driver {r['driver_peak'] / 1e6:.0f} MB; "
              f"resident at the end {', '.join(f'{x / 1e6:.0f} MB (parts {y / 1e6:.0f})' for x, y in r['actor_resident'])}; "
              f"exchanged {r['exchanged'] / 1e6:.1f} MB in {len(plies)} plies "
              f"(mean {sum(plies) / max(1, len(plies)) / 1e6:.2f} MB, max {max(plies, default=0) / 1e6:.1f} MB per ply); "
              f"CPU {actor_cpu:.0f} s in the actors + {r['cpu']:.0f} s the driver "
              f"({actor_cpu / r['positions'] * 1e9:,.0f} ns per position)", flush=True)


if __name__ == "__main__":
    main()
