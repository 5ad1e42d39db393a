"""The rotation rules (docs/rules.md §3, §4, §7, §8): hand-made positions and invariants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from solver.game.board import standard_board
from solver.game.config import Config, standard_config, symmetry_classes
from solver.game.position import PLAY, Move, Position
from solver.game.rules import (
    LOSS,
    ONGOING,
    WIN,
    centre_owner,
    children,
    legal_points,
    moves,
    perft,
    pivots,
    play,
    rotate,
    status,
)
from solver.game.start import standard_start

from tests.oracles.rules_support import (
    bits,
    config_and_position,
    configs,
    map_move,
    map_position,
    names_of,
    pos_of,
    spec_legal_points,
    spec_rotate,
)

START = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"
BOARD = standard_board()


def legal_names(cfg, pos, colour=None):
    turn = pos.turn if colour is None else colour
    mover, opp = (pos.o, pos.x) if turn else (pos.x, pos.o)
    return {cfg.board.names[p] for p in legal_points(cfg, mover, opp)}


def rot(name, k):
    return Move.rotate(BOARD.point(name), k)


# ------------------------------------------------------------------ standard start (§8)


def test_standard_start_facts():
    pos = standard_start()
    assert pos.text() == START
    assert pos.count(0) == pos.count(1) == 13
    assert pos.turn == 0 and pos.phase == PLAY
    assert (pos.x | pos.o) & BOARD.centre_mask == 0
    assert names_of(BOARD, pos.x & BOARD.edge) == {"a2", "c1", "f2", "g3"}
    assert names_of(BOARD, pos.o & BOARD.edge) == {"a3", "a6", "b8", "c8"}
    for p, (q, r) in enumerate(BOARD.coords):
        if pos.x >> p & 1:
            assert q > r
        if pos.o >> p & 1:
            assert q < r
    empty_interior = {BOARD.coords[p] for p in range(BOARD.size) if BOARD.is_interior(p) and pos.empty >> p & 1}
    assert empty_interior == {(0, 0), (1, 0), (0, 1), (1, 1), (-1, 1), (1, -1), (-1, -1), (3, -1), (-1, 3)}


def test_standard_start_legal_points():
    cfg, pos = standard_config(), standard_start()
    assert legal_names(cfg, pos, 0) == {"e4", "d3", "f3"}
    assert legal_names(cfg, pos, 1) == {"d5", "c5", "c7"}
    assert status(cfg, pos) == ONGOING
    assert set(moves(cfg, pos)) == {rot(n, k) for n in ("e4", "d3", "f3") for k in range(6)}


def test_standard_start_is_reflection_colour_swap_invariant():
    pos = standard_start()
    idx = {c: i for i, c in enumerate(BOARD.coords)}
    reflection = tuple(idx[(r, q)] for q, r in BOARD.coords)
    assert reflection in BOARD.symmetries
    image = map_position(BOARD, reflection, pos.replace(turn=1), swap=True)
    assert image == pos
    # and light's legal points reflect onto dark's
    assert {BOARD.names[reflection[BOARD.point(n)]] for n in ("e4", "d3", "f3")} == {"d5", "c5", "c7"}


def test_standard_start_first_moves_by_hand():
    """e4's ring is f4 e5 d5 d4 d3 e3 (x . . . . x); f3's ring is six light balls.

    So every turn at f3 gives back the same board, as does k=0 anywhere: one child;
    the five other turns at e4 and at d3 (ring e3 e4 d4 c3 c2 d2: x . . x x x) each give a
    different board (neither ring is periodic, and only e4 turns can put a ball on e5).
    """
    cfg, pos = standard_config(), standard_start()
    after = play(cfg, pos, rot("e4", 2))  # f4 -> d5, e3 -> e5
    assert after.x == (pos.x & ~bits(BOARD, "f4 e3")) | bits(BOARD, "d5 e5")
    assert after.o == pos.o and after.turn == 1
    null = play(cfg, pos, rot("f3", 3))
    assert (null.x, null.o, null.turn) == (pos.x, pos.o, 1)
    assert len(children(cfg, pos)) == 11
    assert perft(cfg, pos, 1) == 11
    assert perft(cfg, pos, 0) == 1


# ------------------------------------------------------------------ hand-made positions


def test_rotation_moves_ring_counter_clockwise():
    cfg = standard_config()
    # b2's ring in order E NE NW W SW SE: c2 c3 b3 a2 a1 b1
    pos = pos_of(BOARD, x="c2 c3", o="b3", side="x")
    after = play(cfg, pos, rot("b2", 1))
    assert names_of(BOARD, after.x) == {"c3", "b3"} and names_of(BOARD, after.o) == {"a2"}
    after = play(cfg, pos, rot("b2", 5))  # same as b2-1: clockwise
    assert names_of(BOARD, after.x) == {"b1", "c2"} and names_of(BOARD, after.o) == {"c3"}
    assert play(cfg, pos, rot("b2", -1)) == after


def test_equal_counts_are_not_legal():
    cfg = standard_config()
    # d3's ring: e3 e4 d4 c3 c2 d2
    tie = pos_of(BOARD, x="e3 c3", o="c2 d2")
    assert "d3" not in legal_names(cfg, tie, 0)
    assert "d3" not in legal_names(cfg, tie, 1)
    more = pos_of(BOARD, x="e3 c3 e4", o="c2 d2")
    assert "d3" in legal_names(cfg, more, 0)
    assert "d3" not in legal_names(cfg, more, 1)
    # empty neighbours do not count: 1 against 0 is a majority
    one = pos_of(BOARD, x="e3")
    assert "d3" in legal_names(cfg, one, 0)
    assert legal_names(cfg, one, 1) == set()


def test_mover_without_legal_point_loses():
    cfg = standard_config()
    # a1's only interior neighbour is b2, where a1 (x) and b1 (o) tie
    pos = pos_of(BOARD, x="a1", o="b1", side="x")
    assert legal_names(cfg, pos) == set()
    assert status(cfg, pos) == LOSS
    assert moves(cfg, pos) == [] and children(cfg, pos) == []
    # the same board with dark to move: c2 (ring d2 d3 c3 b2 b1 c1) is dark's
    dark = pos.replace(turn=1)
    assert legal_names(cfg, dark) == {"c2"}
    assert status(cfg, dark) == ONGOING
    assert set(moves(cfg, dark)) == {rot("c2", k) for k in range(6)}


def test_null_rotation():
    cfg = standard_config()
    pos = pos_of(BOARD, x="e3", o="a8")
    assert rot("d3", 0) in moves(cfg, pos)
    after = play(cfg, pos, rot("d3", 0))
    assert (after.x, after.o, after.turn) == (pos.x, pos.o, 1)
    # no legal point, no null rotation either
    lost = pos_of(BOARD, x="a1", o="b1")
    assert all(m.k != 0 for m in moves(cfg, lost)) and moves(cfg, lost) == []


def test_move_completing_opponents_centre_wins_for_opponent():
    cfg = standard_config()
    # e5's ring: f5 e6 d6 d5 e4 f4; light has f5 e6 f4 (3) against d6 d5 (2)
    pos = pos_of(BOARD, x="f5 e6 f4", o="d4 d5 d6", side="x")
    assert "e5" in legal_names(cfg, pos)
    after = play(cfg, pos, rot("e5", 1))  # d6 -> d5, d5 -> e4: dark holds d4 e4 d5
    assert names_of(BOARD, after.o) == {"d4", "d5", "e4"}
    assert names_of(BOARD, after.x) == {"e6", "d6", "f5"}
    assert after.turn == 1
    assert centre_owner(cfg, after.x, after.o) == 1
    assert status(cfg, after) == WIN  # for dark, the side to move there
    assert moves(cfg, after) == [] and children(cfg, after) == []


def test_move_completing_own_centre_loses_for_opponent():
    cfg = standard_config()
    # d6's ring: e6 d7 c7 c6 d5 e5
    pos = pos_of(BOARD, x="d4 e4 c6", o="a8 b8 c8", side="x")
    assert status(cfg, pos) == ONGOING
    after = play(cfg, pos, rot("d6", 1))  # c6 -> d5
    assert names_of(BOARD, after.x) == {"d4", "e4", "d5"}
    assert status(cfg, after) == LOSS
    assert moves(cfg, after) == []


def test_finished_position_whoever_is_to_move():
    cfg = standard_config()
    won = pos_of(BOARD, x="d4 e4 d5 a1", o="b7 c7 d7 e7", side="x")
    assert status(cfg, won) == WIN and moves(cfg, won) == []
    assert status(cfg, won.replace(turn=1)) == LOSS and moves(cfg, won.replace(turn=1)) == []


# ------------------------------------------------------------------ reference implementation


@settings(max_examples=150, deadline=None)
@given(config_and_position(), st.data())
def test_legal_points_and_rotation_match_reference(cp, data):
    cfg, pos = cp
    board = cfg.board
    assert legal_names(cfg, pos, 0) == spec_legal_points(cfg, pos, "x")
    assert legal_names(cfg, pos, 1) == spec_legal_points(cfg, pos, "o")
    piv = [p for p in range(board.size) if pivots(cfg) >> p & 1]
    c = data.draw(st.sampled_from(piv))
    k = data.draw(st.integers(0, 5))
    x, o = rotate(cfg, pos.x, pos.o, c, k)
    assert (names_of(board, x), names_of(board, o)) == spec_rotate(cfg, pos, board.names[c], k)


@settings(max_examples=150, deadline=None)
@given(config_and_position())
def test_status_and_moves_match_reference(cp):
    cfg, pos = cp
    board = cfg.board
    centre = {board.names[p] for p in board.centre}
    colour = "xo"[pos.turn]
    xs, os_ = names_of(board, pos.x), names_of(board, pos.o)
    legal = spec_legal_points(cfg, pos, colour)
    if centre <= xs:
        expected = WIN if colour == "x" else LOSS
    elif centre <= os_:
        expected = WIN if colour == "o" else LOSS
    else:
        expected = ONGOING if legal else LOSS
    assert status(cfg, pos) == expected
    got = {(board.names[m.point], m.k) for m in moves(cfg, pos)}
    assert got == ({(n, k) for n in legal for k in range(6)} if expected == ONGOING else set())
    kids = children(cfg, pos)
    assert len(kids) == len(set(kids))
    assert set(kids) == {play(cfg, pos, m) for m in moves(cfg, pos)}
    for kid in kids:
        assert kid.turn == 1 - pos.turn and kid.phase == PLAY


@settings(max_examples=150, deadline=None)
@given(config_and_position())
def test_null_rotation_exactly_when_a_legal_point_exists(cp):
    cfg, pos = cp
    if status(cfg, pos) != ONGOING:
        return
    mover, opp = pos.mover, pos.opponent
    nulls = {m.point for m in moves(cfg, pos) if m.k == 0}
    assert nulls == set(legal_points(cfg, mover, opp))
    assert nulls  # ongoing means the mover has a legal point
    for c in nulls:
        after = play(cfg, pos, Move.rotate(c, 0))
        assert (after.x, after.o, after.turn) == (pos.x, pos.o, 1 - pos.turn)


@settings(max_examples=150, deadline=None)
@given(config_and_position(edge=False, capture=False), st.data())
def test_turn_k_then_six_minus_k_restores_the_board(cp, data):
    cfg, pos = cp
    board = cfg.board
    c = data.draw(st.sampled_from([p for p in range(board.size) if board.is_interior(p)]))
    k = data.draw(st.integers(0, 5))
    x, o = rotate(cfg, pos.x, pos.o, c, k)
    assert x.bit_count() == pos.x.bit_count() and o.bit_count() == pos.o.bit_count()
    changed = (x ^ pos.x) | (o ^ pos.o)
    ring = sum(1 << nb for nb in board.neighbours[c])
    assert changed & ~ring == 0  # only the ring moves; the pivot and the rest stay
    assert rotate(cfg, x, o, c, (6 - k) % 6) == (pos.x, pos.o)
    k2 = data.draw(st.integers(0, 5))
    assert rotate(cfg, *rotate(cfg, pos.x, pos.o, c, k), c, k2) == rotate(cfg, pos.x, pos.o, c, (k + k2) % 6)


# ------------------------------------------------------------------ symmetry (§1, §7)


def _check_equivariance(cfg: Config, pos: Position, sym, swap: bool) -> None:
    board = cfg.board
    image = map_position(board, sym, pos, swap)
    assert status(cfg, image) == status(cfg, pos)
    assert {map_move(board, sym, m) for m in moves(cfg, pos)} == set(moves(cfg, image))
    assert {map_position(board, sym, kid, swap) for kid in children(cfg, pos)} == set(children(cfg, image))


@settings(max_examples=150, deadline=None)
@given(config_and_position())
def test_moves_and_children_commute_with_plain_symmetries(cp):
    cfg, pos = cp
    plain, _ = symmetry_classes(cfg)
    assert tuple(range(cfg.board.size)) in plain
    for sym in plain:
        _check_equivariance(cfg, pos, sym, swap=False)


@settings(max_examples=150, deadline=None)
@given(config_and_position())
def test_moves_and_children_commute_with_colour_swapping_symmetries(cp):
    cfg, pos = cp
    _, swapping = symmetry_classes(cfg)
    for sym in swapping:
        _check_equivariance(cfg, pos, sym, swap=True)


@settings(max_examples=100, deadline=None)
@given(configs(capture=True))
def test_symmetry_classes_match_trap_data(cfg):
    board = cfg.board
    plain, swapping = symmetry_classes(cfg)
    for sym in board.symmetries:
        tx = {sym[p] for p in range(board.size) if cfg.traps_x >> p & 1}
        to = {sym[p] for p in range(board.size) if cfg.traps_o >> p & 1}
        keeps = tx == {p for p in range(board.size) if cfg.traps_x >> p & 1} and to == {
            p for p in range(board.size) if cfg.traps_o >> p & 1
        }
        swaps = tx == {p for p in range(board.size) if cfg.traps_o >> p & 1} and to == {
            p for p in range(board.size) if cfg.traps_x >> p & 1
        }
        assert (sym in plain) == keeps
        assert (sym in swapping) == swaps
    # plain symmetries form a group; swapping ones are a coset of it
    n = board.size
    compose = lambda a, b: tuple(a[b[p]] for p in range(n))  # noqa: E731
    for a in plain:
        for b in plain:
            assert compose(a, b) in plain
        for b in swapping:
            assert compose(a, b) in swapping and compose(b, a) in swapping
    for a in swapping:
        for b in swapping:
            assert compose(a, b) in plain


@settings(max_examples=100, deadline=None)
@given(config_and_position())
def test_pass_argument(cp):
    """§10: the null rotation hands the same board over, so values mirror (one ply deep)."""
    cfg, pos = cp
    other = pos.replace(turn=1 - pos.turn)
    if status(cfg, pos) == ONGOING:
        assert other in children(cfg, pos)
