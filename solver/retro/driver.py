"""Solving a configuration by retrograde analysis: the driver around the kernels.

Groups of tiers (see :mod:`solver.index`) are solved in order of total material;
each finished group goes into the database in one transaction, so ``solve`` can be
killed at any moment and rerun: finished groups are read back, the rest solved.

Parallelism: each phase of a group (counters, each ply, finish) is split into index ranges
and handed to a ``concurrent.futures`` executor. By default the workers are *threads* of
this process: the kernels let go of the GIL, and threads share the layout and need no
inter-process queue (whose feeder threads would compete with the workers for the cores,
making processes the slower executor on one machine); the value array of the whole
configuration is then this process's own memory, on huge pages
(:func:`~solver.retro.pool.private_values`). With ``executor="process"`` the workers are
processes started with ``spawn`` (never ``fork``: numba's threading layers and open LMDB
environments must not cross a fork); each builds its own layout and maps the same value
file (``/dev/shm`` where there is one). Cross-range updates are atomic compare-and-swap, so any
executor gives the same result.

Long groups: at a ply boundary, every ``checkpoint_s`` seconds, the group's slice of the
value array is saved in the database folder (:mod:`solver.retro.checkpoint`); a rerun
after a kill resumes that group at that ply.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from concurrent.futures import Executor, ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np

from solver.db.header import db_header, describe, open_for_solve
from solver.db.store import SolveLock
from solver.errors import UsageError
from solver.game.config import Config, config_from_key
from solver.index import Layout
from solver.kernels.code import DMASK, INVALID
from solver.kernels.retro import as_words, count_values, finish_range, init_range, level_range
from solver.memory import return_large_frees
from solver.retro.budget import LEAN_FIXED, finished_tiers, plan
from solver.retro.checkpoint import EVERY_S, Checkpoints, resumed_seconds
from solver.retro.lean import solve_lean
from solver.retro.lean_checkpoint import LeanCheckpoints
from solver.retro.spill import FOLDER, remove_temp
from solver.retro.shape import Shape
from solver.retro.signals import held_interrupts
from solver.retro.cluster import solve_ray  # imports ray itself only when a Ray solve starts
from solver.retro.pool import (
    SMALL_GROUP, InlineExecutor, completed, private_values, shared_values, spawn_pool, split_range,
)
from solver.retro.report import (
    ProgressBar, SolveReport, TierSummary, peak_memory_kb, ply_note, summarise, time_left, write_tiers, group_name,
)

LIST_MAX = 1 << 22  # positions a ply lists for the next one at most (32 MB); more: it scans
LIST_CHUNK = 1 << 16  # listed positions per task at most
CHUNK = 1 << 19  # index cells per task at most: each bar moves after every task (~1 s)
BUILD_BAR = 1 << 22  # mover sets above which the index build shows a bar (about 4 s)

_STATE: dict = {}


# ---------------------------------------------------------------------------- worker side


def _attach(cfg_key: dict, material: tuple[int, int], path: str, total: int) -> None:
    """Executor initializer: build the layout and map the shared value file."""
    cfg = config_from_key(cfg_key)
    return_large_frees()
    _STATE["layout"] = Layout(cfg, material)
    _STATE["vals"] = np.memmap(path, dtype=np.uint16, mode="r+", shape=(total,))


def _task(kind: str, lo: int, hi: int, glo: int, ghi: int, level: int = 0, idx: np.ndarray | None = None):
    lay: Layout = _STATE["layout"]
    vals = _STATE["vals"]
    n = 6 * lay.geo.npoints
    if kind == "init":
        top = init_range(vals, lo, hi, glo, ghi, lay.geo, lay.lay, np.empty(n, np.int64))
        # cells that are no position of the game (capture: a ball on a trap of the other colour)
        invalid = int(np.count_nonzero(np.asarray(vals[lo:hi]) == INVALID)) if lay.cfg.capture else 0
        return top, hi - lo, invalid, lo
    if kind == "level":
        scratch = (*(np.empty(n, np.int64) for _ in range(4)), np.empty(n, np.uint64), np.empty(n, np.uint64))
        ahead = np.empty(LIST_MAX + 1, np.int64)  # only the pages written are ever taken
        ahead[0] = 0
        far = np.zeros(DMASK + 2, np.uint8)
        at = idx if idx is not None else np.empty(0, np.int64)
        top, seen = level_range(vals, as_words(vals), lo, hi, at, glo, level, lay.geo, lay.lay, *scratch, ahead, far)
        listed = ahead[1 : ahead[0] + 1].copy() if ahead[0] <= LIST_MAX else None
        return top, seen, listed, [int(d) for d in np.flatnonzero(far)]
    finish_range(vals, lo, hi)
    return -1, hi - lo


# ---------------------------------------------------------------------------- driver


def solve(
    cfg: Config,
    db_path: str | os.PathLike,
    jobs: int = 1,
    material: tuple[int, int] | None = None,
    progress: bool = True,
    executor: str = "thread",
    address: str | None = None,
    checkpoint_s: float | None = EVERY_S,
    force: bool = False,
    lean: bool | None = None,
    memory: int | None = None,
) -> SolveReport:
    """Solve every position of ``cfg`` into the database at ``db_path`` (resuming).

    ``executor``: ``thread`` (threads of this process), ``process`` (spawned workers
    sharing one value file), or
    ``ray`` (partitioned actors, :mod:`solver.retro.cluster`; ``address`` joins a running
    Ray cluster, otherwise an embedded one is started). The folder is locked for the whole
    solve (:class:`~solver.db.store.SolveLock`): a second solve into it is refused at once.

    ``checkpoint_s``: inside a group, save its state at a ply boundary at most this often
    (seconds; 0: at every boundary; None: never) — process and thread executors only.

    Before anything is written — before the index is built — what the solve needs is
    compared with what the machine has (:mod:`solver.retro.budget`): one line on stderr
    with ``progress``, and a :class:`~solver.errors.ResourceError` where memory,
    ``/dev/shm`` or disk is short (``force``: go on all the same).

    ``lean``: solve in one byte a position (:mod:`solver.retro.lean`, threads, with its own
    checkpoints, :mod:`solver.retro.lean_checkpoint`; on Ray :mod:`solver.retro.cluster_lean`);
    None: where the two-byte solve does not fit in memory and the lean one does, or where a
    lean solve left a checkpoint and the lean solve fits (on Ray: where the cluster's memory
    holds one byte a position and not two).

    ``memory``: a budget in bytes for the per-position arrays (None: what the machine
    has, as above). Where it holds two bytes a position the two-byte solve runs (unless
    ``lean``), where it holds one the lean solve, else the lean solve's disk mode
    (:mod:`solver.retro.disk`): partitions on disk, one in memory at a time.
    """
    if executor == "ray":
        report = solve_ray(cfg, db_path, jobs=jobs, material=material, progress=progress, address=address, lean=lean)
        Checkpoints(db_path, {}).clear()  # one a process solve left there is spent: every group is in
        return report
    start = time.perf_counter()
    shape = Shape(cfg, material if material is not None else (cfg.balls, cfg.balls))
    if lean and executor == "process":
        raise UsageError("the lean solve runs with threads or on Ray: leave out --executor process")
    finished = finished_tiers(db_path, db_header(shape))
    if memory is None and lean is not False and executor == "thread":
        left = _disk_checkpoint(db_path, shape)
        if left is not None:  # a disk-mode solve left a checkpoint: it goes on from it, in its budget
            return _solve_on_disk(cfg, shape, db_path, left, progress, checkpoint_s, force, start)
    if memory is not None and _on_disk(shape, memory, lean, executor):
        return _solve_on_disk(cfg, shape, db_path, memory, progress, checkpoint_s, force, start)
    if memory is not None and lean is None and 2 * shape.total > memory:
        lean = True  # the budget holds one byte a position and not two
    need = plan(shape, db_path, jobs, executor, checkpoint_s is not None, finished, lean)
    if lean is None and need is not None and not need.lean and executor == "thread" and _lean_checkpoint(db_path, shape):
        one = plan(shape, db_path, jobs, executor, checkpoint_s is not None, finished, True)
        if one.mem_available is None or one.memory <= one.mem_available:
            need = one  # a lean solve left a checkpoint: go on from it where the lean solve fits
    if need is not None:  # something to solve: refuse what does not fit, else say what it needs
        if not force:
            need.check()
        if progress:
            print(need.summary(), file=sys.stderr)
    if need is None:  # every tier is in: the records say it all, no index or value array needed
        with SolveLock(db_path):
            return _already_solved(shape, db_path, start)
    return_large_frees()  # tasks' buffers freed in threads would otherwise stay in their arenas
    layout = build_layout(cfg, shape, progress)
    with SolveLock(db_path):
        if need.lean:
            report = solve_lean(layout, db_path, jobs, progress, start, checkpoint_s)
            Checkpoints(db_path, {}).clear()  # one a two-byte solve left there is spent: every group is in
            return report
        return _solve(layout, db_path, jobs, progress, executor, checkpoint_s, start)


def _on_disk(shape: Shape, memory: int, lean: bool | None, executor: str) -> bool:
    """Whether a budget of ``memory`` bytes sends the solve to the disk mode: it does not
    hold the lean solve's byte a position and its buffers."""
    if shape.total + LEAN_FIXED <= memory:
        return False
    if lean is False or executor != "thread":
        raise UsageError(f"--memory {memory:,} bytes holds less than a byte a position: the disk mode is a lean solve "
                         "with threads (leave out --executor)")
    return True


