"""Answers the viewer gives where no database does, in the one answer schema of ``rotary query --json``.

    {"position", "value", "plies", "exact", "source",
     "moves": [{"move", "position", "value", "plies", "exact"}]}

Every value is the side to move's: ``win``, ``loss``, ``draw`` or, from a proof that did not
finish, ``not-win``, ``not-loss``, ``unknown``. ``source`` is ``rules`` where only the rules
speak (a finished position, or every move ``unknown``) and ``proof`` for df-pn's results.
"""

from __future__ import annotations

from solver.game.config import Config, config_from_key
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, WIN, apply, moves, status

UNKNOWN = "unknown"
# best first for the side to move; wins and losses are ordered by plies within their rank
RANK = {"win": 0, "not-loss": 1, "draw": 2, UNKNOWN: 3, "not-win": 4, "loss": 5}


def sort_key(entry: dict) -> tuple:
    """Best first: fastest win, then not-loss, draw, unknown, not-win, slowest loss."""
    value, plies = entry["value"], entry["plies"]
    rank = RANK.get(value, RANK[UNKNOWN])
    if plies is None:
        return (rank, 0)
    return (rank, plies if value == "win" else -plies)


def rules_answer(cfg: Config, pos: Position) -> dict:
    """What the rules alone say: a finished position's result (win or loss in 0), else the
    value ``unknown`` and every move with ``unknown``."""
    st = status(cfg, pos)
    done = st != ONGOING
    return {
        "position": pos.text(),
        "value": st if done else UNKNOWN,
        "plies": 0 if done else None,
        "exact": done,
        "source": "rules",
        "moves": [
            {"move": m.text(cfg.board), "position": apply(cfg, pos, m).text(), "value": UNKNOWN, "plies": None, "exact": False}
            for m in moves(cfg, pos)
        ],
    }


def _parent_view(res) -> tuple[str, int | None, bool]:
    """A child's df-pn result seen from the parent's mover: loss <-> win, one ply more."""
    from solver.search.prover import RESULT_NAMES
    from solver.kernels.code import DRAW_V, LOSS_V, WIN_V

    flip = {LOSS_V: WIN_V, DRAW_V: DRAW_V, WIN_V: LOSS_V}
    name = RESULT_NAMES[(flip[res.hi], flip[res.lo])]
    if name in ("win", "loss") and res.plies is not None:
        return name, res.plies + 1, bool(res.exact)
    return name, None, name == "draw"


def proof_answer(cfg_key: dict, text: str, nodes: int, tt_bits: int = 20) -> dict:
    """df-pn on every distinct child of ``text`` (one table, ``nodes`` shared out), and the
    position's value combined from them. Runs in a worker process: plain data in and out."""
    from solver.search.prover import Prover, combine_children

    cfg = config_from_key(cfg_key)
    pos = Position(text)
    answer = rules_answer(cfg, pos)
    if pos.phase != PLAY or status(cfg, pos) != ONGOING:
        return answer
    prover = Prover(cfg, tt_bits=tt_bits)
    children: dict[str, object] = {}
    for m in answer["moves"]:
        children.setdefault(m["position"], None)
    per = max(1, nodes // max(1, len(children)))
    for child in children:
        children[child] = prover.prove(Position(child), nodes=per)
    for m in answer["moves"]:
        m["value"], m["plies"], m["exact"] = _parent_view(children[m["position"]])
    answer["moves"].sort(key=sort_key)
    root = combine_children([(m["move"], children[m["position"]]) for m in answer["moves"]], text)
    answer.update(value=root.result, plies=root.plies, exact=bool(root.exact) or root.result == "draw", source="proof")
    return answer


def finished_for(cfg: Config, pos: Position) -> str | None:
    """``win`` or ``loss`` for the side to move if the game is over, else None."""
    st = status(cfg, pos)
    return None if st == ONGOING else ("win" if st == WIN else "loss")


_FLIP = {"win": "loss", "loss": "win", "draw": "draw", "not-win": "not-loss", "not-loss": "not-win", UNKNOWN: UNKNOWN}


def book_answer(node: dict) -> dict:
    """An opening-book node (:func:`solver.search.book.book_lookup`) in the answer schema,
    its children's values turned to the side to move's view."""
    v = node.get("value") or {}
    moves_ = []
    for child in node.get("children") or []:
        cv = child.get("value") or {}
        result = _FLIP.get(cv.get("result") or UNKNOWN, UNKNOWN)
        plies = cv.get("plies")
        decided = result in ("win", "loss") and plies is not None
        moves_.append({
            "move": child["move"],
            "position": child["position"],
            "value": result,
            "plies": plies + 1 if decided else None,
            "exact": bool(cv.get("exact")) if decided else result == "draw",
        })
    moves_.sort(key=sort_key)
    return {
        "position": node["position"],
        "value": v.get("result") or UNKNOWN,
        "plies": v.get("plies"),
        "exact": bool(v.get("exact")) or v.get("result") == "draw",
        "source": "book",
        "moves": moves_,
    }
