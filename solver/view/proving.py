"""The viewer's "prove" button: df-pn on every move of a position no database answers,
run in a worker process (plain data in and out), answered in the one schema
(:func:`solver.analysis.proof_answer`, ``source: "proof"``)."""

from __future__ import annotations

from solver.analysis import proof_answer, rules_answer
from solver.game.config import config_from_key
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, apply, moves, status


def prove_moves(cfg_key: dict, text: str, nodes: int, tt_bits: int = 20) -> dict:
    """Prove every distinct child of ``text`` with one df-pn table (``nodes`` shared out
    among them) and combine them into the position's value; each move gets its child's
    value from the side to move's view. Positions outside the rotation phase, and finished
    ones, get the rules' answer."""
    from solver.search.prover import Prover, combine_children

    cfg = config_from_key(cfg_key)
    pos = Position(text)
    if pos.phase != PLAY or status(cfg, pos) != ONGOING:
        return rules_answer(cfg, pos)
    prover = Prover(cfg, tt_bits=tt_bits)
    played = [(m.text(cfg.board), apply(cfg, pos, m)) for m in moves(cfg, pos)]
    distinct = list(dict.fromkeys(child for _, child in played))
    per = max(1, nodes // len(distinct))
    proved = {child: prover.prove(child, nodes=per) for child in distinct}
    children = [(mv, proved[child]) for mv, child in played]
    return proof_answer(cfg, pos, combine_children(children, text), children)
