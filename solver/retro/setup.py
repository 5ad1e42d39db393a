"""Solving the setup game (RULES.md §5 ``setup``) exactly, on top of the rotation phase.

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

from solver.game.config import Config, symmetry_classes
from solver.index import Layout
from solver.kernels.geometry import Geo, build_geo
from solver.retro.driver import SolveReport, TierSummary, summarise, solve, _ranges
from solver.db.store import Store

OFFER, LAST = 0, 1


def placement_geo(cfg: Config) -> tuple[Geo, np.ndarray, np.ndarray]:
    """Index geometry over the points outside the centre: ``(geo, keep, back)``."""
    board = cfg.board
    back = np.array([q for q in range(board.size) if q not in board.centre], dtype=np.int64)
    keep = np.full(board.size, -1, dtype=np.int64)
    keep[back] = np.arange(len(back))
    plain, _ = symmetry_classes(cfg)
    n = len(back)
    permbits = np.zeros((len(plain), n), dtype=np.uint64)
    for g, sym in enumerate(plain):
        for j, q in enumerate(back):
            permbits[g, j] = np.uint64(1) << np.uint64(keep[sym[q]])
    full = build_geo(cfg)
    geo = full._replace(
        npoints=n,
        perm=np.array([[keep[sym[q]] for q in back] for sym in plain], dtype=np.int64),
        permbits=permbits,
        swap=np.arange(n, dtype=np.int64),
        swap_identity=True,
        sides=2,
    )
    return geo, keep, back


def placement_tiers(K: int, reading: str) -> list[tuple[int, int, int]]:
    """Tiers ``(side to place, its balls, the other's)`` from the top layer down."""
    tiers = [(0, K, K)] if reading == "offer" else []
    for n in range(2 * K - 1, -1, -1):
        tiers.append((0, n // 2, n // 2) if n % 2 == 0 else (1, n // 2, n // 2 + 1))
    return tiers


def layer_key(t) -> str:
    return f"place:{t.key}"


class Placement:
    """The placement layers of a setup configuration: layout, geometry, kernel arguments."""

    def __init__(self, cfg: Config):
        if cfg.setup is None or cfg.balls is None:
            raise ValueError("the setup game needs --setup offer|last and a number of balls")
        self.cfg = cfg
        self.K = cfg.balls
        self.geo, self.keep, self.back = placement_geo(cfg)
        self.layout = Layout(cfg, (self.K, self.K), geo=self.geo, tiers=placement_tiers(self.K, cfg.setup))

    def index(self, x: int, o: int, turn: int) -> int:
        from solver.kernels.setup import squeeze

        mover, opp = (x, o) if turn == 0 else (o, x)
        return self.layout.index(int(squeeze(np.uint64(mover), self.keep)), int(squeeze(np.uint64(opp), self.keep)), turn)


def solve_setup(
    cfg: Config, db_path: str | os.PathLike, jobs: int = 1, progress: bool = True, executor: str = "process"
) -> SolveReport:
    """Solve the rotation phase, then every placement layer, into one database.

    Placement layers are cheap next to the rotation phase; their ranges go to threads
    (the kernel releases the GIL) whatever ``executor`` the rotation phase uses.
    """
    from tqdm import tqdm

    from solver.kernels.setup import place_range

    start = time.perf_counter()
    report = solve(cfg, db_path, jobs=jobs, progress=progress, executor=executor)
    rot = Layout(cfg)
    place = Placement(cfg)
    lay = place.layout
    store = Store(db_path)
    try:
        rot_vals = np.empty(max(rot.total, 1), dtype=np.uint16)
        for i, t in enumerate(rot.tiers):
            rot_vals[t.base : t.base + t.size] = store.read_tier(i, t.size)
        finished = store.meta_items("tier:")
        vals = np.zeros(max(lay.total, 1), dtype=np.uint16)
        full_geo = rot.geo
        board = cfg.board
        args = (
            cfg.balls,
            OFFER if cfg.setup == "offer" else LAST,
            place.geo,
            lay.lay,
            place.keep,
            place.back,
            np.uint64(board.full),
            np.uint64(board.centre_mask),
            full_geo.traps,
            rot_vals,
            full_geo,
            rot.lay,
        )
        summaries: list[TierSummary] = []
        solved_now = list(report.solved_now)
        pool = ThreadPoolExecutor(max(1, jobs))
        try:
            for i, t in enumerate(lay.tiers):
                no = len(rot.tiers) + i
                key = layer_key(t)
                if key in finished:
                    vals[t.base : t.base + t.size] = store.read_tier(no, t.size)
                    summaries.append(TierSummary.from_meta(finished[key]))
                    continue
                t0 = time.perf_counter()
                chunks = _ranges(t.base, t.base + t.size, max(1, jobs) * 4)
                n = board.size
                with tqdm(total=t.size, desc=key, unit="pos", unit_scale=True, disable=not progress, leave=False) as bar:
                    futures = [
                        (
                            pool.submit(
                                place_range, vals, lo, hi, *args, np.empty(n, np.int64), np.empty(n, np.uint16)
                            ),
                            hi - lo,
                        )
                        for lo, hi in chunks
                    ]
                    for f, size in futures:
                        f.result()
                        bar.update(size)
                summary = summarise(vals, t, time.perf_counter() - t0)
                summary.key = key
                store.write_tiers([(no, vals[t.base : t.base + t.size], key, summary.meta())])
                summaries.append(summary)
                solved_now.append(key)
        finally:
            pool.shutdown()
        root = vals[lay.tiers[-1].base]
        report.tiers = report.tiers + summaries
        report.solved_now = solved_now
        report.seconds = time.perf_counter() - start
        report.db_bytes = store.size_on_disk()
        report.root_code = int(root)  # type: ignore[attr-defined]
        return report
    finally:
        store.close()
