"""The optional rules of docs/rules.md §5: edge, capture, setup=offer and setup=last."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.game.board import hex_board, standard_board
from solver.game.config import Config, ConfigError, make_config, standard_config, symmetry_classes
from solver.game.position import AT, OFFER, PICK, PLACE, PLAY, Move, Position
from solver.game.rules import (
    LOSS,
    ONGOING,
    IllegalMoveError,
    PositionError,
    check_position,
    children,
    legal_points,
    moves,
    parse_move,
    play,
    rotate,
    status,
)
from solver.game.start import empty_setup, initial_position

from tests.oracles.rules_support import configs, map_move, map_position, names_of, pos_of

BOARD = standard_board()


def P(name):
    return BOARD.point(name)


def rot(name, k):
    return Move.rotate(P(name), k)


def legal_names(cfg, pos, colour):
    mover, opp = (pos.o, pos.x) if colour else (pos.x, pos.o)
    return {cfg.board.names[p] for p in legal_points(cfg, mover, opp)}


# ------------------------------------------------------------------ edge


def test_edge_points_become_pivots_only_with_edge():
    pos = pos_of(BOARD, x="a1", o="b1")
    assert legal_names(standard_config(), pos, 0) == set()
    # a2's on-board neighbours are b2 b3 a3 a1: one light ball, no dark one
    assert legal_names(standard_config(edge=True), pos, 0) == {"a2"}
    # c1's on-board neighbours d1 d2 c2 b1: one dark ball
    assert legal_names(standard_config(edge=True), pos, 1) == {"c1", "c2"}
    assert status(standard_config(), pos) == LOSS
    assert status(standard_config(edge=True), pos) == ONGOING


def test_ball_falls_off_the_edge():
    cfg = standard_config(edge=True)
    # a4's ring E NE NW W SW SE is b4 a5 - - - a3 (three points off the board)
    pos = pos_of(BOARD, x="b4 a5", o="a3", side="x")
    assert "a4" in legal_names(cfg, pos, 0)  # 2 against 1 on the board
    after = play(cfg, pos, rot("a4", 1))
    # b4 -> a5, a5 -> off (falls), a3 -> b4, the off-board SW point brings a hole to a3
    assert names_of(BOARD, after.x) == {"a5"}
    assert names_of(BOARD, after.o) == {"b4"}
    after = play(cfg, pos, rot("a4", 2))
    # b4 -> off, a5 -> off, a3 -> a5
    assert after.x == 0 and names_of(BOARD, after.o) == {"a5"}
    after = play(cfg, pos, rot("a4", 0))
    assert (after.x, after.o) == (pos.x, pos.o)
    # without edge, a4 is no rotation point
    with pytest.raises(IllegalMoveError, match="edge point"):
        play(standard_config(), pos, rot("a4", 1))


def test_edge_turns_do_not_invert():
    """Fallen balls are gone: turning back does not bring them back."""
    cfg = standard_config(edge=True)
    pos = pos_of(BOARD, x="b4 a5", o="a3 h4")
    after = play(cfg, pos, rot("a4", 1))  # x: a5; o: b4 h4
    assert after.x.bit_count() == 1
    back = after.replace(turn=0)
    assert "a4" not in legal_names(cfg, back, 0)  # now a tie at a4: a5 against b4
    x, o = rotate(cfg, after.x, after.o, P("a4"), 5)  # a5 -> b4, b4 -> a3
    assert names_of(BOARD, x) == {"b4"} and names_of(BOARD, o) == {"a3", "h4"}  # a5's ball is gone


def test_edge_on_hex2_makes_a_game():
    """hex(2): without edge only the centre is interior, so no one can ever move (§10)."""
    board = hex_board(2)
    base, edge = make_config(2), make_config(2, edge=True)
    for n in board.names:
        if board.point(n) in board.centre:
            continue
        pos = Position.make(board, 1 << board.point(n), 0, 0)
        # a lone light ball: in the base game only centre pivots, which can hold no ball
        # after the move, so the centre is never completed; with edge every empty point
        # next to it is a pivot
        assert set(legal_points(base, pos.x, pos.o)) <= set(board.centre)
        nbs = {nb for nb in board.neighbours[board.point(n)] if nb >= 0}
        assert set(legal_points(edge, pos.x, pos.o)) == nbs


# ------------------------------------------------------------------ capture


def test_capture_on_trap_field_and_own_trap_stays():
    cfg = standard_config(capture=True)
    # b2's ring: c2 c3 b3 a2 a1 b1; a2 is a trap field of light
    pos = pos_of(BOARD, x="c2 c3", o="b3 h4", side="x")
    check_position(make_config(4, capture=True), pos)  # no ball on a foreign trap
    after = play(cfg, pos, rot("b2", 1))  # the dark ball b3 -> a2: captured
    assert names_of(BOARD, after.x) == {"c3", "b3"}
    assert names_of(BOARD, after.o) == {"h4"}
    after = play(cfg, pos, rot("b2", 2))  # light's c3 -> a2, its own trap: stays
    assert names_of(BOARD, after.x) == {"b3", "a2"}
    assert names_of(BOARD, after.o) == {"a1", "h4"}
    # without capture nothing is removed
    after = play(standard_config(), pos, rot("b2", 1))
    assert names_of(BOARD, after.o) == {"a2", "h4"}


def test_capture_of_the_movers_own_ball():
    cfg = standard_config(capture=True)
    # b3's ring: c3 c4 b4 a3 a2 b2; a3 is a trap field of dark
    pos = pos_of(BOARD, x="c3 c4", o="h4")
    after = play(cfg, pos, rot("b3", 2))  # c3 -> b4, c4 -> a3 (dark's trap): light's ball gone
    assert names_of(BOARD, after.x) == {"b4"}
    assert names_of(BOARD, after.o) == {"h4"}


def test_edge_and_capture_together():
    cfg = standard_config(edge=True, capture=True)
    # a2's ring: b2 b3 a3 - - a1; a3 is dark's trap, the W and SW points are off the board
    pos = pos_of(BOARD, x="b2 b3", o="a1 h4")
    assert "a2" in legal_names(cfg, pos, 0)
    after = play(cfg, pos, rot("a2", 1))  # b2 -> b3, b3 -> a3 (captured), a1 -> b2
    assert names_of(BOARD, after.x) == {"b3"}
    assert names_of(BOARD, after.o) == {"b2", "h4"}
    after = play(cfg, pos, rot("a2", 2))  # b2 -> a3 (captured), b3 -> off, a1 -> b3
    assert after.x == 0
    assert names_of(BOARD, after.o) == {"b3", "h4"}


def test_capture_config_errors():
    with pytest.raises(ConfigError, match="need --capture"):
        make_config(4, traps_x="a1", traps_o="a2")
    with pytest.raises(ConfigError, match="needs --traps-x"):
        make_config(3, capture=True)
    with pytest.raises(ConfigError, match="both colours"):
        make_config(4, capture=True, traps_x="a1,b1", traps_o="b1")
    with pytest.raises(ConfigError, match="centre point d4"):
        make_config(4, capture=True, traps_x="d4", traps_o="a1")
    cfg = standard_config(capture=True)
    assert names_of(BOARD, cfg.traps_x) == {"a2", "c1", "f2", "g3"}
    assert names_of(BOARD, cfg.traps_o) == {"a3", "a6", "b8", "c8"}


# ------------------------------------------------------------------ setup: placement


def test_placement_not_on_centre_or_foreign_traps():
    cfg = standard_config(capture=True, setup="offer")
    pos = empty_setup(cfg)
    assert pos == Position("4/5/6/7/8/7/6/5 x place") == initial_position(cfg)
    assert status(cfg, pos) == ONGOING
    placeable = {BOARD.names[m.point] for m in moves(cfg, pos)}
    assert placeable == set(BOARD.names) - {"d4", "e4", "d5"} - {"a3", "a6", "b8", "c8"}
    assert len(placeable) == 48 - 3 - 4
    pos = play(cfg, pos, Move.place(P("a2")))  # light on his own trap field: fine
    assert pos.phase == PLACE and pos.turn == 1
    placeable = {BOARD.names[m.point] for m in moves(cfg, pos)}
    assert placeable == set(BOARD.names) - {"d4", "e4", "d5"} - {"a2", "c1", "f2", "g3"}
    with pytest.raises(IllegalMoveError, match="centre point"):
        parse_move(cfg, pos, "d4")
    with pytest.raises(IllegalMoveError, match="trap field of the other colour"):
        parse_move(cfg, pos, "c1")
    with pytest.raises(IllegalMoveError, match="a rotation|placement"):
        parse_move(cfg, pos, "b2+1")
    # without capture only the centre (and occupied points) are barred
    plain = standard_config(setup="offer")
    pos = play(plain, empty_setup(plain), Move.place(P("a2")))
    placeable = {BOARD.names[m.point] for m in moves(plain, pos)}
    assert placeable == set(BOARD.names) - {"d4", "e4", "d5", "a2"}
    with pytest.raises(IllegalMoveError, match="not empty"):
        parse_move(plain, pos, "a2")


def test_setup_does_not_apply_the_no_legal_point_rule_while_placing():
    cfg = make_config(4, balls=2, setup="offer")
    pos = pos_of(BOARD, x="a1", o="b1", phase="place")
    assert status(cfg, pos) == ONGOING
    assert len(moves(cfg, pos)) == 48 - 3 - 2


def _place_all(cfg, names):
    pos = empty_setup(cfg)
    for i, name in enumerate(names):
        assert pos.phase == PLACE and pos.turn == i % 2
        pos = play(cfg, pos, Move.place(P(name)))
    return pos


def test_setup_offer_full_game_with_two_legal_points():
    cfg = make_config(4, balls=2, setup="offer")
    # light a1 e1 (legal points b2 and e2), dark a8 d8 (legal points b7 and d7)
    pos = _place_all(cfg, ["a1", "a8", "e1", "d8"])
    assert pos == pos_of(BOARD, x="a1 e1", o="a8 d8", side="x", phase="offer")
    assert pos.text().endswith(" x offer")
    check_position(cfg, pos)
    assert status(cfg, pos) == ONGOING
    assert moves(cfg, pos) == [Move.offer(P("b2"), P("e2"))]
    assert parse_move(cfg, pos, "offer e2 b2") == Move.offer(P("b2"), P("e2"))
    with pytest.raises(IllegalMoveError, match="offer"):
        parse_move(cfg, pos, "b2+1")  # no direct rotation when there is a choice
    pick = play(cfg, pos, Move.offer(P("e2"), P("b2")))
    assert (pick.phase, pick.turn, pick.points) == (PICK, 1, (P("b2"), P("e2")))
    assert pick.text().endswith(" o pick b2 e2")
    check_position(cfg, pick)
    assert status(cfg, pick) == ONGOING
    assert set(moves(cfg, pick)) == {Move.pick(P("b2")), Move.pick(P("e2"))}
    with pytest.raises(IllegalMoveError, match="pick b2 or e2"):
        parse_move(cfg, pick, "pick d2")
    at = play(cfg, pick, Move.pick(P("e2")))
    assert (at.phase, at.turn, at.points) == (AT, 0, (P("e2"),))
    assert at.text().endswith(" x at e2")
    check_position(cfg, at)
    assert set(moves(cfg, at)) == {rot("e2", k) for k in range(6)}  # k = 0 included
    with pytest.raises(IllegalMoveError, match="rotation at e2"):
        parse_move(cfg, at, "offer b2 e2")
    with pytest.raises(IllegalMoveError):
        parse_move(cfg, at, "b2+1")
    after = play(cfg, at, rot("e2", 0))
    assert (after.phase, after.turn, after.x, after.o) == (PLAY, 1, pos.x, pos.o)
    assert legal_names(cfg, after, 1) == {"b7", "d7"}
    assert status(cfg, after) == ONGOING


def test_setup_offer_with_one_legal_point_rotates_at_once():
    cfg = make_config(4, balls=2, setup="offer")
    # e1 and d1 tie at e2; d2 sees only dark's d1: light has b2 alone
    pos = pos_of(BOARD, x="a1 e1", o="d1 a8", phase="offer")
    check_position(cfg, pos)
    assert legal_names(cfg, pos, 0) == {"b2"}
    assert status(cfg, pos) == ONGOING
    assert set(moves(cfg, pos)) == {rot("b2", k) for k in range(6)}
    after = play(cfg, pos, rot("b2", 1))  # ring c2 c3 b3 a2 a1 b1: a1 -> b1
    assert (after.phase, after.turn) == (PLAY, 1)
    assert names_of(BOARD, after.x) == {"b1", "e1"}


def test_setup_offer_with_no_legal_point_loses():
    cfg = make_config(4, balls=2, setup="offer")
    # b2: a1 against b1; e2: e1 against d1; c2, d2: dark only
    pos = pos_of(BOARD, x="a1 e1", o="b1 d1", phase="offer")
    check_position(cfg, pos)
    assert legal_names(cfg, pos, 0) == set()
    assert status(cfg, pos) == LOSS
    assert moves(cfg, pos) == [] and children(cfg, pos) == []
    # the last placement leads there: dark's d1 completes it
    before = pos_of(BOARD, x="a1 e1", o="b1", side="o", phase="place")
    assert play(cfg, before, Move.place(P("d1"))) == pos


def test_setup_last_hands_first_rotation_to_last_placer():
    cfg = make_config(4, balls=2, setup="last")
    pos = _place_all(cfg, ["a1", "a8", "e1", "d8"])
    assert (pos.phase, pos.turn) == (PLAY, 1)  # dark placed the last ball
    assert pos.text().endswith(" o")
    check_position(cfg, pos)
    assert set(moves(cfg, pos)) == {rot(n, k) for n in ("b7", "d7") for k in range(6)}
    # no offer phase with setup=last
    with pytest.raises(PositionError, match="only with --setup offer"):
        check_position(cfg, pos_of(BOARD, x="a1 e1", o="a8 d8", phase="offer"))
    # light a1 e1, dark b1 d8: b2 ties (a1 against b1), so dark's points are c2 and d7
    other = _place_all(cfg, ["a1", "b1", "e1", "d8"])
    assert (other.phase, other.turn) == (PLAY, 1)
    assert legal_names(cfg, other, 1) == {"c2", "d7"}


def test_setup_last_loss_for_last_placer_without_legal_point():
    cfg = make_config(4, balls=1, setup="last")
    # light b1, dark a1: a1's only interior neighbour b2 is a tie, so dark must rotate and cannot
    pos = _place_all(cfg, ["b1", "a1"])
    assert (pos.phase, pos.turn) == (PLAY, 1)
    assert legal_names(cfg, pos, 1) == set()
    assert status(cfg, pos) == LOSS
    assert moves(cfg, pos) == []
    # the other way round dark (b1) has c2
    pos = _place_all(cfg, ["a1", "b1"])
    assert legal_names(cfg, pos, 1) == {"c2"}
    assert status(cfg, pos) == ONGOING


def test_setup_offer_hex3_counts():
    cfg = make_config(3, balls=4, setup="offer")
    pos = empty_setup(cfg)
    assert pos.text() == ".../..../...../....../...../.... x place"
    assert len(moves(cfg, pos)) == 27 - 3
    with pytest.raises(ConfigError, match="needs --balls"):
        make_config(3, setup="offer")
    with pytest.raises(ConfigError, match="do not fit"):
        make_config(3, balls=13, setup="offer")


# ------------------------------------------------------------------ symmetry in setup phases


@st.composite
def setup_positions(draw):
    """A valid placement- or offer-phase position under a random setup configuration."""
    cfg0 = draw(configs(ns=(3, 4), edge=False))
    board = cfg0.board
    balls = draw(st.integers(1, 5))
    cfg = Config(board, balls, cfg0.edge, cfg0.capture, cfg0.traps_x, cfg0.traps_o, "offer")
    allowed_x = [p for p in range(board.size) if p not in board.centre and not cfg.traps_o >> p & 1]
    allowed_o = [p for p in range(board.size) if p not in board.centre and not cfg.traps_x >> p & 1]
    full = draw(st.booleans())
    nx = balls if full else draw(st.integers(0, balls - 1))
    no = balls if full else draw(st.sampled_from([nx, max(nx - 1, 0)]))
    xs = draw(st.lists(st.sampled_from(allowed_x), min_size=nx, max_size=nx, unique=True))
    os_ = draw(
        st.lists(st.sampled_from([p for p in allowed_o if p not in xs]), min_size=no, max_size=no, unique=True)
    )
    x = sum(1 << p for p in xs)
    o = sum(1 << p for p in os_)
    if full:
        return cfg, Position.make(board, x, o, 0, OFFER)
    return cfg, Position.make(board, x, o, 0 if nx == no else 1, PLACE)


@settings(max_examples=100, deadline=None)
@given(setup_positions())
def test_setup_phases_commute_with_plain_symmetries(cp):
    cfg, pos = cp
    board = cfg.board
    plain, _ = symmetry_classes(cfg)
    frontier = [pos]
    # the position, and for offers also the pick and at positions behind it
    if pos.phase == OFFER:
        picks = children(cfg, pos)[:2]
        frontier += picks + [at for pk in picks if pk.phase == PICK for at in children(cfg, pk)]
    for p in frontier:
        for sym in plain:
            image = map_position(board, sym, p)
            assert status(cfg, image) == status(cfg, p)
            assert {map_move(board, sym, m) for m in moves(cfg, p)} == set(moves(cfg, image))
            assert {map_position(board, sym, k) for k in children(cfg, p)} == set(children(cfg, image))


@settings(max_examples=100, deadline=None)
@given(setup_positions())
def test_setup_phase_rules_on_random_positions(cp):
    cfg, pos = cp
    board = cfg.board
    if pos.phase == PLACE:
        banned = board.centre_mask | (cfg.traps_o if pos.turn == 0 else cfg.traps_x)
        expected = {p for p in range(board.size) if not (pos.x | pos.o | banned) >> p & 1}
        assert {m.point for m in moves(cfg, pos)} == expected
        assert all(m.kind == "place" for m in moves(cfg, pos))
        return
    legal = legal_points(cfg, pos.x, pos.o)
    got = moves(cfg, pos)
    if len(legal) == 0:
        assert status(cfg, pos) == LOSS and got == []
    elif len(legal) == 1:
        assert set(got) == {Move.rotate(legal[0], k) for k in range(6)}
    else:
        offers = {(m.point, m.point2) for m in got}
        assert all(m.kind == "offer" for m in got)
        assert offers == {(a, b) for a in legal for b in legal if a < b}
