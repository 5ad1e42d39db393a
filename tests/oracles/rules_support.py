"""Shared helpers for the rules-layer tests (test_board, test_rules, test_notation, test_variants).

Everything here is written from docs/rules.md directly, not from ``solver``: the hex(n)
formula, the neighbour directions, a coordinate-level reference implementation of the
majority rule and of a rotation, a builder of position text from point names, and
hypothesis strategies for random configurations and positions.
"""

from __future__ import annotations

from hypothesis import strategies as st

from solver.game.board import Board, hex_board
from solver.game.config import Config
from solver.game.position import AT, OFFER, PICK, PLACE, PLAY, Move, Position

# docs/rules.md §1, counter-clockwise: E, NE, NW, W, SW, SE.
SPEC_DIRECTIONS = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
SPEC_CENTRE = ((0, 0), (1, 0), (0, 1))


def spec_in_hex(n: int, q: int, r: int) -> bool:
    """``3·|p − c|² ≤ 3n² − 3n + 1`` with exact fractions (docs/rules.md §1)."""
    from fractions import Fraction as F

    x = q + F(r, 2)
    y2 = F(3 * r * r, 4)  # y² with y = r·√3/2
    # c = (1/2, √3/6): |p − c|² = (x − 1/2)² + (y − √3/6)² = (x−1/2)² + y² − r/2 + 1/12
    d2 = (x - F(1, 2)) ** 2 + y2 - F(r, 2) + F(1, 12)
    return 3 * d2 <= 3 * n * n - 3 * n + 1


def spec_coords(n: int) -> set[tuple[int, int]]:
    span = n + 3
    return {(q, r) for q in range(-span, span + 1) for r in range(-span, span + 1) if spec_in_hex(n, q, r)}


def spec_point_order(n: int) -> list[tuple[int, int]]:
    """Point order of docs/rules.md §9: bottom row first, left to right (x = q + r/2 grows with q)."""
    return sorted(spec_coords(n), key=lambda p: (p[1], p[0]))


def bits(board: Board, names) -> int:
    if isinstance(names, str):
        names = names.split()
    out = 0
    for name in names:
        out |= 1 << board.point(name)
    return out


def names_of(board: Board, bb: int) -> set[str]:
    return {board.names[p] for p in range(board.size) if bb >> p & 1}


def text_of(board: Board, x="", o="", side="x", phase="") -> str:
    """Position text built from point names, following docs/rules.md §9 (top row first)."""
    xs, os_ = set(x.split()), set(o.split())
    assert not xs & os_
    by_row: dict[int, list[str]] = {}
    for name in board.names:
        by_row.setdefault(int(name[1:]), []).append(name)
    rows = []
    for row in sorted(by_row, reverse=True):
        names = sorted(by_row[row])  # letters a, b, c, … left to right
        rows.append("".join("x" if m in xs else "o" if m in os_ else "." for m in names))
    known = set(board.names)
    assert xs <= known and os_ <= known, (xs | os_) - known
    return "/".join(rows) + f" {side}" + (f" {phase}" if phase else "")


def pos_of(board: Board, x="", o="", side="x", phase="") -> Position:
    return Position(text_of(board, x, o, side, phase))


# ------------------------------------------------------------------ reference rules


def spec_cells(board: Board, pos: Position) -> dict[tuple[int, int], str]:
    return {
        c: ("x" if pos.x >> i & 1 else "o")
        for i, c in enumerate(board.coords)
        if (pos.x | pos.o) >> i & 1
    }


def spec_interior(board: Board) -> set[tuple[int, int]]:
    on = set(board.coords)
    return {(q, r) for (q, r) in on if all((q + dq, r + dr) in on for dq, dr in SPEC_DIRECTIONS)}


def spec_legal_points(cfg: Config, pos: Position, colour: str) -> set[str]:
    """docs/rules.md §3.1 / §5 edge, on coordinates: empty pivot, strictly more own balls."""
    board = cfg.board
    cells = spec_cells(board, pos)
    on = set(board.coords)
    pivots = on if cfg.edge else spec_interior(board)
    other = "o" if colour == "x" else "x"
    out = set()
    for q, r in pivots:
        if (q, r) in cells:
            continue
        around = [cells.get((q + dq, r + dr)) for dq, dr in SPEC_DIRECTIONS]
        if around.count(colour) > around.count(other):
            out.add(board.names[board.index[(q, r)]])
    return out


