"""Checkpoints of the disk mode (:mod:`solver.retro.disk`): a killed solve resumes between plies.

Between two plies the state of a disk-mode solve is on disk already: each partition's
cells (in the slot :class:`~solver.retro.disk_parts.PartFiles` notes), the updates
waiting in the bucket files (how far each is written and read), the ply logs. A
checkpoint makes those durable (fsync) and records where they stand in one small JSON
file, ``state.json`` in the disk mode's folder, with each partition's ply-log table
beside it (``plies-{r}.npy``), written to temporary names and renamed, the JSON last: a
kill leaves the old checkpoint or the new one. After it, the slots it names are never
written again (a partition goes to its other slot) and the bucket files it names are kept
until the next one, so that a solve killed at any point resumes from it exactly:
files cut back to the recorded lengths, files it does not name removed.

It is used only by a solve of the same rules (the database header) and the same index
bounds; the partition count is the checkpoint's, whatever ``--memory`` the rerun gives.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from solver.db.guard import full_error, is_space_error
from solver.db.store import os_reason
from solver.errors import StoreError
from solver.retro import checkpoint
from solver.retro.checkpoint import Checkpoints, _sync_folder
from solver.retro.spill import PlyLog

NAME = "state.json"
VERSION = 2  # 2: passes inside a ply (cursors), bucket files by pass


class DiskCheckpoints(Checkpoints):
    """The checkpoint of the disk mode's folder ``folder`` (``every_s`` None: none)."""

    def __init__(self, folder: Path, rules: dict, every_s: float | None):
        super().__init__(folder, rules, every_s)
        self.folder = Path(folder)
        self.path = self.folder / NAME
        self.holds = False  # a checkpoint is on disk
        self.last: dict | None = None

    def start(self, spent: float) -> None:
        self.start_group(spent)

    def save(self, solve, **state) -> None:
        """Record the solve's state between plies (``level``: the next ply to run); an
        :class:`OSError` is the caller's (:meth:`error`), the old checkpoint stays."""
        t0 = checkpoint._now()
        solve.files.sync()
        solve.buckets.sync()
        for log in solve.logs:
            log.sync()
        for r, log in enumerate(solve.logs):
            tmp = self.folder / f"plies-{r}.tmp.npy"
            np.save(tmp, np.ascontiguousarray(log.table(), dtype="<i8"))
            os.replace(tmp, self.folder / f"plies-{r}.{solve.epoch}.npy")
        head = {
            "version": VERSION, "rules": self.rules, "bounds": [int(b) for b in solve.bounds], "cap": solve.cap,
            "slots": list(solve.files.slot), "buckets": solve.buckets.state(),
            "logs": [int(log.size) for log in solve.logs], "live": [sorted(s) for s in solve.live],
            "top": solve.top, "cursor": solve.cursor, "epoch": solve.epoch, "seconds": round(self.spent(), 3), **state,
        }
        tmp = self.path.with_name(NAME + ".tmp")
        with open(tmp, "w") as f:
            json.dump(head, f, sort_keys=True)
            f.flush()
            checkpoint._fsync(f.fileno())
        os.replace(tmp, self.path)
        _sync_folder(self.folder)
        old = self.last["epoch"] if self.last else None
        if old is not None and old != solve.epoch:
            for r in range(solve.parts):
                (self.folder / f"plies-{r}.{old}.npy").unlink(missing_ok=True)
        solve.files.kept_now()
        solve.buckets.drop_spent()
        self.holds, self.last = True, head
        self.written += 1
        self.since = checkpoint._now()
        self.took = self.since - t0

    def load(self, layout, make):
        """``(solve, state)`` restored from the checkpoint of these rules, or None;
        ``make(bounds, cap, slots, buckets, logs)``: the solve of those files
        (:class:`solver.retro.disk.DiskSolve`)."""
        try:
            with open(self.path) as f:
                head = json.load(f)
            if head.get("version") != VERSION or head.get("rules") != self.rules:
                return None
            bounds = np.array(head["bounds"], np.int64)
            if bounds[0] != layout.groups[0][1] or bounds[-1] != layout.groups[0][2]:
                return None
            tables = [np.load(self.folder / f"plies-{r}.{head['epoch']}.npy") for r in range(len(bounds) - 1)]
            for r in range(len(bounds) - 1):
                part = self.folder / f"part-{r}.{head['slots'][r]}.u8"
                if part.stat().st_size != bounds[r + 1] - bounds[r]:
                    return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        try:
            logs = [PlyLog.resume(self.folder / f"p{r}", t.astype(np.int64).reshape(-1, 6), n)
                    for r, (t, n) in enumerate(zip(tables, head["logs"]))]
            solve = make(bounds, int(head["cap"]), head["slots"], head["buckets"], logs)
        except OSError as e:
            raise self.error(e) from None
        solve.live = [set(s) for s in head["live"]]
        solve.top = int(head["top"])
        solve.cursor, solve.epoch = head["cursor"], int(head["epoch"])
        self.holds, self.last = True, head
        return solve, head

    def error(self, e: OSError) -> StoreError:
        """The one line for a file of the disk mode that cannot be written or read."""
        where = f"it goes on from the checkpoint at ply {self.last['level']}" if self.last else "the solve starts over"
        what = "the disk mode's files"
        if is_space_error(e):
            return StoreError(f"{full_error(self.folder, 0, what, 'the disk is full')} ({where})")
        return StoreError(f"cannot write {what} into {self.folder}: {os_reason(e)} (run again, {where})")
