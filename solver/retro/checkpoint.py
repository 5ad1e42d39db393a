"""Checkpoints inside a long group: a killed solve resumes at the last ply boundary.

A group's tiers are committed to the database in one transaction when the group is done
(:mod:`solver.retro.driver`), so a kill loses at most the group in progress. For an
hour-long group that is the hour; a checkpoint bounds it to ``every_s`` seconds.

At a ply boundary — after the counters pass, or after ply L — the group's whole state is
its slice of the value array (counters and values found so far) plus ``(level, top)``:
the kernels keep nothing else between plies, and the compare-and-swap updates make that
state independent of the schedule. Inside the counters pass (``phase: counters``) it is
the ranges whose counters are set (each task writes only its own range and reads only
lower groups), with ``top`` and ``invalid`` so far. So the checkpoint is that slice and
those numbers, in one file of the database folder, ``checkpoint.rotary``::

    b"RTRYCKP1" | header length: u32 LE | header: JSON | values: uint16 LE (ghi - glo)
    | crc32 of the values: u32 LE | b"RTRYCEND"

The header names the database's rules (the ``config`` record it was built for, see
:func:`solver.db.header.db_header`), the group and its bounds, and ``level``, ``top``,
``invalid`` and ``decided`` (where the values bar stands), and ``seconds``: the group's
time so far, the runs before a resume included (a resumed tier records the whole solve's
time; a checkpoint without it counts from the resume). A checkpoint is written to a
temporary file, fsynced, renamed over the old one and the folder fsynced: a kill leaves
the old checkpoint or the new one, never half of one. It is used only by a solve of the
same rules for the same group; a damaged or stale one is ignored (the group starts from
its counters); after the group commits it is deleted.

Writing one is off the hot path: between plies, at most every ``every_s`` seconds (the
default 300; 0 = at every ply boundary, for tests), 2 bytes per position of the group —
and never sooner than :data:`COST` times the last one took, so that saving costs at most
about a tenth of the solve where the disk is slow (a checkpoint of a multi-GB group takes
as long as the disk needs to write it).
A checkpoint that cannot be written (a full disk) is skipped with one warning; the solve
goes on without.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from solver.db.store import remove_quietly

NAME = "checkpoint.rotary"
MAGIC, END = b"RTRYCKP1", b"RTRYCEND"
VERSION = 2  # 2: counters count moves, weighted (solver.kernels.retro); 1's counted children
CHUNK = 1 << 24  # values per read or write (32 MB)
EVERY_S = 300.0  # default seconds between checkpoints
COST = 10  # the time between two checkpoints is at least COST times what the last one took
_now = time.monotonic  # the tests wind their own clock


class Checkpoints:
    """The checkpoint file of one database folder, for a solve of the rules ``rules``
    (the database header, :func:`solver.db.header.db_header`). ``every_s=None``: none."""

    def __init__(self, folder: str | os.PathLike, rules: dict, every_s: float | None = EVERY_S):
        self.path = Path(folder) / NAME
        self.rules = rules
        self.every_s = every_s
        self.since = _now()
        self.written = 0  # checkpoints written by this solve
        self.took = 0.0  # seconds the last one took
        self.failed = False
        self.began = _now()  # the group's start, moved back by the seconds of the runs before a resume

    # ------------------------------------------------------------------ writing

    def start_group(self, spent: float = 0.0) -> None:
        """The clock of :meth:`due` starts with each group; ``spent``: the seconds the
        group took in the runs before (a resumed checkpoint's ``seconds``)."""
        self.since = _now()
        self.began = self.since - spent

    def spent(self) -> float:
        """Seconds the group has taken, the runs before a resume included: saved in each
        checkpoint so that a resumed tier records the whole solve's time, not the last run's."""
        return _now() - self.began

    def due(self) -> bool:
        if self.every_s is None or self.failed:
            return False
        wait = self.every_s if self.every_s == 0 else max(self.every_s, COST * self.took)
        return _now() - self.since >= wait

    def save(self, vals, glo: int, ghi: int, group: str, level: int, top: int, invalid: int, decided: int,
             done: list[tuple[int, int]] | None = None) -> bool:
        """Write the group's state at a ply boundary (``level``: the next ply to run), or
        inside its counters pass with ``done``: the ranges whose counters are set (``top``
        and ``invalid`` so far; the other cells of the slice mean nothing)."""
        header = {
            "version": VERSION, "rules": self.rules, "group": group, "glo": int(glo), "ghi": int(ghi),
            "level": int(level), "top": int(top), "invalid": int(invalid), "decided": int(decided),
            "phase": "plies" if done is None else "counters",
            "done": [[int(lo), int(hi)] for lo, hi in done or []], "seconds": round(self.spent(), 3),
        }
        tmp = self.path.with_name(NAME + ".tmp")
        t0 = _now()
        try:
            with open(tmp, "wb") as f:
                head = json.dumps(header, sort_keys=True).encode()
                f.write(MAGIC + struct.pack("<I", len(head)) + head)
                crc = 0
                for lo in range(glo, ghi, CHUNK):
                    # a copy: in the counters pass tasks still write values while this runs,
                    # and the checksum must be of the bytes written
                    part = np.array(vals[lo : min(lo + CHUNK, ghi)], dtype="<u2", copy=True)
                    crc = zlib.crc32(part, crc)
                    f.write(part)
                f.write(struct.pack("<I", crc) + END)
                f.flush()
                _fsync(f.fileno())
            os.replace(tmp, self.path)
            _sync_folder(self.path.parent)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            self.failed = True
            print(
                f"rotary: warning: no checkpoint written in {self.path.parent} ({(e.strerror or str(e)).lower()}); "
                "the solve goes on without checkpoints",
                file=sys.stderr,
            )
            return False
        self.written += 1
        self.since = _now()
        self.took = self.since - t0
        return True

    def clear(self) -> None:
        """Delete the checkpoint (its group is committed, or the solve is complete)."""
        remove_quietly(self.path, self.path.with_name(NAME + ".tmp"))

    # ------------------------------------------------------------------ reading

    def header(self) -> dict | None:
        """The checkpoint's header if there is one of these rules, else None."""
        try:
            with open(self.path, "rb") as f:
                head = _read_header(f)
        except (OSError, ValueError):
            return None
        if head is None or head.get("version") != VERSION or head.get("rules") != self.rules:
            return None
        return head

    def load(self, vals, glo: int, ghi: int, group: str) -> dict | None:
        """Restore group ``group`` (``glo..ghi``) into ``vals`` from a valid checkpoint of
        these rules: its header (``level``, ``top``, ``invalid``, ``decided``), or None —
        no checkpoint, another group's, other rules', or a damaged one (then ``vals[glo:ghi]``
        may hold part of it: the counters pass overwrites every cell)."""
        try:
            with open(self.path, "rb") as f:
                head = _read_header(f)
                if (
                    head is None or head.get("version") != VERSION or head.get("rules") != self.rules
                    or head.get("group") != group or head.get("glo") != glo or head.get("ghi") != ghi
                ):
                    return None
                if os.fstat(f.fileno()).st_size != f.tell() + 2 * (ghi - glo) + 4 + len(END):
                    return None
                crc = 0
                for lo in range(glo, ghi, CHUNK):
                    n = min(CHUNK, ghi - lo)
                    part = np.frombuffer(f.read(2 * n), dtype="<u2")
                    if len(part) != n:
                        return None
                    crc = zlib.crc32(part, crc)
                    vals[lo : lo + n] = part
                tail = f.read(4 + len(END))
        except (OSError, ValueError):
            return None
        if len(tail) != 4 + len(END) or tail[4:] != END or struct.unpack("<I", tail[:4])[0] != crc:
            return None
        return head


def resumed_seconds(head: dict | None) -> float:
    """The seconds a checkpoint's group had taken when it was saved (0: no checkpoint, or
    one written before checkpoints kept the time)."""
    seconds = (head or {}).get("seconds", 0.0)
    return float(seconds) if isinstance(seconds, (int, float)) and seconds >= 0 else 0.0


_fsync = os.fsync  # the tests make it fail as a full disk would


def _read_header(f, magic: bytes = MAGIC) -> dict | None:
    start = f.read(len(magic) + 4)
    if len(start) != len(magic) + 4 or start[: len(magic)] != magic:
        return None
    (n,) = struct.unpack("<I", start[len(magic) :])
    if n > 1 << 24:
        return None
    head = json.loads(f.read(n).decode())
    return head if isinstance(head, dict) else None


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
