"""What a solve needs, said before it starts: memory, ``/dev/shm``, disk, time.

A solve that does not fit would swap for hours or stop at a full disk; it is refused at
once instead, in one line (:class:`~solver.errors.ResourceError`, exit status 2), before
anything is written and before the index is built: the figures come from the index's
:class:`~solver.retro.shape.Shape` (binomial coefficients and the symmetry group), so
that a configuration of 10^19 positions is refused in milliseconds. The figures, per
solve of a configuration with ``total`` canonical positions:

* **the index** — its tables (:attr:`~solver.retro.shape.Shape.table_bytes`) in this
  process for the whole solve, and their build's peak before the value array exists;

* **memory** — the value array, 2 bytes a cell of the whole configuration: the solving
  process's own memory with threads (:func:`solver.retro.pool.private_values`), a shared
  file in ``/dev/shm`` with processes (:func:`solver.retro.pool.shared_values`; tmpfs
  pages are memory);
  each spawned worker (``-j N``, the process executor) :data:`WORKER_BYTES` for Python,
  numpy, numba and the compiled kernels, plus its own copy of the index tables, which
  peak at :data:`TABLE_PEAK` times their final size while they are built; and
  :data:`DRIVER_BYTES` more for this process (kernels), and the group being written: LMDB
  holds a write transaction's pages in memory (its compressed blocks, about
  :data:`TYPICAL_BYTES` a position) up to :data:`WRITE_MAX`, beyond which it spills them
  to the file; a worker's
  peak is measured with ``python scripts/bench_solve.py`` and ``/proc/self/status``.
  Compared with ``MemAvailable`` (``/proc/meminfo``, and the cgroup's limit where one is
  set); the value array also with the free space of the folder that holds it, which
  counts against its own limit (a tmpfs ``size=``).
* **disk** — the database stores each tier as zlib-compressed blocks of uint16 values:
  at most 2 bytes a position (plus a page a block), typically :data:`TYPICAL_BYTES`
  (a little above what the solved configurations take). With checkpoints on, the group
  in progress is also saved raw (2 bytes a cell), and a new
  checkpoint is written next to the old one before it replaces it: twice the largest
  group. A solve is refused when the typical size and the checkpoints do not fit in the
  free space of the database folder; when only the worst case does not, the line that
  says what the solve needs says so (a full disk later stops the solve in one line, and
  the rerun resumes).

* **the lean solve** (:mod:`solver.retro.lean`) — one byte a position instead of two,
  :data:`LEAN_FIXED` more for its lists and buffers (and :data:`LEAN_PER_JOB` a
  thread); it writes a group :data:`LEAN_WRITE` at a time (a few blocks a transaction,
  not the group's pages in one); and temporary files in the database folder: the positions each ply decided
  (compressed), and those decided further ahead through lower tiers, of the group being
  solved — :data:`LEAN_TEMP_MAX` bytes a position of the largest group at most,
  typically :data:`LEAN_TEMP_TYPICAL`; its checkpoints, a byte a cell of the group,
  twice. :func:`plan` takes it where the two-byte solve
  does not fit in memory (with threads), or where it is asked for.
* **time** — positions over :data:`RATE` (or :data:`LEAN_RATE`) a second a core, a
  forecast within a factor of two or so (a crowded board solves faster, a long game
  slower): ``python scripts/bench_lean.py`` measures both.

Tiers already in the database are not counted for the disk; the value array is always
whole (finished tiers are read back into it). The Ray executor is not checked: its memory
is spread over the cluster's machines.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from solver.errors import ResourceError
from solver.memory import mem_available

MB = 1 << 20
WORKER_BYTES = 220 * MB  # a spawned worker without its index tables (measured: 221 MB for hex(3) 4v4)
TABLE_PEAK = 3  # index tables peak at about three times their final size while built
DRIVER_BYTES = 256 * MB  # this process on top of its layout and the write: Python, numpy, numba, the kernels
TYPICAL_BYTES = 0.7  # database bytes a position, measured 0.55-0.68 on solved configurations
WRITE_MAX = 512 * MB  # LMDB keeps a write transaction's pages in memory up to this, then spills them
LEAN_FIXED = 64 * MB  # the lean solve's lists of a ply's positions, its merge window
LEAN_PER_JOB = 40 * MB  # the lean solve's buffers of one running task
LEAN_WRITE = 16 * MB  # the lean solve's write: a window of values, a transaction's blocks raw and compressed
LEAN_TEMP_MAX = 12  # temporary bytes a position of the largest group, worst case (4 + 8 for far ones)
LEAN_TEMP_TYPICAL = 1.0  # temporary bytes a position of the largest group, typically (measured 0.8)
RATE = 500_000  # positions a second a core, two-byte solve (hex(3) 6v6, hex(4) 4v4: 0.45-0.54 M)
LEAN_RATE = 450_000  # positions a second a core, lean solve (about 10 % more CPU than the two-byte one)


@dataclass
class Needs:
    description: str
    values: int  # the value array, bytes (in ``values_at``)
    workers: int
    per_worker: int
    driver: int
    disk_max: int  # the database's new tiers, worst case
    disk_typical: int
    checkpoint: int  # checkpoint files at most (two: the old one and the one being written)
    db_folder: str
    values_at: str
    positions: int = 0  # canonical positions still to solve
    build: int = 0  # the index build's peak, bytes (before the value array exists)
    lean: bool = False  # one byte a position (solver.retro.lean)
    temp_max: int = 0  # the lean solve's temporary files, worst case
    temp_typical: int = 0
    two_bytes: int | None = None  # the two-byte solve's memory, where the lean one was taken for it
    one_byte: int | None = None  # the lean solve's memory, where it does not fit either
    seconds: float | None = None  # a forecast of the solve's time
    jobs: int = 1
    mem_available: int | None = None
    values_free: int | None = None
    disk_free: int | None = None

    @property
    def memory(self) -> int:
        return max(self.values + self.workers * self.per_worker + self.driver, self.build + DRIVER_BYTES)

    def summary(self) -> str:
        """One line: which solve, what it needs and what the machine has."""
        parts = [f"{gb(self.values)} {'byte' if self.lean else 'value'} array in {self.values_at}"]
        if self.workers:
            parts.append(f"{self.workers} workers of {gb(self.per_worker)}")
        mem = f"needs about {gb(self.memory)} of memory ({', '.join(parts)})"
        if self.mem_available is not None:
            mem += f", {gb(self.mem_available)} available"
        disk = f"disk up to {gb(self.disk_max)} (typically {gb(self.disk_typical)})"
        if self.checkpoint:
            disk += f", checkpoints up to {gb(self.checkpoint)}"
        if self.lean:
            disk += f", temporary files up to {gb(self.temp_max)} (typically {gb(self.temp_typical)})"
        if self.disk_free is not None:
            disk += f", {gb(self.disk_free)} free"
            if self.disk_free < self.disk_max + self.checkpoint + self.temp_max:
                disk += " (enough unless the values compress badly)"
        head = self.description
        if self.lean:
            head += ": lean solve, one byte a position" + (
                f" (the two-byte solve needs {gb(self.two_bytes)})" if self.two_bytes is not None else "")
        tail = f"; about {duration(self.seconds)} on {self.jobs} core{'s' if self.jobs > 1 else ''}" if self.seconds else ""
        return f"{head}: {mem}; {disk}{tail}"

    def check(self) -> None:
        """:class:`ResourceError` in one line where the machine has too little."""
        ray = "solve it on a Ray cluster (--executor ray -j N --address HOST:PORT)"
        if self.mem_available is not None and self.memory > self.mem_available:
            room = (self.mem_available - self.values - self.driver) // self.per_worker  # workers that fit
            fewer = f", or with -j {room if room >= 2 else 1}" if self.workers and 0 <= room < self.workers else ""
            what = f"{gb(self.values)} {'byte' if self.lean else 'value'} array"
            if self.build > self.values + self.workers * self.per_worker + self.driver - DRIVER_BYTES:
                what = f"{gb(self.build)} to build its index"
            if self.lean:
                what += f", one byte a position; the two-byte solve needs {gb(self.two_bytes)}" if self.two_bytes else ""
            elif self.one_byte is not None:
                what += f"; {gb(self.one_byte)} in one byte a position, --lean"
            far = self.memory > 100 * self.mem_available  # no cluster of such machines holds it either
            raise ResourceError(
                f"{self.description} needs about {gb(self.memory)} of memory ({what}"
                + (f", {self.workers} workers of {gb(self.per_worker)}" if self.workers else "")
                + f") and {gb(self.mem_available)} are available"
                + (": it cannot be solved here" if far else f": rather than swap, {ray}{fewer}")
            )
        if self.values_free is not None and self.values > self.values_free:
            raise ResourceError(
                f"{self.description} needs {gb(self.values)} in {self.values_at} for its value array and "
                f"{gb(self.values_free)} are free there: free or enlarge {self.values_at}, or {ray}"
            )
        need = self.disk_typical + self.checkpoint + self.temp_typical
        if self.disk_free is not None and need > self.disk_free:
            ckpt = f" and {gb(self.checkpoint)} of checkpoints" if self.checkpoint else ""
            if self.lean:
                ckpt += f" and {gb(self.temp_typical)} of temporary files (up to {gb(self.temp_max)})"
            raise ResourceError(
                f"{self.description} needs about {gb(self.disk_typical)} of disk (up to {gb(self.disk_max)}){ckpt} "
                f"in {self.db_folder} and {gb(self.disk_free)} are free: free some space or solve into another --db"
                + (", or with --checkpoint off" if self.checkpoint else "")
                + " (--force: try all the same)"
            )


UNITS = ((1e18, "EB"), (1e15, "PB"), (1e12, "TB"))


def gb(n: int | float) -> str:
    """Bytes in words, decimal units: ``2.6 MB``, ``52 MB``, ``1.2 GB``, ``79 GB``,
    ``3,000 GB``, ``12 TB``, ``49 EB``."""
    if n < 1e7:
        return f"{max(0.1, n / 1e6):.1f} MB"
    if n < 1e9:
        return f"{n / 1e6:.0f} MB"
    g = n / 1e9
    if g >= 1e4:
        for size, unit in UNITS:
            if n >= 10 * size or unit == "TB":
                return f"{n / size:,.0f} {unit}"
    return f"{g:.1f} GB" if g < 100 else f"{g:,.0f} GB"


def duration(seconds: float) -> str:
    """A forecast in words: ``40 s``, ``12 min``, ``3 h``, ``9 days``, ``10^12 years``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    if seconds < 2 * 86400:
        return f"{round(seconds / 3600)} h"
    if seconds < 1000 * 86400:
        return f"{round(seconds / 86400)} days"
    years = seconds / (365 * 86400)
    return f"{years:,.0f} years" if years < 1e6 else f"10^{len(str(int(years))) - 1} years"


