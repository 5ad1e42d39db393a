"""Answers from what is known (:class:`solver.known.knowledge.Knowledge`), in the one
schema of docs/json.md, each value labelled with where it comes from.

    report = known_answer(cfg, pos, knowledge, estimate=engine_estimates(cfg))
    line = known_line(cfg, pos, knowledge, 40)

The position's own value is the store's (``source`` ``proof`` for a proof tree's, ``book``
for an opening book's; ``from`` names the file). Every legal move is listed, best first,
with ``source`` of its own: ``rules`` (the move ends the game), ``proof`` or ``book`` (its
child is known), or ``engine`` (a short search's estimate in ``score``, value ``unknown``
unless the search proved it). An estimate is never given where a value is proven.
"""

from __future__ import annotations

from typing import Callable

from solver.analysis import through
from solver.game.config import Config
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, apply, moves, status
from solver.game.values import DRAW, LOSS, UNKNOWN, WIN, Value
from solver.known.knowledge import Knowledge

ESTIMATE_NODES = 20_000  # the engine's search for moves nothing proves: well under a second on hex(4)

Estimate = Callable[[Position], dict[str, dict]]  # child text -> the move's score (the side to move's)


def _score_through(parent: Position, child: Position, s: dict) -> dict:
    """A child's score (its mover's view) as the move's score for the parent's mover."""
    kind, value = s["kind"], int(s["value"])
    if child.turn != parent.turn:
        kind, value = {"win": ("loss", value + 1), "loss": ("win", value + 1)}.get(kind, ("cp", -value))
    elif kind != "cp":
        value += 1
    return {"kind": kind, "value": value}


def _raw(s: dict | None) -> int:
    """A score as one number, higher better for the side to move (none: in the middle)."""
    if not s:
        return 0
    if s["kind"] == "cp":
        return int(s["value"])
    return (10**6 - int(s["value"])) * (1 if s["kind"] == WIN else -1)


def known_moves(cfg: Config, pos: Position, knowledge: Knowledge, estimate: Estimate | None = None) -> list[dict]:
    """Every legal move of ``pos`` with its value for the side to move and its source, best first."""
    rows, by_child = [], {}
    for mv in moves(cfg, pos):
        child = apply(cfg, pos, mv)
        text = child.text()
        if text not in by_child:
            by_child[text] = _child_row(cfg, pos, child, knowledge)
        rows.append(dict(move=mv.text(cfg.board), position=text, **by_child[text]))
    if estimate is not None and any(r["source"] is None for r in rows):
        scores = estimate(pos)
        for r in rows:
            s = scores.get(r["position"]) if r["source"] is None else None
            if s is not None:
                r["source"], r["score"] = "engine", s
                if s["kind"] in (WIN, LOSS):
                    r["value"], r["plies"], r["exact"] = s["kind"], s["value"], bool(s.get("exact"))
                r["score"] = {"kind": s["kind"], "value": s["value"]}
    for r in rows:
        if r["source"] is None:
            del r["source"]
    rows.sort(key=lambda r: (Value(r["value"], r["plies"], r["exact"]).sort_key(), -_raw(r.get("score"))))
    return rows


def _child_row(cfg: Config, pos: Position, child: Position, knowledge: Knowledge) -> dict:
    st = status(cfg, child) if child.phase == PLAY else ONGOING
    if st != ONGOING:
        v = through(pos, child, Value(st, 0))
        return {"value": v.result, "plies": v.plies, "exact": v.exact, "source": "rules"}
    k = knowledge.get(cfg, child)
    if k is None:
        return {"value": UNKNOWN, "plies": None, "exact": False, "source": None}
    v = through(pos, child, k.value)
    row = {"value": v.result, "plies": v.plies, "exact": v.exact, "source": k.source, "from": k.origin}
    if k.score is not None and not v.proven:
        row["score"] = _score_through(pos, child, k.score)
    return row


def known_answer(cfg: Config, pos: Position, knowledge: Knowledge, estimate: Estimate | None = None,
                 line_plies: int = 0) -> dict | None:
    """The answer for ``pos`` from what is known of it, or None where nothing is."""
    root = knowledge.get(cfg, pos)
    if root is None:
        return None
    rows = known_moves(cfg, pos, knowledge, estimate)
    value = root.value
    best = rows[0] if rows else None
    out = {"position": pos.text(), "value": value.result, "plies": value.plies, "exact": value.exact,
           "source": root.source, "from": root.origin, "moves": rows}
    if root.score is not None and not value.proven:
        out["score"] = {"kind": root.score["kind"], "value": int(root.score["value"])}
    if root.source == "proof":
        realised = best is not None and (best["value"], best["plies"]) == (value.result, value.plies)
        out.update(best_move=best["move"] if realised else None, nodes=0, seconds=0.0, stopped=None)
    if line_plies:
        out["line"] = known_line(cfg, pos, knowledge, line_plies)
    return out


