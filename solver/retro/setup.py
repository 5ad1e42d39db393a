"""Solving the setup game (docs/rules.md §5 ``setup``) exactly, on top of the rotation phase.

Placement positions form a DAG: every placement adds a ball. Layer ``n`` holds the
positions with ``n`` balls placed; layer ``2K`` (all placed, light to move) exists for
``setup=offer`` only, where its value comes from the offer rule; under ``setup=last`` the
last placement leads straight into the rotation phase with dark to move. Layers are solved
from the full board down to the empty one, each in one pass, each written to the same
database as the rotation phase in its own transaction (so a killed solve resumes).

Placement layers are indexed like rotation tiers (same encoder, same plain symmetries)
but over the points outside the centre, and never colour-folded: light places first and
offers, so the setup game is not colour-symmetric.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from solver.game.config import Config
from solver.index import Layout
from solver.placement import LAST, OFFER, Placement, layer_key  # noqa: F401  (LAST/OFFER re-exported)
from solver.retro.checkpoint import EVERY_S
from solver.retro.driver import solve
from solver.retro.pool import split_range
from solver.retro.report import ProgressBar, SolveReport, TierSummary, summarise
from solver.db.store import SolveLock, Store

PLACE_CHUNK = 1 << 14  # placement positions per task at most


def solve_setup(
    cfg: Config, db_path: str | os.PathLike, jobs: int = 1, progress: bool = True, executor: str = "process",
    address: str | None = None, checkpoint_s: float | None = EVERY_S, force: bool = False,
) -> SolveReport:
    """Solve the rotation phase, then every placement layer, into one database.

    Placement layers are cheap next to the rotation phase; their ranges go to threads
    (the kernel releases the GIL) whatever ``executor`` the rotation phase uses.
    """
    with SolveLock(db_path):
        return _solve_setup(cfg, db_path, jobs, progress, executor, address, checkpoint_s, force)


def _solve_setup(cfg: Config, db_path, jobs: int, progress: bool, executor: str, address: str | None,
                 checkpoint_s: float | None = EVERY_S, force: bool = False) -> SolveReport:
    start = time.perf_counter()
    report = solve(cfg, db_path, jobs=jobs, progress=progress, executor=executor, address=address,
                   checkpoint_s=checkpoint_s, force=force)
    rot = Layout(cfg)
    place = Placement(cfg)
    lay = place.layout
    store = Store(db_path)
    try:
        rot_vals = store.read_tiers(rot.tiers)
        finished = store.meta_items("tier:")
        vals = np.zeros(max(lay.total, 1), dtype=np.uint16)
        summaries: list[TierSummary] = []
        solved_now = list(report.solved_now)
        pool = ThreadPoolExecutor(max(1, jobs))
        try:
            for i, t in enumerate(lay.tiers):
                no = len(rot.tiers) + i
                key = layer_key(t)
                if key in finished:
                    store.read_tier(no, t.size, out=vals[t.base : t.base + t.size])
                    summaries.append(TierSummary.from_meta(finished[key]))
                    continue
                t0 = time.perf_counter()
                # small tasks, so that the bar moves every second or so even with one job
                chunks = split_range(t.base, t.base + t.size, max(max(1, jobs) * 4, -(-t.size // PLACE_CHUNK)))
                with ProgressBar(key, t.size, "pos", progress) as bar:
                    futures = [(pool.submit(place.solve_range, vals, lo, hi, rot_vals, rot), hi - lo) for lo, hi in chunks]
                    for f, size in futures:
                        f.result()
                        bar.add(size)
                summary = summarise(vals, t, time.perf_counter() - t0)
                summary.key = key
                store.write_tiers([(no, vals[t.base : t.base + t.size], key, summary.meta())])
                summaries.append(summary)
                solved_now.append(key)
        finally:
            pool.shutdown(cancel_futures=True)
        root = vals[lay.tiers[-1].base]
        report.tiers = report.tiers + summaries
        report.solved_now = solved_now
        report.seconds = time.perf_counter() - start
        report.db_bytes = store.size_on_disk()
        report.root_code = int(root)  # type: ignore[attr-defined]
        return report
    finally:
        store.close()
