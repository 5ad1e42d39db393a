"""The ``rotary`` command line: output shapes, one-line errors, and whole games.

Most tests call ``solver.cli.main.main`` in-process; a few run the installed ``rotary`` script
in a subprocess to prove the entry point and the exit statuses are real.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.helpers import rotary_exe, run
from tests.oracles import perft_reference as ref

START = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"
START_O = START[:-1] + "o"
# d4 and e4 are x's: a turn that brings an x onto d5 wins at once
MIDGAME = ".oo./.ooo./o...o./.x.o.o./.xxxxxx./x.o...x/oxooxx/..x.. x"
FINISHED = ".oo./.ooo./o.o.o./...x.o./.xxxxxx./x.o...x/oxooxx/..x.. o"  # centre all x, o to move
OFFER = "xxo./xoox./x.o.xo/x.o.x../oo...x../.o.o.o./xxox../x.o.. x offer"
HEX3_EMPTY = ".../..../...../....../...../.... x place"

BASE_RULES = {"board": "hex4", "balls": 13, "edge": False, "capture": False, "traps_x": [], "traps_o": [], "setup": None}


def assert_one_line_error(rc, err, *words):
    assert rc != 0
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])


# ---------------------------------------------------------------------------- show / start


def test_show_draws_the_board(capsys):
    rc, out, err = run(capsys, "show", START)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["8", "."] and lines[14].split()[0] == "1"  # each row, then its letters
    assert "light (x) to move" in out and "x 13  o 13" in out
    assert "\033[" not in out  # no colours when stdout is not a terminal
    assert "finished" not in out


def test_show_says_when_the_game_is_over(capsys):
    rc, out, _ = run(capsys, "show", FINISHED)
    assert rc == 0
    assert out.splitlines()[-1] == "finished: loss for o"


def test_start_prints_the_standard_start(capsys):
    rc, out, err = run(capsys, "start")
    assert (rc, out, err) == (0, START + "\n", "")
    rc, out, _ = run(capsys, "start", "--draw")
    assert rc == 0 and out.splitlines()[0] == START and "light (x) to move" in out


def test_start_on_a_board_without_a_preset_start(capsys):
    rc, out, err = run(capsys, "start", "--board", "hex3")
    assert_one_line_error(rc, err, "hex3", "no preset start")
    assert out == ""


# ---------------------------------------------------------------------------- moves


def test_moves_json_lists_every_k_of_every_point(capsys):
    rc, out, err = run(capsys, "moves", START, "--json")
    assert rc == 0 and err == ""
    report = json.loads(out)
    assert set(report) == {"position", "status", "points", "moves"}
    assert report["position"] == START and report["status"] == "ongoing"
    assert report["points"] == ["d3", "f3", "e4"]  # point order: bottom row first
    assert [m["move"] for m in report["moves"]] == [f"{p}+{k}" for p in report["points"] for k in range(6)]


def test_moves_json_positions_follow_the_rules(capsys):
    """Each move's position is the docs/rules.md rotation, recomputed by the independent reference."""
    for text in (START, START_O, MIDGAME):
        rc, out, _ = run(capsys, "moves", text, "--json")
        assert rc == 0
        n, board, side, _, _ = ref.parse(text)
        for m in json.loads(out)["moves"]:
            name, k = m["move"].split("+")
            want = ref.fmt(n, ref.turn(BASE_RULES, n, board, ref.names(n)[name], int(k)), ref.other(side))
            assert m["position"] == want, m["move"]


def test_moves_json_by_hand(capsys):
    """d3+1 from the start: e3's ball goes to e4, c3's to c2, c2's to d2, d2's to e3 (§3 rule 2)."""
    rc, out, _ = run(capsys, "moves", START, "--json")
    moves = {m["move"]: m["position"] for m in json.loads(out)["moves"]}
    assert moves["d3+0"] == START_O
    assert moves["d3+1"] == ".oo./.o.o./ooooo./.o...x./.oo.xxx./o...x.x/xxxxxx/..x.. o"


def test_moves_json_for_dark_and_finished_positions(capsys):
    rc, out, _ = run(capsys, "moves", START_O, "--json")
    assert sorted(json.loads(out)["points"]) == ["c5", "c7", "d5"]
    rc, out, _ = run(capsys, "moves", FINISHED, "--json")
    assert rc == 0
    assert json.loads(out) == {"position": FINISHED, "status": "loss", "points": [], "moves": []}


