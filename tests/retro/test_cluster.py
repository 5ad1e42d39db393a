"""The Ray executor (solver/retro/cluster.py) against the process executor.

Bit-identical databases (every stored block, every tier record but its seconds) on a
local cluster; a cluster started with ``ray start --head``; an actor killed in the middle
of a solve, then a rerun.
"""

from __future__ import annotations

import itertools
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import lmdb
import numpy as np
import pytest

from solver.db.database import Database
from solver.game.config import make_config
from solver.retro.cluster import owners, part_bounds, solve_ray, split_by_owner

from tests.helpers import rotary_exe

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_cluster():
    """One embedded cluster for the module (starting one takes seconds)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=4, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def stored(path: Path) -> tuple[dict, dict]:
    """Every block (raw bytes), and the header and tier records but the tiers' seconds."""
    from solver.db.store import Store

    env = lmdb.open(str(path), readonly=True, lock=False, max_dbs=4)
    try:
        db = env.open_db(b"blocks", create=False)
        with env.begin(db=db) as txn:
            blocks = {bytes(k): bytes(v) for k, v in txn.cursor()}
    finally:
        env.close()
    store = Store(path, readonly=True)
    try:
        meta = {"config": store.get_meta("config")}
        for key, rec in store.meta_items("tier:").items():
            meta[key] = {k: v for k, v in rec.items() if k not in ("seconds", "peak_kb")}
    finally:
        store.close()
    return blocks, meta


def assert_same_database(a: Path, b: Path) -> None:
    blocks_a, meta_a = stored(a)
    blocks_b, meta_b = stored(b)
    assert meta_a == meta_b
    assert blocks_a.keys() == blocks_b.keys()
    differing = [k for k in blocks_a if blocks_a[k] != blocks_b[k]]
    assert not differing, f"{len(differing)} blocks differ, first {differing[0]!r}"


CONFIGS = [
    ("hex2", 3, {}, 2),
    ("hex2", 3, {"edge": True}, 3),
    ("hex2", 3, {"capture": True, "traps_x": "a1", "traps_o": "c3"}, 2),
    ("hex3", 3, {}, 2),
    ("hex3", 3, {"edge": True}, 2),
    ("hex3", 3, {"capture": True, "traps_x": "a1,e3", "traps_o": "c5,a3"}, 2),
    pytest.param("hex3", 4, {}, 2, marks=pytest.mark.xdist_group("hex3-4v4")),  # one solve of it per run
]


@pytest.mark.parametrize("board,balls,variants,parts", CONFIGS, ids=lambda v: str(v))
def test_ray_database_equals_the_process_executor(local_cluster, solved_db, tmp_path, board, balls, variants, parts):
    cfg = make_config(board, balls, **variants)
    reference = solved_db(cfg, (balls, balls))
    report = solve_ray(cfg, tmp_path / "ray", jobs=parts, progress=False)
    assert report.solved_now
    assert_same_database(reference, tmp_path / "ray")
    assert len(report.actor_peaks) == parts
    if parts > 1 and board == "hex3":
        assert report.exchanged > 0  # parents in other parts went through the object store


def test_ray_resumes_finished_groups(local_cluster, solved_db, tmp_path):
    """A database whose first groups are finished: the rest is solved from the stored ones
    (hex(2) 3v3 edge: ten groups, and seconds where hex(3) takes most of a minute)."""
    cfg = make_config("hex2", 3, edge=True)
    reference = solved_db(cfg, (3, 3))
    full = solve_ray(cfg, tmp_path / "db", jobs=2, progress=False)
    groups = len({t.key for t in full.tiers})
    # drop the last (largest) group's tiers, as a kill during it would have left the database
    env = lmdb.open(str(tmp_path / "db"), max_dbs=4)
    last = full.tiers[-1].key
    with env.begin(write=True, db=env.open_db(b"meta")) as txn:
        txn.delete(f"tier:{last}".encode())
    env.close()
    again = solve_ray(cfg, tmp_path / "db", jobs=2, progress=False)
    assert again.solved_now and len(again.solved_now) < groups
    assert_same_database(reference, tmp_path / "db")


def test_partition_routing():
    bounds = [part_bounds(0, 10, 3), part_bounds(10, 12, 3)]  # the second has an empty part
    starts = np.array([0, 10])
    idx = np.array([0, 3, 4, 9, 10, 11], dtype=np.int64)
    who = owners(idx, starts, bounds)
    assert part_bounds(0, 10, 3).tolist() == [0, 3, 6, 10]
    assert who.tolist() == [0, 1, 1, 2, 1, 2]  # 10: the first non-empty part of 10..12
    batches = split_by_owner(idx, who, 3)
    assert [b.tolist() for b in batches] == [[0], [3, 4, 10], [9, 11]]


