"""CPU time of the retrograde kernels, phase by phase: for weighing speed levers.

    python scripts/bench_levers.py                        # hex3 4v4, -j 1
    python scripts/bench_levers.py --board hex3 --balls 3
    PYTHONPATH=/tmp/base python scripts/bench_levers.py   # the same with another checkout

One ``-j 1`` solve from scratch in a fresh process (the numba cache warmed first by a
small solve), with the CPU time (user + sys) of the counters pass, of the per-ply
propagation and of the rest, in nanoseconds per canonical position, and a digest of
every stored value so that two kernels' databases can be compared bit for bit. CPU time
rather than wall time: the figures hold on a machine shared with other jobs.
"""

from __future__ import annotations

import argparse
import json

from _bench import run_child

CHILD = r"""
import hashlib, json, resource, sys, time
import numpy as np
from solver.game.config import make_config
from solver.retro import driver
from solver.db.store import Store
from solver.index import Layout

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

board, balls, edge, path = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
cfg = make_config(board, balls, edge=edge)
spent = {}
task = driver._task

def timed(kind, *args):
    t = cpu()
    out = task(kind, *args)
    spent[kind] = spent.get(kind, 0.0) + cpu() - t
    return out

driver._task = timed
t0 = cpu()
w0 = time.perf_counter()
r = driver.solve(cfg, path, jobs=1, progress=False)
total = cpu() - t0
wall = time.perf_counter() - w0
lay = Layout(cfg)
h = hashlib.sha256()
st = Store(path, readonly=True)
for i, t in enumerate(lay.tiers):
    h.update(np.ascontiguousarray(st.read_tier(i, t.size)).tobytes())
st.close()
import solver
print(json.dumps({"source": solver.__file__.rsplit("/solver/", 1)[0], "positions": lay.total, "total": total, "wall": wall, "digest": h.hexdigest()[:16],
                  **{k: v for k, v in spent.items()}}))
"""


def run(board: str, balls: int, edge: bool) -> dict:
    return run_child(CHILD, board, str(balls), "1" if edge else "0", own_cwd=True)  # PYTHONPATH decides


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="hex3")
    ap.add_argument("--balls", type=int, default=4)
    ap.add_argument("--edge", action="store_true")
    ap.add_argument("--repeat", type=int, default=1, help="runs; the least CPU time of each phase is shown")
    ap.add_argument("--json", action="store_true", help="then every run's figures as one line of JSON")
    args = ap.parse_args()
    run("hex2", 2, args.edge)  # warm the numba cache: no run pays for compilation
    runs = [run(args.board, args.balls, args.edge) for _ in range(args.repeat)]
    n = runs[0]["positions"]
    best = {k: min(r.get(k, 0.0) for r in runs) for k in ("total", "init", "level", "finish")}
    digests = {r["digest"] for r in runs}
    per = lambda s: s / n * 1e9  # noqa: E731
    print(
        f"{args.board} {args.balls}v{args.balls}{' edge' if args.edge else ''}: {n:,} positions; CPU "
        f"total {best['total']:.2f} s ({per(best['total']):.0f} ns/pos), counters {best['init']:.2f} s "
        f"({per(best['init']):.0f} ns/pos), plies {best['level']:.2f} s ({per(best['level']):.0f} ns/pos), "
        f"finish {best['finish']:.2f} s; wall {min(r['wall'] for r in runs):.1f} s; digest {' '.join(sorted(digests))} "
        f"({runs[0]['source']})",
        flush=True,
    )
    if args.json:
        print(json.dumps({"runs": runs}))


if __name__ == "__main__":
    main()
