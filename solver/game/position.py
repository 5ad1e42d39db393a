"""Positions and moves: small immutable values (docs/rules.md §3, §5, §9).

A :class:`Position` is two bitboards (light's and dark's balls), the side to move and,
in ``setup`` games, the phase. ``Position(text)`` parses docs/rules.md §9 notation and
``repr()`` gives that call back, so it can be pasted into Python.
"""

from __future__ import annotations

from solver.game.board import Bitboard, Board, Point
from solver.game.move import (  # noqa: F401  (re-exported: the position's vocabulary)
    AT, COLOUR_CHARS, O, OFFER, OFFER_MOVE, PHASES, PICK, PICK_MOVE, PLACE, PLACE_MOVE, PLAY, ROTATE, X, Move,
)
from solver.game.notation import format_fields, parse_fields
from solver.game.render import draw


class Position:
    """An immutable position: light's and dark's balls, the side to move, the phase.

    ``Position(text)`` parses docs/rules.md §9 notation; it raises
    :class:`~solver.errors.NotationError` (a ``ValueError``) naming the fault in one line.
    It checks the notation and the board, not the rules: material or a phase that the rules
    in force forbid is refused by :func:`solver.game.rules.check_position` (and by a
    database's :meth:`~solver.db.database.Database.probe`), which know the configuration.

    Fields: ``board`` (a :class:`~solver.game.board.Board`, one shared instance per size),
    ``x`` and ``o`` (bitboards: bit ``p`` set where that colour has a ball on point ``p``),
    ``turn`` (0: light ``x`` to move, 1: dark ``o``), ``phase`` (``'play'``, or a phase of
    the setup game) and ``points`` (the points a setup phase names). ``repr()`` is the call
    that rebuilds it, ``str()`` draws the board, :meth:`text` is the notation. Equal
    positions hash equal (dict keys, sets). Immutable, so safe to share between threads;
    it pickles (to worker processes) and comes back on the same ``board`` instance.

    >>> pos = Position("..o/..../...../....../.x.../.ox. x")
    >>> pos
    Position('..o/..../...../....../.x.../.ox. x')
    >>> pos.board.label, pos.turn, pos.count(X), pos.count(O)
    ('hex3', 0, 2, 2)
    >>> Position("..o/..x")
    Traceback (most recent call last):
    solver.errors.NotationError: 2 rows in '..o/..x' match no board (rows per board: hex2 4, hex3 6, hex4 8, hex5 10)
    """

    __slots__ = ("board", "x", "o", "turn", "phase", "points")

    board: Board
    x: Bitboard
    o: Bitboard
    turn: int
    phase: str
    points: tuple[Point, ...]

    def __init__(self, text: str) -> None:
        board, x, o, turn, phase, points = parse_fields(text)
        for slot, value in zip(Position.__slots__, (board, x, o, turn, phase, points)):
            object.__setattr__(self, slot, value)

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

    def __reduce__(self):
        # pickle's default would restore the slots through __setattr__, which refuses
        return (Position.make, (self.board, self.x, self.o, self.turn, self.phase, self.points))

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
        """Balls of ``colour`` (``X`` = 0 light, ``O`` = 1 dark) on the board."""
        return (self.o if colour else self.x).bit_count()

    def replace(self, **changes) -> "Position":
        values = {s: getattr(self, s) for s in Position.__slots__}
        values.update(changes)
        return Position.make(**values)

    def text(self) -> str:
        """The position in docs/rules.md §9 notation (what ``Position(text)`` reads back)."""
        return format_fields(self.board, self.x, self.o, self.turn, self.phase, self.points)

    def __str__(self) -> str:
        return draw(self)

    def __repr__(self) -> str:
        return f"Position({self.text()!r})"


def parse_position(text: str) -> Position:
    """Parse §9 position text; raise :class:`NotationError` naming the fault."""
    return Position(text)


def format_position(pos: Position) -> str:
    """§9 text of a position (no digits on output)."""
    return pos.text()
