"""``rotary verify``'s kernel on a solved database: CPU time a position, one thread.

    python scripts/bench_verify.py --db rotary-db/hex3-4v4              # its top tier
    python scripts/bench_verify.py --db DB --tier x5v4,x6v6 --positions 4000000
    PYTHONPATH=/tmp/base python scripts/bench_verify.py --db DB         # another checkout's kernels

The tiers named and every tier of their groups and below are read into a value array as
``verify`` reads them (anonymous memory on huge pages); then :func:`verify_range` runs
over ``--positions`` cells from the start of each named tier, ``--repeat`` times, and the
fastest run is printed in nanoseconds of CPU a position (the check must pass: an intact
database). Run two checkouts on one database, one after the other, to compare kernels.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from solver.db.database import Database
from solver.kernels.verify import verify_range
from solver.memory import huge_zeros


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--tier", help="tier keys, comma-separated (default: the last tier)")
    ap.add_argument("--positions", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    with Database(args.db) as db:
        layout = db.layout
        keys = args.tier.split(",") if args.tier else [layout.tiers[-1].key]
        by_key = {t.key: t for t in layout.tiers}
        unknown = [k for k in keys if k not in by_key]
        if unknown:
            raise SystemExit(f"bench_verify: no tier {', '.join(unknown)} in {args.db}")
        top = max(by_key[k].base for k in keys)
        end = next(hi for _, lo, hi in layout.groups if lo <= top < hi)
        vals = huge_zeros(layout.total)
        t0 = time.perf_counter()
        for i, t in enumerate(layout.tiers):
            if t.base < end:
                db.store.read_tier(i, t.size, out=vals[t.base : t.base + t.size])
        print(f"{db.description}: {end:,} values read in {time.perf_counter() - t0:.1f} s")
    buf, buf2 = (np.empty(6 * layout.geo.npoints, dtype=np.int64) for _ in range(2))
    geo, lay = layout.geo, layout.lay
    for k in keys:
        t = by_key[k]
        lo, hi = t.base, t.base + min(t.size, args.positions)
        verify_range(vals, lo, lo + min(1000, hi - lo), geo, lay, buf, buf2)  # compile or load the cache
        best = float("inf")
        for _ in range(args.repeat):
            c0 = time.thread_time()
            bad = verify_range(vals, lo, hi, geo, lay, buf, buf2)
            best = min(best, time.thread_time() - c0)
            if bad >= 0:
                raise SystemExit(f"bench_verify: index {bad} does not follow from its children")
        print(f"{k}: {hi - lo:,} positions, {1e9 * best / (hi - lo):,.0f} ns of CPU a position")


if __name__ == "__main__":
    main()
