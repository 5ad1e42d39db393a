"""The lean solve on Ray (:mod:`solver.retro.cluster_lean`): actors holding one byte a
position write the two-byte solve's databases bit for bit.

On a local Ray cluster where Ray is installed (every stored block and tier record against
the two-byte solve); everywhere, the actors run inside this process through the stand-in
for Ray of ``tests/warm.py`` — many rounds a ply, small merge windows, finished groups
read back from the database, the memory of the parts.
"""

from __future__ import annotations

import pytest

from solver.cli.main import main
from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.game.config import make_config
from solver.index import Layout
from solver.retro import cluster, cluster_lean, spill
from solver.retro.cluster_lean import ACTOR_BYTES, TEMP, lean_fits
from tests.warm import _Inline

GB = 1 << 30


def _sums(path) -> dict[str, str]:
    with open_db(path) as db:
        return dict(tier_checksums(db))


def _inline(cfg, path, parts: int, lean_: bool | None = True, memory: float | None = None):
    """A Ray solve with its actors in this process; the actors, for a look at their parts."""
    made: list = []
    real = cluster._Cluster

    class Watched(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    class Ray(_Inline):
        @staticmethod
        def cluster_resources() -> dict:
            return {"CPU": 64, "memory": memory} if memory else {"CPU": 64}

    cluster._Cluster = Watched
    try:
        report = cluster._solve(Ray, cfg, path, parts, None, False, lean_, path)
    finally:
        cluster._Cluster = real
    return report, [a.obj for a in made[0].actors]


@pytest.mark.parametrize("board,balls,variants,parts", [
    ("hex2", 4, {"edge": True}, 3),
    ("hex2", 4, {"edge": True, "capture": True, "traps_x": "a1", "traps_o": "b4"}, 2),
    ("hex2", 4, {"capture": True, "traps_x": "a1,c1", "traps_o": "a3,b4"}, 3),
], ids=str)
def test_lean_actors_in_rounds_and_windows_give_the_same_bits(board, balls, variants, parts, tmp_path, monkeypatch,
                                                               solved_db):
    """Rounds of 50 updates (a ply takes many), merge windows of 1,000 cells that cut
    parts and tiers anywhere, segments of 7 positions."""
    cfg = make_config(board, balls, **variants)
    monkeypatch.setattr(cluster_lean, "ROUND", 50)
    monkeypatch.setattr(cluster_lean, "WINDOW", 1000)
    monkeypatch.setattr(spill, "SEGMENT", 7)
    report, actors = _inline(cfg, tmp_path / "db", parts)
    assert report.lean and all(isinstance(a, cluster_lean.LeanPartOwner) for a in actors)
    assert _sums(tmp_path / "db") == _sums(solved_db(cfg, (balls, balls)))
    assert not (tmp_path / "db" / TEMP).exists()  # every actor removed its files
    assert all(not a.temp.exists() for a in actors)


def test_lean_parts_take_half_the_memory_and_read_finished_groups_back(tmp_path, monkeypatch, solved_db):
    """The actors' parts: one byte a position against two. A database whose last group is
    missing (a killed solve's) is finished by lean actors from the two-byte groups stored
    (encoded into bytes 1,000 values at a time)."""
    cfg = make_config("hex2", 5, edge=True)
    reference = _sums(solved_db(cfg, (5, 5)))
    _, two = _inline(cfg, tmp_path / "two", 2, lean_=False)
    report, one = _inline(cfg, tmp_path / "one", 2)
    assert _sums(tmp_path / "two") == _sums(tmp_path / "one") == reference
    for a, b in zip(one, two):
        assert sum(v.nbytes for v in a.values.values()) * 2 == sum(v.nbytes for v in b.values.values()) > 0

    import lmdb

    env = lmdb.open(str(tmp_path / "two"), max_dbs=4)
    with env.begin(write=True, db=env.open_db(b"meta")) as txn:
        assert txn.delete(b"tier:x5v5")
    env.close()
    monkeypatch.setattr(cluster_lean, "WINDOW", 1000)
    again, _ = _inline(cfg, tmp_path / "two", 2)
    assert again.solved_now == ["x5v5"]
    assert _sums(tmp_path / "two") == reference


def test_lean_is_taken_where_the_cluster_holds_one_byte_and_not_two(tmp_path, solved_db):
    assert lean_fits(10 * GB, 2, None) is None
    assert lean_fits(10 * GB, 2, 20.0 * GB + 2 * ACTOR_BYTES) is False  # two bytes fit
    assert lean_fits(10 * GB, 2, 15.0 * GB) is True
    assert lean_fits(10 * GB, 2, 9.0 * GB) is False  # neither: the two-byte solve, which says so
    cfg = make_config("hex2", 3, edge=True)
    total = Layout(cfg).total
    report, _ = _inline(cfg, tmp_path / "db", 2, lean_=None, memory=1.5 * total + 2 * ACTOR_BYTES)
    assert report.lean and _sums(tmp_path / "db") == _sums(solved_db(cfg, (3, 3)))
    report, _ = _inline(cfg, tmp_path / "db2", 2, lean_=None, memory=64 * GB)
    assert not report.lean


def test_lean_with_process_workers_is_refused(tmp_path, capsys):
    argv = ["solve", "--board", "hex2", "--balls", "3", "--lean", "--db", str(tmp_path / "db")]
    assert main([*argv, "--executor", "process"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "threads or on Ray" in err, err


# ---------------------------------------------------------------------------- a real local cluster


@pytest.fixture(scope="module")
def local_cluster():
    ray = pytest.importorskip("ray")
    import os

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(address="local", num_cpus=3, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize("board,balls,variants,parts", [
    ("hex2", 3, {"capture": True, "traps_x": "a1", "traps_o": "c3"}, 2),
    ("hex3", 3, {"edge": True}, 3),
], ids=str)
def test_ray_lean_database_equals_the_two_byte_one(local_cluster, solved_db, tmp_path, board, balls, variants, parts):
    from tests.retro.test_cluster import assert_same_database

    cfg = make_config(board, balls, **variants)
    report = cluster.solve_ray(cfg, tmp_path / "db", jobs=parts, progress=False, lean=True)
    assert report.lean and report.solved_now and len(report.actor_peaks) == parts
    assert_same_database(solved_db(cfg, (balls, balls)), tmp_path / "db")
    assert not (tmp_path / "db" / TEMP).exists()


def test_executor_ray_lean_on_the_command_line(local_cluster, solved_db, tmp_path):
    from tests.retro.test_cluster import assert_same_database

    argv = ["solve", "--board", "hex2", "--balls", "4", "--edge", "--executor", "ray", "--lean", "-j", "2"]
    assert main([*argv, "--db", str(tmp_path / "db"), "-q"]) == 0
    assert_same_database(solved_db(make_config("hex2", 4, edge=True), (4, 4)), tmp_path / "db")
    assert not (tmp_path / "db" / TEMP).exists()
