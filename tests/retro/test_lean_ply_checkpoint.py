"""Checkpoints inside a ply of the lean solve (:mod:`solver.retro.lean_checkpoint`, phase
``ply``): a lean solve stopped or killed with SIGKILL inside a ply — ply 0 or a later one,
one thread or two — after a checkpoint inside it is rerun, goes on inside that ply (no
counters pass, no position taken twice) and gives the database of an uninterrupted
solve, bit for bit.

hex(3) 3v3 edge, as in ``test_lean_checkpoint.py``: the solves start from a copy of the
two-byte solve's database without its largest group ``x3v3`` (987,120 cells, 49 plies),
whose tasks are made small (:data:`CHUNK`, :data:`LIST_CHUNK`) so that each ply has many.
Where the checkpoint inside the ply is written is chosen by the test (after the k-th task
of the ply), the interval ``--checkpoint`` being positive; a real ``rotary solve`` killed
at a random moment is under ``-m slow``, on hex(3) 4v4 against an uninterrupted solve.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from solver.cli.main import main
from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.db.header import db_header
from solver.game.config import make_config
from solver.index import Layout
from solver.retro import driver, lean, lean_checkpoint, spill
from solver.retro.lean_checkpoint import LeanCheckpoints
from tests.helpers import rotary_exe
from tests.retro.test_lean_checkpoint import ARGS, CFG, LARGEST, _same, _unsolved, _watch

CHUNK = 1 << 14  # cells a scanning task (x3v3: 61 tasks a scanned ply)
LIST_CHUNK = 1 << 9  # listed positions a task
EVERY = "0.000001"  # --checkpoint: positive, so that the solve may save inside a ply


@pytest.fixture(scope="module")
def solved(solved_db):
    return solved_db(CFG, (3, 3))


@pytest.fixture(scope="module")
def reference(solved):
    with open_db(solved) as db:
        return dict(tier_checksums(db)), db.tier_meta[LARGEST]


@pytest.fixture(autouse=True)
def _small_tasks(monkeypatch):
    monkeypatch.setattr(lean, "CHUNK", CHUNK)
    monkeypatch.setattr(lean, "LIST_CHUNK", LIST_CHUNK)


def _header(db) -> dict | None:
    return LeanCheckpoints(db / spill.FOLDER, db_header(Layout(CFG))).header()


class Stop(Exception):
    """Stands in for a Ctrl-C inside a ply."""


def _save_inside(monkeypatch, level: int, k: int) -> list[dict]:
    """The largest group saves inside ply ``level`` once its k-th task has run, and
    nowhere else inside a ply; the headers it saves inside one are listed."""
    glo = Layout(CFG).groups[-1][1]
    ran, saved = [0], []
    real_level, real_save = lean.Group.level, lean.Saver.save

    def run(self, lo, hi, lvl, idx):
        if self.glo == glo and lvl == level:
            ran[0] += 1
        return real_level(self, lo, hi, lvl, idx)

    def due_inside(self):
        return self.g.glo == glo and ran[0] >= k and not saved

    def save(self, **state):
        real_save(self, **state)
        if state["phase"] == "ply":
            saved.append(state)

    monkeypatch.setattr(lean.Group, "level", run)
    monkeypatch.setattr(lean.Saver, "due_inside", due_inside)
    monkeypatch.setattr(lean.Saver, "save", save)
    return saved


def _taken(monkeypatch) -> dict[int, int]:
    """Positions each ply takes in, by ply (every group)."""
    taken: dict[int, int] = {}
    real = lean.Ply.add

    def add(self, result):
        taken[self.level] = taken.get(self.level, 0) + len(result[0])
        real(self, result)

    monkeypatch.setattr(lean.Ply, "add", add)
    return taken


@pytest.mark.parametrize(("level", "jobs"), [(0, 1), (12, 2), pytest.param(0, 2, marks=pytest.mark.slow),
                                            pytest.param(20, 1, marks=pytest.mark.slow)])
def test_a_lean_solve_stopped_inside_a_ply_goes_on_inside_it(level, jobs, tmp_path, monkeypatch, solved, reference):
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    saved = _save_inside(monkeypatch, level, 3)
    more = [0]

    def at(point, n):
        if point == "ply" and n == level and saved:
            more[0] += 1
            if more[0] > 2:  # two tasks taken in past the checkpoint: lost, run again
                raise Stop

    monkeypatch.setattr(lean, "_at", at)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=jobs, progress=False, checkpoint_s=float(EVERY), lean=True)
    head = _header(db)
    assert head is not None and head["version"] == lean_checkpoint.VERSION
    assert (head["group"], head["phase"], head["level"]) == (LARGEST, "ply", level), head
    monkeypatch.undo()  # the rerun cuts its plies as it likes: the state does not depend on the cut

    ran = _watch(monkeypatch)
    taken = _taken(monkeypatch)
    report = driver.solve(CFG, db, jobs=jobs, progress=False, checkpoint_s=0, lean=True)
    assert report.solved_now == [LARGEST]
    assert ran[0] == ("level", level) and ("init", None) not in ran, ran[:3]
    # each decided position of x3v3 taken once: before the checkpoint or after it
    meta = reference[1]
    assert head["decided"] + sum(taken.values()) == meta["wins"] + meta["losses"]
    assert 0 < head["decided"] and taken[level] > 0
    _same(db, reference[0])


KILLER = r"""
import os, signal, sys
from solver.retro import lean, spill
from solver.cli.main import main

