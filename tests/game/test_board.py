"""Board geometry, point names, neighbours and symmetries (docs/rules.md §1)."""

from __future__ import annotations

import pytest

from solver.game.board import hex_board, standard_board
from solver.game.config import make_config, standard_config, symmetry_classes

from tests.oracles.rules_support import SPEC_CENTRE, SPEC_DIRECTIONS, bits, spec_coords, spec_point_order

# The point-name figure of docs/rules.md §1, copied verbatim. Each name is 4 columns from its
# row neighbours, and rows are shifted by 2 columns, so the picture itself says which
# points are neighbours: E (0, +4), NE (+1, +2), NW (+1, −2), W (0, −4), SW (−1, −2),
# SE (−1, +2) in (row, column) steps.
FIGURE = """\
        a8  b8  c8  d8
      a7  b7  c7  d7  e7
    a6  b6  c6  d6  e6  f6
  a5  b5  c5  d5  e5  f5  g5
a4  b4  c4  d4  e4  f4  g4  h4
  a3  b3  c3  d3  e3  f3  g3
    a2  b2  c2  d2  e2  f2
      a1  b1  c1  d1  e1
"""
FIGURE_STEPS = ((0, 4), (1, 2), (1, -2), (0, -4), (-1, -2), (-1, 2))  # E NE NW W SW SE


def figure_points() -> dict[str, tuple[int, int]]:
    """name -> (row, column in the figure)."""
    out = {}
    for line in FIGURE.splitlines():
        col = 0
        for token in line.split(" "):
            if token:
                out[token] = (int(token[1:]), col)
            col += len(token) + 1
    return out


@pytest.mark.parametrize("n, size", [(2, 12), (3, 27), (4, 48), (5, 75)])
def test_hex_sizes(n, size):
    assert size == 3 * n * n
    board = hex_board(n)
    assert board.size == size
    assert set(board.coords) == spec_coords(n)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_point_order_is_bottom_row_first_left_to_right(n):
    assert list(hex_board(n).coords) == spec_point_order(n)


@pytest.mark.parametrize("n", [3, 4, 5])
def test_interior_of_hex_n_is_hex_n_minus_1(n):
    board = hex_board(n)
    interior = {board.coords[p] for p in range(board.size) if board.is_interior(p)}
    assert interior == set(hex_board(n - 1).coords) == spec_coords(n - 1)
    # interior by the definition: all six neighbours on the board
    on = set(board.coords)
    assert interior == {(q, r) for q, r in on if all((q + a, r + b) in on for a, b in SPEC_DIRECTIONS)}


def test_hex2_interior_is_the_centre():
    board = hex_board(2)
    assert board.interior == board.centre_mask
    assert {board.coords[p] for p in board.centre} == set(SPEC_CENTRE)


def test_standard_board_counts_and_centre():
    board = standard_board()
    assert board.n == 4 and board.size == 48
    assert board.interior.bit_count() == 27
    assert board.edge.bit_count() == 21
    assert [board.names[p] for p in board.centre] == ["d4", "e4", "d5"]
    assert [board.coords[p] for p in board.centre] == list(SPEC_CENTRE)
    # the three centre points are mutually adjacent
    for a in board.centre:
        for b in board.centre:
            if a != b:
                assert b in board.neighbours[a]


def test_point_names_follow_the_figure():
    board = standard_board()
    fig = figure_points()
    assert sorted(fig) == sorted(board.names)
    for name, (row, col) in fig.items():
        # drawing x = q + r/2 is the column over 4 (up to a shift), row = r + 4
        r = row - 4
        q, rem = divmod(col - 12 - 2 * r, 4)  # d4 = (0, 0) sits in column 12
        assert rem == 0
        assert board.coords[board.point(name)] == (q, r), name
        assert board.name(board.point(name)) == name


def test_neighbours_follow_the_figure_in_order_E_NE_NW_W_SW_SE():
    board = standard_board()
    fig = figure_points()
    at = {v: k for k, v in fig.items()}
    for name, (row, col) in fig.items():
        expected = [at.get((row + dr, col + dc)) for dr, dc in FIGURE_STEPS]
        got = [board.names[nb] if nb >= 0 else None for nb in board.neighbours[board.point(name)]]
        assert got == expected, name


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_neighbours_in_axial_directions(n):
    board = hex_board(n)
    for p, (q, r) in enumerate(board.coords):
        for i, (dq, dr) in enumerate(SPEC_DIRECTIONS):
            target = (q + dq, r + dr)
            expected = board.coords.index(target) if target in board.coords else -1
            assert board.neighbours[p][i] == expected


def test_unknown_point_name():
    with pytest.raises(ValueError, match="i4"):
        standard_board().point("i4")


