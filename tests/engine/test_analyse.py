"""``rotary analyse``: the engine's answer in the one answer schema (docs/answer.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from solver.game.config import standard_config
from solver.game.position import Position
from solver.game.rules import moves
from solver.game.start import STANDARD_START_TEXT
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]
VALIDATOR = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "answer.schema.json").read_text()))


# the standard start after e4+3: a loss in 10 for dark (data/proofs)
AFTER_E4_3 = ".oo./.o.o./ooooo./.o.x.x./.oox..x./o.x...x/xxxxxx/..x.. o"


@pytest.mark.parametrize("position, limit", [(STANDARD_START_TEXT, ["--movetime", "300"]), (AFTER_E4_3, ["--depth", "12"])])
def test_analyse_json_is_a_valid_engine_answer(capsys, position, limit):
    rc, out, _ = run(capsys, "analyse", position, *limit, "--json")
    answer = json.loads(out)
    assert rc == 0 and not list(VALIDATOR.iter_errors(answer))
    assert answer["source"] == "engine" and answer["line"] and answer["line"][0] == answer["moves"][0]["move"]
    assert len(answer["moves"]) == len(moves(standard_config(), Position(position)))
    if limit[0] == "--depth":  # proven at depth 12, its distance then searched at full width
        assert (answer["value"], answer["plies"], answer["exact"]) == ("loss", 10, True)
        assert answer["score"] == {"kind": "loss", "value": 10}
    else:
        assert answer["value"] in ("unknown", "win")


def test_an_estimate_is_unknown_and_every_move_has_a_score(capsys):
    rc, out, _ = run(capsys, "analyse", STANDARD_START_TEXT, "--depth", "3", "--json")
    answer = json.loads(out)
    assert rc == 0 and not list(VALIDATOR.iter_errors(answer))
    assert answer["value"] == "unknown" and answer["score"]["kind"] == "cp"
    assert all(m["score"]["kind"] == "cp" for m in answer["moves"])


def test_a_finished_position_is_the_rules_answer(capsys):
    start = Position(STANDARD_START_TEXT)
    centre = start.board.centre_mask
    spare = [1 << q for q in range(start.board.size) if start.x >> q & 1][:3]
    x = (start.x & ~sum(spare)) | centre  # three of light's balls moved onto the centre
    over = Position.make(start.board, x, start.o, 1)
    rc, out, _ = run(capsys, "analyse", over.text(), "--json")
    answer = json.loads(out)
    assert rc == 0 and not list(VALIDATOR.iter_errors(answer)) and answer["moves"] == []


@pytest.mark.parametrize("args, says", [
    (["--movetime", "0"], "at least 1"), (["--depth", "0"], "at least 1"), (["not a position"], ""),
])
def test_bad_input_is_one_line(capsys, args, says):
    argv = ["analyse", *args] if args == ["not a position"] else ["analyse", STANDARD_START_TEXT, *args]
    rc, out, err = run(capsys, *argv)
    assert rc == 2 and err.startswith("rotary: error: ") and says in err and len(err.splitlines()) == 1
