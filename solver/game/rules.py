"""The rules of ROTARY in plain Python: the readable specification (docs/rules.md §3–§5).

Compiled kernels are optimisations of the functions here and are tested against them
position by position. Everything takes a :class:`~solver.game.config.Config` and plain ints.

Order after a rotation (docs/rules.md §4): balls turned off the board fall off (``edge``), then
trap captures (``capture``), then the centre test, then the legal-point test for the new
side to move. The last two are :func:`status` of the resulting position.
"""

from __future__ import annotations

from itertools import combinations

from solver.errors import IllegalMoveError, PositionError
from solver.game.board import Bitboard, Point
from solver.game.config import Config
from solver.game.notation import NotationError, parse_move_text
from solver.game.position import (
    AT,
    COLOUR_CHARS,
    OFFER,
    PICK,
    PLACE,
    PLAY,
    O,
    X,
    Move,
    Position,
    ROTATE,
    PLACE_MOVE,
    OFFER_MOVE,
    PICK_MOVE,
)

ONGOING, WIN, LOSS = "ongoing", "win", "loss"


# ---------------------------------------------------------------------------- rotation


def pivots(cfg: Config) -> Bitboard:
    """Points that may ever be rotation points: interior ones, all of them with ``edge``."""
    return cfg.board.full if cfg.edge else cfg.board.interior


def is_legal_point(cfg: Config, mover: Bitboard, opp: Bitboard, c: Point) -> bool:
    """Empty, a pivot, and the mover strictly outnumbers the opponent around it."""
    if (mover | opp) >> c & 1 or not pivots(cfg) >> c & 1:
        return False
    mine = theirs = 0
    for nb in cfg.board.neighbours[c]:
        if nb >= 0:
            mine += mover >> nb & 1
            theirs += opp >> nb & 1
    return mine > theirs


def legal_points(cfg: Config, mover: Bitboard, opp: Bitboard) -> list[Point]:
    """The mover's legal rotation points, in point order."""
    return [c for c in range(cfg.board.size) if is_legal_point(cfg, mover, opp, c)]


def rotate(cfg: Config, x: Bitboard, o: Bitboard, c: Point, k: int) -> tuple[Bitboard, Bitboard]:
    """Turn the ring around ``c`` by ``k``·60° counter-clockwise; then edge falls, traps.

    Neighbour ``i``'s content moves to neighbour ``(i + k) mod 6``. An off-board target
    (only with ``edge``) swallows the ball; an off-board source brings a hole.
    """
    ring = cfg.board.neighbours[c]
    cells = [(x >> nb & 1, o >> nb & 1) if nb >= 0 else (0, 0) for nb in ring]
    for nb in ring:
        if nb >= 0:
            x &= ~(1 << nb)
            o &= ~(1 << nb)
    for i, (bx, bo) in enumerate(cells):
        dest = ring[(i + k) % 6]
        if dest >= 0:
            x |= bx << dest
            o |= bo << dest
    if cfg.capture:
        x &= ~cfg.traps_o
        o &= ~cfg.traps_x
    return x, o


def centre_owner(cfg: Config, x: Bitboard, o: Bitboard) -> int | None:
    """The colour holding all three centre points, if any."""
    c = cfg.board.centre_mask
    if x & c == c:
        return X
    if o & c == c:
        return O
    return None


# ---------------------------------------------------------------------------- positions


def status(cfg: Config, pos: Position) -> str:
    """``ONGOING``, or ``WIN`` / ``LOSS`` (in 0 plies) for the side to move."""
    if pos.phase == PLAY:
        owner = centre_owner(cfg, pos.x, pos.o)
        if owner is not None:
            return WIN if owner == pos.turn else LOSS
        if not legal_points(cfg, pos.mover, pos.opponent):
            return LOSS
    elif pos.phase == OFFER and not legal_points(cfg, pos.x, pos.o):
        return LOSS
    return ONGOING