def _solve_on_disk(cfg: Config, shape: Shape, db_path, memory: int, progress: bool, checkpoint_s, force: bool,
                   start: float) -> SolveReport:
    from solver.retro.disk import FOLDER as DISK_FOLDER, check_layout, solve_disk
    from solver.retro.disk_budget import disk_plan, free_bytes

    if all(t.key in finished_tiers(db_path, db_header(shape)) for t in shape.tiers):
        with SolveLock(db_path):  # no index to build (a solve killed after its last record: its files go)
            return _already_solved(shape, db_path, start)
    check_layout(shape)
    folder = Path(db_path) / DISK_FOLDER
    held = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
    free = free_bytes(db_path)
    plan = disk_plan(shape.total, memory, checkpoint_s is not None, None if free is None else free + held)
    if not force and not plan.fits:
        from solver.errors import ResourceError

        raise ResourceError(plan.short())
    return_large_frees()
    layout = build_layout(cfg, shape, progress)
    with SolveLock(db_path):
        return solve_disk(layout, db_path, memory, progress, start, checkpoint_s)


def _disk_checkpoint(db_path, shape: Shape) -> int | None:
    """The budget of the disk-mode solve of these rules that left a checkpoint in
    ``db_path`` (two of its partitions: as the plan cut them), or None."""
    import json

    from solver.retro.disk import FOLDER as DISK_FOLDER
    from solver.retro.disk_checkpoint import NAME, VERSION

    try:
        with open(Path(db_path) / DISK_FOLDER / NAME) as f:
            head = json.load(f)
        if head.get("version") != VERSION or head.get("rules") != db_header(shape):
            return None
        bounds = head["bounds"]
        return 2 * max(b - a for a, b in zip(bounds, bounds[1:]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _lean_checkpoint(db_path, shape: Shape) -> bool:
    """Whether a lean solve of these rules left a checkpoint in ``db_path``."""
    return LeanCheckpoints(Path(db_path) / FOLDER, db_header(shape)).header() is not None


def _already_solved(shape: Shape, db_path, start: float) -> SolveReport:
    store = open_for_solve(db_path, shape)
    try:
        finished = store.meta_items("tier:")
        Checkpoints(db_path, {}).clear()  # a kill between the last commit and its clear left one
        remove_temp(db_path)  # and a lean solve's
        from solver.retro.disk import FOLDER as DISK_FOLDER

        shutil.rmtree(Path(db_path) / DISK_FOLDER, ignore_errors=True)  # and the disk mode's (killed as it ended)
        summaries = [TierSummary.from_meta(finished[t.key]) for t in shape.tiers]
        return SolveReport(describe(shape), summaries, [], time.perf_counter() - start, store.size_on_disk())
    finally:
        store.close()


def build_layout(cfg: Config, shape: Shape, progress: bool) -> Layout:
    """The index of ``shape``, with a bar of the mover sets enumerated where that is
    long (seconds: above :data:`BUILD_BAR` sets)."""
    if not progress or shape.mover_sets < BUILD_BAR:
        with held_interrupts():
            return Layout(cfg, shape.material)
    balls = " and ".join(map(str, shape.movers))
    with ProgressBar(f"index: mover sets of {balls} balls", shape.mover_sets, "set") as bar, held_interrupts():
        return Layout(cfg, shape.material, progress=bar.add)


def _solve(layout: Layout, db_path, jobs, progress, executor, checkpoint_s, start: float) -> SolveReport:
    store = open_for_solve(db_path, layout)
    finished = store.meta_items("tier:")
    ckpt = Checkpoints(db_path, db_header(layout), checkpoint_s)
    path, vals = shared_values(layout.total) if executor == "process" else (None, private_values(layout.total))
    pool: Executor | None = None
    solved_now: list[str] = []
    try:
        _STATE["layout"], _STATE["vals"] = layout, vals
        tier_no = {t.key: i for i, t in enumerate(layout.tiers)}
        for (u, v), glo, ghi in layout.groups:
            tiers = [t for t in layout.tiers if glo <= t.base < ghi]
            if all(t.key in finished for t in tiers):
                for t in tiers:
                    store.read_tier(tier_no[t.key], t.size, out=vals[t.base : t.base + t.size])
                continue
            t0 = time.perf_counter()
            if jobs > 1 and ghi - glo >= SMALL_GROUP and pool is None:
                pool = _make_pool(jobs, executor, layout, path)
            run = pool if (pool is not None and ghi - glo >= SMALL_GROUP) else InlineExecutor()
            resumed = ckpt.load(vals, glo, ghi, group_name(tiers))
            _solve_group(run, vals, glo, ghi, max(jobs, 1), tiers, progress, ckpt, resumed)
            seconds = time.perf_counter() - t0 + resumed_seconds(resumed)
            out = []
            for t in tiers:
                with held_interrupts():
                    summary = summarise(vals, t, seconds * t.size / max(1, ghi - glo))
                summary.peak_kb = peak_memory_kb()
                out.append((tier_no[t.key], np.asarray(vals[t.base : t.base + t.size]), t.key, summary.meta()))
                finished[t.key] = summary.meta()
                solved_now.append(t.key)
            write_tiers(store, out, group_name(tiers), progress)
            ckpt.clear()  # the group is in the database: its checkpoint is spent
        ckpt.clear()  # a checkpoint of a group finished before (a kill between commit and clear)
        remove_temp(db_path)  # a lean solve's temporary folder is spent too: every group is in
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        return SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)  # an interrupted ply: only the running tasks finish
        store.close()
        _STATE.clear()
        del vals
        if path is not None:
            Path(path).unlink(missing_ok=True)


def _make_pool(jobs: int, executor: str, layout: Layout, path: str) -> Executor:
    if executor == "thread":
        return ThreadPoolExecutor(jobs)
    pool = spawn_pool(jobs, _attach, (layout.cfg.key(), layout.material, path, layout.total))
    # start every worker now (spawn, imports, layout: seconds), not inside the first bar,
    # whose rate and time left would otherwise count the start-up as work
    wait([pool.submit(_ready) for _ in range(jobs)])
    return pool


def _ready() -> bool:
    return True


def group_chunks(glo: int, ghi: int, jobs: int) -> list[tuple[int, int]]:
    """The tasks of one phase of a group: ``jobs * 8`` ranges for a pool (load balance),
    and never more than :data:`CHUNK` cells each, even inline, so the bars keep moving."""
    parts = jobs * 8 if ghi - glo >= SMALL_GROUP else 1
    return split_range(glo, ghi, max(parts, -(-(ghi - glo) // CHUNK)))


def _results(run: Executor, arglist):
    """``_task(*args)`` for each of ``arglist``, yielded as they finish. Inline (``-j 1``)
    each runs when its result is asked for, so a bar moves between tasks."""
    if isinstance(run, InlineExecutor):
        for args in arglist:
            with held_interrupts():  # a Ctrl-C is raised between tasks, never inside a kernel
                done = _task(*args)
            yield done
        return
    yield from completed(run, _task, arglist)


def _scan_seconds(run: Executor, chunks, glo: int, ghi: int) -> float:
    """What one ply's scan of ``glo..ghi`` takes by itself, for the time left: a ply at a
    distance no cell has (:data:`~solver.kernels.code.DMASK`) decides and updates
    nothing. The least of three runs: the first after the counters pass is the slowest."""
    took = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in _results(run, [("level", lo, hi, glo, ghi, DMASK) for lo, hi in chunks]):
            pass  # nothing is at DMASK: nothing decided, nothing listed
        took.append(time.perf_counter() - t0)
    return min(took)


class Plies:
    """Which positions each ply of a group takes: a scan of the group, or the list the
    ply before made of every position it decided.

    Early in a group a ply decides millions of positions and scans; late in it a ply
    decides a few thousand, and a scan of a multi-GB value array (seconds, for hundreds
    of plies) is most of its time. A ply that decides at most :data:`LIST_MAX` positions
    at the next ply lists them, and the next ply takes that list. The list is complete
    when no position can be at that distance by another way: written by the counters
    pass (or before a resumed checkpoint) — every distance present in the group when
    the plies start is scanned — or decided further ahead by an earlier ply (a loss
    through a lower tier: those distances are noted and scanned). The updates of a ply
    commute, so the values are the same bit for bit.
    """

    def __init__(self, vals, glo: int, ghi: int, level: int):
        wins, losses, _, _ = count_values(vals, glo, ghi, DMASK)
        self.glo, self.ghi = glo, ghi
        self.scan_at = {int(d) for d in np.flatnonzero(wins + losses) if d >= level}
        self.listed: np.ndarray | None = None  # every position decided at the coming ply
        self._next: list[np.ndarray] | None = []
        self._count = 0
        self.listed_plies = 0  # plies that took a list (for tests and reports)

    def tasks(self, level: int, chunks, jobs: int) -> list[tuple]:
        """The tasks of ply ``level``: list slices where the list is complete, else the scan
        of ``chunks`` (the group's ranges)."""
        glo, ghi = self.glo, self.ghi
        self._next, self._count = [], 0
        order, self.listed = self.listed, None
        if order is None or level in self.scan_at:
            return [("level", lo, hi, glo, ghi, level) for lo, hi in chunks]
        self.listed_plies += 1
        if not len(order):  # nothing decided at this ply: one task over no cells, so every ply runs one
            return [("level", glo, glo, glo, ghi, level)]
        parts = max(jobs * 8, -(-len(order) // LIST_CHUNK))
        return [("level", 0, b - a, glo, ghi, level, order[a:b]) for a, b in split_range(0, len(order), parts)]

    def take(self, listed: np.ndarray | None, far: list[int]) -> None:
        """What one task decided for the plies to come."""
        self.scan_at.update(far)
        if self._next is None:
            return
        if listed is None or self._count + len(listed) > LIST_MAX:
            self._next = None  # too many to list: the next ply scans
            return
        self._next.append(listed)
        self._count += len(listed)

    def end_ply(self) -> None:
        """The ply is done: its list, sorted (cells in index order, as a scan meets them), is the next ply's."""
        if self._next is not None:
            listed = np.sort(np.concatenate(self._next)) if self._next else np.empty(0, np.int64)
            # each position is decided once (its compare-and-swap succeeds once): a repeat
            # would be propagated twice. (np.unique would sort too, with a hash: 20x slower.)
            if len(listed) > 1 and bool(np.any(listed[1:] == listed[:-1])):
                raise AssertionError("a position listed twice for one ply: a bug in the kernels")
            self.listed = listed
        self._next = None


def merge_ranges(ranges) -> list[tuple[int, int]]:
    """``(lo, hi)`` ranges sorted, touching ones joined."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _not_done(glo: int, ghi: int, done, jobs: int) -> list[tuple[int, int]]:
    """The counters tasks of ``glo..ghi`` outside the ranges ``done``."""
    out, at = [], glo
    for lo, hi in [*merge_ranges(done), (ghi, ghi)]:
        if lo > at:
            out += group_chunks(at, lo, jobs)
        at = max(at, hi)
    return out


def _solve_group(run: Executor, vals, glo, ghi, jobs, tiers, progress: bool, ckpt: Checkpoints | None = None,
                 resumed: dict | None = None) -> None:
    """One group: counters, then ply by ply, then draws. Two bars, each counting what its
    label says and ending at 100 %: ``counters`` the index cells of the group, ``values``
    the group's positions whose value is known (the draws are known at the end). The
    values bar shows the rate, the ply, what the ply before decided, the positions left
    and, once the plies' counts fall, the time left they suggest (:func:`time_left`).

    ``ckpt``: save the group's state when due — between tasks of the counters pass (its
    ranges are independent: the finished ones are listed), at ply boundaries after it;
    ``resumed``: the header of the checkpoint already loaded into ``vals``, whose
    counters pass or ply the group goes on with."""
    name = group_name(tiers)
    chunks = group_chunks(glo, ghi, jobs)
    cells = ghi - glo
    if ckpt is not None:
        ckpt.start_group(resumed_seconds(resumed))
    if resumed is not None and resumed.get("phase", "plies") == "plies":
        level, top, invalid, decided = (resumed[k] for k in ("level", "top", "invalid", "decided"))
    else:
        done = [tuple(r) for r in resumed["done"]] if resumed is not None else []
        top, invalid = (resumed["top"], resumed["invalid"]) if resumed is not None else (-1, 0)
        todo = _not_done(glo, ghi, done, jobs)
        start = {"initial": sum(hi - lo for lo, hi in done)} if done else {}
        with ProgressBar(f"{name} counters", cells, "cell", progress, **start) as bar:
            for t, n, bad, lo in _results(run, [("init", lo, hi, glo, ghi) for lo, hi in todo]):
                top = max(top, t)
                invalid += bad
                bar.add(n)
                done = merge_ranges([*done, (lo, lo + n)])
                if ckpt is not None and bar.n < cells and ckpt.due():
                    ckpt.save(vals, glo, ghi, name, 0, top, invalid, 0, done=done)
        level, decided = 0, 0
        if ckpt is not None and ckpt.due():
            ckpt.save(vals, glo, ghi, name, level, top, invalid, decided)
    resume = {"initial": decided} if decided else {}
    with ProgressBar(f"{name} values", cells - invalid, "pos", progress, eta=False, **resume) as bar:
        per_ply: list[int] = []  # positions decided at each ply run here, and its seconds
        ply_seconds: list[float] = []
        eta = None
        scan = _scan_seconds(run, chunks, glo, ghi) if cells >= SMALL_GROUP else None
        with held_interrupts():
            plies = Plies(vals, glo, ghi, level)
        while level <= top:
            before = per_ply[-1] if per_ply else None  # what the ply before decided, once one ran here
            bar.note(ply_note(level, before, bar.total - bar.n, eta))
            now, t_ply = 0, time.perf_counter()
            for t, seen, listed, far in _results(run, plies.tasks(level, chunks, jobs)):
                top = max(top, t)
                now += seen
                plies.take(listed, far)
                bar.note(ply_note(level, before, bar.total - bar.n - seen, eta))
                bar.add(seen)
            plies.end_ply()
            per_ply.append(now)
            ply_seconds.append(time.perf_counter() - t_ply)
            level += 1
            eta = time_left(per_ply, ply_seconds, scan, top - level + 1) if scan is not None else None
            if top > DMASK:
                raise OverflowError("distance beyond 16383 plies: the value format cannot hold it")
            if level <= top and ckpt is not None and ckpt.due():
                ckpt.save(vals, glo, ghi, name, level, top, invalid, bar.n)
        for _ in _results(run, [("finish", lo, hi, glo, ghi) for lo, hi in chunks]):
            pass
        bar.note("draws")
        bar.add(bar.total - bar.n)  # every position not decided by now is a draw