def proven_step(cfg: Config, pos: Position, knowledge: Knowledge) -> tuple[str, Position, Value] | None:
    """The move that keeps ``pos``'s proven value (the fastest win, the slowest loss, a
    drawing move) where the store proves it and a child shows it; else None."""
    root = knowledge.get(cfg, pos)
    if root is None or not root.value.proven:
        return None
    want = root.value
    for mv in moves(cfg, pos):
        child = apply(cfg, pos, mv)
        st = status(cfg, child) if child.phase == PLAY else ONGOING
        if st != ONGOING:
            v = through(pos, child, Value(st, 0))
        else:
            k = knowledge.get(cfg, child)
            if k is None or not k.value.proven:
                continue
            v = through(pos, child, k.value)
        if v.result == want.result and (want.result == DRAW or v.plies == want.plies):
            return mv.text(cfg.board), child, v
    return None


def known_line(cfg: Config, pos: Position, knowledge: Knowledge, plies: int) -> list[str]:
    """The principal line through the store: proven steps while the store proves them,
    then the best book estimate; it ends where neither is known, the game ends or a
    position repeats."""
    line, seen = [], {pos.text()}
    while len(line) < plies:
        step = proven_step(cfg, pos, knowledge)
        if step is None:
            rows = [r for r in known_moves(cfg, pos, knowledge) if r.get("score") or r["value"] != UNKNOWN]
            if not rows or knowledge.get(cfg, pos) is None:
                break
            move, pos = rows[0]["move"], Position(rows[0]["position"])
        else:
            move, pos = step[0], step[1]
        line.append(move)
        if pos.text() in seen or (pos.phase == PLAY and status(cfg, pos) != ONGOING):
            break
        seen.add(pos.text())
    return line


def engine_estimates(cfg: Config, nodes: int = ESTIMATE_NODES) -> Estimate:
    """A short engine search of every move (``nodes`` nodes, every move ranked): the
    moves' scores for the side to move, by child text; ``exact`` where a proven score's
    distance is within the depth searched."""

    def estimate(pos: Position) -> dict[str, dict]:
        from solver.engine.engine import Engine
        from solver.engine.score import Limit

        engine = Engine(cfg, tt_bits=18)
        r = engine.think(pos, Limit(nodes=nodes), rank_all=True)
        out = {}
        for mv, sc in r.ranked or []:
            out.setdefault(apply(cfg, pos, mv).text(), {"kind": sc.kind, "value": sc.value,
                                                        "exact": sc.proven and r.exact})
        return out

    return estimate


def with_known(cfg: Config, pos: Position, report: dict, knowledge: Knowledge) -> dict:
    """An engine answer (:func:`solver.engine.answer.engine_answer`) with what is known put
    in place of estimates: each move whose child the store knows gets its value (a proven
    one replaces the score's estimate by the proven score), ``source`` on every move, and
    where the store proves the position itself its value, best move and line (``source``
    ``proof`` or ``book``, ``from`` the file)."""
    if not knowledge:
        return report
    report = dict(report, moves=[dict(m) for m in report["moves"]])
    for m in report["moves"]:
        child = Position(m["position"])
        k = None if child.phase == PLAY and status(cfg, child) != ONGOING else knowledge.get(cfg, child)
        if k is None or not k.value.proven:  # the search's own estimate stands against a book's
            m.setdefault("source", "rules" if child.phase == PLAY and status(cfg, child) != ONGOING else "engine")
            continue
        v = through(pos, child, k.value)
        m.update(value=v.result, plies=v.plies, exact=v.exact, source=k.source, **{"from": k.origin})
        if v.result in (WIN, LOSS) and v.plies is not None:
            m["score"] = {"kind": v.result, "value": v.plies}
        elif v.result == DRAW:
            m["score"] = {"kind": "cp", "value": 0}
    report["moves"].sort(key=lambda r: (Value(r["value"], r["plies"], r["exact"]).sort_key(), -_raw(r.get("score"))))
    root = knowledge.get(cfg, pos)
    step = proven_step(cfg, pos, knowledge)
    if root is not None and root.value.proven and step is not None:
        v = root.value
        report.update(value=v.result, plies=v.plies, exact=v.exact, source=root.source, **{"from": root.origin})
        report["score"] = {"kind": v.result, "value": v.plies} if v.result in (WIN, LOSS) else {"kind": "cp", "value": 0}
        report["line"] = known_line(cfg, pos, knowledge, 40) or [step[0]]
        if root.source == "proof":
            report.update(best_move=step[0], stopped=None)
    return report
