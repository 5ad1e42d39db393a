"""The perfect opponent for ``rotary play --o perfect``: reads the solved database."""

from __future__ import annotations

import argparse

from solver.game.config import Config
from solver.game.position import Move, Position
from solver.game.rules import apply, moves
from solver.game.values import Value


def best_moves(db, cfg: Config, pos: Position) -> list[tuple[Move, object]]:
    """Every move with its value for the mover, best first (fastest win, slowest loss)."""
    scored = []
    for m in moves(cfg, pos):
        child = apply(cfg, pos, m)
        v = db.probe(child)
        if child.turn == pos.turn:  # setup=last: the last placer also makes the first rotation
            v = v if v.plies is None else Value(v.result, v.plies + 1)
        else:
            v = v.after_move()
        scored.append((v, m))
    scored.sort(key=lambda vm: vm[0].sort_key())
    return [(m, v) for v, m in scored]


def perfect_player(args: argparse.Namespace):
    """A chooser that plays the database's best move; the database is opened lazily."""
    from solver.cli.db import find_db
    from solver.db.database import open_db

    state: dict = {}

    def choose(cfg: Config, pos: Position) -> Move:
        if "db" not in state:
            state["db"] = open_db(find_db(args, pos))
        return best_moves(state["db"], cfg, pos)[0][0]

    return choose
