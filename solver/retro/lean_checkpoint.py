"""Checkpoints of the lean solve: a killed lean solve resumes where it last saved, inside a ply too.

The lean solve (:mod:`solver.retro.lean`) keeps a group's state in three places: its
slice of the byte cells (counters and where each position stands), the ply log (the
positions each ply took, :class:`~solver.retro.spill.PlyLog`) and the far lists (the
positions waiting for a later ply, :class:`~solver.retro.spill.FarLists`). The two
files only grow, so a checkpoint at a ply boundary — or inside the counters pass, with
the ranges whose counters are set, as :mod:`solver.retro.checkpoint` does — is the
cells, the files' lengths and the ply log's table of segments. It lives in the
temporary folder beside those files, ``lean.tmp/checkpoint.lean``::

    b"RTRYLCK1" | header length: u32 LE | header: JSON | cells: uint8 (ghi - glo)
    | segments: int64 LE (6 a segment) | crc32 of cells and segments: u32 LE | b"RTRYLEND"

The header names the rules (:func:`solver.db.header.db_header`), the group and its
bounds, ``phase``, ``level``, ``top``, ``invalid``, ``decided`` (and ``done`` in the
counters pass), ``seconds`` (as in :mod:`solver.retro.checkpoint`), the ply log's length
and segment count, and each far list's length.
``phase`` is ``counters``, ``plies`` (at the boundary before ply ``level``) or ``ply``
(inside ply ``level``; from version 2 on). A checkpoint of version 1 is read as it was
written; one of another version, or with a phase its version does not have, is not used
(a rotary that knows only version 1 starts the group over from a version 2 one).

Inside a ply. Ply L is cut into tasks — ranges of cells it scans, or slices of its list
of positions. A task takes each position of its share whose cell says decided at ply L
(``AT_*`` of L's parity, :mod:`solver.kernels.lean`): marks it ``DONE_*``, then tells its
parents by compare-and-swap (a counter lowered, a win or loss at L + 1 — the other
parity —, a loss further ahead into a far list). Its results — the positions it took,
its far entries, the positions it listed for ply L + 1, its largest distance — are
taken in by the solve's thread: into the ply log, the far lists, ``top`` and
``decided``. A checkpoint inside a ply is written only when no task runs: the solve
submits no more, lets the submitted ones finish and takes their results in
(:meth:`solver.retro.lean_units.Units.drain`). So every effect of a finished task is in
what is saved — its cells, its positions in the ply log, its entries in the far lists,
its distance in ``top`` — and no task is half done. The set of finished tasks is not
needed: the cells say it. While ply L runs, a cell says ``AT_*`` of L's parity only for a
position of ply L not yet taken (its own tasks write the other parity; what ply L − 2
left of that parity it took), so the resumed ply scans the group for those cells and
takes exactly what the unfinished tasks would have, each position once, each parent
told once, however the rerun cuts the ply. The ply's arrivals from far list L are in
the cells already (that list is spent, and not read again); the positions the finished
tasks listed for ply L + 1 are not kept, so ply L + 1 scans, as after a resumed
boundary. The values depend only on the ply that takes each position, not on the order
within it, so the rerun's database is the uninterrupted solve's bit for bit
(``tests/retro/test_lean_ply_checkpoint.py``).

Saving: due at most every ``every_s`` seconds and never sooner than ten times what the
last one took (:class:`~solver.retro.checkpoint.Checkpoints`); inside a ply only with a
positive ``every_s`` (0: at every ply boundary, and only there). The ply log and far
lists are fsynced, then the checkpoint is written to a
temporary file, fsynced, renamed over the old one and the folder fsynced; only then are
the far lists read since the last checkpoint removed. A kill at any moment leaves the
old checkpoint or the new one, and the files each points into, whole. Loading: a
checkpoint of other rules, of another group, damaged, or whose files are shorter than
it says is not used (the group starts from its counters, the folder emptied); one that
is used has each file cut back to its recorded length.

Unlike the two-byte solve's, a checkpoint that cannot be written stops the solve: the
lean solve cannot go on without its temporary folder either, and stopping keeps the
last checkpoint, from which the rerun goes on (:func:`temp_error`).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from solver.db.guard import full_error, is_space_error
from solver.db.store import os_reason, remove_quietly
from solver.errors import StoreError
from solver.retro import checkpoint
from solver.retro.checkpoint import EVERY_S, Checkpoints, _read_header, _sync_folder
from solver.retro.spill import FarLists, PlyLog

NAME = "checkpoint.lean"
MAGIC, END = b"RTRYLCK1", b"RTRYLEND"
VERSION = 2  # 2: phase "ply" too (inside a ply); a 1 is read as it was written
PHASES = {1: ("counters", "plies"), 2: ("counters", "plies", "ply")}  # what each version may hold
CHUNK = 1 << 25  # cells per write or read (32 MB)


class LeanCheckpoints(Checkpoints):
    """The checkpoint in the lean solve's temporary folder ``folder``, for a solve of the
    rules ``rules``; when it is due as :class:`~solver.retro.checkpoint.Checkpoints`
    says (``every_s`` None: never)."""

    def __init__(self, folder: str | os.PathLike, rules: dict, every_s: float | None = EVERY_S):
        super().__init__(folder, rules, every_s)
        self.path = Path(folder) / NAME
        self.holds = False  # a checkpoint of the group in progress is on disk

    def save(self, cells: np.ndarray, glo: int, ghi: int, group: str, log: PlyLog, far: FarLists,
             state: dict) -> None:
        """Write the group's state: ``state`` holds ``phase``, ``level``, ``top``,
        ``invalid``, ``decided`` and, in the counters pass, ``done``. An
        :class:`OSError` is the caller's (:func:`temp_error`); the old checkpoint stays."""
        t0 = checkpoint._now()
        log.sync()
        far.sync()
        table = np.ascontiguousarray(log.table(), dtype="<i8")
        header = {
            "version": VERSION, "rules": self.rules, "group": group, "glo": int(glo), "ghi": int(ghi),
            "log_size": int(log.size), "segments": len(table), "far": {str(d): int(n) for d, n in far.sizes.items()},
            "seconds": round(self.spent(), 3), **state,
        }
        tmp = self.path.with_name(NAME + ".tmp")
        try:
            with open(tmp, "wb") as f:
                head = json.dumps(header, sort_keys=True).encode()
                f.write(MAGIC + struct.pack("<I", len(head)) + head)
                crc = 0
                for lo in range(glo, ghi, CHUNK):
                    # a copy: in the counters pass tasks still write cells while this runs,
                    # and the checksum must be of the bytes written
                    part = cells[lo : min(lo + CHUNK, ghi)].copy()
                    crc = zlib.crc32(part, crc)
                    f.write(part)
                crc = zlib.crc32(table, crc)
                f.write(table.tobytes())
                f.write(struct.pack("<I", crc) + END)
                f.flush()
                checkpoint._fsync(f.fileno())
            os.replace(tmp, self.path)
            _sync_folder(self.path.parent)
        except BaseException:
            remove_quietly(tmp)
            raise
        self.holds = True
        far.drop_spent()
        self.written += 1
        self.since = checkpoint._now()
        self.took = self.since - t0

    def clear(self) -> None:
        remove_quietly(self.path, self.path.with_name(NAME + ".tmp"))
        self.holds = False

    def header(self) -> dict | None:
        """The checkpoint's header if there is one of these rules, else None."""
        try:
            with open(self.path, "rb") as f:
                head = _read_header(f, MAGIC)
        except (OSError, ValueError):
            return None
        return head if _known(head) and head.get("rules") == self.rules else None

    def load(self, cells: np.ndarray, glo: int, ghi: int, group: str) -> tuple[dict, PlyLog, FarLists] | None:
        """Restore group ``group`` (``glo..ghi``) from a checkpoint of these rules: its
        header, and the ply log and far lists cut back to what it recorded; None where
        there is none that fits (``cells[glo:ghi]`` may then hold part of one: the
        counters pass sets every cell)."""
        folder = self.path.parent
        try:
            with open(self.path, "rb") as f:
                head = _read_header(f, MAGIC)
                if (
                    not _known(head) or head.get("rules") != self.rules
                    or head.get("group") != group or head.get("glo") != glo or head.get("ghi") != ghi
                ):
                    return None
                nseg = int(head["segments"])
                if os.fstat(f.fileno()).st_size != f.tell() + (ghi - glo) + 48 * nseg + 4 + len(END):
                    return None
                far = {int(d): int(n) for d, n in head["far"].items()}
                if _size(folder / PlyLog.NAME) < head["log_size"] or any(
                    _size(folder / f"far-{d}.i64") < n for d, n in far.items()
                ):
                    return None  # a file it points into is gone or short
                crc = 0
                for lo in range(glo, ghi, CHUNK):
                    n = min(CHUNK, ghi - lo)
                    if f.readinto(memoryview(cells[lo : lo + n])) != n:
                        return None
                    crc = zlib.crc32(cells[lo : lo + n], crc)
                raw = f.read(48 * nseg)
                crc = zlib.crc32(raw, crc)
                tail = f.read(4 + len(END))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if len(tail) != 4 + len(END) or tail[4:] != END or struct.unpack("<I", tail[:4])[0] != crc:
            return None
        table = np.frombuffer(raw, dtype="<i8").reshape(nseg, 6).astype(np.int64)
        try:
            log = PlyLog.resume(folder, table, int(head["log_size"]))
            lists = FarLists.resume(folder, far)
        except OSError as e:
            raise temp_error(folder, e, None) from None
        self.holds = True
        return head, log, lists


def _known(head: dict | None) -> bool:
    """A header of a version this solve reads, with a phase that version has."""
    if head is None or type(head.get("version")) is not int:
        return False
    return head.get("phase") in PHASES.get(head["version"], ())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def temp_error(folder: Path, e: OSError, last: dict | None, need: int = 0) -> StoreError:
    """The one line for a temporary file of the lean solve that cannot be written, saying
    where the rerun goes on from (``last``: the state of the last checkpoint; None: there
    is none, the group starts over)."""
    if last is None:
        where = "the group starts over"
    else:
        at = {"plies": f"ply {last['level']}", "ply": f"inside ply {last['level']}"}.get(last["phase"],
                                                                                      "inside its counters pass")
        where = f"it goes on from the checkpoint of {last['group']}, {at}"
    what = "the lean solve's temporary files"
    if is_space_error(e):
        return StoreError(f"{full_error(folder, need, what, 'the disk is full')} ({where})")
    return StoreError(f"cannot write {what} into {folder}: {os_reason(e)} (run again, {where})")
