"""Colours, phases and moves: the small vocabulary positions and notation share (docs/rules.md §3, §5)."""

from __future__ import annotations

from dataclasses import dataclass

from solver.game.board import Board, Point

X, O = 0, 1  # light, dark
COLOUR_CHARS = "xo"

PLAY, PLACE, OFFER, PICK, AT = "play", "place", "offer", "pick", "at"
PHASES = (PLAY, PLACE, OFFER, PICK, AT)

ROTATE, PLACE_MOVE, OFFER_MOVE, PICK_MOVE = "rotate", "place", "offer", "pick"


@dataclass(frozen=True, order=True)
class Move:
    """One move: a rotation ``(point, k)``, a placement, an offer of two points or a pick.

    A frozen, ordered dataclass of plain ints and strings: hashable, comparable, safe to
    share and to pickle. Build one with :meth:`rotate`, :meth:`place`, :meth:`offer` or
    :meth:`pick` (points are indices of the board's points); :meth:`text` writes it in
    docs/rules.md §3 notation, and :func:`solver.game.rules.parse_move` reads and checks
    that against a position, raising :class:`~solver.errors.IllegalMoveError`.

    >>> from solver.game.board import hex_board
    >>> board = hex_board(3)
    >>> Move.rotate(board.point("d2"), 4).text(board)
    'd2+4'
    """

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
