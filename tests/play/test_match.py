"""Games and matches: how a game ends (rules, repetition, ply limit, forfeit), pairs with the
colours swapped read back from the records, the tally and SPRT stop, ``-j 2`` equal to
``-j 1``, and ``rotary match``'s output and one-line errors."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from solver.game.config import make_config, standard_config
from solver.game.position import PLACE, Move, Position
from solver.game.rules import apply, legal_points, moves, status
from solver.game.start import standard_start
from solver.play import elo
from solver.play.match import MatchSetup, PlayerSpec, Tally, play_game, run_match, sprt_line, write_report
from solver.play.openings import check_openings, read_openings
from solver.play.players import make_player
from solver.play.record import read_record
from tests.helpers import rotary_exe, run

CFG = standard_config()
START = standard_start()
# x to move; d4 and e4 are x's: a turn that brings an x onto d5 wins at once
MIDGAME = Position(".oo./.ooo./o...o./.x.o.o./.xxxxxx./x.o...x/oxooxx/..x.. x")
# o to move and no point where o outnumbers x around it (found by a random game)
NO_POINT = Position(".oo./.ooo./oo.x../ooxx.../.x..xxox/..oox.x/oxx..x/....x o")
FAKE = Path(__file__).with_name("fake_engine.py")


def null_player(cfg, pos) -> Move:
    """Turns the first legal ring by 0: the balls stay, only the side to move changes."""
    return next(m for m in moves(cfg, pos) if m.k == 0)


# ---------------------------------------------------------------------------- one game


def test_the_third_time_the_same_position_stands_is_a_draw():
    """Null turns: START (x), START (o), START (x) again after 2 plies, START (o) again,
    and START (x) a third time after 4 plies."""
    out = play_game(CFG, START, null_player, null_player, max_plies=100)
    assert (out.outcome, out.reason, len(out.moves)) == ("1/2-1/2", "repetition", 4)
    assert out.sentence == "draw: the same position for the third time"


def test_the_ply_limit_is_a_draw():
    out = play_game(CFG, START, null_player, null_player, max_plies=3)
    assert (out.outcome, out.reason, len(out.moves)) == ("1/2-1/2", "ply limit", 3)


def test_the_rules_end_a_game():
    out = play_game(CFG, MIDGAME, make_player("greedy", 0), null_player, max_plies=10)
    assert (out.outcome, out.reason, len(out.moves)) == ("1-0", "centre complete", 1)
    assert out.sentence == "light (x) wins: all three centre points are x"
    assert legal_points(CFG, NO_POINT.mover, NO_POINT.opponent) == [] and status(CFG, NO_POINT) == "loss"
    out = play_game(CFG, NO_POINT, null_player, null_player, max_plies=10)
    assert (out.outcome, out.reason, len(out.moves)) == ("1-0", "no legal point", 0)
    assert out.sentence == "light (x) wins: dark (o) has no legal rotation point"


def test_an_illegal_move_forfeits():
    def cheat(cfg, pos):
        return Move.rotate(cfg.board.point("a1"), 1)  # an edge point: never a pivot in the base game

    out = play_game(CFG, START, null_player, cheat, max_plies=10)
    assert out.outcome == "1-0" and out.reason == "o forfeits (illegal move a1+1)" and len(out.moves) == 1


# ---------------------------------------------------------------------------- matches


def _setup(a="greedy", b="random", openings=None, max_plies=24, seed=5, **kw) -> MatchSetup:
    openings = openings or (START.text(), apply(CFG, START, moves(CFG, START)[7]).text())
    spec = {k: PlayerSpec(k, kind=k) for k in ("greedy", "random")}
    return MatchSetup(CFG.key(), tuple(openings), spec.get(a) or a, spec.get(b) or b, 20, max_plies, seed, **kw)


def test_pairs_swap_colours_and_the_records_replay(tmp_path):
    setup = _setup()
    result = run_match(setup, 4)
    paths = [write_report(tmp_path, r) for r in result.reports]
    assert [p.name for p in paths] == ["game-0001.json", "game-0002.json", "game-0003.json", "game-0004.json"]
    recs = [json.loads(p.read_text()) for p in paths]
    assert [r["opening"] for r in recs] == [1, 1, 2, 2]
    assert [r["start"] for r in recs] == [setup.openings[0]] * 2 + [setup.openings[1]] * 2
    assert [(r["light"], r["dark"]) for r in recs] == [("greedy", "random"), ("random", "greedy")] * 2
    assert [r["a_is_light"] for r in recs] == [True, False, True, False]
    points = []
    for path, r in zip(paths, recs):
        cfg, start, played, positions = read_record(path)  # every move replayed and checked
        end = positions[-1]
        assert len(played) == r["plies"] and cfg == CFG
        if r["reason"] == "ply limit":
            assert r["outcome"] == "1/2-1/2" and r["plies"] == 24 and status(cfg, end) == "ongoing"
        elif r["reason"] == "repetition":
            assert positions.count(end) == 3
        else:  # decided by the rules: the side to move at the end has won or lost
            winner = end.turn if status(cfg, end) == "win" else 1 - end.turn
            assert r["outcome"] == ("1-0", "0-1")[winner]
        light_points = {"1-0": 1, "0-1": 0, "1/2-1/2": 0.5}[r["outcome"]]
        points.append(light_points if r["light"] == "greedy" else 1 - light_points)
    t = result.tally
    assert t.points == sum(points) and t.games == 4
    assert (t.wins, t.draws, t.losses) == (points.count(1), points.count(0.5), points.count(0))
    expected = [0] * 5
    for first, second in (points[:2], points[2:]):
        expected[int(2 * (first + second))] += 1
    assert t.pairs == expected


def test_the_tally_counts_pairs():
    t = Tally()
    reports = [("1-0", True), ("1-0", False), ("1/2-1/2", True), ("0-1", False), ("0-1", True), ("1/2-1/2", False)]
    done = [t.add({"game": i + 1, "outcome": o, "a_is_light": a}) for i, (o, a) in enumerate(reports)]
    assert done == [False, True] * 3
    # A: win + loss = WL (2), draw + win = DW (3), loss + draw = LD (1)
    assert t.pairs == [0, 1, 1, 1, 0] and (t.wins, t.draws, t.losses) == (2, 2, 2) and t.points == 3


def test_the_sprt_stops_the_match_when_it_decides():
    result = run_match(_setup(openings=(START.text(),), max_plies=16, seed=3), 60, sprt=(0, 200))
    t, state = result.tally, result.sprt
    assert state.decision == "H1" and t.games < 60 and t.games % 2 == 0
    before = list(t.pairs)  # one pair fewer was not enough
    first, second = (elo_points(r) for r in result.reports[-2:])
    before[int(2 * (first + second))] -= 1
    assert elo.sprt(before, 0, 200).decision is None
    assert re.fullmatch(r"SPRT elo0 0 elo1 200 \(logistic Elo, alpha 0.05, beta 0.05\): LLR [\d.]+ \(-2.94, 2.94\): "
                        r"H1 accepted", sprt_line(state)), sprt_line(state)


def elo_points(report: dict) -> float:
    light = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[report["outcome"]]
    return light if report["a_is_light"] else 1 - light


# ---------------------------------------------------------------------------- the command line


def test_match_prints_a_line_per_game_and_the_score(capsys, tmp_path):
    rc, out, err = run(capsys, "match", "--a", "greedy", "--b", "random", "--games", 3, "--max-plies", 20,
                       "--seed", 2, "--records", tmp_path / "rec")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("match: A = greedy, B = random; 4 games (2 pairs) from 1 opening; rules hex4 13v13 base")
    games = [l for l in lines if l.startswith("game ")]
    assert len(games) == 4 and sorted(p.name for p in (tmp_path / "rec").iterdir()) == [
        f"game-000{i}.json" for i in range(1, 5)]
    pattern = (r"game (\d): (greedy|random) \(x\) vs (greedy|random) \(o\) from opening 1: "
               r"(1-0|0-1|1/2-1/2), .+ in \d+ plies")
    assert all(re.fullmatch(pattern, g) for g in games), games
    score = [l for l in lines if l.startswith("score: ")]
    assert len(score) == 3  # after each pair, and in the result
    assert re.fullmatch(r"score: greedy [\d.]+ / 4 \([\d.]+ %\), W-D-L \d-\d-\d, Elo .+, pairs LL/LD/DD-WL/WD/WW "
                        r"\d/\d/\d/\d/\d, LOS [\d.]+ %", score[-1]), score[-1]


def test_j2_plays_the_same_games_as_j1(capsys, tmp_path):
    args = ["match", "--a", "greedy", "--b", "random", "--games", 4, "--max-plies", 16, "--seed", 11, "--json"]
    rc1, out1, _ = run(capsys, *args, "--records", tmp_path / "one")
    rc2, out2, _ = run(capsys, *args, "-j", 2, "--records", tmp_path / "two")
    assert rc1 == rc2 == 0
    assert json.loads(out1) == json.loads(out2)
    for i in range(1, 5):
        one, two = (json.loads((tmp_path / d / f"game-000{i}.json").read_text()) for d in ("one", "two"))
        assert one["moves"] == two["moves"] and one == two


def test_a_program_plays_a_match(capsys):
    rc, out, err = run(capsys, "match", "--a", f"{sys.executable} {FAKE}", "--b", "random", "--games", 2,
                       "--max-plies", 12, "--movetime", 10, "--seed", 1, "--json")
    assert rc == 0, err
    res = json.loads(out)
    assert res["games"] == 2 and all("forfeits" not in r["reason"] for r in res["results"])


def _error(capsys, *argv) -> str:
    rc, out, err = run(capsys, "match", *argv)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_one_line_errors(capsys, tmp_path):
    assert "unknown player --a 'foo'" in _error(capsys, "--a", "foo", "--b", "random")
    assert "unknown player --b 'human'" in _error(capsys, "--a", "greedy", "--b", "human")
    assert "bad --sprt 5 1" in _error(capsys, "--a", "greedy", "--b", "random", "--sprt", 5, 1)
    assert "invalid float value: 'x'" in _error(capsys, "--a", "greedy", "--b", "random", "--sprt", 0, "x")
    assert "bad --sprt" in _error(capsys, "--a", "greedy", "--b", "random", "--sprt", "nan", 1)
    assert "--games must be at least 1" in _error(capsys, "--a", "greedy", "--b", "random", "--games", 0)
    assert "-j must be at least 1" in _error(capsys, "--a", "greedy", "--b", "random", "-j", 0)
    assert "cannot run" in _error(capsys, "--a", "/nonexistent/engine --x", "--b", "random")
    assert "no readyok within 0.5 s" in _error(capsys, "--a", f"{sys.executable} {FAKE} noready", "--b", "random",
                                                "--ready-timeout", 0.5)


def test_bad_openings_files(capsys, tmp_path):
    f = tmp_path / "openings.txt"
    f.write_text(f"# two good lines, then a bad one\n{START.text()}\n\n{MIDGAME.text()}  # a comment\nnot a position\n")
    err = _error(capsys, "--a", "greedy", "--b", "random", "--openings", f)
    assert f"{f} line 5:" in err
    f.write_text(f"{START.text()}\n{NO_POINT.text()}\n")
    assert f"{f} line 2: the game is already over" in _error(capsys, "--a", "greedy", "--b", "random", "--openings", f)
    # under capture a light ball may not stand on dark's trap field c8 (row 8: .oo. -> x on c8)
    f.write_text(".ox./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x\n")
    err = _error(capsys, "--a", "greedy", "--b", "random", "--openings", f, "--capture")
    assert f"{f} line 1:" in err and "trap field" in err
    f.write_text("# nothing\n\n")
    assert "holds no position" in _error(capsys, "--a", "greedy", "--b", "random", "--openings", f)
    assert "missing.txt" in _error(capsys, "--a", "greedy", "--b", "random", "--openings", tmp_path / "missing.txt")


def test_an_openings_file_is_cycled(capsys, tmp_path):
    f = tmp_path / "openings.txt"
    f.write_text(f"{START.text()}\n{MIDGAME.text()}\n")
    rc, out, err = run(capsys, "match", "--a", "greedy", "--b", "random", "--openings", f, "--games", 6,
                       "--max-plies", 10, "--seed", 1, "--json")
    assert rc == 0, err
    assert [r["opening"] for r in json.loads(out)["results"]] == [1, 1, 2, 2, 1, 1]


@pytest.mark.parametrize("name, variants", [("standard-4ply.txt", {}), ("capture-4ply.txt", {"capture": True}),
                                            ("standard-6ply-100.txt", {})])
def test_the_shipped_openings_fit_their_rules(name, variants):
    """data/openings: at least 24 positions each, distinct, allowed by their rules and not
    over; the header names the command that wrote the file."""
    path = Path(__file__).parents[2] / "data" / "openings" / name
    found = read_openings(path)
    check_openings(standard_config(**variants), found, path)
    positions = [p for _, p in found]
    assert len(positions) >= 24 and len(set(positions)) == len(positions)
    made_by = [line for line in path.read_text().splitlines() if line.startswith("# made by: ")]
    assert len(made_by) == 1 and f"-o data/openings/{name}" in made_by[0]
    assert ("--capture" in made_by[0]) == bool(variants)


def test_the_shipped_setup_openings_fit_their_rules():
    """data/openings/setup-offer-4ply.txt: placement positions of the setup game (hex(4),
    13 balls a side, ``offer``), two balls of each colour placed, distinct."""
    name = "setup-offer-4ply.txt"
    path = Path(__file__).parents[2] / "data" / "openings" / name
    found = read_openings(path)
    check_openings(make_config(4, 13, setup="offer"), found, path)
    positions = [p for _, p in found]
    assert len(positions) >= 24 and len(set(positions)) == len(positions)
    assert all(p.phase == PLACE and p.count(0) == p.count(1) == 2 for p in positions)
    made_by = [line for line in path.read_text().splitlines() if line.startswith("# made by: ")]
    assert len(made_by) == 1 and f"-o data/openings/{name}" in made_by[0] and "--setup offer" in made_by[0]


def test_the_engine_plays_the_setup_game_with_the_matchs_rules(capsys):
    """``rotary engine`` started without rule flags hears the match's rules."""
    rc, out, err = run(capsys, "match", "--a", f"{rotary_exe()} engine", "--b", "greedy",
                       "--setup", "offer", "--board", "hex2", "--balls", 2, "--games", 2, "--movetime", 20, "--json")
    assert rc == 0, err
    res = json.loads(out)
    assert res["games"] == 2 and all("forfeits" not in r["reason"] for r in res["results"]), res["results"]
