"""One key per position, whatever image of it is asked: the canonical text under the rules'
symmetries (plain Python, no compiled kernel).

A rotation-phase position is known by the smallest text among its images: every plain
board symmetry (it keeps each colour's trap fields) maps it with the same side to move;
every colour-swapping one (it exchanges the trap fields; without ``capture`` that is every
symmetry) maps it with the colours and the side to move exchanged, the mover keeping his
balls (docs/rules.md §7). Positions of the setup game's phases are keyed by their own text
(as the opening book keys them: placements are not merged).
"""

from __future__ import annotations

from functools import lru_cache

from solver.game.config import Config, symmetry_classes
from solver.game.position import PLAY, Position


@lru_cache(maxsize=32)
def _maps(cfg: Config) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
    plain, swapping = symmetry_classes(cfg)
    return tuple(plain), tuple(swapping)


def canonical(cfg: Config, pos: Position) -> str:
    """The text that every symmetric image of ``pos`` (under ``cfg``) shares."""
    if pos.phase != PLAY:
        return pos.text()
    board = pos.board
    plain, swapping = _maps(cfg)
    texts = [Position.make(board, board.map_bits(s, pos.x), board.map_bits(s, pos.o), pos.turn).text() for s in plain]
    texts += [Position.make(board, board.map_bits(s, pos.o), board.map_bits(s, pos.x), 1 - pos.turn).text()
              for s in swapping]
    return min(texts)
