"""``rotary verify``'s kernel on a solved database: CPU time a position, one thread.

    python scripts/bench_verify.py --db rotary-db/hex3-4v4              # its top tier
    python scripts/bench_verify.py --db DB --tier x5v4,x6v6 --positions 4000000
    python scripts/bench_verify.py --db DB --two-bytes                  # the codes as stored
    PYTHONPATH=/tmp/base python scripts/bench_verify.py --db DB         # another checkout's kernels

The tiers named and every tier of their groups and below are read into a value array as
``verify`` reads them (:func:`solver.db.verify_values.read_values`: one byte a position and
a table of codes, or with ``--two-bytes`` the 16-bit codes); then :func:`verify_range` runs
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
from solver.db.verify_values import read_values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--tier", help="tier keys, comma-separated (default: the last tier)")
    ap.add_argument("--positions", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--two-bytes", action="store_true", help="keep the 16-bit codes, not a byte a position")
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
        t0 = time.perf_counter()
        read = [t for t in layout.tiers if t.base < end]
        values, _ = read_values(db.store, read, layout.total, one_byte=not args.two_bytes)
        width = values.vals.dtype.itemsize
        print(f"{db.description}: {end:,} values read in {time.perf_counter() - t0:.1f} s, {width} byte(s) a position")
    buf, buf2 = (np.empty(6 * layout.geo.npoints, dtype=np.int64) for _ in range(2))
    geo, lay = layout.geo, layout.lay
    for k in keys:
        t = by_key[k]
        lo, hi = t.base, t.base + min(t.size, args.positions)
        verify_range(values.vals, values.dec, lo, lo + min(1000, hi - lo), geo, lay, buf, buf2)  # compile or load the cache
        best = float("inf")
        for _ in range(args.repeat):
            c0 = time.thread_time()
            bad = verify_range(values.vals, values.dec, lo, hi, geo, lay, buf, buf2)
            best = min(best, time.thread_time() - c0)
            if bad >= 0:
                raise SystemExit(f"bench_verify: index {bad} does not follow from its children")
        print(f"{k}: {hi - lo:,} positions, {1e9 * best / (hi - lo):,.0f} ns of CPU a position")


if __name__ == "__main__":
    main()
