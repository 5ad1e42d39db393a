"""The lean solve: one byte a position in memory, the distances on disk.

The two-byte solve (:mod:`solver.retro.driver`) holds every position's value — counter,
win or loss and distance — in a uint16 cell for the whole solve. Here a cell is a byte
(:mod:`solver.kernels.lean`): while its group is solved, a counter or where the position
stands (decided at this ply or the next, decided further ahead, done); once its group
is finished, its exact value where it fits in a byte (distances up to 125 plies) and an
entry of a sorted side table where it does not. Nothing is lost, because

* the distance of a position is the ply that took it: each ply's positions go to disk
  as they are taken (:class:`~solver.retro.spill.PlyLog`, about a byte a position);
* a position decided through a lower tier at a distance ahead of the running ply waits
  on disk for its ply (:class:`~solver.retro.spill.FarLists`), its cell saying only
  ``FAR_WIN`` / ``FAR_LOSS`` (a win that a faster in-group win overtakes is simply
  taken earlier; its entry is passed over when its ply comes);
* when the group's plies are done, its values are merged window by window — the cells
  say win, loss, draw or no position, the ply log adds the distances — counted for the
  tier records, re-encoded into the cells for the groups above, and written to the
  database as uint16 blocks, the same bits as the two-byte solve writes. The last group
  is not re-encoded: no group looks into it, so its long distances need no escapes
  (hex(4) 4v4 base has wins of up to 309 plies); it is merged once, as it is written,
  and counted window by window for its records, which go in after its blocks.

Memory: one byte a position of the configuration, the escaped values of the groups
below the last (10 bytes each; only distances above 125 plies escape, and they are rare
below the last group: the longest of hex(3) 6v6 edge is 127 plies, of hex(4) 4v4 edge
133), and fixed buffers (:data:`solver.retro.budget.LEAN_FIXED`). Temporary
disk: the ply log and far lists of one group, in the database folder
(:func:`~solver.retro.spill.temp_folder`), removed when the group is written, and the
group's checkpoints there: a byte a cell of the group, twice while one replaces the other.

Plies take a list instead of a scan as the two-byte solve does (:class:`LeanPlies`): the
positions the ply before decided at the next ply, and those arriving from the far lists;
a scan where there are more than :data:`LIST_MAX`.

Checkpoints (:mod:`solver.retro.lean_checkpoint`): inside a group, at a ply boundary,
between tasks of the counters pass or between tasks of a ply (none running: a ply's
tasks are submitted a few at a time, :mod:`solver.retro.lean_units`) at most every
``checkpoint_s`` seconds (inside a ply only where it is above 0), the group's cells and
the lengths of its temporary files are saved in the temporary folder; a killed solve's
rerun goes on from there, a solve killed before any checkpoint of its group starts the
group over (finished groups are in the database and are read back). A temporary file
that cannot be written (a full disk) stops the solve in one line, the last checkpoint
kept.
"""

from __future__ import annotations

import time
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from solver.db.header import db_header, describe, open_for_solve
from solver.db.store import BLOCK
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.kernels.lean import (
    MAXC, as_words8, decode_final, encode_final, lean_arrive, lean_init, lean_level, window_codes,
)
from solver.kernels.retro import count_values
from solver.memory import huge_zeros
from solver.retro.budget import LEAN_TEMP_TYPICAL
from solver.retro.checkpoint import resumed_seconds
from solver.retro.lean_checkpoint import LeanCheckpoints, temp_error
from solver.retro.lean_units import Units
from solver.retro.pool import InlineExecutor, split_range
from solver.retro.report import (
    ProgressBar, SolveReport, TierSummary, peak_memory_kb, ply_note, summary_from_counts, group_name,
)
from solver.retro.signals import held_interrupts
from solver.retro.spill import FOLDER, FarLists, PlyLog, remove_temp, temp_folder

LIST_MAX = 1 << 19  # positions a ply lists for the next one at most (4 MB); more: it scans
LIST_CHUNK = 1 << 16  # listed positions per task at most
CHUNK = 1 << 19  # cells per task at most
FAR_ROOM = 1 << 16  # far positions a level task collects before it hands them over
WINDOW = 1 << 21  # cells merged at a time (4 MB of values)
WRITE_STEP = 32  # blocks of the database a write transaction (2 M positions; 4 MB of values compressed at a time)


