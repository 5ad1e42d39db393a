"""Checkpoints of the lean solve (:mod:`solver.retro.lean_checkpoint`): a lean solve
killed anywhere — in its counters pass, in the middle of a ply (half a segment of the
ply log or of a far list written), while a checkpoint is written, in the merge, while
the database is written, after the commit — is rerun and goes on from its last
checkpoint to the database of an uninterrupted solve, bit for bit; a full disk stops it
in one line and loses nothing.

hex(3) 3v3 edge: ten groups, the largest ``x3v3`` (987,120 cells, 49 plies, positions
decided ahead through lower tiers waiting in far lists); ``--checkpoint 0`` saves at
every ply boundary. CI kills it in a ply and while the database is written, and a real
``kill -9`` of ``-j 2`` in a ply; ``-m slow`` everywhere else. The reference is the
two-byte solve; the solves killed start from a copy of it without its last groups' tier
records (:func:`_unsolved`), so that they solve only those.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time

import lmdb
import numpy as np
import pytest

from solver.cli.main import main
from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.db.header import db_header
from solver.db.verify import verify_db
from solver.game.config import make_config
from solver.index import Layout
from solver.retro import budget, checkpoint, driver, lean, lean_checkpoint, spill
from solver.retro.lean_checkpoint import LeanCheckpoints
from solver.retro.shape import Shape
from tests.helpers import racing_writes, rewrite_checkpoint_header, rotary_exe

CFG = make_config("hex3", 3, edge=True)
ARGS = ["solve", "--board", "hex3", "--balls", "3", "--edge", "--lean"]
LARGEST = "x3v3"
AT = 8  # the kills land once a checkpoint of the largest group at this ply or later is written


@pytest.fixture(scope="module")
def solved(solved_db):
    return solved_db(CFG, (3, 3))


@pytest.fixture(scope="module")
def reference(solved):
    with open_db(solved) as db:
        return dict(tier_checksums(db))


def _unsolved(solved, db, *tiers: str):
    """``db``: a copy of the database ``solved`` that lacks the records of ``tiers`` (as a
    solve killed before it wrote them leaves it; their blocks are written over)."""
    shutil.copytree(solved, db)
    (db / "solve.lock").unlink(missing_ok=True)
    env = lmdb.open(str(db), max_dbs=4)
    try:
        with env.begin(write=True, db=env.open_db(b"meta")) as txn:
            for key in tiers:
                assert txn.delete(f"tier:{key}".encode())
    finally:
        env.close()
    return db


def _same(db, reference) -> None:
    with open_db(db) as d:
        assert dict(tier_checksums(d)) == reference
    assert verify_db(db, progress=False).ok
    assert not (db / spill.FOLDER).exists()  # the temporary folder and its checkpoint are spent


def _header(db) -> dict | None:
    return LeanCheckpoints(db / spill.FOLDER, db_header(Layout(CFG))).header()


def _watch(monkeypatch, group: int = -1) -> list[tuple[str, int | None]]:
    """What the solve runs in the largest group (or ``groups[group]``): ``("init", None)``
    per counters task, ``("level", L)`` per ply task."""
    ran: list[tuple[str, int | None]] = []
    glo = Layout(CFG).groups[group][1]
    real_init, real_level = lean.Group.init, lean.Group.level

    def init(self, lo, hi):
        if self.glo == glo:
            ran.append(("init", None))
        return real_init(self, lo, hi)

    def level(self, lo, hi, lvl, idx):
        if self.glo == glo:
            ran.append(("level", lvl))
        return real_level(self, lo, hi, lvl, idx)

    monkeypatch.setattr(lean.Group, "init", init)
    monkeypatch.setattr(lean.Group, "level", level)
    return ran


class Stop(Exception):
    """Stands in for a Ctrl-C: raised at a ply of the largest group."""


def _stop_at(monkeypatch, level: int) -> None:
    def at(point, n):
        if point == "ply" and n == level and _saved_in(LARGEST):
            raise Stop(level)

    monkeypatch.setattr(lean, "_at", at)


def _saved_in(group: str) -> bool:
    return _SAVED.get("group") == group


_SAVED: dict = {}


@pytest.fixture(autouse=True)
def _record_saves(monkeypatch):
    """Note the last checkpoint written in this process (``_SAVED``)."""
    _SAVED.clear()
    real = LeanCheckpoints.save

    def save(self, cells, glo, ghi, group, log, far, state):
        real(self, cells, glo, ghi, group, log, far, state)
        _SAVED.clear()
        _SAVED.update(state, group=group)

    monkeypatch.setattr(LeanCheckpoints, "save", save)


def test_an_interrupted_group_goes_on_from_its_checkpoint(tmp_path, monkeypatch, reference):
    db = tmp_path / "db"
    _stop_at(monkeypatch, 12)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    head = _header(db)
    assert (head["group"], head["phase"], head["level"]) == (LARGEST, "plies", 12)  # saved after ply 11
    monkeypatch.setattr(lean, "_at", lambda point, n: None)

    ran = _watch(monkeypatch)
    bars = []
    real_bar = lean.ProgressBar

    def bar(desc, *args, **kwargs):
        bars.append((desc, kwargs.get("initial", 0)))
        return real_bar(desc, *args, **kwargs)

    monkeypatch.setattr(lean, "ProgressBar", bar)
    report = driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    assert report.solved_now == [LARGEST]
    levels = [lvl for _, lvl in ran]
    assert levels[0] == 12 and levels == sorted(levels) and None not in levels  # no counters pass, no ply run twice
    assert head["decided"] > 0 and (f"{LARGEST} values", head["decided"]) in bars
    _same(db, reference)


def test_a_resumed_tier_records_the_time_of_the_runs_before(tmp_path, monkeypatch):
    """The tier's ``seconds`` is the group's whole solve, the run before the stop included."""
    db = tmp_path / "db"
    _stop_at(monkeypatch, 12)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    assert _header(db)["seconds"] > 0
    rewrite_checkpoint_header(db / spill.FOLDER / lean_checkpoint.NAME, seconds=5000.0)
    monkeypatch.setattr(lean, "_at", lambda point, n: None)
    t0 = time.perf_counter()
    report = driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    rerun = time.perf_counter() - t0
    assert report.solved_now == [LARGEST]
    with open_db(db) as d:
        assert 5000 <= d.tier_meta[LARGEST]["seconds"] <= 5000 + rerun


KILLER = r"""
import os, signal, sys
from solver.retro import checkpoint, lean, lean_checkpoint, spill
from solver.cli.main import main

