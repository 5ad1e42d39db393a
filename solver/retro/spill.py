"""What the lean solve keeps on disk while a group is solved: the distances.

A lean cell (:mod:`solver.kernels.lean`) says *that* a position is decided, not in how
many plies. The distance of a position is the ply that took it, so each ply's positions
go to disk (:class:`PlyLog`), and positions decided further ahead through a lower tier
wait on disk for their ply (:class:`FarLists`). Both live in a temporary folder of the
database folder, removed when the group is in the database (and at the next start
after a kill).

:class:`PlyLog` — one file of segments. A segment is a sorted run of positions one ply
took, at most :data:`SEGMENT` of them, stored as uint32 gaps from the first (the
position after a gap of 2^32 or more starts a new segment) compressed with zlib level
1: a ply's positions are dense in index order, so a position costs about a byte. Each
segment is noted in memory as ``(first, last, offset, length, count)``, by ply; the
merge reads those that meet a window of the group (:meth:`PlyLog.positions`), keeping
each ply's last one read: windows come in order, and a late ply's few positions spread
over many of them.

:class:`FarLists` — one file per distance, of int64 positions in the order found,
read back in pieces of :data:`PIECE` when its ply comes.
"""

from __future__ import annotations

import bisect
import os
import shutil
import zlib
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


class PlyLog:
    """The positions each ply took, sorted runs in one file."""

    def __init__(self, folder: Path):
        self.path = folder / "plies.bin"
        self._f = open(self.path, "w+b")
        self._segs: dict[int, list[tuple[int, int, int, int, int]]] = defaultdict(list)
        self._sorted: dict[int, list[int]] = {}
        self._last: dict[int, tuple[int, np.ndarray]] = {}  # per ply, the segment read last
        self.bytes = 0

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
                self._f.seek(0, os.SEEK_END)
                offset = self._f.tell()
                self._f.write(data)
                self._segs[level].append((int(run[0]), int(run[-1]), offset, len(data), len(run)))
                self.bytes += len(data)
        self._sorted.pop(level, None)
        self._last.pop(level, None)

    @property
    def levels(self) -> list[int]:
        return sorted(self._segs)

    def positions(self, level: int, lo: int, hi: int):
        """The positions of ply ``level`` in ``lo..hi``, in arrays (sorted)."""
        segs = self._segs.get(level)
        if not segs:
            return
        if level not in self._sorted:
            segs.sort()
            self._sorted[level] = [s[0] for s in segs]
        firsts = self._sorted[level]
        i = max(0, bisect.bisect_right(firsts, lo) - 1)
        self._f.flush()
        while i < len(segs) and segs[i][0] < hi:
            first, last, offset, length, count = segs[i]
            i += 1
            if last < lo:
                continue
            cached = self._last.get(level)
            if cached is not None and cached[0] == offset:
                run = cached[1]  # a sparse segment spans many windows: read once
            else:
                self._f.seek(offset)
                gaps = np.frombuffer(zlib.decompress(self._f.read(length)), dtype="<u4")
                run = first + np.cumsum(gaps, dtype=np.int64)
                self._last[level] = (offset, run)
            if first < lo or last >= hi:
                run = run[(run >= lo) & (run < hi)]
            yield run

    def close(self) -> None:
        self._f.close()


class FarLists:
    """Positions decided further ahead, by distance, each distance a file."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.count = 0
        self.bytes = 0

    def add(self, idx: np.ndarray, dist: np.ndarray) -> None:
        if not len(idx):
            return
        order = np.argsort(dist, kind="stable")
        idx, dist = idx[order], dist[order]
        bounds = np.flatnonzero(np.diff(dist)) + 1
        for part, d in zip(np.split(idx, bounds), dist[np.r_[0, bounds]]):
            with open(self.folder / f"far-{int(d)}.i64", "ab") as f:
                f.write(part.astype("<i8").tobytes())
        self.count += len(idx)
        self.bytes += 8 * len(idx)

    def pieces(self, level: int):
        """The positions waiting for ply ``level``, in pieces; the file is removed after."""
        path = self.folder / f"far-{level}.i64"
        if not path.exists():
            return
        with open(path, "rb") as f:
            while True:
                data = f.read(8 * PIECE)
                if not data:
                    break
                yield np.frombuffer(data, dtype="<i8").copy()
        self.bytes -= path.stat().st_size
        path.unlink()

    def pending(self) -> list[int]:
        """The distances some position still waits for."""
        return sorted(int(p.stem.split("-")[1]) for p in self.folder.glob("far-*.i64"))
