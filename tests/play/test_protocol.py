"""The engine-protocol client against a fake engine (tests/play/fake_engine.py): what it sends,
what it accepts, and how a program that crashes, answers garbage or never answers loses."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from solver.errors import UsageError
from solver.game.config import standard_config
from solver.game.position import Position
from solver.game.rules import apply, moves
from solver.game.start import standard_start
from solver.play.match import play_game
from solver.play.players import make_player
from solver.play.protocol import PlayerFailure, ProtocolPlayer, is_command

FAKE = Path(__file__).with_name("fake_engine.py")
CFG = standard_config()


def fake(mode: str = "first") -> str:
    return f"{sys.executable} {FAKE} {mode}"


def engine(mode: str = "first", movetime: int = 20, margin: int = 500, first_go_s: float = 0) -> ProtocolPlayer:
    return ProtocolPlayer(fake(mode), movetime, margin_ms=margin, ready_timeout_s=5, first_go_s=first_go_s)


def test_the_fake_engine_plays_the_first_legal_move_and_hears_the_history(tmp_path, monkeypatch):
    log = tmp_path / "log.txt"
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    start = standard_start()
    with engine("log") as p:
        p.new_game()
        history = [start]
        for _ in range(4):  # the client's moves for both sides: the history grows by one each time
            pos = history[-1]
            move = p(CFG, pos, history=history)
            assert move == moves(CFG, pos)[0]
            history.append(apply(CFG, pos, move))
    sent = log.read_text().splitlines()
    texts = [moves(CFG, history[i])[0].text(CFG.board) for i in range(3)]
    assert sent[:2] == ["isready", "newgame"]
    positions = [line for line in sent if line.startswith("position")]
    assert positions[0] == f"position {start.text()}"
    assert positions[3] == f"position {start.text()} moves {' '.join(texts)}"
    assert sent.count("go movetime 20") == 4 and sent[-1] == "quit"


def test_offer_and_pick_moves_never_go_into_a_moves_list():
    """After an offer (x: 'offer e4 f5'), a pick ('pick e4') and a rotation at e4, the moves
    list starts at the position after the pick: the 'at' position, then the rotation."""
    cfg = standard_config(setup="offer")
    offer = Position("xxo./xoox./x.o.xo/x.o.x../oo...x../.o.o.o./xxox../x.o.. x offer")
    history = [offer]
    for _ in range(4):
        history.append(apply(cfg, history[-1], moves(cfg, history[-1])[0]))
    p = ProtocolPlayer("unused program", 10)
    assert p.position_command(cfg, history[1], history[:2]) == f"position {history[1].text()}"
    assert history[2].phase == "at"
    rotation, reply = (moves(cfg, history[i])[0].text(cfg.board) for i in (2, 3))
    assert p.position_command(cfg, history[4], history) == f"position {history[2].text()} moves {rotation} {reply}"
    assert p.position_command(cfg, history[4], None) == f"position {history[4].text()}"


@pytest.mark.parametrize("mode, words", [
    ("crash", ["exited with status 3", "crashing on purpose"]),
    ("garbage", ["bestmove 'zz9'", "the program said 'error: confused on purpose'"]),
    ("hang", ["no bestmove within 0.22 s after go movetime 20"]),
])
def test_a_broken_program_forfeits_the_game(mode, words):
    """The fake engine has light from the start; it fails at its first move and loses 0-1."""
    with engine(mode, margin=200) as p:
        out = play_game(CFG, standard_start(), p, make_player("random", 1), max_plies=10)
        assert out.outcome == "0-1" and out.moves == []
        assert out.reason.startswith("x forfeits (")
        for w in words:
            assert w in out.reason and w in out.sentence
        # the program is started again for the next game, and fails again the same way
        again = play_game(CFG, standard_start(), make_player("random", 1), p, max_plies=10)
        assert again.outcome == "1-0" and again.reason.startswith("o forfeits (") and words[0] in again.reason


def test_a_program_that_never_says_readyok_is_a_usage_error():
    p = ProtocolPlayer(fake("noready"), 10, ready_timeout_s=0.5)
    with pytest.raises(UsageError, match="no readyok within 0.5 s"):
        p.open()
    assert p.proc is None  # killed, not left behind


def test_a_program_that_cannot_be_run():
    with pytest.raises(UsageError, match="cannot run"):
        ProtocolPlayer("/nonexistent/engine --flag", 10).open()
    with pytest.raises(UsageError, match="cannot split"):
        ProtocolPlayer("engine 'unclosed", 10)


def test_calling_a_closed_program_fails():
    p = engine()
    with pytest.raises(PlayerFailure, match="not running"):
        p(CFG, standard_start())


def test_what_counts_as_a_command():
    assert is_command("rotary engine") and is_command("./my_engine") and is_command("/usr/bin/x")
    assert not is_command("greedy")


def test_the_first_go_after_a_start_may_take_longer():
    """A program may load its search when the first position shows it the board: the first
    ``go`` after a start waits ``first_go_s`` (the others: movetime plus the margin, above)."""
    with engine("hang", margin=100, first_go_s=1.0) as p:
        t0 = time.monotonic()
        with pytest.raises(PlayerFailure, match="no bestmove within 1 s"):
            p(CFG, standard_start())
        assert time.monotonic() - t0 >= 1.0
        p.new_game()  # started again: the killed program's successor gets the allowance again
        with pytest.raises(PlayerFailure, match="no bestmove within 1 s"):
            p(CFG, standard_start())


def test_the_rules_go_as_the_command_lines_flags():
    from solver.game.config import make_config
    from solver.play.protocol import rule_flags

    assert rule_flags(CFG) == []
    assert rule_flags(make_config(4, 13, setup="offer")) == ["--setup", "offer", "--balls", "13"]
    assert rule_flags(make_config(3, edge=True)) == ["--edge"]
    hex4 = make_config(4, capture=True)  # the default trap fields, spelt out
    flags = rule_flags(hex4)
    assert flags[0] == "--capture" and flags[1::2] == ["--traps-x", "--traps-o"]
    assert make_config(4, capture=True, traps_x=flags[2], traps_o=flags[4]) == hex4


def test_a_program_hears_the_rules_after_each_start(tmp_path, monkeypatch):
    log = tmp_path / "heard.txt"
    monkeypatch.setenv("FAKE_ENGINE_LOG", str(log))
    p = ProtocolPlayer(fake("log"), 20, ready_timeout_s=5, rules=["--edge"])
    try:
        p.open()
        p.new_game()
    finally:
        p.close()
    heard = log.read_text().splitlines()
    assert heard.count("rules --edge") == 2 and heard.index("rules --edge") == 1  # after the first isready


def test_a_program_that_refuses_the_rules_cannot_play():
    p = ProtocolPlayer(fake("badrules"), 20, ready_timeout_s=5, rules=["--setup", "offer", "--balls", "13"])
    with pytest.raises(UsageError, match="refused 'rules --setup offer --balls 13': error: these rules are not supported"):
        p.open()
    assert p.proc is None


def test_a_program_older_than_the_rules_command_plays_with_its_own_flags(capsys):
    """A program that does not know ``rules`` (an engine pinned before the command) plays
    the rules of its command line: started with ``--capture``, it answers capture moves,
    and the match says once that the rules were not sent."""
    from solver.game.config import make_config

    cfg = make_config(4, capture=True)
    p = ProtocolPlayer(fake("norules") + " --capture", 20, ready_timeout_s=5, rules=["--capture"])
    try:
        p.open()
        p.new_game()
        move = p(cfg, standard_start())
    finally:
        p.close()
    assert move in moves(cfg, standard_start())
    assert not p.knows_rules
    assert capsys.readouterr().err.count("does not know 'rules'") == 1


def test_a_refused_position_fails_at_once():
    """``rotary engine`` without the setup rules refuses a placement position: the move fails
    within the grace, not at the end of the first go's long timeout."""
    from solver.game.config import make_config
    from tests.helpers import rotary_exe

    from solver.game.start import initial_position

    cfg = make_config(3, 4, setup="offer")
    pos = initial_position(cfg)
    p = ProtocolPlayer(f"{rotary_exe()} engine", 20, ready_timeout_s=60)
    p.open()
    try:
        t = time.monotonic()
        with pytest.raises(PlayerFailure, match="needs a setup game"):
            p(cfg, pos)
        assert time.monotonic() - t < 10
    finally:
        p.close()