def fits(layout: Layout) -> bool:
    """Whether a position's in-group moves always fit in a lean counter."""
    pivots = int(layout.geo.pivots).bit_count()
    return 5 * pivots + 1 <= MAXC


class Escapes:
    """The finished values that do not fit in a byte, sorted by position."""

    def __init__(self):
        self._parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.idx, self.val = np.zeros(1, np.int64), np.zeros(1, np.uint16)  # never empty for the kernels
        self.count = 0  # escapes in ``idx`` / ``val``
        self._ei, self._ev = np.empty(0, np.int64), np.empty(0, np.uint16)  # room for a window's

    def encode(self, values: np.ndarray, cells: np.ndarray, base: int) -> None:
        """Finished ``values`` into ``cells[base:]``; the escapes noted (in index order)."""
        if len(self._ei) < len(values):
            self._ei, self._ev = np.empty(len(values), np.int64), np.empty(len(values), np.uint16)
        with held_interrupts():
            n = encode_final(values, cells, base, self._ei, self._ev)
        if n:
            self._parts.append((self._ei[:n].copy(), self._ev[:n].copy()))

    def seal(self) -> None:
        """The table the kernels search, with every escape noted so far."""
        if self._parts:
            self.idx = np.concatenate([self.idx[: self.count]] + [i for i, _ in self._parts])
            self.val = np.concatenate([self.val[: self.count]] + [v for _, v in self._parts])
            self.count = len(self.idx)
            self._parts = []


class TierValues:
    """A finished tier's uint16 values for the store's writer, which asks for them a
    block at a time, in order: decoded a window at a time from the cells' finished codes
    (``log`` None), or merged from the cells' working states and the ply log, each window
    counted once for the tier's record (:meth:`counts`: the whole tier asked for once,
    in order)."""

    def __init__(self, cells: np.ndarray, esc: Escapes, base: int, size: int, log: PlyLog | None = None):
        self.cells, self.esc, self.base, self.size, self.log = cells, esc, base, size, log
        self._lo, self._window = 0, np.empty(0, np.uint16)
        self._counts = [np.zeros(DMASK + 1, np.int64), np.zeros(DMASK + 1, np.int64), 0, 0]
        self._counted = 0  # positions counted: the windows merged so far, from the start

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, part: slice) -> np.ndarray:
        lo, hi = part.start or 0, min(part.stop, self.size)
        if not (self._lo <= lo and hi <= self._lo + len(self._window)):
            end = min(self.size, max(hi, lo + WINDOW))
            self._lo, self._window = lo, None  # the last window goes before the next is made
            self._window = np.empty(end - lo, np.uint16)
            a, b = self.base + lo, self.base + end
            if self.log is None:
                decode_final(self.cells, a, b, self.esc.idx, self.esc.val, self._window)
            else:
                merge_window(self.cells, self.log, a, b, self._window)
                if lo == self._counted:
                    with held_interrupts():
                        w, l_, d, bad = count_values(self._window, 0, end - lo, DMASK)
                    c = self._counts
                    c[0] += w
                    c[1] += l_
                    c[2] += int(d)
                    c[3] += int(bad)
                    self._counted = end
            _at("write", a)
        return self._window[lo - self._lo : hi - self._lo]  # a window is never written again: no copy

    def counts(self):
        """``count_values``' histogram of the tier: every window merged (``log``), in order."""
        if self._counted != self.size:
            raise AssertionError(f"the tier's values were counted up to {self._counted} of {self.size}")
        return tuple(self._counts)


