"""What stopped a proof short of an exact answer, in words (``ProofResult.stopped``).

A search is stopped early by its node budget (:data:`NODES`), its time (:data:`TIME`) or,
when every line it had left was cut at the path-length limit, by that limit (:data:`PATH`;
:mod:`solver.kernels.dfpn` cuts a line there instead of giving up). A win or loss whose
distance is still a bound was stopped in the distance refinement by nodes or time. The
sentence starts with the limit (``node budget``, ``time limit``, ``path-length limit``,
``distance refinement``), as docs/answer.schema.json says; a full table adds a note.
"""

from __future__ import annotations

from typing import Callable

from solver.kernels.code import LOSS_V, WIN_V

NODES, TIME, PATH = "nodes", "time", "path"


def limit_text(stop: str, nodes: int | None, seconds: float | None, maxd: int) -> str:
    """A limit in words: ``node budget of 1,000,000 nodes spent`` and the like."""
    if stop == NODES:
        return "node budget spent" if nodes is None else f"node budget of {nodes:,} nodes spent"
    if stop == TIME:
        return "time limit reached" if seconds is None else f"time limit of {seconds:g} s reached"
    return f"path-length limit: every line left was cut at {maxd:,} plies"


def settled(res, question: str) -> bool:
    """Whether ``question`` ("win": does the mover win? "loss": does he lose?) is answered
    in the result ``res`` (its side of the value interval is closed)."""
    return res.hi < WIN_V if question == "win" else res.lo > LOSS_V


def stop_text(res, why: dict[str, str], side: str, nodes: int | None, seconds: float | None, maxd: int,
              fill: Callable[[], float], bits: int) -> str | None:
    """Why the result ``res`` is short of an exact answer, in one sentence; None when it is
    not. ``why`` maps each question searched to what stopped it (``NODES``, ``TIME``,
    ``PATH``; absent: settled), ``side`` is the mover (x or o), ``nodes`` and ``seconds``
    the budget, ``maxd`` the path-length limit; ``fill()`` the share of the table in use
    and ``bits`` its size: a table 90% full replaces results, a larger one may get further."""
    parts = []
    if not res.resolved:
        asked = {"win": f"'does {side} win?'", "loss": f"'does {side} lose?'"}
        for stop in (NODES, TIME, PATH):
            qs = [asked[q] for q in ("win", "loss") if why.get(q) == stop and not settled(res, q)]
            if qs:
                parts.append(f"{limit_text(stop, nodes, seconds, maxd)} before {' and '.join(qs)} "
                             f"{'was' if len(qs) == 1 else 'were'} settled")
    elif res.plies is not None and not res.exact:
        stop = res.extra.get("refine_stop", NODES)
        parts.append(f"distance refinement: {limit_text(stop, nodes, seconds, maxd)} with the distance "
                     f"between {res.lower or 0} and {res.plies} plies")
    if not parts:
        return None
    share = fill()
    if share >= 0.9:
        parts.append(f"the table is {share:.0%} full (2^{bits} entries; a larger --tt-bits keeps more results)")
    return "; ".join(parts)
