"""Solving a configuration by retrograde analysis: the driver around the kernels.

Groups of tiers (see :mod:`solver.index`) are solved in order of total material;
each finished group goes into the database in one transaction, so ``solve`` can be
killed at any moment and rerun: finished groups are read back, the rest solved.

Parallelism: the value array of the whole configuration lives in a shared file mapping
(``/dev/shm`` where there is one); each phase of a group (counters, each ply, finish) is
split into index ranges and handed to a ``concurrent.futures`` executor. Workers are
*processes* started with ``spawn`` (never ``fork``: numba's threading layers and open LMDB
environments must not cross a fork); each builds its own layout and maps the same file.
Cross-range updates are atomic compare-and-swap, so any executor gives the same result.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Executor
from pathlib import Path

import numpy as np

from solver.db.header import db_header, describe
from solver.db.store import Store
from solver.errors import StoreError
from solver.game.config import Config, config_from_key
from solver.index import Layout
from solver.kernels.retro import DMASK
from solver.retro.pool import InlineExecutor, shared_values, spawn_pool, split_range
from solver.retro.report import SolveReport, TierSummary, summarise

SMALL_GROUP = 1 << 17  # groups below this are solved in the main process
_STATE: dict = {}


# ---------------------------------------------------------------------------- worker side


def _attach(cfg_key: dict, material: tuple[int, int], path: str, total: int) -> None:
    """Executor initializer: build the layout and map the shared value file."""
    cfg = config_from_key(cfg_key)
    _STATE["layout"] = Layout(cfg, material)
    _STATE["vals"] = np.memmap(path, dtype=np.uint16, mode="r+", shape=(total,))


def _task(kind: str, lo: int, hi: int, glo: int, ghi: int, level: int = 0):
    from solver.kernels.retro import finish_range, init_range, level_range

    lay: Layout = _STATE["layout"]
    vals = _STATE["vals"]
    n = 6 * lay.geo.npoints
    if kind == "init":
        return init_range(vals, lo, hi, glo, ghi, lay.geo, lay.lay, np.empty(n, np.int64)), hi - lo
    if kind == "level":
        scratch = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.uint64), np.empty(n, np.uint64)
        return level_range(vals, lo, hi, glo, ghi, level, lay.geo, lay.lay, *scratch)
    finish_range(vals, lo, hi)
    return -1, hi - lo


# ---------------------------------------------------------------------------- driver


def open_for_solve(path: str | os.PathLike, layout: Layout) -> Store:
    """Open (or create) the database and check that it was built for these rules."""
    store = Store(path, create=True)
    header = db_header(layout)
    found = store.get_meta("config")
    if found is None:
        store.put_meta("config", header)
    elif found != header:
        store.close()
        raise StoreError(
            f"database at {path} was built for {found.get('description', 'other rules')}, "
            f"not {header['description']}"
        )
    return store


def solve(
    cfg: Config,
    db_path: str | os.PathLike,
    jobs: int = 1,
    material: tuple[int, int] | None = None,
    progress: bool = True,
    executor: str = "process",
) -> SolveReport:
    """Solve every position of ``cfg`` into the database at ``db_path`` (resuming)."""
    start = time.perf_counter()
    layout = Layout(cfg, material)
    store = open_for_solve(db_path, layout)
    finished = store.meta_items("tier:")
    path, vals = shared_values(layout.total)
    pool: Executor | None = None
    solved_now: list[str] = []
    try:
        _STATE["layout"], _STATE["vals"] = layout, vals
        tier_no = {t.key: i for i, t in enumerate(layout.tiers)}
        for (u, v), glo, ghi in layout.groups:
            tiers = [t for t in layout.tiers if glo <= t.base < ghi]
            if all(t.key in finished for t in tiers):
                for t in tiers:
                    vals[t.base : t.base + t.size] = store.read_tier(tier_no[t.key], t.size)
                continue
            t0 = time.perf_counter()
            if jobs > 1 and ghi - glo >= SMALL_GROUP and pool is None:
                vals.flush()
                pool = _make_pool(jobs, executor, layout, path)
            run = pool if (pool is not None and ghi - glo >= SMALL_GROUP) else InlineExecutor()
            _solve_group(run, vals, glo, ghi, max(jobs, 1), tiers, progress)
            seconds = time.perf_counter() - t0
            vals.flush()
            out = []
            for t in tiers:
                summary = summarise(vals, t, seconds * t.size / max(1, ghi - glo))
                out.append((tier_no[t.key], np.asarray(vals[t.base : t.base + t.size]), t.key, summary.meta()))
                finished[t.key] = summary.meta()
                solved_now.append(t.key)
            store.write_tiers(out)
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        return SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
    finally:
        if pool is not None:
            pool.shutdown()
        store.close()
        _STATE.clear()
        del vals
        Path(path).unlink(missing_ok=True)


def _make_pool(jobs: int, executor: str, layout: Layout, path: str) -> Executor:
    if executor == "thread":
        from concurrent.futures import ThreadPoolExecutor

        return ThreadPoolExecutor(jobs)
    return spawn_pool(jobs, _attach, (layout.cfg.key(), layout.material, path, layout.total))


def _solve_group(run: Executor, vals, glo, ghi, jobs, tiers, progress: bool) -> None:
    from tqdm import tqdm

    name = "+".join(t.key for t in tiers)
    parts = jobs * 8 if ghi - glo >= SMALL_GROUP else 1
    chunks = split_range(glo, ghi, parts)
    with tqdm(total=ghi - glo, desc=f"{name} counters", unit="pos", unit_scale=True, disable=not progress, leave=False) as bar:
        top = -1
        for f in [run.submit(_task, "init", lo, hi, glo, ghi) for lo, hi in chunks]:
            t, n = f.result()
            top = max(top, t)
            bar.update(n)
    with tqdm(total=ghi - glo, desc=f"{name} plies", unit="pos", unit_scale=True, disable=not progress, leave=False) as bar:
        level = 0
        while level <= top:
            bar.set_postfix(ply=level)
            for f in [run.submit(_task, "level", lo, hi, glo, ghi, level) for lo, hi in chunks]:
                t, seen = f.result()
                top = max(top, t)
                bar.update(seen)
            level += 1
            if top > DMASK:
                raise OverflowError("distance beyond 16383 plies: the value format cannot hold it")
    for f in [run.submit(_task, "finish", lo, hi, glo, ghi) for lo, hi in chunks]:
        f.result()
