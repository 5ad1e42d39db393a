"""Every command answers the standard start from the shipped store out of the box: query
(the value, all 18 moves — proven where known, a marked estimate elsewhere —, the line,
JSON under the one schema), analyse (the same proven values), the engine (``bestmove e4+3``,
``score win 11`` at any movetime), the viewer's answer, and the terminal game's hint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from solver.game.config import standard_config
from solver.game.position import Position
from solver.game.rules import ONGOING, apply, moves, parse_move, status
from solver.game.start import standard_start
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "answer.schema.json").read_text()))
START = standard_start().text()
PASSES = ["d3+0", "e4+0"] + [f"f3+{k}" for k in range(6)]
pytestmark = pytest.mark.usefixtures("shipped_store")


def valid(obj: dict) -> dict:
    errors = [e.message for e in VALIDATOR.iter_errors(obj)]
    assert not errors, errors[:3]
    return obj


def test_query_the_standard_start(capsys):
    rc, out, err = run(capsys, "query", START, "--json", "--line", "30")
    assert rc == 0, err
    a = valid(json.loads(out))
    assert (a["value"], a["plies"], a["exact"], a["source"]) == ("win", 11, True, "proof")
    assert a["best_move"] == "e4+3" and a["from"] == "standard-start.jsonl"
    by_move = {m["move"]: m for m in a["moves"]}
    assert len(by_move) == 18 == len(moves(standard_config(), standard_start()))
    assert (by_move["e4+3"]["value"], by_move["e4+3"]["plies"], by_move["e4+3"]["source"]) == ("win", 11, "proof")
    assert (by_move["e4+5"]["value"], by_move["e4+5"]["plies"], by_move["e4+5"]["source"]) == ("loss", 16, "proof")
    for mv in PASSES:
        assert (by_move[mv]["value"], by_move[mv]["plies"], by_move[mv]["source"]) == ("loss", 12, "proof")
    others = [m for m in a["moves"] if m["move"] not in PASSES + ["e4+3", "e4+5"]]
    assert len(others) == 8
    for m in others:  # an estimate, marked as one, never a proven value
        assert m["value"] in ("unknown", "not-loss", "not-win") and m["score"]["kind"] == "cp" and m["source"] in ("book", "engine")
    assert [m["move"] for m in a["moves"]][0] == "e4+3" and a["moves"][-1]["move"] in PASSES  # best first
    # the line: light's win in 11, played out to the end by the rules
    cfg, pos = standard_config(), standard_start()
    assert len(a["line"]) == 11
    for mv in a["line"]:
        pos = apply(cfg, pos, parse_move(cfg, pos, mv))
    assert status(cfg, pos) != ONGOING


def test_query_text_groups_the_passes_and_marks_estimates(capsys):
    rc, out, err = run(capsys, "query", START)
    assert rc == 0, err
    lines = out.splitlines()
    assert "[proof: standard-start.jsonl, shipped]" in lines[0] and lines[1] == "value: win in 11 for x"
    (pass_line,) = [x for x in lines if "(= pass)" in x]
    assert "loss in 12" in pass_line and "proof" in pass_line and "d3+0" in pass_line and "f3+0..5" in pass_line
    assert len(lines) == 2 + 11  # 11 distinct positions after the 18 moves
    estimates = [x for x in lines[2:] if "estimate" in x]
    assert len(estimates) == 8 and all("unknown" in x or "not-" in x for x in estimates)


def test_analyse_shows_the_proven_values(capsys):
    rc, out, err = run(capsys, "analyse", START, "--json", "--nodes", "2000", "-q")
    assert rc == 0, err
    a = valid(json.loads(out))
    assert (a["value"], a["plies"], a["source"], a["score"]) == ("win", 11, "proof", {"kind": "win", "value": 11})
    by_move = {m["move"]: m for m in a["moves"]}
    assert by_move["e4+3"]["score"] == {"kind": "win", "value": 11}
    assert by_move["e4+5"]["score"] == {"kind": "loss", "value": 16} and by_move["e4+5"]["source"] == "proof"
    assert all(by_move[m]["score"] == {"kind": "loss", "value": 12} for m in PASSES)
    assert a["moves"][0]["move"] == "e4+3" and a["line"][0] == "e4+3"


@pytest.mark.parametrize("go", ["go movetime 1", "go nodes 1", "go depth 1"])
def test_engine_plays_the_proven_move_at_any_limit(go):
    exe = Path(sys.executable).with_name("rotary")
    r = subprocess.run([str(exe), "engine"], input=f"position {START}\n{go}\nquit\n", capture_output=True, text=True,
                       timeout=120)
    lines = r.stdout.splitlines()
    assert lines[-1] == "bestmove e4+3", r.stdout + r.stderr
    assert any(" score win 11 " in x for x in lines), lines


def test_engine_follows_the_tree_after_e4_5(capsys):
    """After e4+5 dark's win in 15 is played from the tree: d5+4."""
    from solver.engine.protocol import Session

    class Out:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    out = Out()
    session = Session(lambda pos: standard_config(), out=out)
    for line in (f"position {START} moves e4+5", "go movetime 1", "quit"):
        session.handle(line)
    assert out.text.splitlines()[-1] == "bestmove d5+4" and "score win 15" in out.text


def test_viewer_page_shows_the_proven_values(capsys):
    """``rotary serve`` with nothing but the shipped store: ``/api/position`` is query's
    answer, and the page shows light's win in 11 and each proven move with its value and
    a ``proof`` tag; the estimates are tagged as such."""
    pytest.importorskip("flask")
    from solver.cli.main import build_parser
    from solver.cli.serve import build_viewer

    app, sources = build_viewer(build_parser()[0].parse_args(["serve"]))
    try:
        client = app.test_client()
        api = valid(client.get("/api/position", query_string={"p": START}).get_json())
        rc, out, err = run(capsys, "query", START, "--json")
        q = json.loads(out)
        strip = lambda a: [{k: v for k, v in m.items() if k not in ("score", "source", "from")} for m in a["moves"]]
        assert (api["value"], api["plies"], api["source"]) == (q["value"], q["plies"], q["source"]) == ("win", 11, "proof")
        assert [(m["move"], m["value"], m["plies"]) for m in api["moves"] if m["value"] in ("win", "loss")] == \
            [(m["move"], m["value"], m["plies"]) for m in q["moves"] if m["value"] in ("win", "loss")]
        page = client.get("/", query_string={"p": START}).get_data(as_text=True)
        assert "win in 11</b> for light" in page.replace("x", "x") or "win in 11</b>" in page
        assert "proof: standard-start.jsonl" in page
        assert page.count('class="tag known"') == 10  # e4+3, e4+5 and the eight passes
        assert page.count('class="tag estimate"') == 8
    finally:
        sources.close()


def test_play_hint_is_the_proven_move(monkeypatch, capsys):
    """The terminal game's ``hint`` and ``value`` at the start: the proven move and value."""
    from solver.play.advice import engine_advice

    text = engine_advice(standard_config(), standard_start(), [standard_start()], "hint", movetime_ms=1)
    assert text.startswith("hint: e4+3 (win in 11; proven") and "standard-start.jsonl" in text
    assert engine_advice(standard_config(), standard_start(), [], "value", 1).startswith("win in 11 for the side to move (proven")