def test_moves_json_in_setup_phases(capsys):
    rc, out, _ = run(capsys, "moves", OFFER, "--json", "--setup", "offer")
    report = json.loads(out)
    assert rc == 0 and len(report["points"]) == 3
    assert [m["move"].split()[0] for m in report["moves"]] == ["offer"] * 3
    assert report["moves"][0]["position"].endswith(" o pick " + " ".join(report["points"][:2]))
    rc, out, _ = run(capsys, "moves", HEX3_EMPTY, "--json", "--setup", "offer", "--balls", "4")
    report = json.loads(out)
    assert rc == 0 and report["points"] == [] and len(report["moves"]) == 24  # 27 less the centre


def test_moves_text(capsys):
    rc, out, _ = run(capsys, "moves", START)
    assert rc == 0
    assert "legal points: d3 f3 e4" in out
    assert len([line for line in out.splitlines() if line.startswith("  ")]) == 18


# ---------------------------------------------------------------------------- one-line errors

MALFORMED = [
    (".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x x", "row 1"),  # short row
    (".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.y.x/xxxxxx/..x.. x", "'y'"),
    (START[:-2], "side to move"),
    (START[:-1] + "z", "'z'"),
    ("./.", "rows"),
]


@pytest.mark.parametrize("text,words", MALFORMED, ids=["short-row", "bad-char", "no-side", "bad-side", "rows"])
@pytest.mark.parametrize("command", ["show", "moves", "moves-json", "play"])
def test_malformed_position(capsys, command, text, words):
    argv = {
        "show": ["show", text],
        "moves": ["moves", text],
        "moves-json": ["moves", text, "--json"],
        "play": ["play", "--position", text],
    }[command]
    rc, out, err = run(capsys, *argv)
    assert_one_line_error(rc, err, "rotary: error:", words)
    assert out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["show", START],
        ["moves", START],
        ["moves", START, "--json"],
        ["play", "--x", "random", "--o", "random"],
        ["play", "--position", START],
    ],
    ids=["show", "moves", "moves-json", "play", "play-position"],
)
def test_unknown_point(capsys, argv):
    rc, out, err = run(capsys, *argv, "--capture", "--traps-x", "z9", "--traps-o", "a3")
    assert_one_line_error(rc, err, "'z9'")
    assert out == ""


