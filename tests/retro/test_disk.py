"""The lean solve's disk mode (``solve --memory``): the in-memory solve's values bit for
bit, from partitions on disk, through kills, resumes and a full disk."""

from __future__ import annotations

import errno
import json

import pytest

from solver.cli.main import main
from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.db.verify import verify_db
from solver.game.config import make_config
from solver.retro import disk, disk_budget, disk_checkpoint, driver, spill
from solver.retro.disk import FOLDER, DiskSolve
from solver.retro.disk_budget import disk_plan

CFG = make_config("hex3", 3)
ARGS = ["solve", "--board", "hex3", "--balls", "3", "--lean"]
BUDGET = "128K"  # hex(3) 3v3 (987,120 positions) in 16 partitions


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
    monkeypatch.setattr(DiskSolve, "counters", lambda self, bar: called.append(1) or real(self, bar))
    report = driver.solve(CFG, db, progress=False, checkpoint_s=0)  # no --memory: the checkpoint's budget
    assert report.solved_now == ["x3v3"]
    assert ran[0] == 12 and ran == sorted(ran) and not called  # no counters pass, no ply run twice
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

    def one_pass(self, level):
        passes.append(level)
        if len(passes) == 30:
            assert self.cursor is not None and len(set(passes)) < len(passes)  # inside a ply of several passes
            raise Stop(level)
        return real(self, level)

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
    monkeypatch.setattr(disk_budget, "free_bytes", lambda path: 2_000_000)  # the cells twice, the logs, 2 MiB of updates
    assert main([*ARGS, "--memory", BUDGET, "--db", str(tmp_path / "db"), "-q"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the disk mode needs at least 5.1 MB on disk" in err, err
    assert "--checkpoint off keeps the cells once" in err
    plan = disk_plan(10**9, 1 << 30, two_slots=False, free=2_500_000_000)  # room for 1/8 byte a cell
    assert plan.fits and plan.room == 125_000_000 and plan.disk_bytes == 2_250_000_000
    assert not disk_plan(10**9, 1 << 30, two_slots=False, free=2_100_000_000).fits

