"""Checkpoints of the disk mode (:mod:`solver.retro.disk`): a killed solve resumes after
the last partition written.

After a partition is written back, the state of a disk-mode solve is on disk already:
each partition's cells (in the slot :class:`~solver.retro.disk_parts.PartFiles` notes),
the updates waiting in the bucket files (how far each is written and read), the ply logs,
where the pass stands (the ply, the next partition, each partition's cursor). A
checkpoint, taken after every partition written (in the counters pass, the plies and the
merge), makes those durable (fsync) and records them in one small JSON file,
``state.json`` in the disk mode's folder, with the ply-log table of each partition whose
log changed beside it (``plies-{r}.{n}.npy``, ``n`` the checkpoint's number), written to
temporary names and renamed, the JSON last: a kill leaves the old checkpoint or the new
one. Only then is the partition's old slot removed (so one partition is on disk twice at
most), and the bucket files read to the end since the last checkpoint. A solve killed at
any point resumes from it exactly: files cut back to the recorded lengths, files it does
not name removed. In the merge, the partitions whose values are in the database (synced)
are removed after the checkpoint that says so.

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
VERSION = 3  # 3: a checkpoint after every partition written (stage, next partition, ply-log tables by number)


class DiskCheckpoints(Checkpoints):
    """The checkpoint of the disk mode's folder ``folder`` (``every_s`` None: none)."""

    def __init__(self, folder: Path, rules: dict, every_s: float | None):
        super().__init__(folder, rules, every_s)
        self.folder = Path(folder)
        self.path = self.folder / NAME
        self.holds = False  # a checkpoint is on disk
        self.last: dict | None = None
        self.tables: list[int | None] = []  # the number of each partition's ply-log table on disk
        self.serial = 0  # the number of the next table written

    @property
    def on(self) -> bool:
        return self.every_s is not None

    def start(self, spent: float) -> None:
        self.start_group(spent)

    def _table(self, r: int, n: int | None) -> Path:
        return self.folder / f"plies-{r}.{n}.npy"

    def save(self, solve, **state) -> None:
        """Record the solve's state (``stage``, ``level``: the ply running or the next
        one, ...); then remove what it no longer names. An :class:`OSError` is the
        caller's (:meth:`error`), the old checkpoint stays."""
        t0 = checkpoint._now()
        solve.files.sync()
        solve.buckets.sync()
        freed = state.get("freed", solve.freed)  # partitions in the database: their logs are not named
        kept = [r for r in range(solve.parts) if r >= freed and solve.logs[r] is not None]
        changed = sorted(solve.changed)
        if len(self.tables) != solve.parts:
            self.tables = [None] * solve.parts
            changed = kept
        n = self.serial
        self.serial += 1
        for r in changed:
            log = solve.logs[r]
            if r not in kept:
                continue
            log.sync()
            tmp = self.folder / f"plies-{r}.tmp.npy"
            np.save(tmp, np.ascontiguousarray(log.table(), dtype="<i8"))
            os.replace(tmp, self._table(r, n))
        old = list(self.tables)
        tables = [(n if r in changed else old[r]) if r in kept else None for r in range(solve.parts)]
        head = {
            "version": VERSION, "rules": self.rules, "bounds": [int(b) for b in solve.bounds], "cap": solve.cap,
            "slots": list(solve.files.slot), "buckets": solve.buckets.state(), "tables": tables,
            "logs": [0 if log is None else int(log.size) for log in solve.logs], "live": [sorted(s) for s in solve.live],
            "top": solve.top, "cursor": solve.cursor, "at": solve.at, "epoch": solve.epoch, "counted": solve.counted,
            "freed": solve.freed, "invalid": solve.invalid, "seconds": round(self.spent(), 3), **state,
        }
        tmp = self.path.with_name(NAME + ".tmp")
        with open(tmp, "w") as f:
            json.dump(head, f, sort_keys=True)
            f.flush()
            checkpoint._fsync(f.fileno())
        os.replace(tmp, self.path)
        _sync_folder(self.folder)
        for r in range(solve.parts):
            if old[r] is not None and old[r] != tables[r]:
                self._table(r, old[r]).unlink(missing_ok=True)
        self.tables = tables
        solve.changed.clear()
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
            freed = int(head["freed"])
            tables = [None if r < freed else np.load(self._table(r, head["tables"][r]))
                      for r in range(len(bounds) - 1)]
            for r in range(freed, min(len(bounds) - 1, int(head["counted"]))):
                part = self.folder / f"part-{r}.{head['slots'][r]}.u8"
                if part.stat().st_size != bounds[r + 1] - bounds[r]:
                    return None
        except (OSError, ValueError, KeyError, TypeError):
            return None
        try:
            logs = [None if t is None else PlyLog.resume(self.folder / f"p{r}", t.astype(np.int64).reshape(-1, 6), n)
                    for r, (t, n) in enumerate(zip(tables, head["logs"]))]
            solve = make(bounds, int(head["cap"]), head["slots"], head["buckets"], logs)
            solve.files.drop_others()
            for r in range(freed):
                solve.files.drop(r)
        except OSError as e:
            raise self.error(e) from None
        solve.live = [set(s) for s in head["live"]]
        solve.top = int(head["top"])
        solve.cursor, solve.at, solve.epoch = head["cursor"], head["at"], int(head["epoch"])
        solve.counted, solve.freed, solve.invalid = int(head["counted"]), freed, int(head["invalid"])
        self.tables = list(head["tables"])
        for name in self.folder.glob("plies-*.npy"):  # tables of a checkpoint that was not completed
            r, n = name.name.split(".")[0][6:], name.name.split(".")[1]
            if n == "tmp" or int(n) != self.tables[int(r)]:
                name.unlink(missing_ok=True)
        self.serial = max([t for t in self.tables if t is not None], default=-1) + 1
        self.holds, self.last = True, head
        return solve, head

    def error(self, e: OSError) -> StoreError:
        """The one line for a file of the disk mode that cannot be written or read."""
        where = "the solve starts over"
        if self.last and self.last.get("stage") == "merge":
            where = "it goes on from the checkpoint in the merge"
        elif self.last:
            where = f"it goes on from the checkpoint at ply {self.last['level']}"
        what = "the disk mode's files"
        if is_space_error(e):
            return StoreError(f"{full_error(self.folder, 0, what, 'the disk is full')} ({where})")
        return StoreError(f"cannot write {what} into {self.folder}: {os_reason(e)} (run again, {where})")
