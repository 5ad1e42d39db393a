"""ASCII pictures of positions in their hex layout, with row numbers and point letters."""

from __future__ import annotations

from typing import Protocol

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

_COLOURS = {"x": "\033[1;33m", "o": "\033[1;34m", "c": "\033[2;31m"}
_RESET = "\033[0m"


def draw(pos: Drawable, colour: bool = False) -> str:
    """The board as text: each row indented so that neighbours touch, top row first.

    Centre points that are empty are shown as ``*`` to mark the target.
    """
    board = pos.board
    width = max(len(r) for r in board.rows)
    lines = []
    for number in range(len(board.rows), 0, -1):
        row = board.rows[number - 1]
        cells = []
        for p in row:
            if pos.x >> p & 1:
                ch = "x"
            elif pos.o >> p & 1:
                ch = "o"
            else:
                ch = "*" if p in board.centre else "."
            if colour:
                ch = _COLOURS.get(ch if ch != "*" else "c", "") + ch + _RESET if ch != "." else ch
            cells.append(ch)
        indent = " " * (2 * (width - len(row)))
        last = chr(ord("a") + len(row) - 1)
        pad = " " * (2 * (width - len(row)))
        lines.append(f"{number:>2} {indent}" + "   ".join(cells) + f"{pad}   a-{last}")
    lines.append("")
    lines.append(_legend(pos))
    return "\n".join(lines)


def _legend(pos: Drawable) -> str:
    side = "light (x)" if pos.turn == 0 else "dark (o)"
    text = f"{side} to move"
    if pos.phase != PLAY:
        names = " ".join(pos.board.names[p] for p in pos.points)
        text += f", phase {pos.phase}{(' ' + names) if names else ''}"
    return text + f"   x {pos.x.bit_count()}  o {pos.o.bit_count()}"
