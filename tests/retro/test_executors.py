"""Every executor of the process-local solve gives the same database, bit for bit.

Cross-range updates are compare-and-swap and the updates of one ply commute, so the
schedule must not show in the result: hex(3) 3v3 ``edge`` (every material down to 1 v 1,
lower tiers read through, groups above the pool threshold) solved inline (``-j 1``), by
two threads (the default) and by two spawned processes.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.db.store import Store
from solver.game.config import make_config
from solver.index import Layout
from solver.retro.driver import solve
from solver.retro.pool import SMALL_GROUP

CFG = make_config("hex3", 3, edge=True)


def _stored(path) -> list[np.ndarray]:
    st = Store(path, readonly=True)
    try:
        return [np.array(st.read_tier(i, t.size)) for i, t in enumerate(Layout(CFG).tiers)]
    finally:
        st.close()


@pytest.fixture(scope="module")
def inline(tmp_path_factory):
    path = tmp_path_factory.mktemp("inline") / "db"
    report = solve(CFG, path, jobs=1, progress=False)
    return report, _stored(path)


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_two_workers_equal_one(executor, inline, tmp_path):
    assert max(hi - lo for _, lo, hi in Layout(CFG).groups) >= SMALL_GROUP  # the pool does run
    report = solve(CFG, tmp_path / "db", jobs=2, progress=False, executor=executor)
    want_report, want = inline
    got = _stored(tmp_path / "db")
    assert len(got) == len(want)
    for t, a, b in zip(Layout(CFG).tiers, got, want):
        assert np.array_equal(a, b), f"{executor}: tier {t.key} differs from the -j 1 solve"
    assert [s.meta()["wins"] for s in report.tiers] == [s.meta()["wins"] for s in want_report.tiers]


@pytest.mark.parametrize("jobs", [1, 2])
def test_listed_plies_equal_scanned_ones(jobs, inline, tmp_path, monkeypatch):
    """Late in a group a ply takes the list the ply before made instead of a scan
    (driver.Plies). With lists off (``LIST_MAX = 0``: every ply scans) and on, the same
    values; and lists are taken — in most plies of the largest group, whose lower tiers
    also decide losses further ahead than the next ply (those plies scan)."""
    import solver.retro.driver as driver

    made: list = []
    real = driver.Plies.__init__

    def spy(self, *args):
        real(self, *args)
        made.append(self)

    monkeypatch.setattr(driver.Plies, "__init__", spy)
    solve(CFG, tmp_path / "lists", jobs=jobs, progress=False)
    listed = sum(p.listed_plies for p in made)
    _, want = inline
    for t, a, b in zip(Layout(CFG).tiers, _stored(tmp_path / "lists"), want):
        assert np.array_equal(a, b), f"lists: tier {t.key} differs"
    assert listed > 0

    monkeypatch.setattr(driver, "LIST_MAX", 0)
    made.clear()
    solve(CFG, tmp_path / "scans", jobs=jobs, progress=False)
    for t, a, b in zip(Layout(CFG).tiers, _stored(tmp_path / "scans"), want):
        assert np.array_equal(a, b), f"scans: tier {t.key} differs"
    assert sum(p.listed_plies for p in made) < listed
