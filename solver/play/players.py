"""Built-in opponents for ``rotary play``: random and greedy (the perfect one reads a database)."""

from __future__ import annotations

import random
from typing import Callable

from solver.errors import UsageError
from solver.game.config import Config
from solver.game.position import Move, Position
from solver.game.rules import LOSS, WIN, apply, legal_points, moves, status

Chooser = Callable[[Config, Position], Move]


def random_player(seed: int | None = None) -> Chooser:
    rng = random.Random(seed)

    def choose(cfg: Config, pos: Position) -> Move:
        return rng.choice(moves(cfg, pos))

    return choose


def _mobility(cfg: Config, pos: Position) -> int:
    """Legal points of the side to move minus those of the other side, on the same board."""
    return len(legal_points(cfg, pos.mover, pos.opponent)) - len(legal_points(cfg, pos.opponent, pos.mover))


def greedy_player(seed: int | None = None) -> Chooser:
    """Wins at once when it can, avoids handing over an immediate win, else maximises mobility."""
    rng = random.Random(seed)

    def score(cfg: Config, child: Position) -> tuple:
        st = status(cfg, child)
        if st == LOSS:  # the opponent, to move there, has lost
            return (3, 0)
        if st == WIN:
            return (0, 0)
        if any(status(cfg, apply(cfg, child, m)) == LOSS for m in moves(cfg, child)):
            return (1, 0)  # opponent has a finishing reply
        return (2, -_mobility(cfg, child))

    def choose(cfg: Config, pos: Position) -> Move:
        scored = [(score(cfg, apply(cfg, pos, m)), rng.random(), m) for m in moves(cfg, pos)]
        return max(scored)[2]

    return choose


PLAYER_KINDS = ("human", "random", "greedy", "perfect", "engine")


def make_player(kind: str, seed: int | None = None, db=None, movetime_ms: int | None = None):
    """The chooser of a player kind (None for a human); ``perfect`` plays from ``db``.

    ``movetime_ms`` is the thinking time per move of a searching player; the players
    here do not search and ignore it."""
    if kind == "human":
        return None
    if kind == "random":
        return random_player(seed)
    if kind == "greedy":
        return greedy_player(seed)
    if kind == "perfect":
        if db is None:
            raise UsageError("the perfect player needs a solved database (rotary solve, or --db)")
        from solver.play.perfect import perfect_player

        return perfect_player(db)
    if kind == "engine":
        from solver.engine.player import engine_player  # the engine's kernels load only when asked for

        return engine_player(db, movetime_ms)
    raise UsageError(f"unknown player {kind!r}: expected {', '.join(PLAYER_KINDS)}")
