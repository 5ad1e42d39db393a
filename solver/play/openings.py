"""Openings files: the start positions of a match, one a line.

    # comments and blank lines are ignored; so is anything after a '#' on a line
    .oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x
    ...

Each line is a position in docs/rules.md §9 notation (side to move included). Every line is
checked against the match's rules — it must be a position those rules allow and not a
finished game — and a fault is one line naming the file and line.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from solver.errors import RotaryError, UsageError
from solver.game.config import Config
from solver.game.position import Position
from solver.game.rules import ONGOING, check_position, status


def read_openings(path: str | os.PathLike) -> list[tuple[int, Position]]:
    """``(line number, position)`` for every position line of the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not a text file of positions") from None
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            found.append((number, Position(line)))
        except RotaryError as e:
            raise UsageError(f"{path} line {number}: {e}") from None
    if not found:
        raise UsageError(f"{path} holds no position (one a line, in docs/rules.md §9 notation)")
    return found


def check_openings(cfg: Config, openings: Sequence[tuple[int, Position]], path: str | os.PathLike) -> None:
    """Refuse, naming the line, a position the rules do not allow or a finished one."""
    for number, pos in openings:
        try:
            check_position(cfg, pos)
        except RotaryError as e:
            raise UsageError(f"{path} line {number}: {e} (rules: {cfg.describe()})") from None
        st = status(cfg, pos)
        if st != ONGOING:
            raise UsageError(f"{path} line {number}: the game is already over there ({st} for the side to move)")


def write_openings(path: str | os.PathLike, positions: Sequence[Position], header: Sequence[str] = ()) -> None:
    """One position a line after ``# `` header lines, written atomically."""
    path = Path(path)
    lines = [f"# {h}" if h else "#" for h in header] + [p.text() for p in positions]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)
