"""Answers about a position: its value and every move's, from whichever source knows them.

One shape for every answer (``rotary query --json``, ``rotary prove --json`` and the
viewer's ``/api/position``), specified in ``docs/json.md`` and ``docs/answer.schema.json``::

    {"position": text, "value": result, "plies": int | null, "exact": bool,
     "source": "database" | "book" | "proof" | "rules",
     "moves": [{"move", "position", "value", "plies", "exact"}, ...]}   # best first

``value`` is one of :data:`solver.game.values.RESULTS`, always the side to move's: the
mover of the position for its own value, and for each move the value *of that move* for
the same side (a database's and a book's children are stored from the child's mover and
turned here). ``plies`` is the distance of a win or loss (null otherwise); ``exact`` says
whether it is the distance itself or, from a search that stopped early, an upper bound.

Each builder below makes one source's answer; a caller may add fields (``prove`` adds
``best_move``, ``nodes``, ``seconds``, ``stopped``; ``query --line`` adds ``line``) but never renames one.
"""

from __future__ import annotations

from typing import Iterable

from solver.db.database import Database
from solver.game.config import Config
from solver.game.position import Position
from solver.game.rules import ONGOING, apply, moves, status
from solver.game.values import UNKNOWN, Value

SOURCES = ("database", "book", "proof", "rules")


def answer(pos: Position, value: Value, source: str, moves_: Iterable[tuple[str, Position, Value]]) -> dict:
    """The answer dict: ``moves_`` holds ``(move text, child, value of the move for the
    side to move)``; they are sorted best first here (stable: ties keep their order)."""
    if source not in SOURCES:
        raise ValueError(f"not a source: {source!r} (one of {', '.join(SOURCES)})")
    ranked = sorted(moves_, key=lambda m: m[2].sort_key())
    return {
        "position": pos.text(),
        "value": value.result,
        "plies": value.plies,
        "exact": value.exact,
        "source": source,
        "moves": [
            {"move": mv, "position": child.text(), "value": v.result, "plies": v.plies, "exact": v.exact}
            for mv, child, v in ranked
        ],
    }


def through(parent: Position, child: Position, child_value: Value) -> Value:
    """The value of the move ``parent -> child`` for the parent's mover, from the child's
    value for the child's mover: the other side's view and one ply more, or (the last
    placer also making the first rotation, ``setup=last``) the same side's, one ply more."""
    if child.turn != parent.turn:
        return child_value.after_move()
    if child_value.plies is None:
        return child_value
    return Value(child_value.result, child_value.plies + 1, child_value.exact)


# ---------------------------------------------------------------------------- database


def database_answer(db: Database, pos: Position, line_plies: int = 0) -> dict:
    """The answer for one position from a value database: its value and every move's, best first.

    With ``line_plies`` the answer also gives the principal line (``line``): best moves for
    both sides (fastest win, slowest loss) until the game ends, a position of the line
    repeats (a drawn line goes round: it stops at the first repetition) or ``line_plies``
    plies are played.
    """
    cfg = db.cfg
    if line_plies and not getattr(db, "distances", True):  # best moves by WDL alone need not make progress
        from solver.errors import StoreError

        raise StoreError(f"{db.path} holds win/draw/loss only (exported with --wdl-only): a principal line needs "
                         "distances (leave out --line)")
    ranked = db.best_moves(pos)
    report = answer(
        pos, db.probe(pos), "database", ((m.text(cfg.board), apply(cfg, pos, m), v) for m, v in ranked)
    )
    if line_plies:
        report["line"] = principal_line(db, pos, line_plies, ranked)[0]
    return report


def principal_line(db: Database, pos: Position, plies: int, ranked=None) -> tuple[list[str], str]:
    """Best moves from ``pos`` for both sides, and why the line ends: ``"over"`` (the game
    is over), ``"repeats"`` (the next position was already on the line: a draw goes
    round) or ``"limit"`` (``plies`` moves played)."""
    cfg = db.cfg
    ranked = db.best_moves(pos) if ranked is None else ranked
    line, cur, seen = [], pos, {pos.text()}
    while ranked:
        if len(line) >= plies:
            return line, "limit"
        move = ranked[0][0]
        line.append(move.text(cfg.board))
        cur = apply(cfg, cur, move)
        if cur.text() in seen:
            return line, "repeats"
        seen.add(cur.text())
        ranked = db.best_moves(cur)
    return line, "over"


# ---------------------------------------------------------------------------- rules