class Group:
    """One group of tiers being solved: the shared state of its tasks."""

    def __init__(self, layout: Layout, cells: np.ndarray, esc: Escapes, glo: int, ghi: int, jobs: int):
        self.layout, self.cells, self.esc, self.glo, self.ghi, self.jobs = layout, cells, esc, glo, ghi, jobs
        self.words = as_words8(cells)
        self.n = 6 * layout.geo.npoints

    def init(self, lo: int, hi: int):
        lay = self.layout
        buf = np.empty(self.n, np.int64)
        fi, fd = np.empty(hi - lo, np.int64), np.empty(hi - lo, np.int64)
        nfar, invalid, top = lean_init(self.cells, lo, hi, self.glo, self.ghi, lay.geo, lay.lay, buf,
                                       self.esc.idx, self.esc.val, fi, fd)
        return lo, hi - lo, invalid, top, fi[:nfar].copy(), fd[:nfar].copy()

    def level(self, lo: int, hi: int, level: int, idx: np.ndarray | None):
        lay = self.layout
        scratch = [np.empty(self.n, np.int64) for _ in range(4)] + [np.empty(self.n, np.uint64) for _ in range(2)]
        ahead = np.empty(LIST_MAX + 1, np.int64)  # only the pages written are ever taken
        ahead[0] = 0
        fi, fd = np.empty(FAR_ROOM, np.int64), np.empty(FAR_ROOM, np.int64)
        at = idx if idx is not None else np.empty(0, np.int64)
        taken = np.empty(max(hi - lo, 1), np.int64)
        far, nt, top, k = [], 0, -1, lo
        while k < hi:
            k, got, nfar, t = lean_level(self.cells, self.words, k, hi, at, self.glo, level, lay.geo, lay.lay,
                                         *scratch, self.esc.idx, self.esc.val, ahead, fi, fd, taken[nt:])
            nt += got
            top = max(top, t)
            if nfar:
                far.append((fi[:nfar].copy(), fd[:nfar].copy()))
        listed = ahead[1 : ahead[0] + 1].copy() if ahead[0] <= LIST_MAX else None
        return taken[:nt].copy(), listed, far, top


