"""The engine as a player: in ``rotary play`` and ``rotary match`` (``engine@MS``), and its advice."""

from __future__ import annotations

import pytest

from solver.errors import UsageError
from solver.game.config import standard_config
from solver.game.start import standard_start
from solver.play.advice import engine_advice
from solver.play.match import parse_player
from tests.helpers import run


def test_engine_at_a_time_of_its_own():
    spec = parse_player("engine@10")
    assert (spec.kind, spec.movetime_ms) == ("engine", 10)
    assert parse_player("engine").movetime_ms is None
    for bad in ("engine@", "engine@x", "engine@0"):
        with pytest.raises(UsageError, match="whole milliseconds"):
            parse_player(bad)


def test_play_engine_against_greedy_to_the_end(capsys):
    rc, out, _ = run(capsys, "play", "--x", "engine", "--o", "greedy", "--movetime", "20", "--seed", "1")
    assert rc == 0 and "final:" in out and (" wins: " in out or "without a result" in out)


def test_play_refuses_a_bad_movetime(capsys):
    rc, _, err = run(capsys, "play", "--x", "engine", "--o", "greedy", "--movetime", "0")
    assert rc == 2 and "--movetime must be at least 1" in err


def test_advice_names_a_legal_move_and_ranks_every_move():
    cfg = standard_config()
    hint = engine_advice(cfg, standard_start(), [standard_start()], "hint", movetime_ms=100)
    assert hint.startswith("hint: ") and hint.split()[1] in {"e4+3", "e4+2", "d3+2", "d3+3", "d3+4", "d3+5", "f3+1",
                                                              "f3+2", "f3+3", "f3+4", "f3+5", "e4+1", "e4+4", "e4+5",
                                                              "d3+1", "d3+0", "e4+0", "f3+0"}
    values = engine_advice(cfg, standard_start(), [standard_start()], "values", movetime_ms=100)
    assert len(values.splitlines()) == 1 + 18  # 3 legal points, 6 turns each