level, k, chunk, list_chunk = (int(a) for a in sys.argv[1:5])
lean.CHUNK, lean.LIST_CHUNK = chunk, list_chunk
ran, saved = [0], []
real_level, real_save, real_append = lean.Group.level, lean.Saver.save, spill._append


def run(self, lo, hi, lvl, idx):
    if self.ghi == self.layout.total and lvl == level:  # the largest group, x3v3, is the last
        ran[0] += 1
    return real_level(self, lo, hi, lvl, idx)


def save(self, **state):
    real_save(self, **state)
    if state["phase"] == "ply":
        saved.append(state)


def append(fd, data):
    if saved and os.readlink(f"/proc/self/fd/{fd}").endswith("plies.bin"):
        real_append(fd, data[: len(data) // 2])  # half a segment of a later task, the other thread at work
        os.kill(os.getpid(), signal.SIGKILL)
    real_append(fd, data)


lean.Group.level = run
lean.Saver.save = save
lean.Saver.due_inside = lambda self: self.name == "x3v3" and ran[0] >= k and not saved
spill._append = append
sys.exit(main(sys.argv[5:]))
"""


@pytest.mark.parametrize("level", [0, pytest.param(20, marks=pytest.mark.slow)])
def test_kill_9_inside_a_ply_of_lean_j2_and_the_same_command_goes_on(level, tmp_path, monkeypatch, solved,
                                                                     reference):
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    argv = [*ARGS, "--db", str(db), "-q", "-j", "2", "--checkpoint", EVERY]
    proc = subprocess.run([sys.executable, "-c", KILLER, str(level), "4", str(CHUNK), str(LIST_CHUNK), *argv],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    head = _header(db)
    assert (head["group"], head["phase"], head["level"]) == (LARGEST, "ply", level), head
    ran = _watch(monkeypatch)
    assert main(argv) == 0
    assert ran and ran[0] == ("level", level) and ("init", None) not in ran, ran[:3]
    _same(db, reference[0])


def _rewrite(path, **changes) -> None:
    """The checkpoint at ``path`` with its header changed (the crc covers the cells and
    the segments, not the header)."""
    raw = path.read_bytes()
    magic, (n,) = raw[:8], struct.unpack("<I", raw[8:12])
    head = json.loads(raw[12 : 12 + n])
    head.update(changes)
    new = json.dumps(head, sort_keys=True).encode()
    path.write_bytes(magic + struct.pack("<I", len(new)) + new + raw[12 + n :])


def test_a_checkpoint_of_version_1_is_gone_on_from_and_no_phase_a_version_lacks_is_used(tmp_path, monkeypatch,
                                                                                      solved, reference):
    """A checkpoint of version 1 (ply boundaries and the counters pass only) is read as it
    was written; a header of another version, or with a phase its version does not
    have, is never used."""
    db = _unsolved(solved, tmp_path / "db", LARGEST)

    def at(point, n):
        if point == "ply" and n == 12:
            raise Stop

    monkeypatch.setattr(lean, "_at", at)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    monkeypatch.undo()
    assert (_header(db)["phase"], _header(db)["level"]) == ("plies", 12)
    layout = Layout(CFG)
    _, glo, ghi = layout.groups[-1]
    path = db / spill.FOLDER / lean_checkpoint.NAME
    good = path.read_bytes()
    scratch = np.zeros(layout.total, np.uint8)
    for version, phase in ((1, "ply"), (3, "plies"), (2, "merge"), ("2", "plies"), ([2], "plies"), (None, "plies")):
        _rewrite(path, version=version, phase=phase)
        assert _header(db) is None, (version, phase)
        assert LeanCheckpoints(db / spill.FOLDER, db_header(layout)).load(scratch, glo, ghi, LARGEST) is None
        path.write_bytes(good)
    _rewrite(path, version=1)
    ran = _watch(monkeypatch)
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    assert ran[0] == ("level", 12) and ("init", None) not in ran
    _same(db, reference[0])


def test_a_full_disk_says_the_rerun_goes_on_inside_the_ply(tmp_path):
    e = OSError(errno.ENOSPC, "No space left on device")
    line = str(lean_checkpoint.temp_error(tmp_path, e, {"group": LARGEST, "phase": "ply", "level": 7}))
    assert line.endswith(f"(it goes on from the checkpoint of {LARGEST}, inside ply 7)"), line
    line = str(lean_checkpoint.temp_error(tmp_path, e, {"group": LARGEST, "phase": "plies", "level": 7}))
    assert line.endswith(f"(it goes on from the checkpoint of {LARGEST}, ply 7)"), line


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["2", "1"])
def test_a_real_rotary_solve_killed_at_a_random_moment_inside_a_ply(jobs, tmp_path):
    """``rotary solve --board hex3 --balls 4 --lean -j 2 --checkpoint 0.000001`` (one
    group of 25.9 million cells, 76 plies, about 30 s on two cores) killed with SIGKILL
    at a random moment after a checkpoint inside a ply, rerun: the same tiers as a solve
    never killed."""
    argv = ["solve", "--board", "hex3", "--balls", "4", "--lean", "-j", jobs, "--checkpoint", EVERY, "-q"]
    whole = tmp_path / "whole"
    assert subprocess.run([rotary_exe(), *argv, "--db", str(whole)], capture_output=True, timeout=900).returncode == 0
    db = tmp_path / "db"
    rules = db_header(Layout(make_config("hex3", 4)))
    proc = subprocess.Popen([rotary_exe(), *argv, "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 600
        while time.monotonic() < end and proc.poll() is None:
            head = LeanCheckpoints(db / spill.FOLDER, rules).header()
            if head is not None and head["phase"] == "ply":
                break
            time.sleep(0.002)
        time.sleep(random.uniform(0, 0.5))
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the solve ended before it could be killed"
    left = LeanCheckpoints(db / spill.FOLDER, rules).header()
    assert left is not None and left["phase"] in ("ply", "plies"), left
    rerun = subprocess.run([rotary_exe(), *argv, "--db", str(db)], capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    with open_db(whole) as a, open_db(db) as b:
        assert dict(tier_checksums(a)) == dict(tier_checksums(b))
    assert not (db / spill.FOLDER).exists()