def _chunks(lo: int, hi: int, jobs: int) -> list[tuple[int, int]]:
    return split_range(lo, hi, max(jobs * 8 if jobs > 1 else 1, -(-(hi - lo) // CHUNK)))


def _gaps(glo: int, ghi: int, done: list[tuple[int, int]], jobs: int) -> list[tuple[int, int]]:
    """The counters tasks of ``glo..ghi`` outside the ranges ``done`` (sorted, disjoint)."""
    out, at = [], glo
    for lo, hi in [*done, (ghi, ghi)]:
        if lo > at:
            out += _chunks(at, lo, jobs)
        at = max(at, hi)
    return out


def _joined(done: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    """``done`` with ``lo..hi`` added, sorted, touching ranges joined."""
    out: list[tuple[int, int]] = []
    for a, b in sorted([*done, (lo, hi)]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


class Saver:
    """A group's checkpoints: when due, its state saved (:mod:`solver.retro.lean_checkpoint`);
    a write that fails is one line that says where the rerun goes on from."""

    def __init__(self, ckpt: LeanCheckpoints | None, g: Group, name: str, log: PlyLog, far: FarLists,
                 last: dict | None):
        self.ckpt, self.g, self.name, self.log, self.far, self.last = ckpt, g, name, log, far, last

    def due(self) -> bool:
        return self.ckpt is not None and self.ckpt.due()

    def due_inside(self) -> bool:
        """Due inside a ply: only with a positive interval (0 saves at ply boundaries)."""
        return self.ckpt is not None and bool(self.ckpt.every_s) and self.ckpt.due()

    def save(self, **state) -> None:
        g = self.g
        try:
            self.ckpt.save(g.cells, g.glo, g.ghi, self.name, self.log, self.far, state)
        except OSError as e:
            raise self.error(e) from None
        self.last = dict(state, group=self.name)

    def error(self, e: OSError):
        cells = self.g.ghi - self.g.glo
        return temp_error(self.log.path.parent, e, self.last, int(LEAN_TEMP_TYPICAL * cells) + 2 * cells)


def solve_group(run: Executor, g: Group, name: str, log: PlyLog, far: FarLists, progress: bool,
                saver: Saver | None = None, resumed: dict | None = None) -> int:
    """Counters, then ply by ply, the plies' positions into ``log``; the group's largest
    distance. ``saver``: checkpoints when due; ``resumed``: the header of the checkpoint
    the group goes on from (its cells, log and lists restored)."""
    chunks = _chunks(g.glo, g.ghi, g.jobs)
    cells = g.ghi - g.glo
    saver = saver or Saver(None, g, name, log, far, None)
    if saver.ckpt is not None:
        saver.ckpt.start_group(resumed_seconds(resumed))
    inside = resumed is not None and resumed["phase"] == "ply"  # ply ``level`` partly done
    if resumed is not None and resumed["phase"] in ("plies", "ply"):
        level, top, invalid, decided = (resumed[k] for k in ("level", "top", "invalid", "decided"))
    else:
        done = [tuple(r) for r in resumed["done"]] if resumed is not None else []
        top, invalid = (resumed["top"], resumed["invalid"]) if resumed is not None else (-1, 0)
        start = {"initial": sum(hi - lo for lo, hi in done)} if done else {}
        with ProgressBar(f"{name} counters", cells, "cell", progress, **start) as bar:
            gaps = _gaps(g.glo, g.ghi, done, g.jobs)
            for lo, n, bad, t, fi, fd in Units(run, g.init, gaps, len(gaps)):
                top, invalid = max(top, t), invalid + bad
                far.add(fi, fd)
                done = _joined(done, lo, lo + n)
                bar.add(n)
                _at("counters", -1)
                if bar.n < cells and saver.due():
                    saver.save(phase="counters", level=0, top=top, invalid=invalid, decided=0,
                               done=[list(r) for r in done])
        level, decided = 0, 0
        if saver.due():
            saver.save(phase="plies", level=0, top=top, invalid=invalid, decided=0)
    resume = {"initial": decided} if decided else {}
    with ProgressBar(f"{name} values", cells - invalid, "pos", progress, eta=False, **resume) as bar:
        listed, before = None, None  # a resumed ply scans: its list was not kept
        while level <= top:
            if level > 0 and not inside:  # inside: the ply's arrivals are in the cells
                listed = _arrivals(g, far, level, listed)
            bar.note(ply_note(level, before, bar.total - bar.n))
            if listed is None:
                tasks = [(lo, hi, level, None) for lo, hi in chunks]
            elif not len(listed):
                tasks = []
            else:
                parts = max(g.jobs * 8 if g.jobs > 1 else 1, -(-len(listed) // LIST_CHUNK))
                tasks = [(0, b - a, level, listed[a:b]) for a, b in split_range(0, len(listed), parts)]
            ply = Ply(level, log, far, bar, top, listing=not inside)  # inside: the finished tasks' lists are lost
            units = Units(run, g.level, tasks, 2 * g.jobs)
            for result in units:
                ply.add(result)
                if units.left and saver.due_inside():  # with no task running: see lean_checkpoint
                    for rest in units.drain():
                        ply.add(rest)
                    saver.save(phase="ply", level=level, top=ply.top, invalid=invalid, decided=bar.n)
            top, inside = ply.top, False
            listed = tasks = units = result = rest = None  # this ply's list goes before the next one is joined
            if top > DMASK:
                raise OverflowError("distance beyond 16383 plies: the value format cannot hold it")
            listed, before = ply.listed(), ply.count
            level += 1
            if saver.due():  # after the last ply too: a rerun goes straight to the merge
                saver.save(phase="plies", level=level, top=top, invalid=invalid, decided=bar.n)
        if far.pending():
            raise AssertionError(f"positions left waiting for plies {far.pending()}: a bug in the lean solve")
        bar.note("draws")
        bar.add(bar.total - bar.n)
    return top


class Ply:
    """What the tasks of ply ``level`` give, taken in as they finish: the positions each
    took into ``log``, those waiting further ahead into ``far``, the largest distance
    (``top``), and the positions listed for the next ply (``listing``: where they fit)."""

    def __init__(self, level: int, log: PlyLog, far: FarLists, bar: ProgressBar, top: int, listing: bool):
        self.level, self.log, self.far, self.bar, self.top = level, log, far, bar, top
        self.count = 0
        self.nxt: list[np.ndarray] | None = [] if listing else None

    def add(self, result) -> None:
        taken, ahead, fars, t = result
        self.log.add(self.level, taken)
        for fi, fd in fars:
            self.far.add(fi, fd)
        self.top = max(self.top, t)
        self.count += len(taken)
        if self.nxt is not None and ahead is not None and sum(map(len, self.nxt)) + len(ahead) <= LIST_MAX:
            self.nxt.append(ahead)
        else:
            self.nxt = None
        self.bar.add(len(taken))
        _at("ply", self.level)

    def listed(self) -> np.ndarray | None:
        """The next ply's positions, sorted; None: it scans."""
        if self.nxt is None:
            return None
        return _sorted_union(self.nxt)


def _at(point: str, level: int) -> None:
    """Where the lean solve stands (a seam for the tests, which stop or kill it there)."""


def _arrivals(g: Group, far: FarLists, level: int, listed: np.ndarray | None) -> np.ndarray | None:
    """The positions waiting for ``level`` are decided now; with the ply's list (None:
    it scans) when they fit in one."""
    parts: list[np.ndarray] | None = None if listed is None else [listed]
    count = 0 if listed is None else len(listed)
    for piece in far.pieces(level):
        with held_interrupts():
            kept = lean_arrive(g.cells, piece, len(piece), level)
        if parts is not None and count + kept <= LIST_MAX:
            parts.append(piece[:kept])
            count += kept
        else:
            parts = None
    if listed is None or parts is None:
        return None
    return _sorted_union(parts) if len(parts) > 1 else listed


def _sorted_union(parts: list[np.ndarray]) -> np.ndarray:
    """The positions of ``parts`` in one sorted array; ``parts`` is emptied as it is
    joined (the pieces go before the sort: one copy of a list at a time, not three)."""
    if not parts:
        return np.empty(0, np.int64)
    out = np.concatenate(parts)
    parts.clear()
    out.sort()
    return out


def merge_window(cells: np.ndarray, log: PlyLog, a: int, b: int, out: np.ndarray) -> None:
    """``out``: the uint16 values of the cells ``a..b`` of a group whose plies are done —
    win, loss, draw or no position from the cells, each decided position's distance the
    ply that took it."""
    with held_interrupts():
        window_codes(cells, a, b, out)
    for level in log.levels:
        for run in log.positions(level, a, b):
            out[run - a] |= np.uint16(level)
    if np.any(out == 0xFFFF):
        raise AssertionError("a decided position no ply took: a bug in the lean solve")


def merge(g: Group, tiers, log: PlyLog, seconds: float, keep: bool, counted=None) -> list[TierSummary]:
    """The group's values, window by window, counted per tier; ``keep``: re-encoded into
    the cells (finished codes and escapes) for the groups above to look up; ``counted(n)``:
    ``n`` more positions merged."""
    out = np.empty(WINDOW, np.uint16)
    summaries = []
    for t in tiers:
        wins = np.zeros(DMASK + 1, np.int64)
        losses = np.zeros(DMASK + 1, np.int64)
        draws = invalid = 0
        for a in range(t.base, t.base + t.size, WINDOW):
            b = min(a + WINDOW, t.base + t.size)
            o = out[: b - a]
            merge_window(g.cells, log, a, b, o)
            _at("merge", a)
            with held_interrupts():
                w, lo_, d, bad = count_values(o, 0, b - a, DMASK)
            wins += w
            losses += lo_
            draws += int(d)
            invalid += int(bad)
            if keep:
                g.esc.encode(o, g.cells, a)
            if counted is not None:
                counted(b - a)
        summaries.append(summary_from_counts(t.key, t.size, (wins, losses, draws, invalid), seconds * t.size / max(1, g.ghi - g.glo)))
    g.esc.seal()
    return summaries


def write_group(store, g: Group, tiers, tier_no: dict[str, int], log: PlyLog, seconds: float, keep: bool, name: str,
                progress: bool) -> list[TierSummary]:
    """The group's tiers into the database, :data:`WRITE_STEP` blocks a transaction (the
    memory of the write is a window and a step's blocks, not the group's), their records
    last, in one transaction: a tier is in the database once its record is, and a write
    cut short is written over by the rerun. ``keep``: merged first, re-encoded into the
    cells (:func:`merge`), then decoded from them; else merged once, as it is written,
    each window counted for the records. Returns the tiers' summaries."""
    cells = g.ghi - g.glo
    if keep:
        with ProgressBar(f"{name} merge", cells, "pos", progress) as bar:
            summaries = merge(g, tiers, log, seconds, keep, bar.add)
    values = [TierValues(g.cells, g.esc, t.base, t.size, None if keep else log) for t in tiers]
    with ProgressBar(f"{name} write", cells, "pos", progress) as bar:
        before = 0
        for t, v in zip(tiers, values):
            for done in store.write_blocks(tier_no[t.key], v, t.key, WRITE_STEP):
                bar.add(before + min(done * BLOCK, t.size) - bar.n)
            before += t.size
    if not keep:
        summaries = [summary_from_counts(t.key, t.size, v.counts(), seconds * t.size / max(1, cells))
                     for t, v in zip(tiers, values)]
    peak = peak_memory_kb()
    for s in summaries:
        s.peak_kb = peak
    store.write_records([(tier_no[t.key], v, t.key, s.meta()) for t, v, s in zip(tiers, values, summaries)])
    return summaries


def solve_lean(layout: Layout, db_path, jobs: int, progress: bool, start: float,
               checkpoint_s: float | None = None) -> SolveReport:
    """Solve ``layout`` into ``db_path`` in one byte a position (resuming finished groups,
    and the group in progress from its checkpoint); ``checkpoint_s``: inside a group, save
    its state at most this often, inside plies too (seconds; 0: at every ply boundary and
    only there; None: never)."""
    if not fits(layout):
        from solver.errors import UsageError

        raise UsageError(f"{describe(layout)}: a position may have more than {MAXC} moves, more than a lean counter holds")
    store = open_for_solve(db_path, layout)
    finished = store.meta_items("tier:")
    cells = huge_zeros(layout.total, np.uint8)
    esc = Escapes()
    run: Executor = ThreadPoolExecutor(jobs) if jobs > 1 else InlineExecutor()
    tier_no = {t.key: i for i, t in enumerate(layout.tiers)}
    solved_now: list[str] = []
    folder = Path(db_path) / FOLDER
    ckpt = LeanCheckpoints(folder, db_header(layout), checkpoint_s)
    log = None
    try:
        for _, glo, ghi in layout.groups:
            tiers = [t for t in layout.tiers if glo <= t.base < ghi]
            if all(t.key in finished for t in tiers):
                for t in tiers:
                    for lo, block in store.tier_blocks(tier_no[t.key], t.size):
                        esc.encode(np.asarray(block, np.uint16), cells, t.base + lo)
                esc.seal()
                continue
            t0 = time.perf_counter()
            g = Group(layout, cells, esc, glo, ghi, max(jobs, 1))
            name = group_name(tiers)
            found = ckpt.load(cells, glo, ghi, name) if folder.is_dir() else None
            if found is not None:
                resumed, log, far = found
            else:
                try:
                    resumed, log, far = None, PlyLog(temp_folder(db_path)), FarLists(folder, checkpoint_s is not None)
                except OSError as e:
                    raise temp_error(folder, e, None) from None
            saver = Saver(ckpt if checkpoint_s is not None else None, g, name, log, far, resumed)
            try:
                solve_group(run, g, name, log, far, progress, saver, resumed)
            except OSError as e:
                raise saver.error(e) from None
            keep = ghi < layout.total  # groups above look into this one: its values stay in the cells
            seconds = time.perf_counter() - t0 + resumed_seconds(resumed)
            for t, s in zip(tiers, write_group(store, g, tiers, tier_no, log, seconds, keep, name, progress)):
                finished[t.key] = s.meta()
                solved_now.append(t.key)
            _at("written", glo)
            ckpt.clear()
            log.close()
            log = None
            remove_temp(db_path)
        remove_temp(db_path)  # a checkpoint of a group finished before (a kill between commit and clear)
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        return SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
    finally:
        if isinstance(run, ThreadPoolExecutor):
            run.shutdown(cancel_futures=True)
        store.close()
        if log is not None:
            log.close()
            if not ckpt.holds:  # nothing to go on from: the group starts over, its files are no use
                remove_temp(db_path)
