"""The solve's bars: the values bar's time left (an estimate of what the plies still to
run will decide), and the bars of the minutes after it — the lean solve's merge and every
solve's write of the database."""

from __future__ import annotations

import pytest

from solver.game.config import make_config
from solver.db.store import Store
from solver.index import Layout
from solver.retro import lean, report
from solver.retro.driver import solve
from solver.retro.report import ProgressBar, time_left, to_come


def _per_ply(meta: dict) -> list[int]:
    w, l = meta["win_hist"], meta["loss_hist"]
    return [(w[i] if i < len(w) else 0) + (l[i] if i < len(l) else 0) for i in range(max(len(w), len(l)))]


@pytest.fixture(scope="module")
def hex3_3v3(tmp_path_factory):
    """What each ply decided in the largest tier of hex(3) 3v3, base and edge (from the
    databases' distance histograms: a position decided at ply L has distance L)."""
    out = {}
    for edge in (False, True):
        path = tmp_path_factory.mktemp("edge" if edge else "base") / "db"
        solve(make_config("hex3", 3, edge=edge), path, progress=False)
        st = Store(path, readonly=True)
        try:
            out[edge] = _per_ply(st.meta_items("tier:")["x3v3"])
        finally:
            st.close()
    return out


@pytest.mark.parametrize("edge", [False, True])
def test_an_estimate_once_told_is_near_the_truth(hex3_3v3, edge):
    """Wherever an estimate is told while more than 2 % of the group's decided positions
    are still to come (the part of the time left that matters), it is within a factor 2
    of what the later plies did decide; and it is told at all. In the far tail the
    counts fall more slowly than geometrically and the estimate runs low."""
    per_ply = hex3_3v3[edge]
    told = 0
    for level in range(len(per_ply)):
        guess = to_come(per_ply[: level + 1])
        truth = sum(per_ply[level + 1 :])
        if guess is None or truth < 0.02 * sum(per_ply):
            continue
        told += 1
        assert truth / 2 <= guess <= truth * 2, (edge, level, guess, truth)
    assert told >= (1 if edge else 5)  # with edge the fall is steady only late


def test_no_estimate_where_the_counts_fall_and_rise_again(hex3_3v3):
    """hex(3) 3v3 edge: the counts fall from ply 3 to ply 8, then rise again; a
    geometric tail taken there would say a few thousand positions where 300,000 come."""
    per_ply = hex3_3v3[True]
    assert sum(per_ply[9:]) > 40 * sum(per_ply[5:9])  # the shape this test is about
    for level in range(3, 9):
        assert to_come(per_ply[: level + 1]) is None, level


def test_rising_and_short_counts_tell_nothing():
    assert to_come([10, 20, 30, 40, 50, 60, 70]) is None
    assert to_come([100, 50, 25]) is None
    assert time_left([100, 90, 80, 70, 60, 50, 40, 30], [1.0] * 8, 0.5) is None  # falls too slowly: r > 0.9


def test_time_left_counts_positions_and_scans():
    """Plies that cost 2 s of scan plus 1 ms a position: the time left is the positions to
    come at 1 ms and the plies to come (the tail halving every two plies, till it is
    gone) at 2 s."""
    per_ply = [int(4096 * 2 ** -(i // 2)) for i in range(12)]  # 4096, 4096, 2048, ... 128, 128
    seconds = [2.0 + 0.001 * n for n in per_ply]
    ahead = to_come(per_ply)
    assert ahead == 256  # 128 + 128 halving: 128 + 64 + ... = 256 more
    got = time_left(per_ply, seconds, 2.0)
    plies = 2 * 8  # a = 256 halves below 1 in eight steps of two plies
    assert got == pytest.approx(ahead * 0.001 + plies * 2.0, rel=1e-6)
    # a distance already written 30 plies ahead: those plies will run
    assert time_left(per_ply, seconds, 2.0, 30) == pytest.approx(ahead * 0.001 + 30 * 2.0, rel=1e-6)


@pytest.mark.parametrize("lean_solve", [False, True])
def test_the_merge_and_the_write_have_bars_that_end_at_the_groups_size(tmp_path, monkeypatch, lean_solve):
    """After the values bar of a group come its merge (lean, a group below the last) and
    the database's write: each has its bar, counting the group's positions to the end,
    none counted twice. The lean solve merges its last group as it writes it: no merge bar."""
    ended: list[tuple[str, int, int]] = []

    class Recorded(ProgressBar):
        def __exit__(self, *exc):
            ended.append((self.desc, self.total, self.n))
            super().__exit__(*exc)

    monkeypatch.setattr(report, "ProgressBar", Recorded)
    monkeypatch.setattr(lean, "ProgressBar", Recorded)
    cfg = make_config("hex3", 3, edge=True)
    solve(cfg, tmp_path / "db", progress=False, lean=lean_solve)
    _, glo, ghi = Layout(cfg).groups[-1]
    assert ("x3v3 write", ghi - glo, ghi - glo) in ended
    assert ("x3v3 merge", ghi - glo, ghi - glo) not in ended
    _, glo, ghi = Layout(cfg).groups[-2]
    assert any(desc.endswith(" merge") and total == ghi - glo for desc, total, _ in ended) == lean_solve
    assert all(n == total for desc, total, n in ended if desc.endswith((" write", " merge")))
