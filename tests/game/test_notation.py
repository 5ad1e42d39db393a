"""Position and move notation (docs/rules.md §3, §9): round trips and exact errors."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.game.board import hex_board, standard_board
from solver.game.config import make_config, standard_config
from solver.game.notation import NotationError, parse_move_text
from solver.game.position import format_position, parse_position
from solver.game.position import AT, OFFER, PICK, PLACE, Move, Position
from solver.game.rules import PositionError, check_position, parse_move, IllegalMoveError
from solver.game.start import empty_setup, standard_start

from tests.oracles.rules_support import any_phase_positions, bits, pos_of, text_of

START = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"
EMPTY_HEX3 = ".../..../...../....../...../.... x place"


# ------------------------------------------------------------------ good input


def test_standard_start_text():
    assert standard_start().text() == START
    assert Position(START) == standard_start()
    assert repr(standard_start()) == f"Position({START!r})"


def test_empty_hex3_setup_text():
    cfg = make_config(3, balls=4, setup="offer")
    assert empty_setup(cfg).text() == EMPTY_HEX3
    pos = Position(EMPTY_HEX3)
    assert pos.board is hex_board(3)
    assert (pos.x, pos.o, pos.turn, pos.phase) == (0, 0, 0, PLACE)


def test_rows_are_top_row_first():
    board = standard_board()
    pos = Position("x.../5/6/7/8/7/6/....o o")
    assert pos.x == bits(board, "a8") and pos.o == bits(board, "e1") and pos.turn == 1
    assert pos.text() == "x.../...../....../......./......../......./....../....o o"


def test_digits_are_runs_of_empty_points():
    assert Position("1oo1/1o1o1/ooooo1/1o3x1/1oo2xx1/o1x1x1x/xxxxxx/2x2 x") == standard_start()
    assert Position("4/5/6/7/8/7/6/5 o") == Position("..../...../....../......./......../......./....../..... o")
    # digits may be split and combined with dots
    assert Position("22/113/111111/7/8/7/6/5 o").text() == Position("4/5/6/7/8/7/6/5 o").text()


def test_phase_fields():
    board = standard_board()
    empty = "4/5/6/7/8/7/6/5"
    pos = Position(f"{empty} x offer")
    assert (pos.phase, pos.points, pos.turn) == (OFFER, (), 0)
    a = Position(f"{empty} o pick f3 d3")
    b = Position(f"{empty} o pick d3 f3")
    assert a == b and a.phase == PICK and a.turn == 1
    assert a.points == (board.point("d3"), board.point("f3"))
    assert a.text().endswith(" o pick d3 f3")  # point order: bottom row first, left to right
    # bottom row before upper rows
    assert Position(f"{empty} o pick b8 e1").text().endswith(" pick e1 b8")
    at = Position(f"{empty} x at e4")
    assert (at.phase, at.points) == (AT, (board.point("e4"),))
    assert at.text() == f"{'/'.join('.' * n for n in (4, 5, 6, 7, 8, 7, 6, 5))} x at e4"


def test_place_side_follows_ball_counts():
    assert Position(text_of(standard_board(), x="a1", side="o", phase="place")).turn == 1
    assert Position(text_of(standard_board(), x="a1", o="b1", side="x", phase="place")).turn == 0


def test_text_of_helper_agrees_with_start():
    """The test helper builds text from names; check it against the literal start."""
    board = standard_board()
    x = "f5 f4 g4 c3 e3 g3 a2 b2 c2 d2 e2 f2 c1"
    o = "b8 c8 b7 d7 a6 b6 c6 d6 e6 b5 b4 c4 a3"
    assert text_of(board, x=x, o=o) == START


# ------------------------------------------------------------------ round trips


def _compress(text: str, draw) -> str:
    """Replace runs of '.' in the board field by digits, split at random points."""
    board, _, rest = text.partition(" ")
    out = []
    for run in re.split(r"(\.+)", board):
        if run and set(run) == {"."}:
            n = len(run)
            while n:
                take = draw(st.integers(1, min(9, n)))
                out.append(draw(st.sampled_from([str(take), "." * take])))
                n -= take
        else:
            out.append(run)
    return "".join(out) + " " + rest


@settings(max_examples=200, deadline=None)
@given(any_phase_positions(ns=(2, 3, 4, 5)), st.data())
def test_round_trip(pos, data):
    text = format_position(pos)
    assert not any(c.isdigit() for c in text.split()[0])
    parsed = parse_position(text)
    assert parsed == pos
    assert format_position(parsed) == text
    assert Position(text).text() == text
    compressed = _compress(text, data.draw)
    assert parse_position(compressed) == pos
    # extra whitespace between fields is harmless
    assert parse_position("  " + text.replace(" ", "   ") + " ") == pos


# ------------------------------------------------------------------ errors


EMPTY4 = "4/5/6/7/8/7/6/5"


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("", r"empty position"),
        # wrong row count: 7 rows fit no board
        (".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx x", r"7 rows"),
        # wrong row length, naming the row (row 1 is the bottom row)
        (".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x. x", r"row 1 \('\.\.x\.'\) has 4 points; hex4 needs 5"),
        ("..../...../....../......./........./......./....../..... x", r"row 4 .* has 9 points; hex4 needs 8"),
        ("4/5/6/7/8/7/6/9 x", r"row 1 .* has 9 points"),
        # foreign character, named, with its row
        (".oo./.o.o./ooooo./.o...x./.oZ..xx./o.x.x.x/xxxxxx/..x.. x", r"row 4 .*unexpected character 'Z' at column 3"),
        ("4/5/6/7/8/7/6/0.... x", r"row 1 .*unexpected character '0'"),
        # side to move
        (".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x..", r"missing side to move"),
        (f"{EMPTY4} y", r"bad side to move 'y'"),
        (f"{EMPTY4} X", r"bad side to move 'X'"),
        # phases
        (f"{EMPTY4} x setup", r"unknown phase 'setup'"),
        (f"{EMPTY4} x play", r"unknown phase 'play'"),
        (f"{EMPTY4} o pick d3 d3", r"pick needs two different points, got d3 twice"),
        (f"{EMPTY4} o pick d3", r"phase 'pick' takes two points, got 1"),
        (f"{EMPTY4} x at", r"phase 'at' takes one point, got 0"),
        (f"{EMPTY4} x offer d3", r"phase 'offer' takes no points, got 1"),
        (f"{EMPTY4} x at z9", r"no point 'z9' on hex4"),
        # side not fitting the phase
        (f"{EMPTY4} o offer", r"side 'o' does not fit phase 'offer'.*'x' is to move"),
        (f"{EMPTY4} x pick d3 f3", r"side 'x' does not fit phase 'pick'.*'o' is to move"),
        (f"{EMPTY4} o at e4", r"side 'o' does not fit phase 'at'"),
        (f"{EMPTY4} o place", r"side 'o' does not fit phase 'place'.*'x' is to move"),
        ("4/5/6/7/8/7/6/x4 x place", r"side 'x' does not fit phase 'place'.*'o' is to move"),
        ("4/5/6/7/8/7/6/oo3 o place", r"impossible placement counts x 0, o 2"),
        # centre occupied outside the rotation phase
        ("4/5/6/7/3x4/7/6/5 o place", r"centre point d4 is occupied"),
        ("4/5/6/3o3/8/7/6/5 x offer", r"centre point d5 is occupied"),
    ],
)
def test_notation_errors(text, pattern):
    with pytest.raises(NotationError, match=pattern):
        parse_position(text)


def test_notation_error_is_a_value_error_and_position_rejects_it():
    assert issubclass(NotationError, ValueError)
    with pytest.raises(NotationError):
        Position("4/5/6 x")
    with pytest.raises(NotationError, match="must be text"):
        parse_position(None)  # type: ignore[arg-type]


def test_centre_may_be_occupied_in_rotation_phase():
    pos = Position("4/5/6/7/3x4/7/6/5 o")
    assert pos.x == bits(standard_board(), "d4")


# ------------------------------------------------------------------ moves


def test_move_text():
    board = standard_board()
    assert parse_move_text(board, "e5+2") == Move.rotate(board.point("e5"), 2)
    assert parse_move_text(board, "e5-1") == Move.rotate(board.point("e5"), 5)
    assert parse_move_text(board, "e5-0") == Move.rotate(board.point("e5"), 0)
    assert parse_move_text(board, "e5-1").text(board) == "e5+5"
    for k in range(6):
        assert Move.rotate(board.point("d3"), k).text(board) == f"d3+{k}"
        assert Move.rotate(board.point("d3"), -k).text(board) == f"d3+{(-k) % 6}"
    assert parse_move_text(board, "c2") == Move.place(board.point("c2"))
    assert parse_move_text(board, "offer f3 d3") == Move.offer(board.point("d3"), board.point("f3"))
    assert Move.offer(board.point("f3"), board.point("d3")).text(board) == "offer d3 f3"
    assert parse_move_text(board, "pick f3").text(board) == "pick f3"


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("", "empty move"),
        ("e5+6", "bad rotation"),
        ("e5+", "bad rotation"),
        ("e5+x", "bad rotation"),
        ("i9+1", "no point 'i9'"),
        ("offer d3", "bad offer"),
        ("offer d3 d3", "must differ"),
        ("pick", "bad pick"),
        ("e5 +1", "bad move"),
    ],
)
def test_move_text_errors(text, pattern):
    with pytest.raises(NotationError, match=pattern):
        parse_move_text(standard_board(), text)


def test_parse_move_checks_legality():
    cfg, pos = standard_config(), standard_start()
    assert parse_move(cfg, pos, "e4-1") == Move.rotate(cfg.board.point("e4"), 5)
    with pytest.raises(IllegalMoveError, match="d5"):
        parse_move(cfg, pos, "d5+1")  # dark's point, light has no majority
    with pytest.raises(IllegalMoveError, match="g4 is not empty"):
        parse_move(cfg, pos, "g4+1")
    with pytest.raises(IllegalMoveError, match="h4 is an edge point"):
        parse_move(cfg, pos, "h4+1")
    with pytest.raises(IllegalMoveError, match="bad rotation"):
        parse_move(cfg, pos, "e4+7")


# ------------------------------------------------------------------ check_position


def test_check_position_material():
    cfg = standard_config()
    check_position(cfg, standard_start())  # fine
    board = cfg.board
    start = standard_start()
    fewer = start.replace(x=start.x & ~bits(board, "g4"))
    with pytest.raises(PositionError, match="material x 12, o 13"):
        check_position(cfg, fewer)
    # without edge/capture material never changes: equal counts needed even with balls unknown
    with pytest.raises(PositionError, match="material x 12, o 13"):
        check_position(make_config(4), fewer)
    # with edge, fewer balls are possible, more are not
    check_position(standard_config(edge=True), fewer)
    more = start.replace(x=start.x | bits(board, "d4"))
    with pytest.raises(PositionError, match="x 14, o 13 exceeds 13"):
        check_position(standard_config(edge=True), more)


def test_check_position_ball_on_other_colours_trap():
    cfg = standard_config(capture=True)
    board = cfg.board
    check_position(cfg, standard_start())  # each side's edge balls are on his own traps
    start = standard_start()
    # swap light's a2 ball and dark's a3 ball: each now stands on the other colour's trap
    bad = start.replace(x=(start.x & ~bits(board, "a2")) | bits(board, "a3"),
                        o=(start.o & ~bits(board, "a3")) | bits(board, "a2"))
    with pytest.raises(PositionError, match=r"ball on a2, a trap field of x|ball on a3, a trap field of o"):
        check_position(cfg, bad)
    only_o = pos_of(board, x="h4", o="c1 a8")
    with pytest.raises(PositionError, match=r"o ball on c1, a trap field of x"):
        check_position(make_config(4, capture=True), only_o)
    # without capture the same board is fine as far as traps go
    check_position(make_config(4, edge=True), pos_of(board, x="h4 d1", o="c1 a8"))


def test_check_position_phases():
    board = standard_board()
    with pytest.raises(PositionError, match="needs a setup game"):
        check_position(standard_config(), Position(f"{EMPTY4} x place"))
    with pytest.raises(PositionError, match="only with --setup offer"):
        check_position(standard_config(setup="last"), Position(f"{EMPTY4} x offer"))
    with pytest.raises(PositionError, match="wrong board|hex3"):
        check_position(standard_config(), Position(EMPTY_HEX3))
    cfg = make_config(4, balls=2, setup="offer")
    check_position(cfg, pos_of(board, x="a1 e1", o="a8 d8", phase="offer"))
    with pytest.raises(PositionError, match="needs all 2 balls"):
        check_position(cfg, pos_of(board, x="a1", o="a8 d8", phase="offer"))
    with pytest.raises(PositionError, match="c4 is not a legal rotation point"):
        check_position(cfg, pos_of(board, x="a1 e1", o="a8 d8", side="o", phase="pick b2 c4"))
    with pytest.raises(PositionError, match="placement phase with x 2, o 2"):
        check_position(cfg, pos_of(board, x="a1 e1", o="a8 d8", phase="place"))
