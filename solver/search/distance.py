"""Exact distances: the depth-limited search "does the attacker win within n plies?".

df-pn's proof tree bounds a win's or loss's distance from above and its search from
below; :func:`refine` closes the gap by iterative deepening of the compiled search
:func:`solver.kernels.refine.win_within` (no repetition checks are needed there: the depth
bounds the tree, and repeating never shortens a win); :func:`wins_within` asks one such
question, as the proof trees of :mod:`solver.search.tree` do at every node. Both work on
a :class:`solver.search.prover.Prover`'s tables (its df-pn facts are cut-offs, and the
distance table lives as long as the prover).
"""

from __future__ import annotations

import time
from typing import Any, Protocol
import numpy as np

from solver.game.position import Position
from solver.kernels.code import DRAW_V, WIN_V
from solver.kernels.refine import new_rstack, new_rtt, win_within
from solver.search.limits import NODES, TIME


class SearchState(Protocol):
    """What these functions use of a :class:`solver.search.prover.Prover` (not imported:
    the prover imports this module)."""

    ctx: Any
    rtt: Any
    rtt_bits: int
    _rstack: Any
    maxc: int
    slice_nodes: int

    @property
    def nodes(self) -> int: ...

    def move_text(self, code: int) -> str | None: ...


def _stack(prover: SearchState, n: int) -> None:
    """Make the search's stack hold ``n`` plies: grown with n, not made for a df-pn
    distance at once (a proof tree's distance can run to thousands of plies)."""
    if prover.rtt is None:
        prover.rtt = new_rtt(prover.rtt_bits)
    if prover._rstack is None or prover._rstack.f_m.shape[0] < n + 2:
        prover._rstack = new_rstack(max(n + 2, 32), prover.maxc)


def wins_within(prover: SearchState, m: int, p: int, s: int, q: int, n: int, budget: int) -> bool | None:
    """Whether the attacker wins within ``n`` plies of the non-finished ``(m, p, s)``
    (question ``q`` as in df-pn: 0 the mover attacks, 1 he defends); None when ``budget``
    nodes did not settle it. The depth-limited search of :func:`refine`, with its table."""
    _stack(prover, n)
    out = np.zeros(1, dtype=np.int64)
    start = prover.nodes
    while True:
        left = budget - (prover.nodes - start)
        if left <= 0:
            return None
        r = win_within(prover.ctx, prover.rtt, prover._rstack, np.uint64(m), np.uint64(p), s, q, n,
                       min(left, prover.slice_nodes), out)
        if r >= 0:
            return r == 1


def refine(prover: SearchState, pos: Position, res: Any, budget: int, deadline: float | None = None) -> None:
    """Close the gap between ``res.lower`` and ``res.plies`` (a proven win or loss)
    within ``budget`` nodes: iterative deepening of the compiled depth-limited search
    :func:`solver.kernels.refine.win_within` ("does the attacker win within n plies?",
    the attacker being the mover for a win, the opponent for a loss).

    Distances of a non-finished position have a fixed parity: a win is odd, a loss even
    (the loser never ends the game himself — the null rotation is always at hand and
    lasts longer), so n runs over that parity from the lower bound up. A success at n
    makes the distance exact (every smaller n failed or was excluded by the bound); a
    failure raises ``res.lower`` to n + 2; running out of budget keeps what was shown.
    """
    if res.plies is None or res.exact or not res.resolved or res.lo == DRAW_V:
        return
    rq = 0 if res.lo == WIN_V else 1
    parity = 1 if rq == 0 else 0
    upper = int(res.plies)
    n = max(int(res.lower or 0), 1 if rq == 0 else 2)
    if n % 2 != parity:
        n += 1
    m, p, s = np.uint64(pos.mover), np.uint64(pos.opponent), pos.turn
    start = prover.nodes
    out = np.zeros(1, dtype=np.int64)
    refuting = None
    while n < upper:
        left = budget - (prover.nodes - start)
        if left <= 0 or (deadline is not None and time.monotonic() >= deadline):
            res.extra["refine_stop"] = NODES if left <= 0 else TIME
            break
        _stack(prover, n)
        # in slices, so that a deadline is seen; a cut-off iteration restarts cheaply
        # (what it completed is in the table)
        r = win_within(prover.ctx, prover.rtt, prover._rstack, m, p, s, rq, n, min(left, prover.slice_nodes), out)
        if r < 0:
            continue
        if r == 1:
            res.plies, res.lower, res.exact = n, n, True
            if rq == 0 and out[0] >= 0:
                res.best_move = prover.move_text(int(out[0]))
            elif rq == 1 and refuting is not None:
                res.best_move = refuting
            break
        res.lower = n + 2
        if rq == 1 and out[0] >= 0:
            refuting = prover.move_text(int(out[0]))  # survives beyond n: the slowest loss if n + 2 wins
        n += 2
    else:
        if upper % 2 == parity:  # every shorter distance of that parity is excluded
            res.lower, res.exact = upper, True
            if rq == 1 and refuting is not None:
                res.best_move = refuting
    res.extra["refine_nodes"] = res.extra.get("refine_nodes", 0) + prover.nodes - start
