"""What the disk mode of the lean solve keeps on disk: partitions and bucketed updates.

:class:`PartFiles` — the cells of partition ``r`` (``part_bounds`` cuts the group into
contiguous index ranges) in ``part-{r}.{slot}.u8``, a byte a cell, read and written
whole, in order. Each partition has two slots: a partition is written back to the slot
that the last checkpoint does not name, so that a solve killed while writing it leaves
the checkpoint's cells untouched; the checkpoint that follows (one after every partition
written) names the new slot and removes the old one, so that the disk holds one partition
twice at most, besides the cells.

:class:`Buckets` — the parent updates a partition sends to another (int64, as
:func:`~solver.kernels.partition.parent_updates` packs them), appended to
``upd-{r}-{level}.i64``, the file of the destination ``r`` and of the ply that found
them, and read back in order the next time ``r`` is loaded. A round's updates for one
destination are one frame: ``count, bytes`` (uint32) and the sorted updates' gaps as
varints, about 3-4 bytes an update. A file is read from where
the last read stopped; one whose pass is over and that is read to the end is spent, and
removed; one read to its end while its pass may still append to it is emptied (with
checkpoints, both once the next checkpoint no longer names their bytes). So the bucket
files hold the updates waiting, and those read since the last checkpoint.

Every write goes through :func:`solver.retro.spill._append` (unbuffered: a full disk is
raised where it happens), and the bytes read and written are counted for the progress.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from solver.retro import spill

FRAME = 8  # a frame's head: its updates and its bytes, uint32 each


def _write_file(path: Path, data: np.ndarray) -> None:
    """``data`` over the file at ``path`` (always the same size): written in place, not
    truncated first, so that the page cache keeps the pages of a partition rewritten
    every ply and writes them back at its own pace (a truncated file is flushed at close
    by ext4's ``auto_da_alloc``)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        spill._append(fd, memoryview(data).cast("B"))
        if os.fstat(fd).st_size > len(data):
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _read_into(path: Path, out: np.ndarray, offset: int = 0) -> None:
    view = memoryview(out).cast("B")
    with open(path, "rb", buffering=0) as f:
        f.seek(offset)
        got = 0
        while got < len(view):
            n = f.readinto(view[got:])
            if not n:
                raise OSError(f"{path} is shorter than its partition: the disk mode's files are damaged")
            got += n


class PartFiles:
    """The partitions' cells on disk, two slots each (see the module's note)."""

    def __init__(self, folder: Path, bounds: np.ndarray, slots: list[int] | None = None, two_slots: bool = True):
        self.folder, self.bounds, self.two_slots = folder, bounds, two_slots
        self.parts = len(bounds) - 1
        self.slot = list(slots) if slots is not None else [0] * self.parts  # where each partition is now
        self.kept = list(self.slot)  # the slots the last checkpoint names
        self._dirty: set[int] = set()
        self.read_bytes = self.written_bytes = 0

    @property
    def total(self) -> int:
        return int(self.bounds[-1] - self.bounds[0])

    def size(self, r: int) -> int:
        return int(self.bounds[r + 1] - self.bounds[r])

    def path(self, r: int, slot: int | None = None) -> Path:
        return self.folder / f"part-{r}.{self.slot[r] if slot is None else slot}.u8"

    def read(self, r: int, out: np.ndarray | None = None) -> np.ndarray:
        """Partition ``r``'s cells (into ``out``, where given: room for the largest)."""
        cells = (np.empty(self.size(r), np.uint8) if out is None else out[: self.size(r)])
        _read_into(self.path(r), cells)
        self.read_bytes += len(cells)
        return cells

    def read_window(self, r: int, a: int, b: int, out: np.ndarray) -> np.ndarray:
        """Cells ``a..b`` (local) of partition ``r`` into ``out``."""
        win = out[: b - a]
        _read_into(self.path(r), win, a)
        self.read_bytes += len(win)
        return win

    def write(self, r: int, cells: np.ndarray, first: bool = False) -> None:
        """Partition ``r``'s cells back to disk: to the slot the last checkpoint does not
        name (``first``: its first write, to slot 0)."""
        if not first and self.two_slots and self.slot[r] == self.kept[r]:
            self.slot[r] = 1 - self.slot[r]
        _write_file(self.path(r), cells)
        self.written_bytes += len(cells)
        self._dirty.add(r)

    def sync(self) -> None:
        for r in sorted(self._dirty):
            fd = os.open(self.path(r), os.O_RDONLY)
            try:
                spill._fsync(fd)
            finally:
                os.close(fd)
        self._dirty.clear()

    def kept_now(self) -> None:
        """A checkpoint naming the current slots is written: the other slots are removed."""
        for r in range(self.parts):
            if self.slot[r] != self.kept[r]:
                self.path(r, self.kept[r]).unlink(missing_ok=True)
        self.kept = list(self.slot)

    def drop_others(self) -> None:
        """Remove the slots the checkpoint does not name (a killed solve's half-written ones)."""
        for r in range(self.parts):
            self.path(r, 1 - self.slot[r]).unlink(missing_ok=True)

    def drop(self, r: int) -> None:
        """Partition ``r`` is merged into the database: its file is removed."""
        self.path(r).unlink(missing_ok=True)
        self._dirty.discard(r)

    def bytes_on_disk(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("part-*.u8"))


class Buckets:
    """The updates waiting for each partition, a file per destination and pass (a ply
    takes one pass, or several where its updates would fill the disk)."""

    def __init__(self, folder: Path, keep_spent: bool, state: dict | None = None):
        self.folder, self.keep_spent = folder, keep_spent
        self.files: dict[tuple[int, int], list[int]] = {}  # (r, pass) -> [bytes, bytes read, ply sent]
        self._spent: list[tuple[int, int]] = []
        self._emptied: list[tuple[int, int]] = []  # read to the end in their own pass: emptied at the next checkpoint
        self.spent_bytes = 0  # bytes of spent files kept for the last checkpoint
        self._dirty: set[tuple[int, int]] = set()
        self.read_bytes = self.written_bytes = 0
        self.updates = 0  # updates written
        self._pack, self._out = np.empty(0, np.uint8), np.empty(0, np.int64)
        if state is not None:  # resumed: each file as the checkpoint recorded it, the rest removed
            named = {(int(r), int(e)): [int(n), int(done), int(level)] for r, e, n, done, level in state}
            for path in folder.glob("upd-*.i64"):
                _, r, e = path.stem.split("-")
                if (int(r), int(e)) not in named:
                    path.unlink()
            for key, (n, _, _) in named.items():
                fd = os.open(self.path(*key), os.O_WRONLY | os.O_CREAT, 0o644)  # an emptied one may be gone
                try:
                    os.ftruncate(fd, n)
                finally:
                    os.close(fd)
            self.files = named

    def path(self, r: int, e: int) -> Path:
        return self.folder / f"upd-{r}-{e}.i64"

    def state(self) -> list[list[int]]:
        return [[r, e, n, done, level] for (r, e), (n, done, level) in sorted(self.files.items())]

    def outstanding(self) -> int:
        """Bytes written and not yet read back."""
        return sum(n - done for n, done, _ in self.files.values())

    def add(self, r: int, e: int, level: int, updates: np.ndarray) -> None:
        """Append ``updates`` (one round's for ``r``) as one frame: sorted (the updates
        of a ply commute), their gaps as varints (:func:`~solver.kernels.lean_disk.pack_updates`)."""
        from solver.kernels.lean_disk import pack_updates

        if not len(updates):
            return
        key = (r, e)
        n, done, _ = self.files.get(key, (0, 0, level))
        ordered = np.sort(updates)
        if len(self._pack) < 10 * len(ordered) + FRAME:
            self._pack = np.empty(10 * len(ordered) + FRAME, np.uint8)
        size = pack_updates(ordered, self._pack[FRAME:])
        self._pack[:FRAME] = np.frombuffer(np.array([len(ordered), size], "<u4").tobytes(), np.uint8)
        fd = os.open(self.path(r, e), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.lseek(fd, n, os.SEEK_SET)  # past what a killed solve may have left
            spill._append(fd, memoryview(self._pack[: FRAME + size]))
        finally:
            os.close(fd)
        self.files[key] = [n + FRAME + size, done, level]
        self._dirty.add(key)
        self.written_bytes += FRAME + size
        self.updates += len(ordered)

    def waiting(self, r: int) -> bool:
        return any(n > done for (q, _), (n, done, _) in self.files.items() if q == r)

    def any_waiting(self) -> bool:
        return any(n > done for n, done, _ in self.files.values())

    def take(self, r: int, e: int):
        """The updates waiting for partition ``r``, as ``(ply sent, array)`` a frame at a
        time, oldest first; ``e``: the pass now running (a file of an earlier pass read to
        the end is spent)."""
        from solver.kernels.lean_disk import unpack_updates

        for key in sorted(k for k in self.files if k[0] == r):
            n, done, level = self.files[key]
            if n > done:
                with open(self.path(*key), "rb", buffering=0) as f:
                    f.seek(done)
                    while done < n:
                        head = f.read(FRAME)
                        count, size = (int(x) for x in np.frombuffer(head, "<u4")) if len(head) == FRAME else (0, -1)
                        data = np.frombuffer(f.read(size), np.uint8) if size > 0 else np.empty(0, np.uint8)
                        if size < 0 or len(data) != size:
                            raise OSError(f"{self.path(*key)} is short: the disk mode's files are damaged")
                        if len(self._out) < count:
                            self._out = np.empty(count, np.int64)
                        unpack_updates(data, count, self._out)
                        done += FRAME + size
                        self.files[key][1] = done
                        self.read_bytes += FRAME + size
                        yield level, self._out[:count]
            if key[1] < e:  # spent: its pass is over, nothing more comes
                del self.files[key]
                self._dirty.discard(key)
                if self.keep_spent:
                    self._spent.append(key)
                    self.spent_bytes += n
                else:
                    self.path(*key).unlink(missing_ok=True)
            elif n:  # read to its end, and this pass may append more: emptied, so that the bytes read go
                self.files[key] = [0, 0, level]
                self._dirty.discard(key)
                if self.keep_spent:  # the last checkpoint may still name its bytes
                    self._emptied.append(key)
                    self.spent_bytes += n
                else:
                    os.truncate(self.path(*key), 0)

    def sync(self) -> None:
        for key in sorted(self._dirty):
            fd = os.open(self.path(*key), os.O_RDONLY)
            try:
                spill._fsync(fd)
            finally:
                os.close(fd)
        self._dirty.clear()

    def drop_spent(self) -> None:
        """A checkpoint is written: the files read to their end since the last one go
        (their bytes; an emptied file stays for the appends of its pass)."""
        self.spent_bytes = 0
        for key in self._spent:
            self.path(*key).unlink(missing_ok=True)
        for key in self._emptied:
            if key in self.files and self.files[key][0] == 0:
                os.truncate(self.path(*key), 0)
        self._spent, self._emptied = [], []
