"""``rotary solve`` survives being killed: rerunning finishes the job with the same values.

The solver writes each group of tiers in one LMDB transaction, so a SIGKILL at any moment
leaves whole tiers or none. Here a real ``rotary solve`` process is killed several times
while it writes, restarted until it completes, and the result is compared tier by tier
with a database solved without interruption.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import lmdb
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
        strip = lambda m: {k: v for k, v in m.items() if k not in ("seconds", "peak_kb")}  # noqa: E731
        assert strip(got_meta[key]) == strip(want_meta[key]), key
    assert verify_db(path, progress=False).ok

    # a finished database is not solved again
    proc = subprocess.run([rotary_exe(), "solve", *ARGS, "--db", str(path), "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "already solved" in proc.stdout.splitlines()[0]
    assert proc.stderr == ""


def _sizes(folder: Path) -> dict[str, int]:
    """Sizes of the database's files; not the lock file, which holds the pid of the last
    solve that took it (a refused solve takes it too, and pids differ in length)."""
    return {p.name: p.stat().st_size for p in folder.iterdir() if p.name != "solve.lock"}


def test_solve_into_a_database_of_other_rules(reference_db):
    before = _sizes(reference_db)
    for other in (["--board", "hex3", "--balls", "3v2", "--edge"], ["--board", "hex2", "--balls", "2"]):
        proc = subprocess.run(
            [rotary_exe(), "solve", *other, "--db", str(reference_db), "-q"], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2, (other, proc.stdout, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("rotary: error:"), proc.stderr
        assert "hex3 3v3 edge" in lines[0], lines[0]  # names what the database holds
        assert proc.stdout == ""
    assert _sizes(reference_db) == before
    assert verify_db(reference_db, sample=2000, progress=False).ok


# ---------------------------------------------------------------------------- kill -9 anywhere
#
# Every command that writes — ``solve`` with one and two jobs, ``solve --setup``, ``prove``
# and ``book`` — killed at a random moment of its run (uniform over the time an
# uninterrupted run takes, start-up included), then run again to the end: what it leaves
# equals what an uninterrupted run leaves, and ``verify`` passes. CI kills each once (and
# ``test_kill_and_resume`` above four times); ``-m slow`` twenty times each.

PROVE = ".../..../...../.....o/...oo/xxx. x"  # hex3 3v3: df-pn proves a win in 17
BOOK_START = ".../..o./...../.xx.../..o../.... x"  # hex3 2v2: a book of depth 1, every node proven
SETUP_ARGS = ["--board", "hex3", "--balls", "3", "--setup", "offer"]  # 987,120 + 11,700 positions

KILLABLE = {
    "solve -j 1": lambda d: ["solve", *ARGS, "--db", str(d / "db"), "-q", "-j", "1"],
    # two spawned worker processes (threads, the default, die with their process as -j 1 does)
    "solve -j 2": lambda d: ["solve", *ARGS, "--db", str(d / "db"), "-q", "-j", "2", "--executor", "process"],
    "solve --setup": lambda d: ["solve", *SETUP_ARGS, "--db", str(d / "db"), "-q"],
    "prove": lambda d: ["prove", PROVE, "--store", str(d / "store"), "--nodes", "400000", "--json"],
    "book": lambda d: ["book", "--start", BOOK_START, "--depth", "1", "--nodes", "30000", "--store", str(d / "store"),
                       "--no-tree", "-q", "--json"],
}


def _run_to_end(argv: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.monotonic()
    proc = subprocess.run([rotary_exe(), *argv], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc, time.monotonic() - t0


def _outcome(kind: str, folder: Path, proc: subprocess.CompletedProcess) -> object:
    """What a run of ``kind`` leaves, in a form to compare with ``==``."""
    if kind.startswith("solve"):
        with open_db(folder / "db") as db:
            vals = db.values().copy()
            if db.placement is not None:
                vals = np.concatenate([vals, db.placement_values()])
            meta = {k: {f: v for f, v in m.items() if f not in ("seconds", "peak_kb")} for k, m in db.tier_meta.items()}
        return vals.tobytes(), meta
    answer = json.loads(proc.stdout)
    if kind == "prove":
        return {k: answer[k] for k in ("value", "plies", "exact", "best_move")}
    book = json.loads((folder / "store" / "book.json").read_text())
    values = {k: node.get("value") for k, node in book["nodes"].items()}
    return {k: answer[k] for k in ("root", "positions", "proven", "open", "levels")}, values


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def _progress(kind: str, folder: Path) -> str:
    """How far a killed run had got: the tiers a solve had written, the records a proof
    store held (df-pn table chunks and one-entry records, root results, book nodes)."""
    if kind.startswith("solve"):
        return f"{len(finished_tiers(folder / 'db'))} tiers"
    counts = {"ttc": 0, "tt": 0, "results": 0, "book": 0}
    for mdb in (folder / "store").rglob("data.mdb"):
        env = lmdb.open(str(mdb.parent), readonly=True, lock=False, max_dbs=5)
        try:
            with env.begin() as txn:
                for name in counts:
                    try:
                        counts[name] += txn.stat(env.open_db(name.encode(), txn=txn, create=False))["entries"]
                    except lmdb.NotFoundError:
                        pass
        finally:
            env.close()
    return "{ttc} table chunks, {tt} tt, {results} results, {book} book".format(**counts)


@dataclass
class Kill:
    trial: int
    at: float  # seconds after the killed run started
    share: float  # of an uninterrupted run's time
    progress: str  # what it had written (see _progress)

    def __str__(self) -> str:
        return f"t{self.trial}@{self.at:.2f}s({self.share:.0%}; {self.progress})"


def kill_trials(kind: str, tmp_path: Path, kills: int, seed: int) -> list[Kill]:
    """Until ``kills`` kills have landed: a fresh folder, one or two ``kill -9`` at random
    moments, then a run to the end; each must leave what an uninterrupted run leaves.
    Returns where the kills landed."""
    make = KILLABLE[kind]
    ref_dir = tmp_path / "ref"
    ref_proc, seconds = _run_to_end(make(ref_dir))  # what a run leaves, and how long it takes
    full = seconds
    want = _outcome(kind, ref_dir, ref_proc)
    rng = random.Random(seed)
    landed: list[Kill] = []
    for trial in range(6 * kills):
        if len(landed) >= kills:
            break
        folder = tmp_path / f"t{trial}"
        for k in range(rng.choice([1, 1, 2])):
            proc = subprocess.Popen([rotary_exe(), *make(folder)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True)
            delay = rng.uniform(0.0, seconds)
            try:
                proc.wait(timeout=delay)
            except subprocess.TimeoutExpired:
                kids = _children(proc.pid)
                os.kill(proc.pid, signal.SIGKILL)
                proc.communicate(timeout=60)
                # the workers of a killed solve -j 2 notice and leave: none stays behind
                end = time.monotonic() + 30
                while any(Path(f"/proc/{k}").exists() and "Z" not in _state(k) for k in kids) and time.monotonic() < end:
                    time.sleep(0.2)
                left = [k for k in kids if Path(f"/proc/{k}").exists() and "Z" not in _state(k)]
                for k in left:
                    os.kill(k, signal.SIGKILL)
                assert not left, f"{kind}: workers {left} outlived their killed parent"
                landed.append(Kill(trial, delay, delay / full, _progress(kind, folder)))
            else:
                out, err = proc.communicate()
                assert proc.returncode == 0, err
                if k == 0:  # a whole run took less than this: aim earlier from now on
                    seconds = min(seconds, delay)
        proc, _ = _run_to_end(make(folder))
        got = _outcome(kind, folder, proc)
        assert got == want, f"{kind}: trial {trial} ends different from an uninterrupted run: {_diff(got, want)}"
        if kind.startswith("solve"):
            assert verify_db(folder / "db", progress=False).ok
        shutil.rmtree(folder)
    return landed


def _diff(got, want) -> str:
    """Where two outcomes differ, briefly."""
    if isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict) and isinstance(want[1], dict):
        keys = sorted(k for k in set(got[1]) | set(want[1]) if got[1].get(k) != want[1].get(k))
        head = "" if got[0] == want[0] else f"{got[0]!r} != {want[0]!r}; "
        return head + "; ".join(f"{k}: {got[1].get(k)} != {want[1].get(k)}" for k in keys[:5])
    return f"{got!r:.300} != {want!r:.300}"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def test_kill_solve_with_workers(tmp_path):
    """CI: one kill of ``solve -j 2`` (its workers must leave with it); the other commands
    are killed twenty times each with ``-m slow``."""
    landed = kill_trials("solve -j 2", tmp_path, 1, seed=14)
    print(f"solve -j 2: killed at {', '.join(map(str, landed))}")
    assert landed


@pytest.mark.slow
@pytest.mark.parametrize("kind", list(KILLABLE))
def test_kill_anything_20_times(kind, tmp_path):
    t0 = time.monotonic()
    landed = kill_trials(kind, tmp_path, 20, seed=1400)
    trials = len({k.trial for k in landed})
    shares = sorted(k.share for k in landed)
    print(f"\n{kind}: {len(landed)} kills in {trials} trials, each rerun equal to an uninterrupted run"
          f"{' and verified' if kind.startswith('solve') else ''}; {time.monotonic() - t0:.0f} s;"
          f" at {shares[0]:.0%}..{shares[-1]:.0%} of a run: {', '.join(map(str, landed))}")  # shown with -s
    assert len(landed) >= 20, landed