def test_executor_ray_on_the_command_line(local_cluster, solved_db, tmp_path, capsys):
    from solver.cli.main import main

    rc = main(["solve", "--board", "hex2", "--balls", "3", "--executor", "ray", "-j", "2", "--db", str(tmp_path / "db"), "-q"])
    assert rc == 0
    assert_same_database(solved_db(make_config("hex2", 3), (3, 3)), tmp_path / "db")
    rc = main(["solve", "--board", "hex2", "--balls", "3", "--address", "127.0.0.1:1", "--db", str(tmp_path / "x")])
    assert rc == 2
    assert "--executor ray" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict:
    return dict(os.environ, RAY_USAGE_STATS_ENABLED="0")


def test_address_joins_a_head_started_with_ray_start(solved_db, tmp_path):
    """``ray start --head --block`` in its own process group, ended by its id."""
    ray_exe = Path(sys.executable).with_name("ray")
    if not ray_exe.exists():
        pytest.skip("the ray script is not installed beside this Python")
    port = _free_port()
    head = subprocess.Popen(
        [str(ray_exe), "start", "--head", "--block", "--port", str(port), "--num-cpus", "2", "--include-dashboard=false",
         "--disable-usage-stats"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=_env(),
    )
    try:
        cmd = [rotary_exe(), "solve", "--board", "hex2", "--balls", "3", "--edge", "--executor", "ray",
               "--address", f"127.0.0.1:{port}", "-j", "2", "--db", str(tmp_path / "db"), "-q"]
        deadline = time.monotonic() + 120
        while True:  # the head takes seconds to come up
            done = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)
            if done.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(3)
        assert done.returncode == 0, done.stderr
        assert_same_database(solved_db(make_config("hex2", 3, edge=True), (3, 3)), tmp_path / "db")
        # without --address, a cluster of its own, not the head running on this machine
        # (before: "When connecting to an existing cluster, num_cpus and num_gpus must not be provided")
        alone = subprocess.run([*cmd[: cmd.index("--address")], *cmd[cmd.index("-j"):-3], "--db", str(tmp_path / "own"), "-q"],
                               capture_output=True, text=True, env=_env(), timeout=300)
        assert alone.returncode == 0, alone.stderr
        assert_same_database(solved_db(make_config("hex2", 3, edge=True), (3, 3)), tmp_path / "own")
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _actors_of(pid: int) -> list[int]:
    found = []
    for p in _descendants(pid):
        try:
            if b"PartOwner" in Path(f"/proc/{p}/cmdline").read_bytes():
                found.append(p)
        except OSError:
            pass
    return found


def test_an_actor_killed_mid_solve_stops_it_in_one_line_and_a_rerun_finishes(solved_db, tmp_path):
    cfg = make_config("hex3", 3, edge=True)
    reference = solved_db(cfg, (3, 3))
    cmd = [rotary_exe(), "solve", "--board", "hex3", "--balls", "3", "--edge", "--executor", "ray", "-j", "2",
           "--db", str(tmp_path / "db"), "-q"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), start_new_session=True)
    try:
        killed = False
        deadline = time.monotonic() + 240
        while proc.poll() is None and time.monotonic() < deadline:
            actors = _actors_of(proc.pid)
            if len(actors) == 2 and (tmp_path / "db" / "data.mdb").exists():
                with Database(tmp_path / "db") as db:
                    finished = len(db.tier_meta)
                if finished >= 1:  # the first groups are stored; the largest is in progress
                    os.kill(actors[0], signal.SIGKILL)
                    killed = True
                    break
            time.sleep(0.2)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    if not killed:
        pytest.skip("the solve finished before an actor could be killed")
    assert proc.returncode == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Ray worker failed" in lines[0] and "rerun" in lines[0], err
    again = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=600)
    assert again.returncode == 0, again.stderr
    assert_same_database(reference, tmp_path / "db")


def test_ray_values_bar_tells_the_time_left(local_cluster, tmp_path, monkeypatch):
    """The Ray executor's values bar has the process driver's time left: its per-ply counts
    are what each ply decided (the largest group's distance histogram, hex(3) 3v3 base),
    a scan is measured before the plies, and an estimate is told once the counts fall."""
    import solver.retro.cluster as cluster

    calls: list[tuple[int, int | None, float | None]] = []
    real = cluster.ply_note

    def note(level, last, left, eta=None):
        calls.append((level, last, eta))
        return real(level, last, left, eta)

    scans: list[float] = []
    real_scan = cluster._scan_seconds
    monkeypatch.setattr(cluster, "ply_note", note)
    monkeypatch.setattr(cluster, "_scan_seconds", lambda *a: scans.append(real_scan(*a)) or scans[-1])
    report = solve_ray(make_config("hex3", 3), tmp_path / "db", jobs=2, progress=False)
    assert len(scans) == 1 and scans[0] > 0  # one group of hex(3) 3v3 base is large enough
    top = next(t for t in report.tiers if t.key == "x3v3")
    hist = [a + b for a, b in itertools.zip_longest(top.win_hist, top.loss_hist, fillvalue=0)]
    seen = {level - 1: last for level, last, _ in calls if last is not None}
    assert seen and all(seen[level] == hist[level] for level in seen), (seen, hist)
    told = [eta for _, _, eta in calls if eta is not None]
    assert told and all(eta > 0 for eta in told)
