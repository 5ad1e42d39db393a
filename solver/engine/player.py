"""The engine as a player of ``rotary play`` and ``rotary match``: a chooser with a history."""

from __future__ import annotations

from typing import Sequence

from solver.engine.engine import Engine
from solver.engine.score import Limit
from solver.game.config import Config
from solver.game.position import Move, Position

DEFAULT_MOVETIME_MS = 1000


def engine_player(db=None, movetime_ms: int | None = None, nodes: int | None = None):
    """A chooser ``choose(cfg, pos, history=None) -> Move`` that searches each move for
    ``movetime_ms`` (default 1000) or ``nodes``; one engine per configuration it meets,
    kept between moves (its table is the engine's memory of the game)."""
    engines: dict[Config, Engine] = {}
    limit = Limit(movetime_ms=None if nodes else (movetime_ms or DEFAULT_MOVETIME_MS), nodes=nodes)

    def choose(cfg: Config, pos: Position, history: Sequence[Position] | None = None) -> Move:
        engine = engines.get(cfg)
        if engine is None:
            engine = engines[cfg] = Engine(cfg, db=db)
            engine.warm_up()
        return engine.think(pos, limit, history or ()).move

    choose.wants_history = True  # type: ignore[attr-defined]
    return choose
