"""The lean solve's disk mode (``solve --memory``): the in-memory solve's values bit for
bit, from partitions on disk, through kills, resumes and a full disk."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from solver.cli.main import main
from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.db.verify import verify_db
from solver.game.config import make_config
from solver.retro import checkpoint, disk, disk_budget, disk_checkpoint, driver, spill
from solver.retro.disk import FOLDER, DiskSolve
from solver.retro.disk_budget import disk_plan
from solver.retro.disk_checkpoint import DiskCheckpoints
from solver.retro.parts import part_bounds

CFG = make_config("hex3", 3)
CFG_TOTAL = 987_120  # hex(3) 3v3's positions: its cells
ARGS = ["solve", "--board", "hex3", "--balls", "3", "--lean"]
BUDGET = "128K"  # hex(3) 3v3 (987,120 positions) in 16 partitions


@pytest.fixture(autouse=True)
def no_fsync(monkeypatch):
    """A checkpoint follows every partition written: hundreds of them here, each a few
    fsyncs. The kills these tests stand in for (a process ended, the machine still up)
    lose nothing the page cache holds; fsync matters only where the machine itself stops."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    monkeypatch.setattr(checkpoint, "_fsync", lambda fd: None)


@pytest.fixture(scope="module")
def reference(solved_db):
    with open_db(solved_db(CFG, (3, 3))) as db:
        return dict(tier_checksums(db))


def _same(db, reference) -> None:
    with open_db(db) as d:
        assert dict(tier_checksums(d)) == reference
    assert not (db / FOLDER).exists()  # the partitions and the checkpoint are spent


class Stop(Exception):
    """Stands in for a kill: raised as a ply starts."""


def _stop_at(monkeypatch, level: int, ran: list[int]) -> None:
    real = DiskSolve.ply

    def ply(self, lvl, between=None):
        ran.append(lvl)
        if lvl == level:
            raise Stop(lvl)
        return real(self, lvl, between)

    monkeypatch.setattr(DiskSolve, "ply", ply)


def test_the_plan_cuts_the_cells_within_the_budget():
    plan = disk_plan(987_120, 128 << 10)
    assert plan.parts == 16 and plan.part_bytes <= 64 << 10 < 2 * plan.part_bytes
    assert plan.cap * disk_budget.UPDATE_BYTES <= 64 << 10
    assert disk_plan(987_120, 1 << 30).parts == 1


def test_the_disk_mode_writes_the_in_memory_values(tmp_path, capsys, reference):
    db = tmp_path / "db"
    assert main([*ARGS, "--memory", BUDGET, "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert "disk mode: 16 partitions" in err
    assert "counters (disk, 16 partitions)" in err and " moved (" in err
    _same(db, reference)
    assert verify_db(db, progress=False).ok
    (db / FOLDER).mkdir()  # as a kill after the last tier record leaves it
    (db / FOLDER / disk_checkpoint.NAME).write_text("{}")
    assert main([*ARGS, "--memory", BUDGET, "--db", str(db), "-q"]) == 0
    _same(db, reference)


def test_a_budget_that_holds_the_solve_runs_it_in_memory(tmp_path, monkeypatch, reference):
    monkeypatch.setattr(disk, "solve_disk", lambda *a, **k: pytest.fail("the disk mode for a solve that fits"))
    db = tmp_path / "db"
    assert main([*ARGS, "--memory", "1G", "--db", str(db), "-q"]) == 0
    _same(db, reference)


def test_an_interrupted_disk_solve_goes_on_from_its_checkpoint(tmp_path, monkeypatch, reference):
    db = tmp_path / "db"
    ran: list[int] = []
    _stop_at(monkeypatch, 12, ran)
    with pytest.raises(Stop):
        driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=128 << 10)
    assert (db / FOLDER / disk_checkpoint.NAME).exists()
    monkeypatch.undo()
    ran = []
    _stop_at(monkeypatch, -1, ran)
    called = []
    real = DiskSolve.counters
    monkeypatch.setattr(DiskSolve, "counters", lambda self, *a: called.append(1) or real(self, *a))
    report = driver.solve(CFG, db, progress=False, checkpoint_s=0)  # no --memory: the checkpoint's budget
    assert report.solved_now == ["x3v3"]
    # from the checkpoint after ply 11's last partition: no counters pass, no ply run twice
    assert ran[0] == 11 and ran == sorted(ran) and not called
    _same(db, reference)


@pytest.mark.slow
def test_a_kill_in_the_middle_of_a_ply_resumes_exactly(tmp_path, monkeypatch, reference):
    """A kill after some partitions of a ply are written back (their other slot) and
    some updates appended: the rerun reads the checkpoint's slots and cuts the buckets."""
    db = tmp_path / "db"
    real_write = disk.PartFiles.write
    writes = []

    def write(self, r, cells, first=False):
        real_write(self, r, cells, first)
        writes.append(r)
        if len(writes) == 16 * 9 + 5:  # inside a ply, well after the counters
            raise Stop(r)

    monkeypatch.setattr(disk.PartFiles, "write", write)
    with pytest.raises(Stop):
        driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=128 << 10)
    monkeypatch.undo()
    ran: list[int] = []
    _stop_at(monkeypatch, -1, ran)
    driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=128 << 10)
    assert ran[0] >= 5  # from the checkpoint of the ply before the kill
    _same(db, reference)


