"""df-pn never gives up silently: the path-length limit cuts a line (never a false
disproof, never a lost proof), every limit that stops a proof short of exact is named
(``stopped``), and the standard start's first-ply positions agree with its win in 11."""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.db.database import open_db
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import distinct_children
from solver.game.start import standard_start
from solver.game.values import Value
from solver.kernels.answers import audit_table
from solver.kernels.code import INVALID
from solver.kernels.leaves import DbInfo
from solver.search.prover import Prover
from tests.helpers import run

WIN5 = "../.o./.o../x.x x"  # hex2 edge: a win in 5
AFTER_E4_3 = ".oo./.o.o./ooooo./.o.x.x./.oox..x./o.x...x/xxxxxx/..x.. o"  # the start after e4+3


def first_ply() -> dict[str, Position]:
    """The standard start's distinct children, by the first move to each."""
    return distinct_children(standard_config(), standard_start())


# ---------------------------------------------------------------------------- the path-length limit


def test_path_limit_cut_is_reported_and_never_stored():
    """A win in 5 with room for 3 plies a path: cut, said so, and no disproof left in the
    table (the cut relies on the path); with room for 6 it is proven."""
    cfg = make_config("hex2", edge=True)
    pos = Position(WIN5)
    short = Prover(cfg, tt_bits=14, maxd=3)
    r = short.prove(pos, nodes=200_000)
    assert r.result in ("unknown", "not-loss") and r.nodes < 200_000
    assert r.stopped.startswith("path-length limit: every line left was cut at 3 plies"), r.stopped
    assert "'does x win?'" in r.stopped
    entry = short.lookup(pos.mover, pos.opponent, pos.turn, 0)
    assert entry is None or entry[1] != 0  # "x does not win" is not in the table
    r = Prover(cfg, tt_bits=14, maxd=6).prove(pos, nodes=200_000)
    assert (r.result, r.plies, r.exact, r.stopped) == ("win", 5, True, None)


def test_path_limit_cuts_are_sound(solved_db):
    """hex2 3v3 edge with a path-length limit of 4 plies, on a fixed sample of positions
    through one table: no answer contradicts the database, every proof and disproof left
    in the table is true, and the cuts are reported where they stopped a search."""
    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        vals, lay = db.values(), db.layout
        prover = Prover(cfg, tt_bits=16, maxd=4)
        order = np.random.default_rng(3).permutation(vals.shape[0])
        order = order[vals[order] != INVALID][:300]
        wrong, cut = [], 0
        for g in order:
            m, p, s = lay.position(int(g))
            pos = Position.make(cfg.board, m if s == 0 else p, p if s == 0 else m, s)
            res = prover.prove(pos, nodes=3_000, refine_nodes=0)
            v = Value.from_code(vals[g])
            want = {"loss": 0, "draw": 1, "win": 2}[v.result]
            lo, hi = (["loss", "draw", "win"].index(x) for x in {
                "win": ("win", "win"), "loss": ("loss", "loss"), "draw": ("draw", "draw"), "not-win": ("loss", "draw"),
                "not-loss": ("draw", "win"), "unknown": ("loss", "win")}[res.result])
            if not lo <= want <= hi or (res.resolved and res.plies is not None and res.plies < v.plies):
                wrong.append((pos.text(), str(v), res.text()))
            cut += bool(res.stopped and "path-length limit" in res.stopped)
        holds = DbInfo(True, cfg.variable_material, 3, 3)
        checked, bad = audit_table(prover.tt, prover.geo, lay.lay, holds, vals, np.zeros(16, dtype=np.int64))
    assert not wrong, wrong[:5]
    assert cut > 0 and checked > 0 and bad == 0


# ---------------------------------------------------------------------------- stopped: what a result says


def test_stopped_names_the_limit():
    cfg = make_config("hex2", edge=True)
    pos = Position(WIN5)
    r = Prover(cfg, tt_bits=14).prove(pos, nodes=20)
    assert not r.resolved and r.stopped.startswith("node budget of 20 nodes spent before 'does x win?'"), r.stopped
    r = Prover(cfg, tt_bits=14).prove(pos, nodes=100_000, refine_nodes=1)
    assert r.result == "win" and not r.exact
    assert r.stopped == f"distance refinement: node budget of 100,000 nodes spent with the distance between " \
                       f"{r.lower or 0} and {r.plies} plies"
    r = Prover(cfg, tt_bits=14).prove(pos, nodes=100_000)
    assert r.exact and r.stopped is None
    hard = first_ply()["d3+1"]  # open after millions of nodes
    r = Prover(standard_config(), tt_bits=16).prove(hard, seconds=0.3)
    assert r.result == "unknown" and r.stopped.startswith("time limit of 0.3 s reached before"), r.stopped
    r = Prover(standard_config(), tt_bits=10).prove(hard, nodes=500_000)  # hex(4): 2^18 entries at the least
    assert "node budget of 500,000 nodes spent" in r.stopped and "the table is" in r.stopped and "(2^18 entries" in r.stopped


def test_cli_prints_and_answers_stopped(capsys, tmp_path):
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--nodes", 20, "--no-store")
    assert rc == 0, err
    assert "\nstopped: node budget of 20 nodes spent before 'does x win?'" in out
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--nodes", 20, "--no-store", "--json")
    assert json.loads(out)["stopped"].startswith("node budget of 20 nodes")
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--no-store")
    assert rc == 0 and "value: win in 5 for x" in out and "stopped" not in out
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--nodes", 20, "-j", 2, "--store", tmp_path / "s", "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["value"] != "win" and "node budget" in rec["stopped"]


