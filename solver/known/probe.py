"""The engine's probe of what is known, before any search (as chess engines probe their
tablebases): a value the shipped store proves at the position, or at one of its moves, is
played and reported as proven.

    result = known_result(cfg, pos)      # a SearchResult (source "proof"), or None: search
"""

from __future__ import annotations

from solver.analysis import through
from solver.engine.score import Score, SearchResult
from solver.game.config import Config
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, apply, moves, parse_move, status
from solver.game.values import WIN, Value
from solver.known.answer import known_line, proven_step
from solver.known.knowledge import Knowledge

PV_PLIES = 40


def known_result(cfg: Config, pos: Position, knowledge: Knowledge | None = None) -> SearchResult | None:
    """The proven move of ``pos``: the store's value of ``pos`` with a move that keeps it
    (exact), else the fastest move the store proves a win (its distance an upper bound on
    the position's); None where the store proves neither."""
    knowledge = Knowledge.default() if knowledge is None else knowledge
    if not knowledge or (pos.phase == PLAY and status(cfg, pos) != ONGOING):
        return None
    step = proven_step(cfg, pos, knowledge)
    if step is not None:
        move, _, value = step
        pv = known_line(cfg, pos, knowledge, PV_PLIES) or [move]
        return SearchResult(parse_move(cfg, pos, move), Score.from_value(value), pv=pv, source="proof", exact=True)
    best = None
    for mv in moves(cfg, pos):
        child = apply(cfg, pos, mv)
        k = knowledge.get(cfg, child)
        if k is None or not k.value.proven:
            continue
        v = through(pos, child, k.value)
        if v.result == WIN and v.plies is not None and (best is None or v.plies < best[1].plies):
            best = (mv, v)
    if best is None:
        return None
    mv, v = best
    return SearchResult(mv, Score.from_value(Value(WIN, v.plies)), pv=[mv.text(cfg.board)], source="proof", exact=False)