@pytest.mark.slow
def test_a_ply_whose_updates_would_fill_the_disk_takes_several_passes_and_resumes_inside(tmp_path, monkeypatch,
                                                                                       reference):
    monkeypatch.setattr(disk_budget, "ROOM", 0.05)  # 49 kB of updates waiting at most
    monkeypatch.setattr(disk_budget, "ROOM_MIN", 0)
    db = tmp_path / "db"
    passes = []
    real = DiskSolve._pass

    def one_pass(self, level, after):
        passes.append(level)
        if len(passes) == 30:
            assert self.cursor is not None and len(set(passes)) < len(passes)  # inside a ply of several passes
            raise Stop(level)
        return real(self, level, after)

    monkeypatch.setattr(DiskSolve, "_pass", one_pass)
    with pytest.raises(Stop):
        driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=128 << 10)
    with open(db / FOLDER / disk_checkpoint.NAME) as f:
        head = json.load(f)
    assert head["cursor"] is not None  # saved between two passes of a ply
    resumed_at = len(passes)
    driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=128 << 10)
    assert passes[resumed_at] == head["level"]
    _same(db, reference)


def test_a_full_disk_stops_the_disk_mode_in_one_line_and_the_rerun_goes_on(tmp_path, monkeypatch, capsys, reference):
    db = tmp_path / "db"
    real = spill._append
    calls = []

    def append(fd, data):
        calls.append(1)
        if len(calls) > 400:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(spill, "_append", append)
    assert main([*ARGS, "--memory", BUDGET, "--db", str(db), "-q", "--checkpoint", "0"]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("rotary: error: cannot write the disk mode's files")
    assert "the disk is full" in lines[0] and "it goes on from the checkpoint at ply" in lines[0], lines[0]
    monkeypatch.undo()
    assert main([*ARGS, "--memory", BUDGET, "--db", str(db), "-q", "--checkpoint", "0"]) == 0
    _same(db, reference)


@pytest.mark.parametrize("args, says", [
    (["--memory", "lots"], "a size such as 100M or 8G, got 'lots'"),
    (["--memory", "10K"], "too small for the disk mode"),
    (["--memory", "128K", "--edge"], "the disk mode (--memory below the in-memory need) solves rules where no ball"),
])
def test_a_budget_it_cannot_keep_is_one_line(tmp_path, capsys, args, says):
    assert main([*ARGS, *args, "--db", str(tmp_path / "db"), "-q"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and says in err, err


def test_a_disk_too_small_for_the_plan_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(disk_budget, "free_bytes", lambda path: 2_000_000)  # the cells, the logs, 2 MiB of updates
    assert main([*ARGS, "--memory", BUDGET, "--db", str(tmp_path / "db"), "-q"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the disk mode needs at least 4.1 MB on disk" in err, err
    assert "a partition twice" in err and "2.0 MB are free" in err
    # without checkpoints: the cells and the logs (2 GB), 1/8 byte a cell of updates, twice
    plan = disk_plan(10**9, 1 << 30, two_slots=False, free=2_600_000_000)
    assert plan.fits and plan.room == 170_000_000 and plan.disk_bytes == 2_340_000_000
    # the merge: the cells, the logs and the database of one partition of 0.5 G positions
    assert plan.merge_bytes == 2_000_000_000 + int(disk_budget.DB_BYTES * 500_000_000)
    assert not disk_plan(10**9, 1 << 30, two_slots=True, free=2_600_000_000).fits  # one partition more
    assert not disk_plan(10**9, 1 << 30, two_slots=False, free=2_500_000_000).fits  # the merge's need


class Kill(BaseException):
    """Stands in for kill -9 at the n-th file operation: nothing of the solve's handles it."""


def _kill_at(monkeypatch, n: int, seen: list[str]) -> None:
    """Raise :class:`Kill` at the ``n``-th write, fsync, rename or removal of a file."""
    def counted(what, real):
        def call(*a, **k):
            seen.append(what)
            if len(seen) == n:
                raise Kill(what)
            return real(*a, **k)
        return call

    monkeypatch.setattr(spill, "_append", counted("append", spill._append))
    monkeypatch.setattr(disk_checkpoint.os, "replace", counted("rename", os.replace))
    monkeypatch.setattr(disk.PartFiles, "write", counted("partition", disk.PartFiles.write))
    monkeypatch.setattr(disk.PartFiles, "drop", counted("drop", disk.PartFiles.drop))
    monkeypatch.setattr(disk_checkpoint.DiskCheckpoints, "save", counted("save", DiskCheckpoints.save))
    monkeypatch.setattr(DiskSolve, "free", counted("free", DiskSolve.free))


def test_killed_at_random_points_it_resumes_to_the_same_checksums(tmp_path, monkeypatch, reference):
    """Three kills at random file operations (seeded) — in the counters pass, a ply, the
    merge, a checkpoint being written — each rerun going on from the last checkpoint."""
    memory = 256 << 10  # 8 partitions
    seen: list[str] = []
    _kill_at(monkeypatch, 0, seen)
    driver.solve(CFG, tmp_path / "full", progress=False, checkpoint_s=0, lean=True, memory=memory)
    monkeypatch.undo()
    calls = len(seen)
    rng = random.Random(7)
    db = tmp_path / "db"
    stops = []
    for _ in range(3):
        seen = []
        _kill_at(monkeypatch, rng.randint(1, calls // 2), seen)
        try:
            driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=memory)
        except Kill as e:
            stops.append(str(e))
        monkeypatch.undo()
    assert len(stops) >= 2, stops
    driver.solve(CFG, db, progress=False, checkpoint_s=0, lean=True, memory=memory)
    _same(db, reference)


def test_the_disk_holds_the_cells_and_one_partition_more_at_most(tmp_path, monkeypatch, reference):
    """Measured at each checkpoint as it begins (the partition just written in its new
    slot, its old one not yet removed): the partitions' files hold the cells and one
    partition more at most; besides them only the ply logs, the bucket files (within the
    plan's room, and as many spent) and the checkpoint's own small files."""
    memory = 256 << 10  # 8 partitions
    plan = disk_plan(CFG_TOTAL, memory)
    sizes = []
    real = DiskCheckpoints.save

    def save(self, solve, **state):
        by = {"part": 0, "upd": 0, "log": 0, "plies": 0, "other": 0}
        for p in (tmp_path / "db" / FOLDER).rglob("*"):
            if p.is_file():
                kind = "log" if p.name == "plies.bin" else p.name.split("-")[0]
                by[kind if kind in by else "other"] += p.stat().st_size
        logs = [log for log in solve.logs if log is not None]
        sizes.append((state["stage"], solve.freed, by, (sum(log.size for log in logs),
                                                        sum(128 + 48 * len(log.table()) for log in logs))))
        real(self, solve, **state)

    monkeypatch.setattr(DiskCheckpoints, "save", save)
    driver.solve(CFG, tmp_path / "db", progress=False, checkpoint_s=0, lean=True, memory=memory)
    _same(tmp_path / "db", reference)
    largest = int(np.diff(part_bounds(0, CFG_TOTAL, plan.parts)).max())
    assert plan.parts == 8 and len(sizes) > 8 * 20 and {s for s, *_ in sizes} == {"counters", "plies", "merge"}
    for stage, freed, by, (logs, tables) in sizes:
        assert by["part"] <= CFG_TOTAL + largest, (stage, by)
        assert by["log"] == logs  # the ply logs, no more
        assert by["plies"] <= tables, (stage, freed, by)  # one table a partition (the checkpoint's: no larger than the log's now)
        assert by["upd"] <= 2 * plan.room + plan.parts * plan.cap * 10, (stage, by)  # waiting, and read since
        assert by["other"] <= 16 << 10, (stage, by)  # the checkpoint's JSON
    counters = [by["part"] for stage, _, by, _ in sizes if stage == "counters"]
    assert counters == sorted(counters) and counters[-1] == CFG_TOTAL  # written once, one at a time
    plies = [by["part"] for stage, _, by, _ in sizes if stage == "plies"]
    assert max(plies) > CFG_TOTAL  # the partition just written is there twice, at the moment measured
    merge = [(freed, by["part"]) for stage, freed, by, _ in sizes if stage == "merge"]
    assert [f for f, _ in merge] == sorted(f for f, _ in merge) and merge[0][1] == CFG_TOTAL
    assert merge[-1][1] < CFG_TOTAL  # the partitions in the database are removed as the merge goes


@pytest.mark.slow
def test_killed_with_sigkill_at_random_times_it_resumes_to_the_same_checksums(tmp_path, reference):
    """The real thing: the command run in a process of its own, ended by SIGKILL at random
    times (seeded) until it finishes."""
    db = tmp_path / "db"
    cmd = [sys.executable, "-c", "import sys; from solver.cli.main import main; sys.exit(main(sys.argv[1:]))",
           *ARGS, "--memory", BUDGET, "--db", str(db), "-q", "--checkpoint", "0"]
    rng = random.Random(11)
    kills = 0
    for _ in range(12):
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=rng.uniform(2, 8) if kills < 4 else 600)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
            continue
        assert proc.returncode == 0, proc.stderr.read().decode()
        break
    assert kills >= 2
    _same(db, reference)