# ---------------------------------------------------------------------------- the standard start's first ply


def test_first_ply_has_eleven_positions():
    kids = first_ply()
    assert sorted(kids) == sorted(["d3+0", "d3+1", "d3+2", "d3+3", "d3+4", "d3+5", "e4+1", "e4+2", "e4+3", "e4+4", "e4+5"])
    assert kids["e4+3"].text() == AFTER_E4_3


def test_after_e4_3_lost_in_10_at_the_parents_budget():
    """The root is a win in 11 via e4+3 at the default budget of 1,000,000 nodes: the
    position after it must come out lost in 10 for dark at the same budget (without the
    edge cost df-pn's lines there ran past 1,500 plies: a search that gave up at that limit
    said only not-win)."""
    r = Prover(standard_config()).prove(Position(AFTER_E4_3), nodes=1_000_000)
    assert (r.result, r.plies, r.exact, r.stopped) == ("loss", 10, True, None)


def test_after_the_pass_won_in_11():
    """d3+0 changes nothing: the start with dark to move, a win in 11 for dark (the start's
    colour-swap symmetry)."""
    r = Prover(standard_config()).prove(first_ply()["d3+0"], nodes=1_000_000)
    assert (r.result, r.plies, r.exact, r.stopped) == ("win", 11, True, None)


def test_no_first_move_loses_faster_than_e4_3():
    """The root's win in 11 is the fastest: after every first move light does not win within
    8 plies (so no child is lost for dark in under 10), and after e4+3 he wins within 10."""
    prover = Prover(standard_config(), tt_bits=16)
    for mv, c in first_ply().items():
        assert prover.wins_within(c.mover, c.opponent, c.turn, 1, 8, 2_000_000) is False, mv
    c = first_ply()["e4+3"]
    assert prover.wins_within(c.mover, c.opponent, c.turn, 1, 10, 5_000_000) is True


AFTER_E4_5 = ".oo./.o.o./ooooo./.o...x./.oo...x./o.xxx.x/xxxxxx/..x.. o"


@pytest.mark.slow
def test_after_e4_5_won_by_dark():
    """After e4+5 dark wins, within 21 plies with 3 M nodes (without the edge cost df-pn
    followed forcing lines to the path-length limit there and stayed at not-loss at 100 M).
    The budget has room: how far 1 M nodes get depends on the machine's load, because the
    draw closure runs only while it has taken no more time than the search. Slow: about 25 s,
    and on a loaded CI machine it has stopped at not-loss; the published tree's test checks
    the win by the rules in CI."""
    assert first_ply()["e4+5"].text() == AFTER_E4_5
    r = Prover(standard_config(), tt_bits=22).prove(Position(AFTER_E4_5), nodes=3_000_000)
    assert r.result == "win" and 15 <= r.plies <= 21


@pytest.mark.slow
def test_after_e4_5_won_by_dark_in_15():
    """With 40 M nodes the refinement makes it exact: a win in 15 (about 170 s on a busy core;
    test_open_first_ply_bounds checks by the plain depth-limited search that it is not 13)."""
    r = Prover(standard_config(), tt_bits=24).prove(Position(AFTER_E4_5), nodes=40_000_000)
    assert (r.result, r.plies, r.exact, r.stopped) == ("win", 15, True, None)


OPEN = ["d3+1", "d3+2", "d3+3", "d3+4", "d3+5", "e4+1", "e4+2", "e4+4"]


@pytest.mark.slow
@pytest.mark.parametrize("move", OPEN + ["e4+5"])
def test_open_first_ply_bounds(move):
    """The eight first-ply positions no proof has settled, and e4+5: light does not win
    within 12 plies and dark not within 13 (the exhaustive depth-limited search, 0.2-16 M
    nodes each, about 10 minutes for all nine on one core), so each is a loss for dark in 14
    or more, a win for dark in 15 or more, or a draw."""
    c = first_ply()[move]
    light = Prover(standard_config(), tt_bits=20)
    assert light.wins_within(c.mover, c.opponent, c.turn, 1, 12, 40_000_000) is False
    dark = Prover(standard_config(), tt_bits=20)
    assert dark.wins_within(c.mover, c.opponent, c.turn, 0, 13, 40_000_000) is False


def test_the_bounds_script_answers_both_questions_and_names_a_wrong_move():
    """scripts/first_ply_bounds.py: after e4+3 (a loss in 10 for dark) light wins within 10
    and dark does not win within 9; a move that is not a first move is one line, exit 2."""
    import subprocess
    import sys

    script = ["scripts/first_ply_bounds.py"]
    out = subprocess.run([sys.executable, *script, "--light", "10", "--dark", "9", "--bits", "20", "e4+3"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    row = out.stdout.strip().splitlines()[-1].split(" | ")
    assert (row[0], row[1], row[4]) == ("| e4+3", "yes", "no")
    one = subprocess.run([sys.executable, *script, "--light", "10", "--dark", "0", "--bits", "20", "e4+3"],
                         capture_output=True, text=True, timeout=600)
    row = one.stdout.strip().splitlines()[-1].split(" | ")
    assert one.returncode == 0 and row[1] == "yes" and row[4] == ""  # --dark 0: not asked
    bad = subprocess.run([sys.executable, *script, "e4+9"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "not a first move of the standard start: e4+9" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
