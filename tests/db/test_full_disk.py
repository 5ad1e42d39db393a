"""A full disk stops ``solve``, ``solve --setup``, ``prove`` and ``book`` with one line that
says how much the next step needs; what was written before stays intact and a rerun with
space goes on to the same result as a run that never stopped.

The "disk" is made full three ways: LMDB's map capped small with ``ROTARY_MAP_MAX`` (a
real ``MDB_MAP_FULL``), the commit made to fail as a full disk fails it (``ENOSPC``,
LMDB's ``Input/output error`` of a short write, an ``OSError``) through the seam
:func:`solver.db.guard._commit`, and — where this machine lets root mount one — a real
tmpfs of 320 kB.
"""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
import uuid
from pathlib import Path

import lmdb
import numpy as np
import pytest

from solver.db import guard
from solver.db.database import open_db
from solver.db.verify import verify_db
from solver.game.config import make_config
from tests.helpers import rotary_exe, run

SMALL = ["--board", "hex2", "--balls", "5", "--edge"]  # 57,816 positions in 12 groups, 0.1 MB
SETUP = ["--board", "hex2", "--balls", "3", "--setup", "offer"]
POS = ".../..o./...../.xx.../..o../.... x"  # hex3 2v2: df-pn proves a win in 11 in ~2,000 nodes


