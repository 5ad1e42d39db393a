"""Checkpoints of the lean solve: a killed lean solve resumes at the last ply boundary.

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
counters pass), the ply log's length and segment count, and each far list's length.

Saving: the ply log and far lists are fsynced, then the checkpoint is written to a
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
VERSION = 1
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
            **state,
        }
        tmp = self.path.with_name(NAME + ".tmp")
        try:
            with open(tmp, "wb") as f:
                head = json.dumps(header, sort_keys=True).encode()
                f.write(MAGIC + struct.pack("<I", len(head)) + head)
                crc = 0
                for lo in range(glo, ghi, CHUNK):
                    part = cells[lo : min(lo + CHUNK, ghi)]
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
        return head if head is not None and head.get("version") == VERSION and head.get("rules") == self.rules else None

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
                    head is None or head.get("version") != VERSION or head.get("rules") != self.rules
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
        at = f"ply {last['level']}" if last["phase"] == "plies" else "inside its counters pass"
        where = f"it goes on from the checkpoint of {last['group']}, {at}"
    what = "the lean solve's temporary files"
    if is_space_error(e):
        return StoreError(f"{full_error(folder, need, what, 'the disk is full')} ({where})")
    return StoreError(f"cannot write {what} into {folder}: {os_reason(e)} (run again, {where})")
