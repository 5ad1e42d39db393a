"""What the lean solve keeps on disk while a group is solved: the distances.

A lean cell (:mod:`solver.kernels.lean`) says *that* a position is decided, not in how
many plies. The distance of a position is the ply that took it, so each ply's positions
go to disk (:class:`PlyLog`), and positions decided further ahead through a lower tier
wait on disk for their ply (:class:`FarLists`). Both live in a temporary folder of the
database folder, removed when the group is in the database, and at the next start after
a kill unless it holds a checkpoint of the group (:mod:`solver.retro.lean_checkpoint`).

:class:`PlyLog` — one file of segments. A segment is a sorted run of positions one ply
took, at most :data:`SEGMENT` of them, stored as uint32 gaps from the first (the
position after a gap of 2^32 or more starts a new segment) compressed with zlib level
1: a ply's positions are dense in index order, so a position costs about a byte. Each
segment is noted in memory as ``(first, last, offset, length, count)``, by ply, five
int64 in an array (40 bytes a segment, not the 250 of a tuple of Python ints); the
merge reads those that meet a window of the group (:meth:`PlyLog.positions`), keeping
each ply's last one read where it reaches past the window: windows come in order, and a
late ply's few positions spread over many of them (a segment the window ends is let go,
so that the plies' cache holds no more than the segments still to be used).

:class:`FarLists` — one file per distance, of int64 positions in the order found,
read back in pieces of :data:`PIECE` when its ply comes. With checkpoints a file read
is kept until the next checkpoint is written (:meth:`FarLists.drop_spent`): the last
checkpoint may still need it.

Both only ever append, every byte through :func:`_append` (unbuffered, so a full disk
is raised where it happens), and :meth:`PlyLog.sync` / :meth:`FarLists.sync` make what
was written durable. A checkpoint (:mod:`solver.retro.lean_checkpoint`) records their
lengths and the ply log's table of segments; a resumed solve cuts each file back to its
recorded length (:meth:`PlyLog.resume`, :meth:`FarLists.resume`), dropping whatever a
killed solve appended after the checkpoint, a half-written segment included.
"""

from __future__ import annotations

import os
import shutil
import zlib
from array import array
from collections import defaultdict
from pathlib import Path

import numpy as np

SEGMENT = 1 << 14  # positions a segment at most (128 kB once read back)
PIECE = 1 << 20  # far positions read back at a time
FOLDER = "lean.tmp"


def temp_folder(db_path) -> Path:
    """The lean solve's temporary folder in ``db_path``, empty (a killed solve's removed)."""
    folder = Path(db_path) / FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def remove_temp(db_path) -> None:
    """Remove the lean solve's temporary folder of ``db_path``, where there is one (its
    checkpoint is spent once every tier is in the database)."""
    shutil.rmtree(Path(db_path) / FOLDER, ignore_errors=True)


def _append(fd: int, data: bytes) -> None:
    """Write ``data`` at the end of the open file ``fd``, all of it (a seam for the tests:
    a kill or a full disk in the middle of a write lands here)."""
    view = memoryview(data)
    while len(view):
        view = view[os.write(fd, view):]


def _fsync(fd: int) -> None:
    os.fsync(fd)


