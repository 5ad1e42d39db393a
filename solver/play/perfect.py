"""The perfect player: the database's best move, fastest win first, slowest loss last."""

from __future__ import annotations

from typing import Callable

from solver.db.database import Database
from solver.game.config import Config
from solver.game.move import Move
from solver.game.position import Position


def perfect_player(db: Database) -> Callable[[Config, Position], Move]:
    """A chooser that plays ``db``'s best move (ties: the first in move order)."""

    def choose(cfg: Config, pos: Position) -> Move:
        return db.best_moves(pos)[0][0]

    return choose
