"""ASCII pictures of positions in their hex layout, with row numbers and point letters.

Points are named as docs/rules.md §1 names them: rows ``1, 2, …`` from the bottom, and
within a row letters ``a, b, …`` from the left. The letters count within a row, so they do
not line up from row to row: each row of points is followed by a line of its own letters.

    8       .   o   o   .
            a   b   c   d
    7     .   o   .   o   .
          a   b   c   d   e

Under ``capture`` the trap fields are bracketed, ``[.]`` light's and ``(.)`` dark's, and
the legend names them. Colour only on a terminal and never when ``NO_COLOR`` is set
(https://no-color.org): see :func:`use_colour`.
"""

from __future__ import annotations

import os
from typing import Protocol, TextIO

from solver.game.board import Board
from solver.game.move import PLAY


class Drawable(Protocol):
    """What drawing reads of a position (``Position`` has it; render must not import it)."""

    board: Board
    x: int
    o: int
    turn: int
    phase: str
    points: tuple[int, ...]


_COLOURS = {"x": "\033[1;33m", "o": "\033[1;34m", "*": "\033[2;31m", "letter": "\033[2m"}
_RESET = "\033[0m"
TRAP_MARKS = ("[]", "()")  # light's trap fields, dark's
LAST_MARK = "<>"  # the points of the last move


def use_colour(stream: TextIO) -> bool:
    """Colour for ``stream``: only on a terminal, and never when ``NO_COLOR`` is set."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def draw(pos: Drawable, colour: bool = False, traps: tuple[int, int] = (0, 0), last: int = 0) -> str:
    """The board as text: each row indented so that neighbours touch, top row first, each
    followed by its point letters; ``traps`` (light's, dark's trap fields as bitboards)
    are bracketed and named in the legend; ``last`` (a bitboard: the last move's points)
    is marked ``<.>``.

    Centre points that are empty are shown as ``*`` to mark the target.
    """
    board = pos.board
    width = max(len(r) for r in board.rows)
    paint = _paint if colour else (lambda _kind, text: text)
    lines = []
    for number in range(len(board.rows), 0, -1):
        row = board.rows[number - 1]
        indent = " " * (2 * (width - len(row)))
        cells = []
        for p in row:
            if pos.x >> p & 1:
                ch = "x"
            elif pos.o >> p & 1:
                ch = "o"
            else:
                ch = "*" if p in board.centre else "."
            left, right = " ", " "
            for side in (0, 1):
                if traps[side] >> p & 1:
                    left, right = TRAP_MARKS[side]
            if last >> p & 1:
                left, right = LAST_MARK
            cells.append(left + (paint(ch, ch) if ch != "." else ch) + right)
        lines.append(f"{number:>2} {indent}" + " ".join(cells).rstrip())
        letters = "   ".join(chr(ord("a") + i) for i in range(len(row)))
        lines.append(f"    {indent}" + paint("letter", letters))
    lines.append("")
    lines.append(_legend(pos))
    if traps[0] or traps[1]:
        lines.append(_trap_legend(board, traps))
    return "\n".join(lines)


def _paint(kind: str, text: str) -> str:
    return _COLOURS[kind] + text + _RESET


def _legend(pos: Drawable) -> str:
    side = "light (x)" if pos.turn == 0 else "dark (o)"
    text = f"{side} to move"
    if pos.phase != PLAY:
        names = " ".join(pos.board.names[p] for p in pos.points)
        text += f", phase {pos.phase}{(' ' + names) if names else ''}"
    return text + f"   x {pos.x.bit_count()}  o {pos.o.bit_count()}"


def _trap_legend(board: Board, traps: tuple[int, int]) -> str:
    parts = []
    for side, (mark, owner) in enumerate(zip(TRAP_MARKS, ("light's", "dark's"))):
        names = [board.names[p] for p in range(board.size) if traps[side] >> p & 1]
        if names:
            parts.append(f"{mark[0]} {mark[1]} {owner} trap fields {' '.join(names)}")
    return "   ".join(parts)
