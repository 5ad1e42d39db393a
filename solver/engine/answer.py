"""The engine's result in the one answer shape of docs/json.md (``source: "engine"``).

The value is ``unknown`` unless the search proved it: then ``win``/``loss`` with its
distance, exact when the search was full-width that deep, else an upper bound. The
estimate is in ``score``. Every legal move is listed, best first, with its
own score and value for the side to move; ``line`` is the principal variation.
"""

from __future__ import annotations

from solver.engine.score import Score, SearchResult
from solver.game.config import Config
from solver.game.position import Position
from solver.game.rules import apply
from solver.game.values import UNKNOWN, Value


def score_json(score: Score) -> dict:
    return {"kind": score.kind, "value": score.value}


def _valued(score: Score, exact: bool) -> dict:
    """A proven win or loss with its distance — exact, or (found beyond the search's
    full-width depth) an upper bound; an estimate is ``unknown``."""
    v = Value(score.kind, score.value, exact) if score.proven else Value(UNKNOWN)
    return {"value": v.result, "plies": v.plies, "exact": v.exact}


def engine_answer(cfg: Config, pos: Position, result: SearchResult) -> dict:
    """The answer dict of an engine search of ``pos`` (a search with ``rank_all``)."""
    out = {"position": pos.text(), **_valued(result.score, result.exact), "source": "engine",
           "score": score_json(result.score), "depth": result.depth, "nodes": result.nodes,
           "seconds": round(result.time_ms / 1000, 3), "line": list(result.pv), "moves": []}
    for move, score in result.ranked or []:
        child = apply(cfg, pos, move)
        # a move's proven score is as exact as the search that found it
        out["moves"].append({"move": move.text(cfg.board), "position": child.text(), **_valued(score, result.exact),
                             "score": score_json(score)})
    return out
