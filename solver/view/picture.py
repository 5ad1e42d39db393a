"""A position's picture under its rules: legal points, trap fields and marks filled in for :func:`solver.view.svg.board`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from solver.errors import UsageError
from solver.game.config import Config
from solver.game.move import Move
from solver.game.position import Position
from solver.game.rules import ONGOING, legal_points, status
from solver.view import svg


def playable_points(cfg: Config, pos: Position) -> list[int]:
    """The points a click can start a move from: legal rotation points, the forced or
    offered points, or every empty point a ball may be placed on."""
    if status(cfg, pos) != ONGOING:
        return []
    if pos.phase in ("pick", "at"):
        return list(pos.points)
    if pos.phase == "place":
        banned = cfg.board.centre_mask | (cfg.traps_o if pos.turn == 0 else cfg.traps_x)
        return [p for p in range(cfg.board.size) if (pos.empty & ~banned) >> p & 1]
    if pos.phase == "offer":
        return legal_points(cfg, pos.x, pos.o)
    return legal_points(cfg, pos.mover, pos.opponent)


def position_svg(
    cfg: Config,
    pos: Position,
    *,
    last_move: Move | str | None = None,
    values: Mapping[Any, Any] | None = None,
    size: int | None = 480,
    legal: bool = True,
    hint: Move | str | None = None,
) -> str:
    """:func:`svg.board` with the position's playable points and, under ``capture``, its trap fields."""
    return svg.board(
        pos,
        size=size,
        last_move=last_move,
        legal=playable_points(cfg, pos) if legal else None,
        values=values,
        traps=(cfg.traps_x, cfg.traps_o) if cfg.capture else None,
        hint=hint,
    )


def write_pictures(cfg: Config, pos: Position, *, svg_path: str | None = None, png_path: str | None = None,
                   size: int = 480, last_move: Move | str | None = None) -> list[str]:
    """Write the SVG and/or PNG picture of ``pos``; the paths written. The PNG is rendered
    before anything is written, so a missing extra leaves no half result."""
    if not 16 <= size <= 10_000:
        raise UsageError(f"--size must be 16..10000 pixels, got {size}")
    picture = position_svg(cfg, pos, size=size, last_move=last_move)
    png_bytes = svg.png(picture) if png_path else None
    written = []
    if svg_path:
        Path(svg_path).write_text(picture + "\n", encoding="utf-8")
        written.append(svg_path)
    if png_path:
        Path(png_path).write_bytes(png_bytes)
        written.append(png_path)
    return written
