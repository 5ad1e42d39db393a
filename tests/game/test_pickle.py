"""The value types cross process boundaries (worker pools pickle their arguments and
results): each comes back equal, on the same shared board instance — the databases and
the rules compare boards by identity."""

from __future__ import annotations

import pickle

import pytest

from solver import Config, Move, Position, Value, make_config
from solver.errors import MissingValueError, NotationError
from solver.game.rules import moves

POSITIONS = [
    "..o/..../...../....../.x.../.ox. x",  # hex(3), play
    ".../..o./...../.o..../x..../..x. o pick c2 d2",  # hex(3), setup: an offer to pick from
    ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x",  # the standard start
]


@pytest.mark.parametrize("text", POSITIONS)
def test_a_position_pickles_onto_the_same_board(text):
    pos = Position(text)
    back = pickle.loads(pickle.dumps(pos))
    assert back == pos and hash(back) == hash(pos)
    assert back.board is pos.board
    assert back.text() == text
    with pytest.raises(AttributeError):
        back.turn = 1  # still immutable


def test_moves_configs_values_and_errors_pickle():
    cfg = make_config("hex3", 2, edge=True)
    pos = Position(POSITIONS[0])
    for obj in [cfg, *moves(cfg, pos), Value("win", 7), Value("not-loss"), Value("loss", 3, exact=False)]:
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and type(back) is type(obj)
    assert pickle.loads(pickle.dumps(cfg)).board is cfg.board
    assert isinstance(pickle.loads(pickle.dumps(cfg)), Config)
    assert isinstance(pickle.loads(pickle.dumps(Move.rotate(3, 1))), Move)
    for err in (NotationError("bad text 'z'"), MissingValueError("no value")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