def moves(cfg: Config, pos: Position) -> list[Move]:
    """Every legal move, in notation order (points first, then k); none if finished."""
    if status(cfg, pos) != ONGOING:
        return []
    if pos.phase == PLAY:
        return [Move.rotate(c, k) for c in legal_points(cfg, pos.mover, pos.opponent) for k in range(6)]
    if pos.phase == PLACE:
        banned = cfg.board.centre_mask | (cfg.traps_o if pos.turn == X else cfg.traps_x)
        free = pos.empty & ~banned
        return [Move.place(p) for p in range(cfg.board.size) if free >> p & 1]
    if pos.phase == OFFER:
        points = legal_points(cfg, pos.x, pos.o)
        if len(points) == 1:
            return [Move.rotate(points[0], k) for k in range(6)]
        return [Move.offer(p, q) for p, q in combinations(points, 2)]
    if pos.phase == PICK:
        return [Move.pick(p) for p in pos.points]
    assert pos.phase == AT
    return [Move.rotate(pos.points[0], k) for k in range(6)]


def play(cfg: Config, pos: Position, move: Move) -> Position:
    """The position after ``move``; :class:`IllegalMoveError` if it is not legal."""
    if move not in moves(cfg, pos):
        raise IllegalMoveError(_why_illegal(cfg, pos, move))
    return apply(cfg, pos, move)


def distinct_children(cfg: Config, pos: Position) -> dict[str, Position]:
    """The positions one move leads to, each once, named by the first move (in notation
    order) that reaches it: rotations that change nothing, or that give the same
    position, share one entry."""
    out: dict[Position, str] = {}
    for mv in moves(cfg, pos):
        out.setdefault(apply(cfg, pos, mv), mv.text(cfg.board))
    return {mv: child for child, mv in out.items()}


def apply(cfg: Config, pos: Position, move: Move) -> Position:
    """The position after ``move``, unchecked: the caller vouches that it is legal (see :func:`play`)."""
    board = pos.board
    if move.kind == ROTATE:
        x, o = rotate(cfg, pos.x, pos.o, move.point, move.k)
        return Position.make(board, x, o, 1 - pos.turn)
    if move.kind == PLACE_MOVE:
        x, o = pos.x, pos.o
        if pos.turn == X:
            x |= 1 << move.point
        else:
            o |= 1 << move.point
        if x.bit_count() < cfg.balls or o.bit_count() < cfg.balls:
            return Position.make(board, x, o, 1 - pos.turn, PLACE)
        if cfg.setup == "offer":
            return Position.make(board, x, o, X, OFFER)
        return Position.make(board, x, o, pos.turn)  # setup=last: the last placer rotates
    if move.kind == OFFER_MOVE:
        return Position.make(board, pos.x, pos.o, O, PICK, (move.point, move.point2))
    assert move.kind == PICK_MOVE
    return Position.make(board, pos.x, pos.o, X, AT, (move.point,))


def children(cfg: Config, pos: Position) -> list[Position]:
    """The distinct positions one move away, in order of first appearance."""
    return list(dict.fromkeys(apply(cfg, pos, m) for m in moves(cfg, pos)))


def perft(cfg: Config, pos: Position, depth: int) -> int:
    """Leaves at ``depth`` of the tree of distinct successors (finished nodes have none)."""
    if depth == 0:
        return 1
    kids = children(cfg, pos)
    if depth == 1:
        return len(kids)
    return sum(perft(cfg, kid, depth - 1) for kid in kids)


# ---------------------------------------------------------------------------- checking input


