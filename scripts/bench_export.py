"""``rotary export`` measured: size, export time, probe rates, against the LMDB database.

    python scripts/bench_export.py --db rotary-db/hex3-4v4
    python scripts/bench_export.py --db rotary-db/hex3-5v5 --block 16384 --probes 100000

Exports the database twice (with distances, and ``--wdl-only``) into a temporary folder
(or ``--out``), then prints one table row per measurement:

* bits a position: WDL alone; WDL and distances together (file bytes, headers included);
* reading every value of the LMDB database once (``values()``), its file dropped from the
  page cache first (cold) and again (warm), against exporting it — on one thread, on
  ``--jobs`` threads (default: every core), and WDL-only on ``--jobs`` — each after the
  LMDB file is dropped from the page cache; and reading every value of the set
  (``values()``, what the engine and df-pn load as leaves);
* warm probes: ``--probes`` random positions, probed once to decode their blocks and then
  timed — single probes by index (``probe_index``) and by position (``probe``, the rules'
  checks included), and one batch of ``--batch`` indices (``probe_indices``; WDL-only:
  ``probe_wdl_indices``); the LMDB database on the first ``--lmdb-probes`` of the same
  positions in the same run (``probe``, a second pass);
* cold probes: ``--cold`` random positions, each after the set's files (or the LMDB file)
  are dropped from the page cache (``posix_fadvise(POSIX_FADV_DONTNEED)``) and the decoded
  blocks forgotten: one block read from the disk each.

Everything but the export on ``--jobs`` threads and the set's ``values()`` (a thread a
core) runs on one core; a line after the table gives the CPU seconds of each export
(all its threads) and of the LMDB reads: what other work on the machine does not
lengthen; ``--json`` prints one object instead.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from solver.db.compact import export_db
from solver.db.database import CompactDatabase, Database
from solver.game.position import Position


def _drop(path: Path) -> None:
    """Ask the OS to drop ``path`` (a file, or every file in a folder) from the page cache."""
    for f in [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file()):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd) if os.access(f, os.W_OK) else None
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _positions(db: Database, gidx: np.ndarray) -> list[Position]:
    out = []
    for g in gidx:
        m, p, s = db.layout.position(int(g))
        x, o = (m, p) if s == 0 else (p, m)
        out.append(Position.make(db.cfg.board, x, o, s))
    return out


def _rate(n: int, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def measure(args: argparse.Namespace, out: Path) -> dict:
    src = Path(args.db)
    res: dict = {"db": str(src), "block": args.block, "machine": f"{os.cpu_count()} cores, {platform.machine()} {platform.system()}"}
    for key in ("lmdb_read_s", "lmdb_warm_read_s"):
        if key == "lmdb_read_s":
            _drop(src / "data.mdb")
        with Database(src) as lm:
            cpu = time.process_time()
            want, res[key] = _timed(lm.values)
            res[key.replace("_s", "_cpu_s")] = time.process_time() - cpu
            res["description"], res["positions"] = lm.description, lm.layout.total
            res["lmdb_bytes"] = (src / "data.mdb").stat().st_size
    full, wdl = out / "full", out / "wdl"
    kw = dict(block=args.block, codec=args.codec, wdl_codec=args.wdl_codec)
    res["jobs"] = args.jobs
    for key, folder, extra in (("export_1_s", full, dict(jobs=1)), ("export_s", full, dict(jobs=args.jobs)),
                               ("export_wdl_s", wdl, dict(jobs=args.jobs, wdl_only=True))):
        _drop(src / "data.mdb")
        cpu = time.process_time()
        rep, res[key] = _timed(lambda: export_db(src, folder, **kw, **extra))
        res[key.replace("_s", "_cpu_s")] = time.process_time() - cpu  # every thread's: not slowed by other work
        if key == "export_s":
            res["codec"] = rep.codec
    with CompactDatabase(full) as db:
        got, res["set_read_s"] = _timed(db.values)
        assert np.array_equal(got, want), "the set's values are not the LMDB database's"
    size = lambda d: sum(p.stat().st_size for p in d.iterdir())  # noqa: E731
    n = res["positions"]
    res["wdl_bits"] = 8 * size(wdl) / n
    res["full_bits"] = 8 * size(full) / n
    res["rule_cells"] = sum(t.rule_cells for t in rep.tiers) / n
    rng = np.random.default_rng(args.seed)
    live = np.flatnonzero(want != 0x4000)  # probes by position need a position
    g = live[rng.integers(0, len(live), args.probes)]
    with CompactDatabase(full) as db:  # every block fits the pool: warm means decoded
        cache = 2 * args.block * sum(f.nblocks for f, _ in db.files)
    with CompactDatabase(full, cache_bytes=cache) as db, CompactDatabase(wdl, cache_bytes=cache) as wd:
        pos = _positions(db, g)
        gl = g.tolist()
        for _ in range(2):  # the first pass decodes the blocks
            got, t = _timed(lambda: [db.probe_index(i) for i in gl])
        assert got == want[g].tolist(), "probe_index disagrees with the LMDB database"
        res["single_index_per_s"] = _rate(len(gl), t)
        _, t = _timed(lambda: [db.probe(p) for p in pos])
        res["single_pos_per_s"] = _rate(len(pos), t)
        _, t = _timed(lambda: [wd.probe_wdl(p) for p in pos])
        res["single_pos_wdl_per_s"] = _rate(len(pos), t)
        big = rng.integers(0, n, args.batch)
        db.probe_indices(big)
        got, t = _timed(lambda: db.probe_indices(big))
        assert np.array_equal(got, want[big]), "probe_indices disagrees with the LMDB database"
        res["batch_per_s"] = _rate(len(big), t)
        wd.probe_wdl_indices(big)
        _, t = _timed(lambda: wd.probe_wdl_indices(big))
        res["batch_wdl_per_s"] = _rate(len(big), t)
        cold = g[: args.cold].tolist()
        spent = 0.0
        for i in cold:
            db.drop_page_cache()
            _, t = _timed(lambda: db.probe_index(i))
            spent += t
        res["cold_per_s"] = _rate(len(cold), spent)
    few = pos[: args.lmdb_probes]  # LMDB's block cache holds 64 blocks: random probes mostly decompress one
    with Database(src) as lm:
        for _ in range(2):
            _, t = _timed(lambda: [lm.probe(p) for p in few])
        res["lmdb_single_pos_per_s"] = _rate(len(few), t)
    spent = 0.0
    for p in pos[: args.cold]:
        _drop(src / "data.mdb")
        with Database(src) as lm:  # a new block cache each time
            _, t = _timed(lambda: lm.probe(p))
        spent += t
    res["lmdb_cold_per_s"] = _rate(min(args.cold, len(pos)), spent)
    return res


ROW = ("| {description} | {codec} | {block} | {wdl_bits:.3f} | {full_bits:.3f} | {lmdb_bits:.2f} | "
       "{lmdb_read_s:.2f} / {lmdb_warm_read_s:.2f} | {export_1_s:.1f} / {export_s:.1f} / {export_wdl_s:.1f} | {set_read_s:.2f} | "
       "{single_index_per_s:,.0f} | {single_pos_per_s:,.0f} | {lmdb_single_pos_per_s:,.0f} | "
       "{batch_per_s:,.0f} | {batch_wdl_per_s:,.0f} | {cold_per_s:,.0f} | {lmdb_cold_per_s:,.0f} |")
HEAD = ("| database | codec (WDL + distances) | block | WDL bits/pos | WDL+dist bits/pos | LMDB bits/pos | "
        "LMDB read s (cold / warm) | export s (1 thread / {jobs} / WDL on {jobs}) | set read s | "
        "single by index /s | single by position /s | LMDB single by position /s | batch /s | batch WDL /s | cold /s | "
        "LMDB cold /s |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="a finished LMDB database")
    ap.add_argument("--out", help="folder for the two exported sets (default: a temporary one, removed after)")
    ap.add_argument("--block", type=int, default=1 << 16)
    ap.add_argument("--wdl-codec", default=None, help="the WDL blocks' codec (default rans; export's rules)")
    ap.add_argument("--codec", default=None, help="the distance blocks' codec (default rans; export's rules)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="export threads (default: every core)")
    ap.add_argument("--probes", type=int, default=200_000, help="random single probes (default 200000)")
    ap.add_argument("--batch", type=int, default=2_000_000, help="indices in the batch (default 2000000)")
    ap.add_argument("--cold", type=int, default=200, help="cold single probes (default 200)")
    ap.add_argument("--lmdb-probes", type=int, default=5000,
                    help="warm single probes of the LMDB database, the first of --probes (default 5000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.out:
        res = measure(args, Path(args.out))
    else:
        with tempfile.TemporaryDirectory(prefix="rotary-export-") as tmp:
            res = measure(args, Path(tmp))
    res["lmdb_bits"] = 8 * res["lmdb_bytes"] / res["positions"]
    if args.json:
        print(json.dumps(res))
        return
    print(f"{res['description']}: {res['positions']:,} positions, {res['rule_cells']:.1%} answered by the rules, "
          f"codec {res['codec']}; {res['machine']}")
    head = HEAD.format(jobs=res["jobs"])
    print(head)
    print("|" + "---|" * head.count(" | ") + "---|")
    print(ROW.format(**res))
    ns = 1e9 / res["positions"]
    print(f"export CPU s (1 thread / {res['jobs']} / WDL on {res['jobs']}): {res['export_1_cpu_s']:.1f} / "
          f"{res['export_cpu_s']:.1f} / {res['export_wdl_cpu_s']:.1f}, {res['export_1_cpu_s'] * ns:.0f} ns a position "
          f"on one thread; the LMDB read (cold / warm): {res['lmdb_read_cpu_s']:.2f} / {res['lmdb_warm_read_cpu_s']:.2f}")


if __name__ == "__main__":
    main()
