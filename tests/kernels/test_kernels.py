"""The numba move kernels (solver/kernels/moves.py) against the plain-Python rules.

solver/rules.py is the specification; the kernels work from the mover's view
``(m, p, s)``. For random configurations (hex2..hex4; base, edge, capture and
edge+capture with random trap sets) and random positions of random material:

* ``terminal`` agrees with ``rules.status``;
* ``children`` gives exactly the results of ``rules.moves`` in the same order (points,
  then k), converted back to :class:`Position` objects (child side ``1 - s``);
* ``parents`` is sound (each parent has the position among its children, loses no ball,
  is not finished and has no ball on a trap of the other colour) and complete (every
  same-material child of a position lists that position among its parents).

hex(4) has 48 points, so positions with balls on the top rows (bits 40..47) exercise the
high bits of the 64-bit words; a strategy forces such positions.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.game import rules
from solver.game.board import hex_board
from solver.game.config import Config, make_config
from solver.index import build_geo
from solver.kernels.code import LOSS_V as LOSS0, ONGOING_V as ONGOING, WIN_V as WIN0
from solver.kernels.moves import children, parents, terminal
from solver.game.position import Position

from tests.oracles.rules_support import configs

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@cache
def geo_of(cfg: Config):
    return build_geo(cfg)


def buffers(cfg: Config):
    n = 6 * cfg.board.size
    return np.zeros(n, np.uint64), np.zeros(n, np.uint64)


def view(pos: Position) -> tuple[np.uint64, np.uint64, int]:
    return np.uint64(pos.mover), np.uint64(pos.opponent), pos.turn


def from_view(board, mover: int, opp: int, side: int) -> Position:
    x, o = (mover, opp) if side == 0 else (opp, mover)
    return Position.make(board, int(x), int(o), side)


def kernel_children(cfg: Config, pos: Position) -> list[Position]:
    m, p, s = view(pos)
    om, op = buffers(cfg)
    n = children(m, p, s, geo_of(cfg), om, op)
    return [from_view(cfg.board, om[i], op[i], 1 - s) for i in range(n)]


def kernel_parents(cfg: Config, pos: Position) -> list[Position]:
    m, p, s = view(pos)
    om, op = buffers(cfg)
    n = parents(m, p, s, geo_of(cfg), om, op)
    return [from_view(cfg.board, om[i], op[i], 1 - s) for i in range(n)]


def valid(cfg: Config, pos: Position) -> bool:
    """No ball on a trap field of the other colour (docs/rules.md §5: cannot arise)."""
    return not (pos.x & cfg.traps_o or pos.o & cfg.traps_x)


def rules_children(cfg: Config, pos: Position) -> list[Position]:
    """Every move's result in move order, duplicates kept (the kernel's contract)."""
    out = []
    for mv in rules.moves(cfg, pos):
        x, o = rules.rotate(cfg, pos.x, pos.o, mv.point, mv.k)
        out.append(Position.make(pos.board, x, o, 1 - pos.turn))
    return out


# ------------------------------------------------------------------ strategies


@st.composite
def positions(draw, cfg: Config) -> Position:
    """A valid position with random material (0 .. all free points), both sides to move.

    Sometimes the top row is forced full (bits up to 47 on hex4), sometimes a centre is
    completed for one colour, so finished positions and high bits are both covered.
    """
    board = cfg.board
    n = board.size
    x = o = 0
    extra = draw(st.sampled_from(("none", "none", "none", "top", "centre-x", "centre-o")))
    if extra == "top":
        for p in board.rows[-1]:
            if draw(st.booleans()):
                if not cfg.traps_o >> p & 1:
                    x |= 1 << p
            elif not cfg.traps_x >> p & 1:
                o |= 1 << p
    elif extra.startswith("centre"):
        if extra == "centre-x":
            x |= board.centre_mask
        else:
            o |= board.centre_mask
    free_x = [p for p in range(n) if not ((x | o) >> p & 1) and not cfg.traps_o >> p & 1]
    a = draw(st.integers(0, min(len(free_x), 14)))
    xs = draw(st.permutations(free_x))[:a]
    for p in xs:
        x |= 1 << p
    free_o = [p for p in range(n) if not ((x | o) >> p & 1) and not cfg.traps_x >> p & 1]
    b = draw(st.integers(0, min(len(free_o), 14)))
    for p in draw(st.permutations(free_o))[:b]:
        o |= 1 << p
    return Position.make(board, x, o, draw(st.sampled_from((0, 1))))


@st.composite
def config_and_position(draw, ns=(2, 3, 4)):
    cfg = draw(configs(ns=ns))
    return cfg, draw(positions(cfg))


@st.composite
def busy_position(draw, ns=(2, 3, 4)):
    """A position that is not finished (so it has moves), found by a few tries."""
    cfg = draw(configs(ns=ns))
    for _ in range(20):
        pos = draw(positions(cfg))
        if rules.status(cfg, pos) == rules.ONGOING:
            return cfg, pos
    pos = draw(positions(cfg))
    return cfg, pos


# ------------------------------------------------------------------ terminal, children


@settings(max_examples=400, **SETTINGS)
@given(config_and_position())
def test_terminal_matches_rules(cp):
    cfg, pos = cp
    m, p, _ = view(pos)
    want = {rules.ONGOING: ONGOING, rules.WIN: WIN0, rules.LOSS: LOSS0}[rules.status(cfg, pos)]
    assert terminal(m, p, geo_of(cfg)) == want, (cfg.describe(), pos)


@settings(max_examples=300, **SETTINGS)
@given(busy_position())
def test_children_match_rules(cp):
    cfg, pos = cp
    got = kernel_children(cfg, pos)
    want = rules_children(cfg, pos)
    assert got == want, (cfg.describe(), pos)
    assert set(got) == set(rules.children(cfg, pos))
    if want:
        assert len(got) == 6 * len(rules.legal_points(cfg, pos.mover, pos.opponent))


# ------------------------------------------------------------------ parents


def check_parents_sound(cfg: Config, child: Position) -> list[Position]:
    found = kernel_parents(cfg, child)
    for q in found:
        assert q.turn == 1 - child.turn
        assert valid(cfg, q), (cfg.describe(), child, q)
        assert rules.status(cfg, q) == rules.ONGOING, (cfg.describe(), child, q)
        assert q.x.bit_count() == child.x.bit_count() and q.o.bit_count() == child.o.bit_count(), (child, q)
        assert child in rules.children(cfg, q), (cfg.describe(), child, q)
    return found


@settings(max_examples=300, **SETTINGS)
@given(config_and_position())
def test_parents_are_sound(cp):
    cfg, child = cp
    check_parents_sound(cfg, child)


@settings(max_examples=200, **SETTINGS)
@given(busy_position())
def test_parents_are_complete(cp):
    """Every same-material child of q names q among its parents (unmoves are complete)."""
    cfg, q = cp
    for child in rules.children(cfg, q):
        if (child.x.bit_count(), child.o.bit_count()) != (q.x.bit_count(), q.o.bit_count()):
            continue
        assert q in set(kernel_parents(cfg, child)), (cfg.describe(), q, child)


def test_top_bits_on_hex4():
    """Balls on bits 40..47 of the standard board (its top two rows), with edge moves."""
    cfg = make_config(4, edge=True)
    board = cfg.board
    assert max(board.rows[-1]) == 47
    x = sum(1 << p for p in board.rows[-1])  # a8 b8 c8 d8
    o = 1 << board.rows[-2][1]  # b7: x still has c7, d7, e7 (edge points) to turn at
    for turn in (0, 1):
        pos = Position.make(board, x, o, turn)
        assert kernel_children(cfg, pos) == rules_children(cfg, pos)
        if turn == 0:
            assert len(kernel_children(cfg, pos)) >= 6  # x has legal edge points up there
        check_parents_sound(cfg, pos)
        for c in set(rules.children(cfg, pos)):
            if c.x.bit_count() == x.bit_count() and c.o.bit_count() == o.bit_count():
                assert pos in kernel_parents(cfg, c)


# ------------------------------------------------------------------ exhaustive on hex(2)


@pytest.mark.parametrize(
    "kw, material",
    [
        (dict(board=2, edge=True, capture=True, traps_x="a1,c1", traps_o="a3,b4"), (3, 3)),
        (dict(board=2, edge=True), (2, 3)),
        (dict(board=2), (3, 3)),
    ],
    ids=["hex2-edge-capture-3v3", "hex2-edge-2v3", "hex2-base-3v3"],
)
def test_unmoves_exhaustive_hex2(kw, material):
    """On every valid hex(2) position of the material: parents(c) is exactly the set of
    positions with a move to c that keeps material (and is not finished, and valid)."""
    cfg = make_config(**kw)
    board = cfg.board
    n = board.size
    A, B = material
    expected: dict[Position, set[Position]] = {}
    everything = []
    for xs in combinations(range(n), A):
        x = sum(1 << p for p in xs)
        rest = [p for p in range(n) if not x >> p & 1]
        for os_ in combinations(rest, B):
            o = sum(1 << p for p in os_)
            for turn in (0, 1):
                pos = Position.make(board, x, o, turn)
                if valid(cfg, pos):
                    everything.append(pos)
    for q in everything:
        kids = kernel_children(cfg, q)
        assert kids == rules_children(cfg, q)
        for c in set(kids):
            if (c.x.bit_count(), c.o.bit_count()) == (A, B):
                expected.setdefault(c, set()).add(q)
    for c in everything:
        assert set(kernel_parents(cfg, c)) == expected.get(c, set()), (c, cfg.describe())
