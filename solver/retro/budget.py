"""What a solve needs, said before it starts: memory, ``/dev/shm``, disk.

A solve that does not fit would swap for hours or stop at a full disk; it is refused at
once instead, in one line (:class:`~solver.errors.ResourceError`, exit status 2), before
anything is written. The figures, per solve of a layout with ``total`` index cells:

* **memory** — the value array, 2 bytes a cell of the whole configuration: the solving
  process's own memory with threads (:func:`solver.retro.pool.private_values`), a shared
  file in ``/dev/shm`` with processes (:func:`solver.retro.pool.shared_values`; tmpfs
  pages are memory);
  each spawned worker (``-j N``, the process executor) :data:`WORKER_BYTES` for Python,
  numpy, numba and the compiled kernels, plus its own copy of the index tables, which
  peak at :data:`TABLE_PEAK` times their final size while they are built; and
  :data:`DRIVER_BYTES` more for this process (kernels, LMDB's write buffers); a worker's
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

Tiers already in the database are not counted for the disk; the value array is always
whole (finished tiers are read back into it). The Ray executor is not checked: its memory
is spread over the cluster's machines.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from solver.errors import ResourceError

MB = 1 << 20
WORKER_BYTES = 220 * MB  # a spawned worker without its index tables (measured: 221 MB for hex(3) 4v4)
TABLE_PEAK = 3  # index tables peak at about three times their final size while built
DRIVER_BYTES = 256 * MB  # this process on top of its layout: kernels, LMDB write buffers
TYPICAL_BYTES = 0.7  # database bytes a position, measured 0.55-0.68 on solved configurations


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
    mem_available: int | None = None
    values_free: int | None = None
    disk_free: int | None = None

    @property
    def memory(self) -> int:
        return self.values + self.workers * self.per_worker + self.driver

    def summary(self) -> str:
        """One line: what the solve needs and what the machine has."""
        parts = [f"{gb(self.values)} value array in {self.values_at}"]
        if self.workers:
            parts.append(f"{self.workers} workers of {gb(self.per_worker)}")
        mem = f"needs about {gb(self.memory)} of memory ({', '.join(parts)})"
        if self.mem_available is not None:
            mem += f", {gb(self.mem_available)} available"
        disk = f"disk up to {gb(self.disk_max)} (typically {gb(self.disk_typical)})"
        if self.checkpoint:
            disk += f", checkpoints up to {gb(self.checkpoint)}"
        if self.disk_free is not None:
            disk += f", {gb(self.disk_free)} free"
            if self.disk_free < self.disk_max + self.checkpoint:
                disk += " (enough unless the values compress badly)"
        return f"{self.description}: {mem}; {disk}"

    def check(self) -> None:
        """:class:`ResourceError` in one line where the machine has too little."""
        ray = "solve it on a Ray cluster (--executor ray -j N --address HOST:PORT)"
        if self.mem_available is not None and self.memory > self.mem_available:
            room = (self.mem_available - self.values - self.driver) // self.per_worker  # workers that fit
            fewer = f", or with -j {room if room >= 2 else 1}" if self.workers and 0 <= room < self.workers else ""
            raise ResourceError(
                f"{self.description} needs about {gb(self.memory)} of memory ({gb(self.values)} value array"
                + (f", {self.workers} workers of {gb(self.per_worker)}" if self.workers else "")
                + f") and {gb(self.mem_available)} are available: rather than swap, {ray}{fewer}"
            )
        if self.values_free is not None and self.values > self.values_free:
            raise ResourceError(
                f"{self.description} needs {gb(self.values)} in {self.values_at} for its value array and "
                f"{gb(self.values_free)} are free there: free or enlarge {self.values_at}, or {ray}"
            )
        need = self.disk_typical + self.checkpoint
        if self.disk_free is not None and need > self.disk_free:
            ckpt = f" and {gb(self.checkpoint)} of checkpoints" if self.checkpoint else ""
            raise ResourceError(
                f"{self.description} needs about {gb(self.disk_typical)} of disk (up to {gb(self.disk_max)}){ckpt} "
                f"in {self.db_folder} and {gb(self.disk_free)} are free: free some space or solve into another --db"
                + (", or with --checkpoint off" if self.checkpoint else "")
                + " (--force: try all the same)"
            )


def gb(n: int | float) -> str:
    """Bytes in words, decimal units: ``2.6 MB``, ``52 MB``, ``1.2 GB``, ``79 GB``."""
    if n < 1e7:
        return f"{max(0.1, n / 1e6):.1f} MB"
    if n < 1e9:
        return f"{n / 1e6:.0f} MB"
    g = n / 1e9
    return f"{g:.1f} GB" if g < 100 else f"{g:,.0f} GB"


def needs(layout, db_path, jobs: int, executor: str, checkpoints: bool, finished: set[str]) -> Needs | None:
    """What solving ``layout`` into ``db_path`` needs, with what the machine has; None
    when every tier is in the database already (nothing to solve)."""
    from solver.db.header import describe
    from solver.db.store import BLOCK
    from solver.retro.pool import SMALL_GROUP, stale_value_files, values_folder

    todo = [(lo, hi) for _, lo, hi in layout.groups if any(t.key not in finished for t in layout.tiers if lo <= t.base < hi)]
    if not todo:
        return None
    new = [t for t in layout.tiers if t.key not in finished]
    pooled = executor == "process" and jobs > 1 and any(hi - lo >= SMALL_GROUP for lo, hi in todo)
    shared = executor == "process"  # the value array a file (in /dev/shm), else this process's memory
    folder = values_folder() if shared else "memory"
    n = Needs(
        description=describe(layout),
        values=2 * max(layout.total, 1),
        workers=jobs if pooled else 0,
        per_worker=WORKER_BYTES + TABLE_PEAK * table_bytes(layout),
        driver=DRIVER_BYTES,
        disk_max=sum(2 * t.size + 4096 * (1 + t.size // BLOCK) + 8192 for t in new),
        disk_typical=int(sum(TYPICAL_BYTES * t.size + 8192 for t in new)),
        checkpoint=2 * 2 * max(hi - lo for lo, hi in todo) if checkpoints else 0,
        db_folder=str(db_path),
        values_at=folder,
    )
    n.mem_available = mem_available()
    free = free_space(folder) if shared else None
    if free is not None:
        n.values_free = free + sum(_size(f) for f in stale_value_files(folder))  # removed before the solve
    n.disk_free = free_space(db_path)
    return n


def table_bytes(layout) -> int:
    """The index tables of a layout (every array of ``layout.lay``), bytes."""
    return sum(int(getattr(a, "nbytes", 0)) for a in layout.lay)


def mem_available() -> int | None:
    """Memory that can be had without swapping: ``MemAvailable``, lowered to what the
    cgroup's limit leaves (``memory.max`` less what is used and cannot be reclaimed);
    None where neither can be read."""
    found = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError):
        pass
    cg = _cgroup_room()
    if cg is not None:
        found = cg if found is None else min(found, cg)
    return found


def _cgroup_room() -> int | None:
    root = Path("/sys/fs/cgroup")
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int((root / "memory.current").read_text())
        stat = dict(line.split() for line in (root / "memory.stat").read_text().splitlines() if len(line.split()) == 2)
        return max(0, int(limit) - used + int(stat.get("inactive_file", 0)))
    except (OSError, ValueError):
        return None


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

