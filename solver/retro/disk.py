"""The lean solve out of core: partitions on disk, a memory budget, sequential traffic.

The lean solve (:mod:`solver.retro.lean`) keeps a byte a position of the whole
configuration in memory. Under a memory budget that does not hold it (``rotary solve
--memory 100M``) the group's cells live in files instead, cut into P contiguous
partitions by index (:func:`~solver.retro.parts.part_bounds`, as the Ray lean solve cuts
them among its actors), P the least that keeps one partition and the fixed buffers
within the budget. One partition is in memory at a time, read and written whole, so
every byte moves sequentially (:class:`~solver.retro.disk_parts.PartFiles`):

1. *counters* — each partition in turn is valued
   (:func:`~solver.kernels.lean_disk.init_block8`) and written: one write of the cells.
2. *plies* — ply L is one pass over the partitions in index order. A partition is loaded
   only where it has work: updates waiting for it, or cells decided at L. Loaded, it
   first applies the updates waiting for it (:func:`~solver.kernels.lean_partition.apply8`,
   each with the ply that sent it), then takes its positions decided at L
   (:func:`~solver.kernels.lean_partition.emit8`): it marks them done, logs them in its
   own ply log (:class:`~solver.retro.spill.PlyLog`: a position's distance is the ply that
   took it), applies at once the updates that fall inside itself, and appends the others
   to the bucket files of their destination partitions
   (:class:`~solver.retro.disk_parts.Buckets`); then it is written back. The order is
   exact for the reason the Ray solve's rounds are: applying ply L's updates writes only
   codes of ply L + 1's parity, which ply L's scans do not take, so an update may be
   applied before or after its destination's own scan of the same ply; it is applied
   before that destination's scan of ply L + 1, as every update of ply L is (those sent
   backwards wait for the next pass). The plies end when no ply is left to run and no
   update waits.
3. *merge* — twice, window by window: the partitions' cells (win, loss, draw, no
   position) and their ply logs (the distances) give the uint16 values, counted per tier,
   then merged again as the database writer asks for them: the same bits as the
   in-memory solves.

A ply whose updates would hold more than the plan's room on disk
(:mod:`solver.retro.disk_budget`) takes several passes, each partition going on from its
cursor. The disk mode solves groups without lower tiers — the base rules, where no ball
leaves the board, in one group — and runs on one core. With checkpoints (on unless
``--checkpoint off``; the disk mode ignores their interval) one is taken after every
partition written, in every pass (:mod:`solver.retro.disk_checkpoint`): a kill at any
point loses one partition's work, and a full disk stops the solve in one line; a rerun
resumes from the last one. The merge's writing pass removes each partition (its cells and
ply log) once its values are in the database, so that the database takes the room of the
cells as it grows.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import numpy as np

from solver.db.header import db_header, describe, open_for_solve
from solver.db.store import BLOCK
from solver.errors import UsageError
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.kernels.lean import as_words8, window_codes
from solver.kernels.retro import count_values
from solver.retro.budget import gb, table_bytes
from solver.retro.disk_budget import ROOM, ROOM_MIN, disk_plan, free_bytes
from solver.retro.checkpoint import resumed_seconds
from solver.retro.disk_parts import Buckets, PartFiles
from solver.retro.parts import part_bounds
from solver.retro.report import (
    ProgressBar, SolveReport, TierSummary, peak_memory_kb, summary_from_counts, write_tiers, group_name,
)
from solver.retro.signals import held_interrupts
from solver.retro.spill import PlyLog

FOLDER = "disk.tmp"  # the disk mode's files, in the database folder
STEP = 1 << 20  # cells valued at a time in the counters pass (for the bar)
WINDOW = 1 << 22  # cells merged at a time


def check_layout(layout: Layout) -> None:
    """The disk mode solves configurations of one group (no lower tiers)."""
    if len(layout.groups) != 1:
        raise UsageError(
            f"{describe(layout)}: the disk mode (--memory below the in-memory need) solves rules where no ball leaves "
            "the board (no --edge or --capture); give more memory"
        )


class DiskSolve:
    """The state of a disk-mode solve: partitions, buckets, ply logs, what each partition
    has to do."""

    def __init__(self, layout: Layout, folder: Path, bounds: np.ndarray, cap: int, keep_spent: bool,
                 slots=None, buckets=None, logs=None):
        self.layout, self.folder, self.bounds, self.cap = layout, folder, bounds, cap
        self.parts = len(bounds) - 1
        self.files = PartFiles(folder, bounds, slots, two_slots=keep_spent)
        self.buckets = Buckets(folder, keep_spent, buckets)
        self.logs = logs or [PlyLog(self._log_folder(r, fresh=True)) for r in range(self.parts)]
        self.live: list[set[int]] = [set() for _ in range(self.parts)]  # plies with cells to take, by partition
        self.top = -1  # the longest distance known
        self.cursor: list[int] | None = None  # inside a ply: where each partition's scan goes on
        self.epoch = 0  # passes run (bucket files are named by the pass that wrote them)
        self.room = max(ROOM_MIN, int(self.files.total * ROOM))  # update bytes waiting on disk at most (the plan's)
        self.cells = np.empty(max(int(np.diff(bounds).max()), 8), np.uint8)  # the one partition in memory
        self.taken = np.empty(cap, np.int64)
        self.at: int | None = None  # inside a pass: the next partition
        self.counted = 0  # partitions the counters pass has valued
        self.invalid = 0  # cells that are no position (of the partitions valued)
        self.freed = 0  # partitions merged into the database and removed
        self.changed: set[int] = set()  # partitions whose ply log grew since the last checkpoint

    def _log_folder(self, r: int, fresh: bool = False) -> Path:
        folder = self.folder / f"p{r}"
        if fresh:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        return folder

    def traffic(self) -> int:
        f, b = self.files, self.buckets
        return f.read_bytes + f.written_bytes + b.read_bytes + b.written_bytes

    def close(self) -> None:
        for log in self.logs:
            if log is not None:
                log.close()

    def free(self, r: int) -> None:
        """Partition ``r`` is in the database: its cells and ply log are removed."""
        self.files.drop(r)
        if self.logs[r] is not None:
            self.logs[r].close()
            self.logs[r] = None
        shutil.rmtree(self._log_folder(r), ignore_errors=True)
        self.freed = r + 1

    def bytes_on_disk(self) -> int:
        """The disk mode's files, all of them (the tests' measure of what it holds)."""
        return sum(p.stat().st_size for p in self.folder.rglob("*") if p.is_file())

    # ---------------------------------------------------------------- counters

    def counters(self, bar: ProgressBar, after=None) -> None:
        """Value every partition (from the first not yet valued); ``after(r)``: called
        after partition ``r`` is written (a checkpoint)."""
        from solver.kernels.lean_disk import init_block8

        lay = self.layout
        buf = np.empty(6 * lay.geo.npoints, np.int64)
        for r in range(self.counted, self.parts):
            lo, hi = int(self.bounds[r]), int(self.bounds[r + 1])
            cells = self.cells[: hi - lo]
            decided = invalid = 0
            for a in range(lo, hi, STEP):
                b = min(a + STEP, hi)
                with held_interrupts():
                    d, bad = init_block8(cells[a - lo : b - lo], a, b, lay.geo, lay.lay, buf)
                if d < 0:
                    raise AssertionError("a lower-tier child in a group of the disk mode: a bug in its checks")
                decided, invalid = decided + int(d), invalid + int(bad)
                bar.add(b - a)
            if decided:
                self.live[r].add(0)
                self.top = max(self.top, 0)
            self.files.write(r, cells, first=True)
            self.counted, self.invalid = r + 1, self.invalid + invalid
            if after is not None:
                after(r)

    # ---------------------------------------------------------------- plies

    def ply(self, level: int, after=None) -> int:
        """Ply ``level``: one pass over the partitions, or more where its updates would
        hold more than :attr:`room` bytes on disk at once (each pass then goes on from
        where the last stopped in each partition); the positions it took.
        ``after(r, taken)``: called after partition ``r`` is written back (a checkpoint)."""
        if self.cursor is None:  # a ply begins (a resumed one goes on from its cursors)
            self.cursor = [int(self.bounds[r]) if level in self.live[r] else int(self.bounds[r + 1])
                           for r in range(self.parts)]
            for r in range(self.parts):
                self.live[r].discard(level)
        seen = 0
        while True:
            seen += self._pass(level, after)
            if all(self.cursor[r] >= self.bounds[r + 1] for r in range(self.parts)):
                break
        self.cursor = None
        return seen

    def _pass(self, level: int, after) -> int:
        from solver.kernels.lean_partition import emit8

        lay = self.layout
        if self.at is None:  # a pass begins (a resumed one goes on from its next partition)
            self.at = 0
            self.epoch += 1
        e = self.epoch - 1
        seen = 0
        while self.at < self.parts:
            r = self.at
            lo, hi = int(self.bounds[r]), int(self.bounds[r + 1])
            if self.cursor[r] >= hi and not self.buckets.waiting(r):
                self.at = r + 1
                continue
            cells = self.files.read(r, self.cells)
            for sent, updates in self.buckets.take(r, e):
                self._apply(r, cells, lo, sent, updates)
            if level in self.live[r]:  # the ply before's last updates decided some at this ply
                self.live[r].discard(level)
                if self.cursor[r] >= hi:
                    self.cursor[r] = lo
            words = as_words8(cells)
            took = 0
            while self.cursor[r] < hi and self.buckets.outstanding() < self.room:
                with held_interrupts():
                    updates, cuts, n, at = emit8(cells, words, lo, self.cursor[r], hi, level, lay.geo, lay.lay,
                                                 self.cap, self.bounds, self.taken)
                self.cursor[r] = int(at)
                self.logs[r].add(level, self.taken[:n])
                took += int(n)
                for j in range(self.parts):
                    batch = updates[cuts[j] : cuts[j + 1]]
                    if j == r:
                        self._apply(r, cells, lo, level, batch)
                    else:
                        self.buckets.add(j, e, level, batch)
            self.files.write(r, cells)
            self.changed.add(r)
            self.at = r + 1
            seen += took
            if after is not None:
                after(r, took)
        self.at = None
        return seen

    def _apply(self, r: int, cells: np.ndarray, lo: int, level: int, updates: np.ndarray) -> None:
        from solver.kernels.lean_partition import apply8

        if not len(updates):
            return
        with held_interrupts():
            top, _ = apply8(cells, lo, level, updates, False)
        if top >= 0:
            self.live[r].add(int(top))
            self.top = max(self.top, int(top))

    def more(self, level: int) -> bool:
        """Whether ply ``level`` has anything to do."""
        return level <= self.top or self.buckets.any_waiting()

    # ---------------------------------------------------------------- merge

    def window(self, a: int, b: int, out: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """``out[:b - a]``: the uint16 values of ``a..b`` (global, inside one partition)."""
        r = int(np.searchsorted(self.bounds, a, side="right")) - 1
        lo = int(self.bounds[r])
        win = self.files.read_window(r, a - lo, b - lo, cells)
        o = out[: b - a]
        with held_interrupts():
            window_codes(win, 0, b - a, o)
        log = self.logs[r]
        for level in log.levels:
            for run in log.positions(level, a - lo, b - lo):
                o[run - (a - lo)] |= np.uint16(level)
        if np.any(o == 0xFFFF):
            raise AssertionError("a decided position no ply took: a bug in the disk mode")
        return o

    def pieces(self, base: int, size: int):
        """Windows ``(a, b)`` of ``base..base + size`` that do not cross a partition."""
        a, end = base, base + size
        while a < end:
            r = int(np.searchsorted(self.bounds, a, side="right")) - 1
            b = min(end, a + WINDOW, int(self.bounds[r + 1]))
            yield a, b
            a = b


class DiskValues:
    """A tier's uint16 values for the store's writer, merged a window at a time."""

    def __init__(self, solve: DiskSolve, base: int, size: int):
        self.solve, self.base, self.size = solve, base, size
        self._lo, self._window = 0, np.empty(0, np.uint16)
        self._out = np.empty(WINDOW, np.uint16)
        self._cells = np.empty(WINDOW, np.uint8)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, part: slice) -> np.ndarray:
        lo, hi = part.start or 0, min(part.stop, self.size)
        if not (self._lo <= lo and hi <= self._lo + len(self._window)):
            a = self.base + lo
            r = int(np.searchsorted(self.solve.bounds, a, side="right")) - 1
            b = min(self.base + self.size, max(self.base + hi, a + WINDOW), int(self.solve.bounds[r + 1]))
            if b < self.base + hi:  # the slice crosses a partition: two windows joined
                first = self.solve.window(a, b, self._out, self._cells).copy()
                rest = DiskValues(self.solve, b, self.base + hi - b)[0 : self.base + hi - b]
                self._lo, self._window = lo, np.concatenate([first, rest])
            else:
                if len(self._out) < b - a:
                    self._out, self._cells = np.empty(b - a, np.uint16), np.empty(b - a, np.uint8)
                self._lo, self._window = lo, self.solve.window(a, b, self._out, self._cells)
        return self._window[lo - self._lo : hi - self._lo].copy()


def _traffic_note(solve: DiskSolve, level: int, t0: float) -> str:
    moved = solve.traffic()
    rate = moved / max(time.perf_counter() - t0, 1e-9)
    return f"ply {level}, disk {gb(moved)} moved ({gb(rate)}/s)"


def solve_disk(layout: Layout, db_path, memory: int, progress: bool, start: float,
               checkpoint_s: float | None = None) -> SolveReport:
    """Solve ``layout`` into ``db_path`` with at most ``memory`` bytes of per-position data
    in memory (see the module's note); resumes from the disk mode's last checkpoint."""
    from solver.retro.disk_checkpoint import DiskCheckpoints

    check_layout(layout)
    store = open_for_solve(db_path, layout)
    finished = store.meta_items("tier:")
    folder = Path(db_path) / FOLDER
    ckpt = DiskCheckpoints(folder, db_header(layout), checkpoint_s)
    solve = None
    solved_now: list[str] = []
    try:
        if not all(t.key in finished for t in layout.tiers):
            _, glo, ghi = layout.groups[0]
            tiers = layout.tiers
            name = group_name(tiers)
            t0 = time.perf_counter()

            def make(bounds, cap, slots, buckets, logs):
                return DiskSolve(layout, folder, bounds, cap, True, slots, buckets, logs)

            found = ckpt.load(layout, make) if folder.is_dir() else None
            if found is not None:
                solve, state = found
                free = free_bytes(folder)
                plan = disk_plan(layout.total, memory, True, None if free is None else free + solve.bytes_on_disk())
                solve.room = plan.room
                if progress:
                    print(f"disk mode: resuming {_where(state)} ({solve.parts} partitions, as the checkpoint was cut)",
                          file=sys.stderr)
            else:
                plan = disk_plan(layout.total, memory, checkpoint_s is not None, free_bytes(folder))
                if progress:
                    print(plan.summary(table_bytes(layout)), file=sys.stderr)
                shutil.rmtree(folder, ignore_errors=True)
                try:
                    folder.mkdir(parents=True)
                    solve = DiskSolve(layout, folder, part_bounds(glo, ghi, plan.parts), plan.cap,
                                      checkpoint_s is not None)
                    solve.room = plan.room
                except OSError as e:
                    raise ckpt.error(e) from None
                state = None
            try:
                if state is None or state["stage"] != "merge":
                    _plies(solve, name, state, ckpt, progress, ghi - glo)
                    seconds = time.perf_counter() - t0 + resumed_seconds(state)
                    summaries = _count(solve, tiers, seconds, progress, name)
                    for s in summaries:
                        s.peak_kb = peak_memory_kb()
                    written = {}
                    if ckpt.on:
                        ckpt.save(solve, stage="merge", level=solve.top + 1, summaries=[s.meta() for s in summaries],
                                  written=written)
                else:
                    summaries = [TierSummary.from_meta(m) for m in state["summaries"]]
                    written = dict(state["written"])
                # a transaction's pages are held in memory, and the blocks being compressed: a
                # sixteenth of the budget of values each
                _write(solve, store, summaries, written, ckpt, progress, name, max(8, memory // 16 // (2 * BLOCK)))
            except OSError as e:
                raise ckpt.error(e) from None
            for t, s in zip(tiers, summaries):
                finished[t.key] = s.meta()
                solved_now.append(t.key)
            if progress:
                print(f"disk mode: {gb(solve.files.read_bytes)} of cells read and {gb(solve.files.written_bytes)} "
                      f"written, {gb(solve.buckets.written_bytes)} of updates written and read back", file=sys.stderr)
            solve.close()
            solve = None
            shutil.rmtree(folder, ignore_errors=True)
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        return SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
    finally:
        store.close()
        if solve is not None:
            solve.close()
            if not ckpt.holds:
                shutil.rmtree(folder, ignore_errors=True)


def _where(state: dict) -> str:
    """Where a checkpoint stands, for the line that says a solve resumes."""
    if state["stage"] == "counters":
        return f"in the counters pass, after partition {state['counted'] - 1}"
    if state["stage"] == "merge":
        return f"in the merge, {state['freed']} partitions written to the database"
    at = state["at"]
    return f"at ply {state['level']}" + ("" if at is None else f", before partition {at}")


def _plies(solve: DiskSolve, name: str, state: dict | None, ckpt, progress: bool, cells: int) -> None:
    t0 = time.perf_counter()
    ckpt.start(resumed_seconds(state))
    if state is None or state["stage"] == "counters":
        def counted(r):
            if ckpt.on:
                ckpt.save(solve, stage="counters", level=0, decided=0)

        with ProgressBar(f"{name} counters (disk, {solve.parts} partitions)", cells, "cell", progress,
                         initial=int(solve.bounds[solve.counted] - solve.bounds[0])) as bar:
            solve.counters(bar, counted)
        level, decided = 0, 0
    else:
        level, decided = state["level"], state["decided"]
    resume = {"initial": decided} if decided else {}
    with ProgressBar(f"{name} values (disk, {solve.parts} partitions)", cells - solve.invalid, "pos", progress,
                     eta=False, **resume) as bar:
        def after(r, took):  # a partition written back: a checkpoint (its old slot then removed)
            bar.add(took)
            if ckpt.on:
                ckpt.save(solve, stage="plies", level=level, decided=bar.n)

        while solve.more(level):
            bar.note(_traffic_note(solve, level, t0))
            solve.ply(level, after)
            level += 1
            if solve.top > DMASK:
                raise OverflowError("distance beyond 16383 plies: the value format cannot hold it")
        bar.note(_traffic_note(solve, level, t0) + ", draws")
        bar.add(bar.total - bar.n)


def _write(solve: DiskSolve, store, summaries: list[TierSummary], written: dict, ckpt, progress: bool, name: str,
           step: int) -> None:
    """The values into the database, ``step`` blocks a transaction, tier after tier (in
    index order) from where ``written`` (blocks of each tier) says; each partition whose
    positions are all written is removed, after a checkpoint that says so."""
    tier_no = {t.key: i for i, t in enumerate(solve.layout.tiers)}
    tiers = sorted(solve.layout.tiers, key=lambda t: t.base)
    out = [(tier_no[t.key], DiskValues(solve, t.base, t.size), t.key, s.meta())
           for t, s in zip(solve.layout.tiers, summaries)]
    by_key = {key: (no, values, meta) for no, values, key, meta in out}
    total = sum(t.size for t in tiers)
    before = sum(min(written.get(t.key, 0) * BLOCK, t.size) for t in tiers)
    with ProgressBar(f"{name} write", total, "pos", progress, initial=before) as bar:
        for t in tiers:
            no, values, _ = by_key[t.key]
            first = written.get(t.key, 0)
            for done in store.write_blocks(no, values, t.key, step, first):
                at = t.base + min(done * BLOCK, t.size)  # every position below is written
                bar.add(min(done * BLOCK, t.size) - min(first * BLOCK, t.size))
                first = written[t.key] = done
                gone = solve.freed
                while gone < solve.parts and solve.bounds[gone + 1] <= at:
                    gone += 1
                if gone > solve.freed:
                    store.sync_blocks(f"tier {t.key}")
                    if ckpt.on:
                        ckpt.save(solve, stage="merge", level=solve.top + 1, freed=gone,
                                  summaries=[s.meta() for s in summaries], written=written)
                    for r in range(solve.freed, gone):
                        solve.free(r)
    store.write_records([(no, values, key, meta) for no, values, key, meta in out])

def _count(solve: DiskSolve, tiers, seconds: float, progress: bool, name: str) -> list[TierSummary]:
    out = np.empty(WINDOW, np.uint16)
    cells = np.empty(WINDOW, np.uint8)
    summaries = []
    total = sum(t.size for t in tiers)
    with ProgressBar(f"{name} merge (disk)", total, "pos", progress) as bar:
        for t in tiers:
            wins, losses = np.zeros(DMASK + 1, np.int64), np.zeros(DMASK + 1, np.int64)
            draws = invalid = 0
            for a, b in solve.pieces(t.base, t.size):
                o = solve.window(a, b, out, cells)
                with held_interrupts():
                    w, lo_, d, bad = count_values(o, 0, b - a, DMASK)
                wins += w
                losses += lo_
                draws += int(d)
                invalid += int(bad)
                bar.add(b - a)
            summaries.append(summary_from_counts(t.key, t.size, (wins, losses, draws, invalid),
                                                 seconds * t.size / max(1, total)))
    return summaries