def rules_answer(cfg: Config, pos: Position) -> dict:
    """What the rules alone say, without any database: a finished position is won or lost
    in 0 plies for the side to move (no moves); of a position still in play nothing is
    known (``unknown``, every move ``unknown``)."""
    st = status(cfg, pos)
    if st != ONGOING:
        return answer(pos, Value(st, 0), "rules", ())
    return answer(pos, Value(UNKNOWN), "rules", ((m.text(cfg.board), apply(cfg, pos, m), Value(UNKNOWN)) for m in moves(cfg, pos)))


def finished(cfg: Config, pos: Position) -> bool:
    """Whether the game is over in ``pos`` (the rules answer it exactly)."""
    return status(cfg, pos) != ONGOING


# ---------------------------------------------------------------------------- book


def book_value(v: dict | None) -> Value:
    """A book node's backed-up value (``{"result", "plies", "exact", ...}``) as a Value."""
    if not v or not v.get("result"):
        return Value(UNKNOWN)
    return Value(v["result"], v.get("plies"), bool(v.get("exact")))


def book_answer(cfg: Config, pos: Position, node: dict) -> dict:
    """The answer from an opening-book node (:func:`solver.search.book.book_lookup` of
    ``pos``): the node's value, and every legal move of ``pos`` with the value of its
    child's node turned to the side to move's view (``unknown`` where the child is not in
    the book). Where the book holds the engine's scores, the answer and each move carry
    ``score`` (the side to move's, as ``source: "engine"`` answers do; a proof overrides
    it), and moves of equal value come best score first."""
    kids, scores = [], {}
    for child in node.get("children") or []:
        c = Position(child["position"])
        kids.append((child["move"], c, through(pos, c, book_value(child.get("value")))))
        s = child.get("score")
        if s:
            scores[child["move"]] = _score_through(pos, c, s)
    kids.sort(key=lambda k: (0, -scores[k[0]]["raw"]) if k[0] in scores else (1, 0))
    report = answer(pos, book_value(node.get("value")), "book", kids)
    if node.get("score"):
        report["score"] = {"kind": node["score"]["kind"], "value": node["score"]["value"]}
    for m in report["moves"]:
        if m["move"] in scores:
            m["score"] = {"kind": scores[m["move"]]["kind"], "value": scores[m["move"]]["value"]}
    return report


def _score_through(parent: Position, child: Position, s: dict) -> dict:
    """A child's score (its mover's view) as the move's score for the parent's mover, with
    ``raw`` to sort by: a win sooner is better, a loss later."""
    kind, value = s["kind"], int(s["value"])
    if child.turn != parent.turn:
        kind, value = {"win": ("loss", value + 1), "loss": ("win", value + 1)}.get(kind, ("cp", -value))
    elif kind != "cp":
        value += 1
    raw = value if kind == "cp" else (10**6 - value) * (1 if kind == "win" else -1)
    return {"kind": kind, "value": value, "raw": raw}


# ---------------------------------------------------------------------------- proof


def proof_value(res) -> Value:
    """A df-pn :class:`~solver.search.prover.ProofResult` as a Value."""
    return Value(res.result, res.plies, bool(res.exact))


def proof_answer(cfg: Config, pos: Position, res, children: Iterable[tuple[str, object]] | None = None) -> dict:
    """The answer from a df-pn result ``res`` for ``pos``, with its own fields
    ``best_move``, ``nodes``, ``seconds`` and ``stopped`` (the limit that left the answer
    short of exact, null when none did) added.

    ``children`` — ``(move text, ProofResult of its child)`` — lists the moves with their
    values (``prove -j N`` proves every child); without them the answer lists the best
    move alone, when the value is proven (a proof of the position proves that move's
    value to be the position's)."""
    value = proof_value(res)
    if children is not None:
        kids = []
        for mv, r in children:
            c = _play(cfg, pos, mv)
            kids.append((mv, c, through(pos, c, proof_value(r))))
    elif res.best_move and value.proven:
        kids = [(res.best_move, _play(cfg, pos, res.best_move), value)]
    else:
        kids = []
    report = answer(pos, value, "proof", kids)
    report.update(best_move=res.best_move, nodes=int(res.nodes), seconds=round(float(res.seconds), 3),
                  stopped=getattr(res, "stopped", None))
    return report


def _play(cfg: Config, pos: Position, move_text: str) -> Position:
    from solver.game.rules import parse_move

    return apply(cfg, pos, parse_move(cfg, pos, move_text))


# ---------------------------------------------------------------------------- errors


def error_answer(text: str, message: str) -> dict:
    """What a batch answers for a line it cannot answer: the line and one-line message."""
    return {"position": text, "error": message}