def check_position(cfg: Config, pos: Position) -> None:
    """Raise :class:`PositionError` if ``pos`` cannot arise under ``cfg``."""
    board = cfg.board
    if pos.board is not board:
        raise PositionError(f"position is on {pos.board.label} but the rules are for {board.label}")
    nx, no = pos.x.bit_count(), pos.o.bit_count()
    if cfg.capture:
        for colour, balls, traps in ((X, pos.x, cfg.traps_o), (O, pos.o, cfg.traps_x)):
            bad = balls & traps
            if bad:
                name = board.names[(bad & -bad).bit_length() - 1]
                owner = COLOUR_CHARS[1 - colour]
                raise PositionError(
                    f"{COLOUR_CHARS[colour]} ball on {name}, a trap field of {owner}: cannot arise with capture"
                )
    if pos.phase != PLAY and cfg.setup is None:
        raise PositionError(f"phase {pos.phase!r} needs a setup game (--setup offer|last): {pos.text()!r}")
    if pos.phase in (OFFER, PICK, AT) and cfg.setup != "offer":
        raise PositionError(f"phase {pos.phase!r} exists only with --setup offer: {pos.text()!r}")
    k = cfg.balls
    if pos.phase == PLACE:
        if k is not None and max(nx, no) > k or (k is not None and nx == no == k):
            raise PositionError(f"placement phase with x {nx}, o {no} balls but {k} per side: {pos.text()!r}")
    elif pos.phase in (OFFER, PICK, AT):
        if k is not None and (nx, no) != (k, k):
            raise PositionError(f"phase {pos.phase!r} needs all {k} balls of each side placed: {pos.text()!r}")
        legal = legal_points(cfg, pos.x, pos.o)
        for p in pos.points:
            if p not in legal:
                raise PositionError(f"{board.names[p]} is not a legal rotation point for x in {pos.text()!r}")
        if pos.phase == AT and len(legal) < 2:
            raise PositionError(f"phase 'at' needs two legal points for x (an offer): {pos.text()!r}")
    elif cfg.variable_material:
        if k is not None and max(nx, no) > k:
            raise PositionError(f"material x {nx}, o {no} exceeds {k} balls per side: {pos.text()!r}")
    elif k is not None and (nx, no) != (k, k):
        raise PositionError(f"material x {nx}, o {no} is impossible with {k} balls per side and no edge/capture: {pos.text()!r}")
    elif nx != no:
        raise PositionError(f"material x {nx}, o {no} is impossible without edge/capture (material never changes): {pos.text()!r}")


def parse_move(cfg: Config, pos: Position, text: str) -> Move:
    """Parse move text and check that it is legal in ``pos``; one-line errors."""
    try:
        move = parse_move_text(pos.board, text)
    except NotationError as e:
        raise IllegalMoveError(str(e)) from None
    if move not in moves(cfg, pos):
        raise IllegalMoveError(_why_illegal(cfg, pos, move))
    return move


def _why_illegal(cfg: Config, pos: Position, move: Move) -> str:
    board = pos.board
    text = move.text(board)
    st = status(cfg, pos)
    if st != ONGOING:
        return f"illegal move {text!r}: the game is over ({st} for {COLOUR_CHARS[pos.turn]})"
    kinds = {m.kind for m in moves(cfg, pos)}
    if move.kind not in kinds:
        expected = {
            PLAY: "a rotation like e4+2",
            PLACE: "a placement like c2",
            OFFER: "an offer like 'offer d3 f3'" if OFFER_MOVE in kinds else "a rotation like e4+2",
            PICK: "a pick like 'pick f3'",
            AT: "a rotation at " + (board.names[pos.points[0]] if pos.points else "?"),
        }[pos.phase]
        return f"illegal move {text!r}: expected {expected}"
    name = board.names[move.point]
    if move.kind == ROTATE:
        if pos.phase == AT:  # the point was offered and is legal; it just was not picked
            at = board.names[pos.points[0]]
            return f"illegal move {text!r}: dark picked {at}, so x must rotate at {at} ({at}+0 .. {at}+5)"
        legal = [board.names[m.point] for m in moves(cfg, pos) if m.k == 0]
        if (pos.x | pos.o) >> move.point & 1:
            why = f"{name} is not empty"
        elif not pivots(cfg) >> move.point & 1:
            why = f"{name} is an edge point (rotation at the edge needs --edge)"
        else:
            why = f"{COLOUR_CHARS[pos.turn]} has no majority around {name}"
        return f"illegal move {text!r}: {why}; legal points: {', '.join(legal)}"
    if move.kind == PLACE_MOVE:
        if move.point in board.centre:
            return f"illegal move {text!r}: {name} is a centre point, where no ball may be placed"
        if (pos.x | pos.o) >> move.point & 1:
            return f"illegal move {text!r}: {name} is not empty"
        return f"illegal move {text!r}: {name} is a trap field of the other colour"
    if move.kind == OFFER_MOVE:
        legal = [board.names[p] for p in legal_points(cfg, pos.x, pos.o)]
        return f"illegal move {text!r}: both offered points must be legal for x ({', '.join(legal)})"
    offered = " or ".join(board.names[p] for p in pos.points)
    return f"illegal move {text!r}: dark must pick {offered}"
