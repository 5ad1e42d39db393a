"""Start positions: the reconstructed standard start (docs/rules.md §8) and the empty setup board."""

from __future__ import annotations

from solver.errors import ConfigError
from solver.game.board import Board, hex_board, ring_norm, STANDARD_N
from solver.game.config import Config
from solver.game.position import PLACE, PLAY, X, Position

STANDARD_START_TEXT = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"

_EMPTY_INTERIOR = ((1, 1), (-1, 1), (1, -1), (-1, -1), (3, -1), (-1, 3))
_INTERIOR_RINGS = (7, 13, 19)
_EDGE_RING = 31
_EDGE_EXTRA = ((-3, 2), (2, -3))


def standard_start() -> Position:
    """The standard start, built from the description of docs/rules.md §8 (not typed in).

    Light holds the half ``q > r``, dark ``q < r``; interior balls fill rings 7, 13, 19
    (less the six named empty points), edge balls ring 31 plus (−3, 2) and (2, −3).
    """
    board = hex_board(STANDARD_N)
    x = o = 0
    for p, (q, r) in enumerate(board.coords):
        norm = ring_norm(q, r)
        if board.is_interior(p):
            filled = norm in _INTERIOR_RINGS and (q, r) not in _EMPTY_INTERIOR
        else:
            filled = norm == _EDGE_RING or (q, r) in _EDGE_EXTRA
        if filled and q > r:
            x |= 1 << p
        elif filled and q < r:
            o |= 1 << p
    return Position.make(board, x, o, X)


def has_preset_start(board: Board) -> bool:
    return board.n == STANDARD_N


def empty_setup(cfg: Config) -> Position:
    """The empty board at the start of a setup game: light places first."""
    return Position.make(cfg.board, 0, 0, X, PLACE)


def initial_position(cfg: Config) -> Position:
    """Where a game under ``cfg`` starts: the empty board with ``setup``, else the preset start."""
    if cfg.setup:
        return empty_setup(cfg)
    if not has_preset_start(cfg.board):
        raise ConfigError(
            f"{cfg.board.label} has no preset start: its games start from the empty board (use --setup offer|last)"
        )
    return standard_start()