point, group, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
last = {}
real_save = lean_checkpoint.LeanCheckpoints.save
real_append = spill._append


def die():
    os.kill(os.getpid(), signal.SIGKILL)


def armed():
    return last.get("group") == group and last.get("level", -1) >= level


def save(self, cells, glo, ghi, name, log, far, state):
    if point == "checkpoint" and name == group and state["phase"] == "plies" and state["level"] > level:
        checkpoint._fsync = lambda fd: die()  # the new checkpoint written, not yet renamed
    real_save(self, cells, glo, ghi, name, log, far, state)
    last.clear()
    last.update(state, group=name)


def append(fd, data):
    what = os.readlink(f"/proc/self/fd/{fd}")
    if armed() and (point == "ply" and what.endswith("plies.bin") or point == "far" and "far-" in what):
        real_append(fd, data[: len(data) // 2])  # half a segment, then the kill
        die()
    real_append(fd, data)


def at(where, n):
    if where == point and armed():
        die()


lean_checkpoint.LeanCheckpoints.save = save
spill._append = append
lean._at = at
sys.exit(main(sys.argv[4:]))
"""

POINTS = {
    "ply": (LARGEST, AT),  # half a segment of the ply log written
    "far": (LARGEST, AT),  # half a far list's entries written
    "checkpoint": (LARGEST, AT),  # a new checkpoint written, not renamed over the old one
    "merge": ("x2v3+x3v2", 0),  # counting a finished group that stays in the cells
    "write": (LARGEST, AT),  # the store writing the last group, merged again window by window
    "written": (LARGEST, AT),  # the group committed, its checkpoint not yet removed
}
CI_POINTS = ("ply", "write")
LAST_TWO = ("x2v3", "x3v2", LARGEST)  # the tiers of the last two groups


@pytest.mark.parametrize("point", [p if p in CI_POINTS else pytest.param(p, marks=pytest.mark.slow) for p in POINTS])
def test_kill_9_anywhere_in_a_group_and_the_rerun_goes_on(point, tmp_path, monkeypatch, solved, reference):
    db = _unsolved(solved, tmp_path / "db", *(LAST_TWO if point == "merge" else (LARGEST,)))
    group, level = POINTS[point]
    argv = [*ARGS, "--db", str(db), "-q", "--checkpoint", "0"]
    proc = subprocess.run([sys.executable, "-c", KILLER, point, group, str(level), *argv], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    head = _header(db)
    if point == "written":
        assert len(_finished(db)) == 16  # every tier is in; the checkpoint is left over
    else:
        assert head is not None and head["group"] == group, head
        assert not _finished(db) & {LARGEST}
    ran = _watch(monkeypatch, -2 if point == "merge" else -1)
    report = driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    if point == "merge":
        assert ran == [] and report.solved_now == list(LAST_TWO)  # the killed group: straight to its merge
    elif point in ("write", "written"):
        assert ran == [] and report.solved_now == ([] if point == "written" else [LARGEST])  # straight to the merge
    else:
        assert ran and ran[0] == ("level", head["level"]) and ("init", None) not in ran, ran[:3]
    _same(db, reference)


def _finished(db) -> set[str]:
    with open_db(db) as d:
        return set(d.tier_meta)


@pytest.mark.parametrize("phase", ["plies", pytest.param("counters", marks=pytest.mark.slow)])
def test_a_real_kill_9_of_lean_j2_resumes_from_its_checkpoint(tmp_path, solved, reference, phase):
    """A real ``rotary solve --lean -j 2 --checkpoint 0`` (two threads) killed with SIGKILL
    in its largest group at a random moment after a checkpoint of it: during its plies, or
    during its counters pass."""
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    argv = [*ARGS, "--db", str(db), "-j", "2", "--checkpoint", "0"]
    proc = subprocess.Popen([rotary_exe(), *argv, "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    head = None
    try:
        end = time.monotonic() + 300
        while time.monotonic() < end and proc.poll() is None:
            head = _header(db)
            if head is not None and head["group"] == LARGEST and head["phase"] == phase:
                if head["level"] >= AT or (phase == "counters" and head["done"]):
                    break
            time.sleep(0.002)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the solve ended before it could be killed"
    left = _header(db)
    assert left is not None and left["group"] == LARGEST and left["phase"] in (phase, "plies"), left
    rerun = subprocess.run([rotary_exe(), *argv], capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert "Traceback" not in rerun.stderr and f"{LARGEST} values" in rerun.stderr
    if left["phase"] == "plies":
        assert f"{LARGEST} counters" not in rerun.stderr  # resumed at a ply, not from the counters
    _same(db, reference)


def _full(monkeypatch, target: str) -> None:
    """From the first write of the ply log (``plies``) or of the checkpoint (``checkpoint``)
    after a checkpoint of the largest group at ply ``AT`` or later: a full disk."""

    def armed():
        return _SAVED.get("group") == LARGEST and _SAVED.get("level", -1) >= AT

    real_append, real_fsync = spill._append, checkpoint._fsync

    def append(fd, data):
        if target == "plies" and armed() and os.readlink(f"/proc/self/fd/{fd}").endswith("plies.bin"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_append(fd, data)

    def fsync(fd):
        if target == "checkpoint" and armed():
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(spill, "_append", append)
    monkeypatch.setattr(checkpoint, "_fsync", fsync)


@pytest.mark.parametrize("target", ["plies", pytest.param("checkpoint", marks=pytest.mark.slow)])
def test_a_full_disk_stops_the_lean_solve_in_one_line_and_the_rerun_goes_on(target, tmp_path, monkeypatch, capsys,
                                                                            solved, reference):
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    _full(monkeypatch, target)
    assert main([*ARGS, "--db", str(db), "-q", "--checkpoint", "0"]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and len(lines) == 1 and lines[0].startswith("rotary: error: cannot write the lean solve's "), err
    assert "the disk is full" in lines[0] and "run the same command again" in lines[0], lines[0]
    kept = _header(db)
    assert kept is not None and (kept["group"], kept["phase"]) == (LARGEST, "plies") and kept["level"] >= AT
    assert f"checkpoint of {LARGEST}, ply {kept['level']})" in lines[0], lines[0]
    assert not (db / spill.FOLDER / (lean_checkpoint.NAME + ".tmp")).exists()
    monkeypatch.undo()
    ran = _watch(monkeypatch)
    assert main([*ARGS, "--db", str(db), "-q", "--checkpoint", "0"]) == 0
    assert ran[0] == ("level", kept["level"]) and ("init", None) not in ran
    _same(db, reference)


def test_a_checkpoint_of_other_rules_damaged_or_short_of_its_files_is_never_used(tmp_path, monkeypatch, solved,
                                                                                reference):
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    _stop_at(monkeypatch, 12)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    monkeypatch.setattr(lean, "_at", lambda point, n: None)
    layout = Layout(CFG)
    _, glo, ghi = layout.groups[-1]
    folder = db / spill.FOLDER
    path = folder / lean_checkpoint.NAME
    good = path.read_bytes()
    plies = (folder / spill.PlyLog.NAME).read_bytes()
    scratch = np.zeros(layout.total, np.uint8)
    other = db_header(Layout(make_config("hex3", 3)))
    assert LeanCheckpoints(folder, other).load(scratch, glo, ghi, LARGEST) is None
    rules = db_header(layout)
    assert LeanCheckpoints(folder, rules).load(scratch, glo - 1, ghi, LARGEST) is None
    assert LeanCheckpoints(folder, rules).load(scratch, glo, ghi, "x2v3+x3v2") is None
    for damage in ("flip", "cut", "short log"):
        bad = bytearray(good)
        if damage == "flip":
            bad[len(bad) // 2] ^= 0x10
        elif damage == "cut":
            bad = bad[:-100]
        path.write_bytes(bytes(bad))
        if damage == "short log":
            (folder / spill.PlyLog.NAME).write_bytes(plies[: len(plies) // 2])
        assert LeanCheckpoints(folder, rules).load(scratch, glo, ghi, LARGEST) is None, damage
    # the last damage left in the folder: the group starts from its counters
    ran = _watch(monkeypatch)
    driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    assert ran[0] == ("init", None)
    _same(db, reference)


def test_a_lean_checkpoint_is_gone_on_from_where_two_bytes_would_fit(tmp_path, monkeypatch, capsys, solved, reference):
    """Without ``--lean`` the solve takes two bytes where they fit, but a lean solve's
    checkpoint left in the folder is gone on from (the rerun of a solve that took the
    lean one by itself)."""
    db = _unsolved(solved, tmp_path / "db", LARGEST)
    _stop_at(monkeypatch, 12)
    with pytest.raises(Stop):
        driver.solve(CFG, db, jobs=1, progress=False, checkpoint_s=0, lean=True)
    monkeypatch.setattr(lean, "_at", lambda point, n: None)
    ran = _watch(monkeypatch)
    assert main([*ARGS[:-1], "--db", str(db), "--checkpoint", "0"]) == 0
    first = capsys.readouterr().err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: lean solve, one byte a position: needs"), first
    assert ran[0] == ("level", 12)
    _same(db, reference)


def test_the_budget_counts_the_lean_checkpoints(tmp_path):
    shape = Shape(CFG, (3, 3))
    largest = max(hi - lo for _, lo, hi in shape.groups)
    one = budget.needs(shape, tmp_path / "db", 1, "thread", True, set(), lean=True)
    two = budget.needs(shape, tmp_path / "db", 1, "thread", True, set())
    assert (one.checkpoint, two.checkpoint) == (2 * largest, 4 * largest)  # the old one and the new
    assert budget.needs(shape, tmp_path / "db", 1, "thread", False, set(), lean=True).checkpoint == 0


@pytest.fixture
def tmpfs(tmp_path):
    """A real tmpfs of 3 MB, where root may mount one; skipped elsewhere."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.slow
def test_a_real_full_disk(tmpfs, tmp_path, solved, reference):
    """The database (0.6 MB) on a tmpfs of 3 MB: the lean solve's checkpoints (1 MB each)
    and temporary files fill it; one line, and the rerun elsewhere goes on."""
    db = _unsolved(solved, tmpfs / "db", LARGEST)
    argv = [*ARGS, "--db", str(db), "--checkpoint", "0", "--force"]  # past the budget, which refuses this at once
    proc = subprocess.run([rotary_exe(), *argv, "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and "the disk is full" in lines[0] and "run the same command again" in lines[0], proc.stderr
    moved = tmp_path / "moved"
    shutil.copytree(db, moved)
    rerun = subprocess.run([rotary_exe(), *ARGS, "--db", str(moved), "-q", "--checkpoint", "0"], capture_output=True,
                           text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    _same(moved, reference)


def test_a_counters_checkpoint_is_whole_while_tasks_write_cells(tmp_path, monkeypatch):
    """The counters pass saves while its tasks still run: a cell a task writes between the
    checksum of a chunk and its write must not make the checkpoint unreadable (a hex(3) 7v7
    solve lost its counters pass that way)."""
    layout = Layout(CFG)
    _, glo, ghi = layout.groups[-1]
    folder = spill.temp_folder(tmp_path)
    cells = np.zeros(layout.total, np.uint8)
    cells[glo:ghi] = np.arange(ghi - glo) % 200
    ck = LeanCheckpoints(folder, db_header(layout))
    state = {"phase": "counters", "level": 0, "top": 3, "invalid": 0, "decided": 0, "done": [[glo, glo + 1000]]}
    with monkeypatch.context() as m:
        racing_writes(m, cells, ghi - 1)  # a task of a range not finished sets its counter
        ck.save(cells, glo, ghi, LARGEST, spill.PlyLog(folder), spill.FarLists(folder, True), state)
    scratch = np.zeros_like(cells)
    found = LeanCheckpoints(folder, db_header(layout)).load(scratch, glo, ghi, LARGEST)
    assert found is not None and found[0]["done"] == [[glo, glo + 1000]]
    assert np.array_equal(scratch[glo : glo + 1000], cells[glo : glo + 1000])
