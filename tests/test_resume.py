"""``rotary solve`` survives being killed: rerunning finishes the job with the same values.

The solver writes each group of tiers in one LMDB transaction, so a SIGKILL at any moment
leaves whole tiers or none. Here a real ``rotary solve`` process is killed several times
while it writes, restarted until it completes, and the result is compared tier by tier
with a database solved without interruption.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from solver.game.config import make_config
from solver.db.database import open_db
from solver.db.store import Store
from solver.db.verify import verify_db
from tests.helpers import rotary_exe

ARGS = ["--board", "hex3", "--balls", "3", "--edge"]  # 16 tiers in 10 groups, a few seconds


def finished_tiers(path: Path) -> set[str]:
    if not (path / "data.mdb").exists():
        return set()
    store = Store(path)
    try:
        return set(store.meta_items("tier:"))
    finally:
        store.close()


def start_solve(path: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [rotary_exe(), "solve", *ARGS, "--db", str(path), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(cond, proc: subprocess.Popen, timeout: float = 180.0) -> bool:
    """Poll ``cond()`` until true; False if the process ended first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    raise AssertionError("rotary solve made no progress")


def all_values(path: Path) -> tuple[list[str], dict[str, np.ndarray], dict[str, dict]]:
    with open_db(path) as db:
        layout = db.layout
        values = {t.key: db.store.read_tier(i, t.size).copy() for i, t in enumerate(layout.tiers)}
        meta = dict(db.tier_meta)
        return [t.key for t in layout.tiers], values, meta


@pytest.fixture(scope="module")
def reference_db(solved_db):
    return solved_db(make_config(3, 3, edge=True), (3, 3))


def test_kill_and_resume(tmp_path, reference_db):
    path = tmp_path / "db"
    rng = random.Random(20260501)
    keys, _, _ = all_values(reference_db)
    kills = []  # tiers finished when each kill landed
    for attempt in range(4):
        before = finished_tiers(path)
        if len(before) == len(keys):
            break
        proc = start_solve(path)
        try:
            if attempt == 0:
                # as soon as the database exists (header written), then a little later
                wait_for(lambda: (path / "data.mdb").exists(), proc)
                time.sleep(rng.uniform(0.0, 0.4))
            else:
                # once this run has written a new group of tiers, at a random moment
                wait_for(lambda: len(finished_tiers(path)) > len(before), proc)
                time.sleep(rng.uniform(0.0, 0.3))
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=60)
        if proc.returncode == -signal.SIGKILL:
            kills.append(len(finished_tiers(path)))
        else:
            assert proc.returncode == 0, err
    print(f"killed {len(kills)} times, with {kills} of {len(keys)} tiers written")  # shown with -s
    assert len(kills) >= 3, f"only {len(kills)} runs were killed while solving: {kills}"
    assert kills == sorted(kills), kills  # whole tiers are never lost
    assert any(0 < k < len(keys) for k in kills), kills  # some runs resumed partial work

    # rerun until done
    for _ in range(3):
        proc = subprocess.run([rotary_exe(), "solve", *ARGS, "--db", str(path), "-q"], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        if finished_tiers(path) == set(keys):
            break
    got_keys, got, got_meta = all_values(path)
    want_keys, want, want_meta = all_values(reference_db)
    assert got_keys == want_keys
    for key in want_keys:
        assert np.array_equal(got[key], want[key]), f"tier {key} differs after resuming"
        strip = lambda m: {k: v for k, v in m.items() if k != "seconds"}  # noqa: E731
        assert strip(got_meta[key]) == strip(want_meta[key]), key
    assert verify_db(path, progress=False).ok

    # a finished database is not solved again
    proc = subprocess.run([rotary_exe(), "solve", *ARGS, "--db", str(path), "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "already solved" in proc.stdout.splitlines()[0]
    assert proc.stderr == ""


def test_solve_into_a_database_of_other_rules(reference_db):
    before = {p.name: p.stat().st_size for p in reference_db.iterdir()}
    for other in (["--board", "hex3", "--balls", "3v2", "--edge"], ["--board", "hex2", "--balls", "2"]):
        proc = subprocess.run(
            [rotary_exe(), "solve", *other, "--db", str(reference_db), "-q"], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2, (other, proc.stdout, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("rotary: error:"), proc.stderr
        assert "hex3 3v3 edge" in lines[0], lines[0]  # names what the database holds
        assert proc.stdout == ""
    assert {p.name: p.stat().st_size for p in reference_db.iterdir()} == before
    assert verify_db(reference_db, sample=2000, progress=False).ok