def plan(shape, db_path, jobs: int, executor: str, checkpoints: bool, finished: set[str],
         lean: bool | None = None) -> Needs | None:
    """The solve to run and what it needs: the two-byte one where it fits in memory (or
    where memory cannot be read), else the lean one (threads only); ``lean`` True or
    False: that one. None when every tier is in the database already."""
    two = needs(shape, db_path, jobs, executor, checkpoints, finished) if lean is not True else None
    if two is None and lean is not True:
        return None
    if two is not None and (two.mem_available is None or two.memory <= two.mem_available):
        return two
    one = needs(shape, db_path, jobs, executor, checkpoints, finished, lean=True)
    if two is None or one is None:
        return one
    if lean is False or executor != "thread" or (one.mem_available is not None and one.memory > one.mem_available):
        two.one_byte = one.memory  # the two-byte solve it is: its refusal names the lean one too
        return two
    one.two_bytes = two.memory
    return one


def needs(layout, db_path, jobs: int, executor: str, checkpoints: bool, finished: set[str], lean: bool = False) -> Needs | None:
    """What solving ``layout`` (a :class:`~solver.index.Layout` or its
    :class:`~solver.retro.shape.Shape`) into ``db_path`` needs, with what the machine
    has; None when every tier is in the database already (nothing to solve)."""
    from solver.db.header import describe
    from solver.db.store import BLOCK
    from solver.retro.pool import SMALL_GROUP, stale_value_files, values_folder

    todo = [(lo, hi) for _, lo, hi in layout.groups if any(t.key not in finished for t in layout.tiers if lo <= t.base < hi)]
    if not todo:
        return None
    new = [t for t in layout.tiers if t.key not in finished]
    pooled = not lean and executor == "process" and jobs > 1 and any(hi - lo >= SMALL_GROUP for lo, hi in todo)
    shared = not lean and executor == "process"  # the value array a file (in /dev/shm), else this process's memory
    folder = values_folder() if shared else "memory"
    tables = table_bytes(layout)
    largest = max(hi - lo for lo, hi in todo)
    positions = sum(t.size for t in new)
    n = Needs(
        description=describe(layout),
        values=(1 if lean else 2) * max(layout.total, 1),
        workers=jobs if pooled else 0,
        per_worker=WORKER_BYTES + TABLE_PEAK * tables,
        driver=DRIVER_BYTES + tables + min(LEAN_WRITE if lean else WRITE_MAX, int(TYPICAL_BYTES * largest))
        + (LEAN_FIXED + LEAN_PER_JOB * max(1, jobs) if lean else 0),
        disk_max=sum(2 * t.size + 4096 * (1 + t.size // BLOCK) + 8192 for t in new),
        disk_typical=int(sum(TYPICAL_BYTES * t.size + 8192 for t in new)),
        checkpoint=2 * (1 if lean else 2) * largest if checkpoints else 0,  # the old one and the new
        db_folder=str(db_path),
        values_at=folder,
        positions=positions,
        build=int(getattr(layout, "build_bytes", 0)),
        lean=lean,
        temp_max=LEAN_TEMP_MAX * largest if lean else 0,
        temp_typical=int(LEAN_TEMP_TYPICAL * largest) if lean else 0,
        seconds=positions / ((LEAN_RATE if lean else RATE) * (max(1, jobs) if executor != "ray" else 1)),
        jobs=max(1, jobs) if executor != "ray" else 1,
    )
    n.mem_available = mem_available()
    free = free_space(folder) if shared else None
    if free is not None:
        n.values_free = free + sum(_size(f) for f in stale_value_files(folder))  # removed before the solve
    n.disk_free = free_space(db_path)
    return n


def table_bytes(layout) -> int:
    """The index tables of a layout (every array of ``layout.lay``), or their size as
    its :class:`~solver.retro.shape.Shape` tells it, bytes."""
    if hasattr(layout, "table_bytes"):
        return int(layout.table_bytes)
    return sum(int(getattr(a, "nbytes", 0)) for a in layout.lay)


def free_space(path) -> int | None:
    """Free bytes on the file system of ``path`` (of its nearest existing folder)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def _size(f: Path) -> int:
    try:
        return f.stat().st_blocks * 512
    except OSError:
        return 0


def finished_tiers(db_path, header: dict) -> set[str]:
    """The tiers already in the database at ``db_path`` if it is one of these rules
    (``header``: :func:`solver.db.header.db_header`); read-only, nothing written."""
    from solver.db.store import Store
    from solver.errors import StoreError

    if not (Path(db_path) / "data.mdb").is_file():
        return set()
    try:
        store = Store(db_path, readonly=True)
    except StoreError:
        return set()  # the solve itself says what is wrong with it
    try:
        found = store.get_meta("config") or {}
        strip = lambda h: {k: v for k, v in h.items() if k != "format"}  # noqa: E731
        return set(store.meta_items("tier:")) if strip(found) == strip(header) else set()
    except StoreError:
        return set()
    finally:
        store.close()