def _edges(board):
    return {frozenset((p, nb)) for p in range(board.size) for nb in board.neighbours[p] if nb >= 0}


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_six_symmetries_preserve_adjacency_and_centre(n):
    board = hex_board(n)
    syms = board.symmetries
    assert len(syms) == 6
    assert len(set(syms)) == 6
    assert tuple(range(board.size)) in syms
    edges = _edges(board)
    for sym in syms:
        assert sorted(sym) == list(range(board.size))  # a permutation
        assert {frozenset(sym[p] for p in e) for e in edges} == edges
        assert {sym[p] for p in board.centre} == set(board.centre)
    # a group: closed under composition
    for a in syms:
        for b in syms:
            assert tuple(a[b[p]] for p in range(board.size)) in syms


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_symmetries_include_reflection_and_third_turn(n):
    """D3 is generated by the reflection (q, r) -> (r, q) and a 120° turn about the centroid."""
    board = hex_board(n)
    idx = {c: i for i, c in enumerate(board.coords)}
    reflection = tuple(idx[(r, q)] for q, r in board.coords)
    # 120° turn about the centre's centroid: (0,0) -> (1,0) -> (0,1) -> (0,0);
    # linear part is two 60° steps (q, r) -> (-r, q + r), then a translation.
    def turn(p):
        q, r = p
        q, r = -r, q + r
        q, r = -r, q + r
        return (q + 1, r)

    assert [turn(c) for c in SPEC_CENTRE] == [(1, 0), (0, 1), (0, 0)]
    third = tuple(idx[turn(c)] for c in board.coords)
    assert reflection in board.symmetries
    assert third in board.symmetries


# ------------------------------------------------------------------ symmetry classes


def test_symmetry_classes_without_capture_everything_is_both():
    for cfg in (standard_config(), standard_config(edge=True), make_config(3), make_config(2, edge=True)):
        plain, swapping = symmetry_classes(cfg)
        assert sorted(plain) == sorted(cfg.board.symmetries)
        assert sorted(swapping) == sorted(cfg.board.symmetries)


def _reflection(board):
    idx = {c: i for i, c in enumerate(board.coords)}
    return tuple(idx[(r, q)] for q, r in board.coords)


def _third_turn(board):
    idx = {c: i for i, c in enumerate(board.coords)}
    return tuple(idx[(-q - r + 1, q)] for q, r in board.coords)  # (0,0)->(1,0)->(0,1)->(0,0)


def test_standard_capture_reflection_swaps_colours():
    """Standard traps (x: a2 c1 f2 g3, o: a3 a6 b8 c8) keep only the identity and (q,r)->(r,q).

    By hand: the reflection maps a2 (-1,-2) -> a3, c1 (2,-3) -> a6, f2 (4,-2) -> b8,
    g3 (4,-1) -> c8, so it swaps the trap sets. The 120° turn (q,r) -> (1-q-r, q) maps c1
    to f6, no trap; the other two reflections map a2 to f2 (keeping it light's) but g3 to
    a3 (dark's), and c1 to f6 (no trap).
    """
    cfg = standard_config(capture=True)
    board = cfg.board
    reflection = _reflection(board)
    identity = tuple(range(board.size))
    plain, swapping = symmetry_classes(cfg)
    assert plain == [identity]
    assert swapping == [reflection]
    assert {board.names[reflection[board.point(n)]] for n in ("a2", "c1", "f2", "g3")} == {"a3", "a6", "b8", "c8"}


def test_symmetry_classes_with_turn_invariant_traps():
    """Traps made of whole orbits of the 120° turns: the turns are plain, no map swaps.

    By hand: the orbit of a1 (0,-3) is a1, h4 (4,0), a8 (-3,4); a1 reflects to a4
    (-3,0), which is in neither orbit, so the reflection (q,r)->(r,q) keeps and swaps
    nothing; the other reflections are it composed with a turn, so neither do they.
    """
    board = standard_board()
    idx = {c: i for i, c in enumerate(board.coords)}
    third = _third_turn(board)

    def orbit(name):
        p = board.point(name)
        return {board.names[p], board.names[third[p]], board.names[third[third[p]]]}

    assert orbit("a1") == {"a1", "h4", "a8"}
    tx, to = orbit("a1"), orbit("c2")
    assert not tx & to and "a4" not in tx | to
    cfg = make_config(4, capture=True, traps_x=",".join(sorted(tx)), traps_o=",".join(sorted(to)))
    assert cfg.traps_x == bits(board, tx) and cfg.traps_o == bits(board, to)
    plain, swapping = symmetry_classes(cfg)
    identity = tuple(range(board.size))
    inverse = tuple(third[third[p]] for p in range(board.size))
    assert sorted(plain) == sorted([identity, third, inverse])
    assert swapping == []
    assert idx[(-3, 0)] == board.point("a4")
