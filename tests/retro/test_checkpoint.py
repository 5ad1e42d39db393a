"""Checkpoints inside a group (:mod:`solver.retro.checkpoint`): a solve killed in the
middle of a long group resumes at the last ply boundary it saved, and ends with the same
database as an uninterrupted solve.

hex(3) 3v3 edge: ten groups, the largest ``x3v3`` (987,120 cells, 49 plies);
``checkpoint_s=0`` saves at every ply boundary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from solver.db.database import open_db
from solver.db.header import db_header
from solver.db.verify import verify_db
from solver.game.config import make_config
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.retro import checkpoint, driver
from solver.retro.checkpoint import Checkpoints
from tests.helpers import racing_writes, rewrite_checkpoint_header, rotary_exe

CFG = make_config("hex3", 3, edge=True)
LARGEST = "x3v3"  # the last and largest group of hex3 3v3 edge
KILL_AT = 12  # the ply before which the first solve is stopped
REAL_RESULTS = driver._results


@pytest.fixture(scope="module")
def reference(solved_db):
    return solved_db(CFG, (3, 3))


def _values(path: Path) -> tuple[bytes, dict]:
    with open_db(path) as db:
        meta = {k: {f: v for f, v in m.items() if f not in ("seconds", "peak_kb")} for k, m in db.tier_meta.items()}
        return db.values().tobytes(), meta


def _same_as_reference(path: Path, reference: Path) -> None:
    assert _values(path) == _values(reference)
    assert verify_db(path, progress=False).ok
    assert not (path / checkpoint.NAME).exists()  # spent once its group is in the database


class Stop(Exception):
    """Stands in for a kill: raised in the middle of a group."""


def _watch(monkeypatch, stop_at: int | None = None) -> list[tuple[str, int | None]]:
    """Record every phase the driver runs in the largest group: ``("init", None)``,
    ``("level", L)``; with ``stop_at``, raise :class:`Stop` before ply ``stop_at``."""
    ran: list[tuple[str, int | None]] = []
    real = REAL_RESULTS
    lo = Layout(CFG).groups[-1][1]

    def results(run, arglist):
        kind, glo = arglist[0][0], arglist[0][3]
        if glo == lo and kind in ("init", "level"):
            level = arglist[0][5] if kind == "level" else None
            if level == DMASK:  # the scans that time a ply for the values bar decide nothing
                yield from real(run, arglist)
                return
            if level is not None and level == stop_at:
                raise Stop(level)
            ran.append((kind, level))
        yield from real(run, arglist)

    monkeypatch.setattr(driver, "_results", results)
    return ran


def test_a_resumed_group_starts_at_its_checkpoint_ply(tmp_path, monkeypatch, reference):
    db = tmp_path / "db"
    ran = _watch(monkeypatch, stop_at=KILL_AT)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    assert ran[0] == ("init", None) and ran[-1] == ("level", KILL_AT - 1)
    head = Checkpoints(db, db_header(Layout(CFG))).header()
    assert head is not None
    assert (head["group"], head["level"]) == (LARGEST, KILL_AT)  # saved after ply KILL_AT - 1

    ran = _watch(monkeypatch)
    bars = []
    real_bar = driver.ProgressBar

    def bar(desc, *args, **kwargs):
        bars.append((desc, kwargs.get("initial", 0)))
        return real_bar(desc, *args, **kwargs)

    monkeypatch.setattr(driver, "ProgressBar", bar)
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    # the values bar goes on from the positions decided before the checkpoint
    assert head["decided"] > 0 and (f"{LARGEST} values", head["decided"]) in bars
    assert f"{LARGEST} counters" not in [desc for desc, _ in bars]
    # no counters pass, no ply run twice: the group went on from the checkpoint
    assert ran[0] == ("level", KILL_AT), ran[:3]
    assert all(kind == "level" for kind, _ in ran)
    assert [level for _, level in ran] == list(range(KILL_AT, KILL_AT + len(ran)))
    _same_as_reference(db, reference)


def test_a_resumed_tier_records_the_time_of_the_runs_before(tmp_path, monkeypatch):
    """The tier's ``seconds`` is the group's whole solve: the checkpoint carries the time
    taken before the kill, and the rerun adds its own."""
    db = tmp_path / "db"
    _watch(monkeypatch, stop_at=KILL_AT)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    path = db / checkpoint.NAME
    assert Checkpoints(db, db_header(Layout(CFG))).header()["seconds"] > 0
    rewrite_checkpoint_header(path, seconds=5000.0)  # as if the first run had taken 5000 s
    _watch(monkeypatch)
    t0 = time.perf_counter()
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    rerun = time.perf_counter() - t0
    with open_db(db) as d:
        assert 5000 <= d.tier_meta[LARGEST]["seconds"] <= 5000 + rerun


def test_checkpoints_off_the_default_interval(tmp_path, monkeypatch, reference):
    """With the default interval no group of this solve lasts long enough to save one."""
    saved = []
    monkeypatch.setattr(Checkpoints, "save", lambda self, *a, **k: saved.append(a[3:]))
    driver.solve(CFG, tmp_path / "db", jobs=1, progress=False)
    assert saved == []
    monkeypatch.undo()
    _same_as_reference(tmp_path / "db", reference)


def test_a_checkpoint_of_other_rules_or_damaged_is_never_used(tmp_path, monkeypatch, reference):
    db = tmp_path / "db"
    _watch(monkeypatch, stop_at=KILL_AT)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    layout = Layout(CFG)
    (_, glo, ghi) = layout.groups[-1]
    rules = db_header(layout)
    good = (db / checkpoint.NAME).read_bytes()
    scratch = np.zeros(layout.total, np.uint16)
    assert Checkpoints(db, rules).load(scratch, glo, ghi, LARGEST)["level"] == KILL_AT

    other = db_header(Layout(make_config("hex3", 3)))  # same board and balls, base rules
    assert Checkpoints(db, other).load(scratch, glo, ghi, LARGEST) is None
    assert Checkpoints(db, rules).load(scratch, glo - 1, ghi, LARGEST) is None  # another group
    assert Checkpoints(db, rules).load(scratch, glo, ghi, "x2v3+x3v2") is None

    # the same group and bounds, the header claiming other rules: ignored
    n = int.from_bytes(good[8:12], "little")
    head = json.loads(good[12 : 12 + n])
    head["rules"] = other
    forged = json.dumps(head, sort_keys=True).encode()
    (db / checkpoint.NAME).write_bytes(good[:8] + len(forged).to_bytes(4, "little") + forged + good[12 + n :])
    assert Checkpoints(db, rules).load(scratch, glo, ghi, LARGEST) is None

    for damage in ("flip", "cut"):
        bad = bytearray(good)
        if damage == "flip":
            bad[len(bad) // 2] ^= 0x40
        else:
            bad = bad[: len(bad) - 100]
        (db / checkpoint.NAME).write_bytes(bytes(bad))
        assert Checkpoints(db, rules).load(scratch, glo, ghi, LARGEST) is None, damage

    # a damaged checkpoint left in the folder: the group starts from its counters
    ran = _watch(monkeypatch)
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    assert ran[0] == ("init", None)
    _same_as_reference(db, reference)


def test_a_checkpoint_that_cannot_be_written_is_skipped(tmp_path, monkeypatch, capsys, reference):
    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint, "_fsync", full)
    driver.solve(CFG, tmp_path / "db", jobs=1, progress=False, checkpoint_s=0)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("rotary: warning: no checkpoint written"), err
    assert "no space left on device" in err[0]
    monkeypatch.undo()
    _same_as_reference(tmp_path / "db", reference)
    assert not list((tmp_path / "db").glob("checkpoint*"))


@pytest.mark.parametrize("phase", ["plies", "counters"])
def test_kill_9_in_the_largest_group_resumes_from_its_checkpoint(tmp_path, reference, phase):
    """A real ``rotary solve -j 2 --checkpoint 0`` killed with SIGKILL in its largest group
    — during its plies, or during its counters pass (two workers setting ranges while the
    checkpoint is written) — after a checkpoint of that group was written; the rerun goes
    on from it (during the plies: no counters bar for that group) and ends with the
    database of an uninterrupted solve, which ``rotary verify`` passes."""
    db = tmp_path / "db"
    args = ["solve", "--board", "hex3", "--balls", "3", "--edge", "--db", str(db), "-j", "2"]
    rules = db_header(Layout(CFG))
    proc = subprocess.Popen([rotary_exe(), *args, "-q", "--checkpoint", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    head = None
    try:
        end = time.monotonic() + 300
        while time.monotonic() < end and proc.poll() is None:
            head = Checkpoints(db, rules).header()
            if head is not None and head["group"] == LARGEST and head["phase"] == phase:
                if head["level"] >= 8 or (phase == "counters" and head["done"]):
                    break
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the solve ended before it could be killed"
    assert head is not None and head["group"] == LARGEST
    left = Checkpoints(db, rules).header()
    assert left is not None and left["group"] == LARGEST and left["phase"] == phase, left
    assert left["level"] >= head["level"]

    rerun = subprocess.run([rotary_exe(), *args, "--checkpoint", "0"], capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "Traceback" not in rerun.stderr
    assert f"{LARGEST} values" in rerun.stderr
    if phase == "plies":
        assert f"{LARGEST} counters" not in rerun.stderr  # resumed at a ply, not from the counters
    _same_as_reference(db, reference)
    check = subprocess.run([rotary_exe(), "verify", "--db", str(db), "-q"], capture_output=True, text=True, timeout=600)
    assert check.returncode == 0, check.stdout + check.stderr


def test_checkpoints_wait_ten_times_what_the_last_one_took(tmp_path, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(checkpoint, "_now", lambda: clock[0])
    ck = Checkpoints(tmp_path, {"rules": 1}, every_s=300)
    ck.start_group()
    clock[0] += 299
    assert not ck.due()
    clock[0] += 1
    assert ck.due()
    ck.took = 60.0  # a slow disk: 60 s for the last one
    ck.since = clock[0]
    clock[0] += 599
    assert not ck.due()
    clock[0] += 1
    assert ck.due()
    assert Checkpoints(tmp_path, {}, every_s=0).due() and not Checkpoints(tmp_path, {}, every_s=None).due()


def test_a_kill_in_the_counters_pass_keeps_its_finished_ranges(tmp_path, monkeypatch, reference):
    """The counters pass is long too (40-60 % of a group's time measured on hex(3) 4v4):
    its ranges are independent, so a checkpoint lists the finished ones and a rerun sets
    only the others."""
    monkeypatch.setattr(driver, "CHUNK", 1 << 16)  # 16 counters tasks in the largest group
    db = tmp_path / "db"
    layout = Layout(CFG)
    _, glo, ghi = layout.groups[-1]
    asked: list[list[tuple[int, int]]] = []
    stop = [True]

    def results(run, arglist):
        counters = arglist[0][0] == "init" and arglist[0][3] == glo
        if counters:
            asked.append([(a[1], a[2]) for a in arglist])
        for i, r in enumerate(REAL_RESULTS(run, arglist)):
            if counters and stop[0] and i == 5:
                raise Stop(i)
            yield r

    monkeypatch.setattr(driver, "_results", results)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    first = asked[-1]
    assert len(first) >= 10
    head = Checkpoints(db, db_header(layout)).header()
    assert head["group"] == LARGEST and head["phase"] == "counters"
    assert head["done"] == [[glo, first[4][1]]]  # five ranges set, in one piece

    stop[0] = False
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0)
    again = asked[-1]
    assert again[0][0] == first[4][1] and again[-1][1] == ghi  # only the ranges not set before
    assert sum(hi - lo for lo, hi in again) == ghi - first[4][1]
    _same_as_reference(db, reference)


def test_merge_ranges():
    assert driver.merge_ranges([(5, 9), (0, 3), (3, 5), (12, 14)]) == [(0, 9), (12, 14)]
    assert driver._not_done(0, 100, [(0, 10), (40, 60)], 1) == [(10, 40), (60, 100)]
    assert driver._not_done(0, 100, [], 1) == [(0, 100)]
    assert driver._not_done(0, 100, [(0, 100)], 1) == []


def test_a_counters_checkpoint_is_whole_while_tasks_write_values(tmp_path, monkeypatch):
    """The counters pass saves while its tasks still run: a value a task writes between the
    checksum of a chunk and its write must not make the checkpoint unreadable (a hex(3) 7v7
    solve lost its counters pass that way)."""
    layout = Layout(CFG)
    _, glo, ghi = layout.groups[-1]
    vals = np.zeros(layout.total, np.uint16)
    vals[glo:ghi] = np.arange(ghi - glo) % 5000
    done = [(glo, glo + 1000)]
    ck = Checkpoints(tmp_path, db_header(layout))
    with monkeypatch.context() as m:
        racing_writes(m, vals, ghi - 1)  # a task of a range not finished sets its counters
        assert ck.save(vals, glo, ghi, LARGEST, 0, 3, 0, 0, done=done)
    scratch = np.zeros_like(vals)
    head = Checkpoints(tmp_path, db_header(layout)).load(scratch, glo, ghi, LARGEST)
    assert head is not None and head["done"] == [[glo, glo + 1000]]
    assert np.array_equal(scratch[glo : glo + 1000], vals[glo : glo + 1000])
