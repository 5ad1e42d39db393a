"""Answers about a position: its value and every move's, from whichever source knows them.

One shape for every answer (``rotary query --json``, ``rotary prove --json`` and the
viewer's ``/api/position``); see ``docs/json.md``.
"""

from __future__ import annotations

from solver.db.database import Database
from solver.game.position import Position
from solver.game.rules import apply


def database_answer(db: Database, pos: Position, line_plies: int = 0) -> dict:
    """The answer for one position from a value database: its value and every move's, best first.

    With ``line_plies`` the answer also gives the principal line: best moves for both
    sides (fastest win, slowest loss) until the game ends, up to that many plies.
    """
    cfg = db.cfg
    value = db.probe(pos)
    ranked = db.best_moves(pos)
    report = {
        "position": pos.text(),
        "value": value.result,
        "plies": value.plies,
        "moves": [
            {"move": m.text(cfg.board), "position": apply(cfg, pos, m).text(), "value": v.result, "plies": v.plies}
            for m, v in ranked
        ],
    }
    if line_plies:
        line, cur = [], pos
        while ranked and len(line) < line_plies:
            move = ranked[0][0]
            line.append(move.text(cfg.board))
            cur = apply(cfg, cur, move)
            ranked = db.best_moves(cur)
        report["line"] = line
    return report