@pytest.mark.parametrize(
    "argv,words",
    [
        (["start", "--board", "hex9"], "hex9"),
        (["play", "--board", "hex3"], "hex3"),
        (["show", START, "--board", "hex3"], "hex3"),
        (["moves", START[:-1] + "x place", "--setup", "offer"], "placement"),
        (["show", ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.x x"], "material"),
        (["show", START, "--capture", "--traps-x", "a3"], "a3"),  # the start has o on a3
        (["play", "--x", "wizard"], "wizard"),
        (["frobnicate"], "frobnicate"),
        (["show"], "position"),
    ],
)
def test_other_user_errors(capsys, argv, words):
    rc, out, err = run(capsys, *argv)
    assert_one_line_error(rc, err, words)


# ---------------------------------------------------------------------------- play


def test_illegal_move_in_play(capsys, monkeypatch):
    rc, out, err = run(capsys, "play", "--seed", "1", stdin="e5+1\n", monkeypatch=monkeypatch)
    assert_one_line_error(rc, err, "'e5+1'", "no majority around e5", "legal points: d3, f3, e4")
    assert "game abandoned" in out


@pytest.mark.parametrize("bad,words", [("d3+9", "+0..+5"), ("zz", "'zz'"), ("c2", "a rotation")])
def test_malformed_move_in_play(capsys, monkeypatch, bad, words):
    rc, out, err = run(capsys, "play", stdin=bad + "\n", monkeypatch=monkeypatch)
    assert_one_line_error(rc, err, words)


def test_human_game_recovers_from_an_illegal_move(capsys, monkeypatch):
    """An illegal move is explained and asked again; then the game goes on."""
    rc, out, err = run(capsys, "play", "--seed", "1", stdin="e5+1\n?\nd3+1\nquit\n", monkeypatch=monkeypatch)
    assert rc == 0
    assert err.splitlines() == ["illegal move 'e5+1': x has no majority around e5; legal points: d3, f3, e4"]
    assert "rotate at d3 f3 e4 (by +0 .. +5, e.g. d3+1)" in out
    assert "dark (o) plays " in out
    assert out.rstrip().endswith("game abandoned after 2 plies")


def test_human_wins_a_game(capsys, monkeypatch):
    """From the midgame x wins at once by turning a ball onto d5 (row 5, fourth point)."""
    rc, out, _ = run(capsys, "moves", MIDGAME, "--json")
    winning = next(m["move"] for m in json.loads(out)["moves"] if m["position"].split("/")[3][3] == "x")
    rc, out, err = run(
        capsys, "play", "--position", MIDGAME, "--o", "greedy", stdin=f"b3+7\n{winning}\n", monkeypatch=monkeypatch
    )
    assert rc == 0
    assert err.count("\n") == 1 and "'b3+7'" in err
    assert "light (x) wins: all three centre points are x after 1 plies" in out
    assert out.splitlines()[-1].startswith("final: ")


def test_human_setup_game_phases(capsys, monkeypatch):
    """Placement, offer, pick and a forced point, each with its own help, on hex3 3v3."""
    stdin = "c4\nb3\na1\nc2\noffer b2 e3\noffer b2 c3\nc3+1\nb2-1\nquit\n"
    rc, out, err = run(
        capsys, "play", "--board", "hex3", "--setup", "offer", "--balls", "3", "--seed", "2",
        stdin=stdin, monkeypatch=monkeypatch,
    )  # fmt: skip
    assert rc == 0
    assert err.splitlines() == [
        "illegal move 'c4': c4 is a centre point, where no ball may be placed",
        "illegal move 'offer b2 e3': both offered points must be legal for x (b2, c3)",
        "illegal move 'c3+1': dark picked b2, so x must rotate at b2 (b2+0 .. b2+5)",
    ]
    assert "place a ball on any empty point but the centre" in out
    assert "offer two of b2 c3 (e.g. 'offer b2 c3')" in out
    assert "dark (o) plays pick b2" in out
    assert "rotate at b2 (by +0 .. +5, e.g. b2+1)" in out


@pytest.mark.parametrize(
    "extra",
    [[], ["--board", "hex3", "--setup", "offer", "--balls", "4"], ["--edge", "--capture"], ["--setup", "last"]],
    ids=["hex4", "hex3-setup-offer", "hex4-edge-capture", "hex4-setup-last"],
)
def test_computer_game_runs_to_the_end(capsys, extra):
    rc, out, err = run(capsys, "play", "--x", "random", "--o", "greedy", "--seed", "1", *extra)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("rules: ")
    finished = lines[-1].startswith("final: ") and " wins: " in lines[-2]
    assert finished or lines[-1].startswith("stopped after 400 plies")


def test_computer_setup_game_offers_and_picks(capsys):
    argv = ["--x", "greedy", "--o", "random", "--seed", "1", "--board", "hex3", "--setup", "offer", "--balls", "4"]
    rc, out, _ = run(capsys, "play", *argv)
    assert rc == 0
    assert "light (x) plays offer " in out and "dark (o) plays pick " in out
    assert " wins: " in out.splitlines()[-2]


def test_max_plies_stops_a_game(capsys):
    rc, out, _ = run(capsys, "play", "--x", "random", "--o", "random", "--seed", "3", "--max-plies", "2")
    assert rc == 0
    assert out.splitlines()[-1] == "stopped after 2 plies without a result" or " wins: " in out


def test_the_same_seed_replays_the_same_game(capsys):
    argv = ["play", "--x", "random", "--o", "greedy", "--seed", "7", "--max-plies", "40"]
    _, first, _ = run(capsys, *argv)
    _, second, _ = run(capsys, *argv)
    assert first == second


# ---------------------------------------------------------------------------- the installed script


def test_script_show_and_moves():
    exe = rotary_exe()
    done = subprocess.run([exe, "show", START], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "light (x) to move" in done.stdout and done.stderr == ""
    done = subprocess.run([exe, "moves", START, "--json"], capture_output=True, text=True, timeout=60)
    assert json.loads(done.stdout)["points"] == ["d3", "f3", "e4"]


def test_script_errors_are_one_line():
    exe = rotary_exe()
    done = subprocess.run([exe, "start", "--board", "hex3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("rotary: error: hex3 has no preset start")
    done = subprocess.run([exe, "play"], input="e5+1\n", capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert done.stderr.splitlines() == ["illegal move 'e5+1': x has no majority around e5; legal points: d3, f3, e4"]