class PlyLog:
    """The positions each ply took, sorted runs in one file."""

    NAME = "plies.bin"

    def __init__(self, folder: Path, table: np.ndarray | None = None, size: int = 0):
        self.path = folder / self.NAME
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | (0 if table is not None else os.O_TRUNC), 0o644)
        self._segs: dict[int, array] = defaultdict(lambda: array("q"))  # per ply, its segments' five fields
        self._sorted: dict[int, np.ndarray] = {}  # per ply, its segments as rows sorted by their first
        self._last: dict[int, tuple[int, np.ndarray]] = {}  # per ply, the segment read last
        self.size = 0  # bytes of segments in the file
        self.count = 0  # positions logged
        if table is not None:
            os.ftruncate(self._fd, size)  # what a killed solve wrote after its checkpoint
            for level, first, last, offset, length, count in table.tolist():
                self._segs[level].extend((first, last, offset, length, count))
                self.count += count
            self.size = size

    @classmethod
    def resume(cls, folder: Path, table: np.ndarray, size: int) -> "PlyLog":
        """The log as a checkpoint recorded it: its segments ``table`` (:meth:`table`),
        the file cut back to ``size`` bytes."""
        return cls(folder, table, size)

    @property
    def bytes(self) -> int:
        return self.size

    def table(self) -> np.ndarray:
        """Every segment as a row ``(ply, first, last, offset, length, count)``, int64."""
        parts = [np.column_stack([np.full(len(segs) // 5, level, np.int64), _rows(segs)])
                 for level, segs in self._segs.items()]
        return np.concatenate(parts) if parts else np.empty((0, 6), np.int64)

    def sync(self) -> None:
        """What was logged is on disk."""
        _fsync(self._fd)

    def add(self, level: int, taken: np.ndarray) -> None:
        """The positions ``taken`` (sorted, int64) were taken at ply ``level``."""
        if not len(taken):
            return
        cuts = np.flatnonzero(np.diff(taken) >= 1 << 32) + 1
        for part in np.split(taken, cuts):
            for at in range(0, len(part), SEGMENT):
                run = part[at : at + SEGMENT]
                gaps = np.diff(run, prepend=run[0]).astype("<u4")
                data = zlib.compress(gaps.tobytes(), 1)
                os.lseek(self._fd, self.size, os.SEEK_SET)
                _append(self._fd, data)
                self._segs[level].extend((int(run[0]), int(run[-1]), self.size, len(data), len(run)))
                self.size += len(data)
                self.count += len(run)
        self._sorted.pop(level, None)
        self._last.pop(level, None)

    @property
    def levels(self) -> list[int]:
        return sorted(self._segs)

    def positions(self, level: int, lo: int, hi: int):
        """The positions of ply ``level`` in ``lo..hi``, in arrays (sorted)."""
        if not self._segs.get(level):
            return
        segs = self._sorted.get(level)
        if segs is None:
            segs = _rows(self._segs[level])
            segs = self._sorted[level] = segs[np.argsort(segs[:, 0], kind="stable")]
        i = max(0, int(np.searchsorted(segs[:, 0], lo, "right")) - 1)
        while i < len(segs) and segs[i, 0] < hi:
            first, last, offset, length, count = segs[i].tolist()
            i += 1
            if last < lo:
                continue
            cached = self._last.get(level)
            if cached is not None and cached[0] == offset:
                run = cached[1]  # a sparse segment spans many windows: read once
            else:
                gaps = np.frombuffer(zlib.decompress(os.pread(self._fd, length, offset)), dtype="<u4")
                run = first + np.cumsum(gaps, dtype=np.int64)
                if last >= hi:  # the next window needs it too
                    self._last[level] = (offset, run)
                else:
                    self._last.pop(level, None)
            if first < lo or last >= hi:
                run = run[(run >= lo) & (run < hi)]
            yield run

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _rows(segs: array) -> np.ndarray:
    """A ply's segments as rows ``(first, last, offset, length, count)`` (a copy)."""
    return np.array(segs, np.int64).reshape(-1, 5)


class FarLists:
    """Positions decided further ahead, by distance, each distance a file.

    ``keep_spent``: a file read is kept until :meth:`drop_spent` (a checkpoint may still
    point into it), else removed at once."""

    def __init__(self, folder: Path, keep_spent: bool = False, sizes: dict[int, int] | None = None):
        self.folder = folder
        self.keep_spent = keep_spent
        self.sizes: dict[int, int] = dict(sizes or {})  # bytes waiting, by distance
        self.count = sum(self.sizes.values()) // 8
        self._dirty: set[int] = set()  # files written since the last sync
        self._spent: list[int] = []

    @classmethod
    def resume(cls, folder: Path, sizes: dict[int, int]) -> "FarLists":
        """The lists as a checkpoint recorded them (``sizes``: bytes by distance): each
        file cut back to its size, files the checkpoint does not name removed."""
        for path in folder.glob("far-*.i64"):
            d = _distance(path)
            if d not in sizes:
                path.unlink()
        for d, n in sizes.items():
            os.truncate(folder / f"far-{d}.i64", n)
        return cls(folder, True, sizes)

    def path(self, d: int) -> Path:
        return self.folder / f"far-{d}.i64"

    @property
    def bytes(self) -> int:
        return sum(self.sizes.values())

    def add(self, idx: np.ndarray, dist: np.ndarray) -> None:
        if not len(idx):
            return
        order = np.argsort(dist, kind="stable")
        idx, dist = idx[order], dist[order]
        bounds = np.flatnonzero(np.diff(dist)) + 1
        for part, d in zip(np.split(idx, bounds), dist[np.r_[0, bounds]]):
            d = int(d)
            fd = os.open(self.path(d), os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                at = self.sizes.get(d, 0)
                os.lseek(fd, at, os.SEEK_SET)  # past what a killed solve may have left
                data = part.astype("<i8").tobytes()
                _append(fd, data)
            finally:
                os.close(fd)
            self.sizes[d] = at + len(data)
            self._dirty.add(d)
        self.count += len(idx)

    def pieces(self, level: int):
        """The positions waiting for ply ``level``, in pieces; the file is spent after."""
        size = self.sizes.get(level)
        if size is None:
            return
        with open(self.path(level), "rb") as f:
            for at in range(0, size, 8 * PIECE):
                data = f.read(min(8 * PIECE, size - at))
                yield np.frombuffer(data, dtype="<i8").copy()
        del self.sizes[level]
        self._dirty.discard(level)
        if self.keep_spent:
            self._spent.append(level)
        else:
            self.path(level).unlink()

    def pending(self) -> list[int]:
        """The distances some position still waits for."""
        return sorted(self.sizes)

    def sync(self) -> None:
        """What was written is on disk."""
        for d in sorted(self._dirty):
            fd = os.open(self.path(d), os.O_RDONLY)
            try:
                _fsync(fd)
            finally:
                os.close(fd)
        self._dirty.clear()

    def drop_spent(self) -> None:
        """Remove the files read since the last call (a checkpoint past them is written)."""
        for d in self._spent:
            self.path(d).unlink(missing_ok=True)
        self._spent = []


def _distance(path: Path) -> int:
    return int(path.stem.split("-")[1])
