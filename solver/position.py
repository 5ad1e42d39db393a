"""Positions and moves: small immutable values (RULES.md §3, §5, §9).

A :class:`Position` is two bitboards (light's and dark's balls), the side to move and,
in ``setup`` games, the phase. ``Position(text)`` parses RULES.md §9 notation and
``repr()`` gives that call back, so it can be pasted into Python.
"""

from __future__ import annotations

from dataclasses import dataclass

from .board import Bitboard, Board, Point

X, O = 0, 1  # light, dark
COLOUR_CHARS = "xo"

PLAY, PLACE, OFFER, PICK, AT = "play", "place", "offer", "pick", "at"
PHASES = (PLAY, PLACE, OFFER, PICK, AT)


class Position:
    """An immutable position. Build from text with ``Position(text)``."""

    __slots__ = ("board", "x", "o", "turn", "phase", "points")

    board: Board
    x: Bitboard
    o: Bitboard
    turn: int
    phase: str
    points: tuple[Point, ...]

    def __init__(self, text: str) -> None:
        from .notation import parse_position

        p = parse_position(text)
        for slot in Position.__slots__:
            object.__setattr__(self, slot, getattr(p, slot))

    @classmethod
    def make(
        cls,
        board: Board,
        x: Bitboard,
        o: Bitboard,
        turn: int,
        phase: str = PLAY,
        points: tuple[Point, ...] = (),
    ) -> "Position":
        """Build without parsing; the caller vouches for consistency."""
        self = object.__new__(cls)
        for slot, value in zip(cls.__slots__, (board, x, o, turn, phase, tuple(sorted(points)))):
            object.__setattr__(self, slot, value)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("Position is immutable")

    def _key(self) -> tuple:
        return (self.board.n, self.x, self.o, self.turn, self.phase, self.points)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @property
    def mover(self) -> Bitboard:
        return self.o if self.turn else self.x

    @property
    def opponent(self) -> Bitboard:
        return self.x if self.turn else self.o

    @property
    def empty(self) -> Bitboard:
        return self.board.full & ~(self.x | self.o)

    def count(self, colour: int) -> int:
        return (self.o if colour else self.x).bit_count()

    def replace(self, **changes) -> "Position":
        values = {s: getattr(self, s) for s in Position.__slots__}
        values.update(changes)
        return Position.make(**values)

    def text(self) -> str:
        from .notation import format_position

        return format_position(self)

    def __str__(self) -> str:
        from .render import draw

        return draw(self)

    def __repr__(self) -> str:
        return f"Position({self.text()!r})"


ROTATE, PLACE_MOVE, OFFER_MOVE, PICK_MOVE = "rotate", "place", "offer", "pick"


@dataclass(frozen=True, order=True)
class Move:
    """One move: a rotation ``(point, k)``, a placement, an offer of two points or a pick."""

    kind: str
    point: Point
    k: int = 0
    point2: Point = -1

    @staticmethod
    def rotate(point: Point, k: int) -> "Move":
        return Move(ROTATE, point, k % 6)

    @staticmethod
    def place(point: Point) -> "Move":
        return Move(PLACE_MOVE, point)

    @staticmethod
    def offer(p: Point, q: Point) -> "Move":
        return Move(OFFER_MOVE, min(p, q), 0, max(p, q))

    @staticmethod
    def pick(point: Point) -> "Move":
        return Move(PICK_MOVE, point)

    def text(self, board: Board) -> str:
        name = board.names[self.point]
        if self.kind == ROTATE:
            return f"{name}+{self.k}"
        if self.kind == PLACE_MOVE:
            return name
        if self.kind == OFFER_MOVE:
            return f"offer {name} {board.names[self.point2]}"
        return f"pick {name}"
