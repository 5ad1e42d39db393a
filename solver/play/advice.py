"""Advice in the terminal game where no database answers: ``hint``, ``value``, ``values`` —
from the shipped store of known values where it proves the position or a move
(:mod:`solver.known`), else the engine's estimate."""

from __future__ import annotations

from typing import Sequence

from solver.game.config import Config
from solver.game.position import Position

ADVICE_MS = 1000
_engines: dict = {}


def engine_advice(cfg: Config, pos: Position, history: Sequence[Position], what: str, movetime_ms: int = ADVICE_MS) -> str:
    """What the engine says after ``movetime_ms``: the best move (``hint``), the score
    (``value``) or every move's score (``values``), marked as an estimate unless proven."""
    known = known_advice(cfg, pos, what)
    if known is not None:
        return known
    from solver.engine.engine import Engine  # the kernels load only when advice is asked for
    from solver.engine.score import Limit

    engine = _engines.get(cfg)
    if engine is None:
        engine = _engines[cfg] = Engine(cfg)
        engine.warm_up()
    r = engine.think(pos, Limit(movetime_ms=movetime_ms), history, rank_all=(what == "values"))
    if r.move is None:
        return f"the game is over ({r.score})"
    if r.score.proven:
        kind = "proven" if r.exact else f"proven, the distance an upper bound; depth {r.depth}"
    else:
        kind = f"engine estimate, depth {r.depth}"
    if what == "hint":
        return f"hint: {r.move.text(cfg.board)} ({r.score}; {kind}; line {' '.join(r.pv)})"
    if what == "value":
        return f"{r.score} for the side to move ({kind})"
    lines = [f"{r.score} for the side to move ({kind}); every move, best first:"]
    lines += [f"  {m.text(cfg.board):<14} {sc}" for m, sc in r.ranked or []]
    return "\n".join(lines)


def known_advice(cfg: Config, pos: Position, what: str) -> str | None:
    """The advice of the shipped store (a proven move, value, and every move's value or
    marked estimate), or None where it proves nothing here."""
    from solver.known.answer import known_moves
    from solver.known.knowledge import Knowledge
    from solver.known.probe import known_result

    knowledge = Knowledge.default()
    r = known_result(cfg, pos, knowledge)
    if r is None:
        return None
    root = knowledge.get(cfg, pos)
    if r.exact and root is not None:
        kind = f"proven: {root.source}, {root.origin}"
    else:
        kind = "proven: a move the store proves a win, the distance an upper bound"
    if what == "hint":
        return f"hint: {r.move.text(cfg.board)} ({r.score}; {kind}; line {' '.join(r.pv)})"
    if what == "value":
        return f"{r.score} for the side to move ({kind})"
    lines = [f"{r.score} for the side to move ({kind}); every move, best first:"]
    for m in known_moves(cfg, pos, knowledge):
        if m["value"] in ("win", "loss", "draw"):
            shown = f"{m['value']}" + (f" in {m['plies']}" if m["plies"] is not None else "") + f" ({m['source']})"
        else:
            shown = f"{m['value']} (nothing proven)"
        lines.append(f"  {m['move']:<14} {shown}")
    return "\n".join(lines)
