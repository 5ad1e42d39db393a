"""The viewer's engine analysis: a position no database, book or proof answers, searched for
a time budget in a worker process (plain data in and out), answered in the one schema
(:func:`solver.engine.answer.engine_answer`, ``source: "engine"``)."""

from __future__ import annotations

from solver.analysis import rules_answer
from solver.game.config import config_from_key
from solver.game.position import Position
from solver.game.rules import ONGOING, status

_engines: dict = {}  # one engine per rules in the worker, kept between requests


def analyse_position(cfg_key: dict, text: str, movetime_ms: int) -> dict:
    """The engine's answer for ``text`` after ``movetime_ms``: score, line and every move
    ranked; a finished position gets the rules' answer."""
    from solver.engine.answer import engine_answer
    from solver.engine.engine import Engine
    from solver.engine.score import Limit

    cfg = config_from_key(cfg_key)
    pos = Position(text)
    if status(cfg, pos) != ONGOING:
        return rules_answer(cfg, pos)
    engine = _engines.get(cfg)
    if engine is None:
        engine = _engines[cfg] = Engine(cfg, tt_bits=20)
        engine.warm_up()
    result = engine.think(pos, Limit(movetime_ms=movetime_ms), rank_all=True)
    return engine_answer(cfg, pos, result)