def one_line_full(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rotary: error: "), err
    assert "Traceback" not in err
    line = lines[0]
    assert "needs up to" in line and ("kB" in line or "MB" in line), line
    assert "run the same command again" in line, line
    return line


def values_of(path: Path) -> tuple[np.ndarray, dict]:
    with open_db(path) as db:
        strip = {k: {f: v for f, v in m.items() if f not in ("seconds", "peak_kb")} for k, m in db.tier_meta.items()}
        vals = db.values().copy()
        if db.placement is not None:
            vals = np.concatenate([vals, db.placement_values()])
        return vals, strip


def finished(path: Path) -> set[str]:
    with open_db(path) as db:
        return set(db.tier_meta)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Uninterrupted solves of the two configurations, solved once."""
    from tests.helpers import run as _run  # noqa: F401

    root = tmp_path_factory.mktemp("ref")
    out = {}
    for name, argv in (("small", SMALL), ("setup", SETUP)):
        proc = subprocess.run([rotary_exe(), "solve", *argv, "--db", str(root / name), "-q"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        out[name] = values_of(root / name)
    return out


@pytest.mark.parametrize("which", ["small", "setup"])
def test_solve_stops_at_a_full_map_and_a_rerun_goes_on(which, tmp_path, capsys, monkeypatch, reference):
    argv = SMALL if which == "small" else SETUP
    path = tmp_path / "db"
    monkeypatch.setenv(guard.MAP_MAX_ENV, "64K" if which == "small" else "48K")  # stops after a few groups
    rc, out, err = run(capsys, "solve", *argv, "--db", path, "-q")
    assert rc == 2, out + err
    line = one_line_full(err)
    assert "ROTARY_MAP_MAX" in line and str(path) in line, line
    kept = finished(path)
    assert kept and len(kept) < len(reference[which][1]), kept  # some groups stayed
    with open_db(path) as db:  # and they read back right
        for key in kept:
            assert {f: v for f, v in db.tier_meta[key].items() if f not in ("seconds", "peak_kb")} == reference[which][1][key]
    monkeypatch.delenv(guard.MAP_MAX_ENV)
    rc, out, err = run(capsys, "solve", *argv, "--db", path, "-q")
    assert rc == 0, err
    vals, meta = values_of(path)
    assert meta == reference[which][1]
    assert np.array_equal(vals, reference[which][0])
    assert verify_db(path, progress=False).ok


def _failing_commit(after: int, exc: BaseException):
    calls = [0]
    real = guard._commit

    def commit(txn):
        calls[0] += 1
        if calls[0] > after:
            raise exc
        real(txn)

    return commit


FULL_DISK = [
    lmdb.Error("mdb_txn_commit: No space left on device"),
    lmdb.Error("mdb_txn_commit: Input/output error"),
    OSError(errno.ENOSPC, "No space left on device"),
]


@pytest.mark.parametrize("exc", FULL_DISK, ids=["lmdb-enospc", "lmdb-eio", "oserror-enospc"])
def test_solve_stops_on_a_full_disk_and_a_rerun_goes_on(exc, tmp_path, capsys, monkeypatch, reference):
    path = tmp_path / "db"
    monkeypatch.setattr(guard, "_commit", _failing_commit(4, exc))
    rc, out, err = run(capsys, "solve", *SMALL, "--db", path, "-q")
    assert rc == 2, out + err
    line = one_line_full(err)
    assert "the disk is full" in line and "free some space" in line, line
    assert 0 < len(finished(path)) < len(reference["small"][1])
    monkeypatch.undo()
    rc, out, err = run(capsys, "solve", *SMALL, "--db", path, "-q")
    assert rc == 0, err
    vals, meta = values_of(path)
    assert meta == reference["small"][1] and np.array_equal(vals, reference["small"][0])


def test_no_room_for_the_value_array(tmp_path, capsys, monkeypatch):
    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("os.posix_fallocate", full)
    # the process executor's value array is a file in /dev/shm, reserved whole at the start
    rc, out, err = run(capsys, "solve", *SMALL, "--db", tmp_path / "db", "-q", "-j", "2", "--executor", "process")
    assert rc == 2, out + err
    line = err.strip()
    assert line.startswith("rotary: error: no room in") and "value array" in line and "needs" in line, err
    assert len(err.strip().splitlines()) == 1


def test_no_memory_for_the_value_array(tmp_path, capsys, monkeypatch):
    """With threads the value array is anonymous memory (solver.memory): a mapping the
    kernel refuses is one line too."""
    import mmap

    def refused(*args, **kwargs):
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(mmap, "mmap", refused)
    rc, out, err = run(capsys, "solve", *SMALL, "--db", tmp_path / "db", "-q")
    assert rc == 2, out + err
    line = err.strip()
    assert line.startswith("rotary: error: no memory for the solve's value array: it needs 116 kB ("), err
    assert "cannot allocate memory" in line and len(err.strip().splitlines()) == 1


def _prove_json(capsys, store: Path, *extra) -> dict:
    rc, out, err = run(capsys, "prove", POS, "--store", store, "--nodes", 20000, "--json", *extra)
    assert rc == 0, err
    return json.loads(out)


def test_prove_and_book_stop_on_a_full_disk_and_go_on(tmp_path, capsys, monkeypatch):
    want = _prove_json(capsys, tmp_path / "ref")
    assert (want["value"], want["plies"], want["exact"]) == ("win", 11, True)
    store = tmp_path / "store"
    for how in ("map", "commit"):
        if how == "map":
            monkeypatch.setenv(guard.MAP_MAX_ENV, "40K")
        else:
            monkeypatch.setattr(guard, "_commit", _failing_commit(2, FULL_DISK[0]))
        rc, out, err = run(capsys, "prove", POS, "--store", store, "--nodes", 20000, "--json")
        assert rc == 2, out + err
        one_line_full(err)
        monkeypatch.undo()
    got = _prove_json(capsys, store)
    assert (got["value"], got["plies"], got["exact"], got["best_move"]) == (want["value"], want["plies"], want["exact"], want["best_move"])

    # book: the same, and the rerun's book equals an uninterrupted one
    book = ["book", "--start", POS, "--depth", "1", "--nodes", "30000", "--no-tree", "-q", "--json"]  # all proven
    rc, out, err = run(capsys, *book, "--store", tmp_path / "bref")
    assert rc == 0, err
    ref = json.loads(out)
    monkeypatch.setattr(guard, "_commit", _failing_commit(3, FULL_DISK[1]))
    rc, out, err = run(capsys, *book, "--store", tmp_path / "book")
    assert rc == 2, out + err
    one_line_full(err)
    monkeypatch.undo()
    rc, out, err = run(capsys, *book, "--store", tmp_path / "book")
    assert rc == 0, err
    got = json.loads(out)
    for key in ("root", "positions", "proven", "open", "levels"):
        assert got[key] == ref[key], key


@pytest.fixture
def tmpfs(tmp_path):
    """A real tmpfs of 320 kB, where root may mount one; skipped elsewhere."""
    mnt = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    mnt.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=320k", "tmpfs", str(mnt)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_a_real_full_disk(tmpfs, tmp_path, solved_db):
    """``rotary solve`` into a folder on a real, full tmpfs: one line, no traceback."""
    argv = ["--board", "hex3", "--balls", "3", "--edge"]
    # --force: past the check before the start (tests/retro/test_budget.py), which refuses this at once
    proc = subprocess.run([rotary_exe(), "solve", *argv, "--db", str(tmpfs / "db"), "-q", "--force"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = one_line_full(proc.stderr)
    assert "the disk is full" in line, line
    kept = finished(tmpfs / "db")
    assert kept, "the groups written before the disk was full are kept"
    moved = tmp_path / "db"
    shutil.copytree(tmpfs / "db", moved)
    proc = subprocess.run([rotary_exe(), "solve", *argv, "--db", str(moved), "-q"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    ref = solved_db(make_config(3, 3, edge=True), (3, 3))
    got, want = values_of(moved), values_of(ref)
    assert got[1] == want[1] and np.array_equal(got[0], want[0])