def spec_rotate(cfg: Config, pos: Position, name: str, k: int) -> tuple[set[str], set[str]]:
    """docs/rules.md §3.2 + §5: (light's, dark's) point names after turning at ``name`` by ``k``."""
    board = cfg.board
    cells = spec_cells(board, pos)
    q, r = board.coords[board.point(name)]
    ring = [(q + dq, r + dr) for dq, dr in SPEC_DIRECTIONS]
    old = [cells.pop(p, None) for p in ring]
    on = set(board.coords)
    for i, ball in enumerate(old):
        dest = ring[(i + k) % 6]
        if ball is not None and dest in on:  # off the board: the ball falls off
            cells[dest] = ball
    xs = {board.names[board.index[p]] for p, b in cells.items() if b == "x"}
    os_ = {board.names[board.index[p]] for p, b in cells.items() if b == "o"}
    if cfg.capture:
        xs -= names_of(board, cfg.traps_o)
        os_ -= names_of(board, cfg.traps_x)
    return xs, os_


# ------------------------------------------------------------------ symmetry helpers


def is_reflection(board: Board, sym) -> bool:
    """Whether the point permutation reverses the counter-clockwise neighbour order."""
    p = board.centre[0]
    nb = board.neighbours[p]
    img = board.neighbours[sym[p]]
    d0, d1 = img.index(sym[nb[0]]), img.index(sym[nb[1]])
    assert (d1 - d0) % 6 in (1, 5)
    return (d1 - d0) % 6 == 5


def map_position(board: Board, sym, pos: Position, swap: bool = False) -> Position:
    x, o = board.map_bits(sym, pos.x), board.map_bits(sym, pos.o)
    turn = pos.turn
    if swap:
        x, o, turn = o, x, 1 - turn
    return Position.make(board, x, o, turn, pos.phase, tuple(sym[p] for p in pos.points))


def map_move(board: Board, sym, move: Move) -> Move:
    refl = is_reflection(board, sym)
    if move.kind == "rotate":
        return Move.rotate(sym[move.point], -move.k if refl else move.k)
    if move.kind == "place":
        return Move.place(sym[move.point])
    if move.kind == "offer":
        return Move.offer(sym[move.point], sym[move.point2])
    assert move.kind == "pick"
    return Move.pick(sym[move.point])


# ------------------------------------------------------------------ strategies


@st.composite
def configs(draw, ns=(2, 3, 4), edge=None, capture=None, balls=None, setup=None) -> Config:
    """A random configuration on hex(n); with capture, random disjoint trap sets."""
    n = draw(st.sampled_from(ns))
    board = hex_board(n)
    e = draw(st.booleans()) if edge is None else edge
    c = draw(st.booleans()) if capture is None else capture
    tx = to = 0
    if c:
        for p in range(board.size):
            if p in board.centre:
                continue
            owner = draw(st.sampled_from((None, None, None, "x", "o")))
            if owner == "x":
                tx |= 1 << p
            elif owner == "o":
                to |= 1 << p
    return Config(board, balls, e, c, tx, to, setup)


@st.composite
def play_positions(draw, cfg: Config) -> Position:
    """A rotation-phase position with no ball on a trap field of the other colour."""
    board = cfg.board
    weights = draw(st.sampled_from(("xo.", "xo..", "xxoo.", "x.", "o.")))
    x = o = 0
    for p in range(board.size):
        c = draw(st.sampled_from(weights))
        if c == "x" and not cfg.traps_o >> p & 1:
            x |= 1 << p
        elif c == "o" and not cfg.traps_x >> p & 1:
            o |= 1 << p
    turn = draw(st.sampled_from((0, 1)))
    return Position.make(board, x, o, turn)


@st.composite
def config_and_position(draw, **kw) -> tuple[Config, Position]:
    cfg = draw(configs(**kw))
    return cfg, draw(play_positions(cfg))


@st.composite
def any_phase_positions(draw, ns=(2, 3, 4)) -> Position:
    """A position in any phase whose text is valid notation (for round trips)."""
    board = hex_board(draw(st.sampled_from(ns)))
    phase = draw(st.sampled_from((PLAY, PLAY, PLACE, OFFER, PICK, AT)))
    x = o = 0
    free = [p for p in range(board.size) if phase == PLAY or p not in board.centre]
    for p in free:
        c = draw(st.sampled_from("xo.."))
        if c == "x":
            x |= 1 << p
        elif c == "o":
            o |= 1 << p
    turn = draw(st.sampled_from((0, 1)))
    points: tuple[int, ...] = ()
    if phase == PLACE:
        # light places first: x has as many balls as o, or one more
        xs = [p for p in range(board.size) if x >> p & 1]
        os_ = [p for p in range(board.size) if o >> p & 1]
        while len(xs) > len(os_) + 1:
            x &= ~(1 << xs.pop())
        while len(os_) > len(xs):
            o &= ~(1 << os_.pop())
        turn = 0 if len(xs) == len(os_) else 1
    elif phase in (OFFER, AT):
        turn = 0
    elif phase == PICK:
        turn = 1
    if phase == PICK:
        points = tuple(draw(st.lists(st.integers(0, board.size - 1), min_size=2, max_size=2, unique=True)))
    elif phase == AT:
        points = (draw(st.integers(0, board.size - 1)),)
    return Position.make(board, x, o, turn, phase, points)
