"""The counters pass of a big ``edge`` group, where balls fall off the board: CPU time a
position, on lower tiers far larger than the caches.

    python scripts/bench_counters.py                               # hex4 4v4 edge
    python scripts/bench_counters.py --board hex3 --balls 6 --positions 4000000
    PYTHONPATH=/tmp/base python scripts/bench_counters.py          # another checkout's kernels

With ``edge`` a turn at an edge point can push a ball off: that child is in a lower tier,
solved already, and the counters pass ranks it and reads its value (hex(4) 4v4: 12 of 58
moves a position; 1.9 GB of lower tiers read at random). A solve's counters pass on that
board took 27 min where the base game's took 7. Here the whole value array is allocated
as a solve's is (anonymous memory on huge pages), the lower tiers are filled with random
values (45 % wins, 15 % losses, 40 % draws), and
``init_range`` runs over ``--positions`` cells at three places of the top group, one
thread. Prints nanoseconds of CPU a position and a digest of the cells written, so that
two kernels can be compared bit for bit on the same input (the seed fixes it).
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time

import numpy as np
from numba import njit

from solver.game.config import make_config
from solver.index import Layout
from solver.kernels.code import loss_code, win_code
from solver.kernels.retro import init_range
from solver.memory import huge_zeros


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


@njit(nogil=True, cache=True)
def fill_lower(vals, end, seed):
    """Random value codes in ``vals[:end]`` (xorshift, fixed by ``seed``): about 45 % wins,
    15 % losses, 40 % draws, distances 1..64."""
    x = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)
    for i in range(end):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        kind = x % np.uint64(100)
        d = (x >> np.uint64(8)) % np.uint64(64) + np.uint64(1)
        if kind < 45:
            vals[i] = win_code(d)
        elif kind < 60:
            vals[i] = loss_code(d)
        else:
            vals[i] = 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="hex4")
    ap.add_argument("--balls", type=int, default=4)
    ap.add_argument("--positions", type=int, default=3_000_000, help="cells at each of the three places")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    k = args.balls
    cfg = make_config(args.board, k, edge=True)
    lay = Layout(cfg, (k, k))
    top = lay.tiers[-1]
    glo, ghi = top.base, top.base + top.size
    vals = huge_zeros(lay.total)
    t0 = time.perf_counter()
    fill_lower(vals, glo, args.seed)
    print(f"{args.board} {k}v{k} edge: {lay.total:,} positions, lower tiers {glo:,} ({2 * glo / 1e9:.1f} GB) "
          f"filled in {time.perf_counter() - t0:.0f} s")
    buf = np.empty(6 * lay.geo.npoints, np.int64)
    init_range(vals, glo, glo + 1000, glo, ghi, lay.geo, lay.lay, buf)  # compile or load the cache
    h = hashlib.sha256()
    spent, n = 0.0, 0
    for frac in (0.2, 0.5, 0.8):
        lo = glo + int(top.size * frac)
        hi = min(ghi, lo + args.positions)
        c = cpu()
        init_range(vals, lo, hi, glo, ghi, lay.geo, lay.lay, buf)
        spent += cpu() - c
        n += hi - lo
        h.update(np.ascontiguousarray(vals[lo:hi]).tobytes())
    print(f"counters pass: {spent / n * 1e9:.0f} ns CPU a position over {n:,} positions; digest {h.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
