"""Iterative deepening over the setup kernel (:mod:`solver.kernels.setup_search`).

:class:`SetupSearcher` searches a placement position of a ``setup`` game: the placements
to a growing depth, and where they complete the setup, the offer, the pick and the first
rotations, searched by the rotation kernel with the :class:`~solver.engine.searcher.Searcher`'s
tables (so what the setup search learns of the first rotations is there when the game
reaches them). It honours the same limits as the rotation search: ``movetime`` (a timer
stops the kernel; an iteration is not begun once 40 % of the time is spent), ``nodes``
and ``depth``.

Thread safety: one search at a time; :meth:`Searcher.stop` stops it from any thread.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from solver.engine.score import Info, Limit, Score
from solver.engine.searcher import Searcher
from solver.game.config import Config
from solver.kernels.alphabeta import INF, MATE_BOUND, NODES, SELDEPTH, STOP
from solver.kernels.setup_search import (
    ABORTED_OUT, BEST_MOVE, BEST_SCORE, LAST, OFFER, OUT_SIZE, centre_priority, new_setup_stack, new_setup_tables,
    setup_search,
)

MAX_DEPTH = 64
NEXT_ITERATION = 0.4  # an iteration is begun only while less than this share of movetime is spent


class SetupSearcher:
    """The placement search of one ``setup`` configuration; see the module docstring."""

    def __init__(self, cfg: Config, searcher: Searcher, tt_bits: int = 18):
        if cfg.setup is None or cfg.balls is None:
            raise ValueError("the setup search needs a setup game with a fixed number of balls")
        self.cfg = cfg
        self.searcher = searcher
        board = cfg.board
        self.reading = OFFER if cfg.setup == "offer" else LAST
        self.free = np.uint64(board.full & ~board.centre_mask)
        self.prio = centre_priority(board.neighbours, board.centre_mask)
        self.tt = new_setup_tables(tt_bits)
        self.stack = new_setup_stack()
        self.history = np.zeros((2, board.size), dtype=np.int64)
        self.out = np.zeros(OUT_SIZE, dtype=np.int64)
        self.rscore = np.zeros(board.size, dtype=np.int32)

    def clear(self) -> None:
        """Forget the table and the move statistics (a new game)."""
        self.tt.key[:] = 0
        self.tt.move[:] = -1
        self.history[:] = 0

    def _run(self, x: int, o: int, turn: int, depth: int, rank_all: bool) -> int:
        s = self.searcher
        return int(setup_search(np.uint64(x), np.uint64(o), turn, self.cfg.balls, self.reading, depth, -INF, INF,
                                self.free, self.prio, s.geo, s.zones, s.w, self.tt, self.stack, self.history, self.out,
                                rank_all, self.rscore, s.tt, s.st, s.ctl, s.killers, s.history, s.root_score,
                                s.dbinfo, s.dbvals, s.lay))

    def placement(self, x: int, o: int, turn: int, limit: Limit, on_info: Callable[[Info], None] | None = None,
                  rank_all: bool = False) -> tuple:
        """Search the placement position (light ``x``, dark ``o``, ``turn`` to place).

        Returns ``(point, Score, depth, nodes, ms, pv points, ranked)``: the point to place
        on, the placer's score, the depth finished (0: none; the point then comes from the
        unfinished first iteration, or is the free point nearest the centre); ``ranked``:
        with ``rank_all``, every placement ``(point, Score)`` best first, each searched with
        the full window (slower), else None.
        """
        ctl = self.searcher.ctl
        self.history >>= 2  # older statistics count less
        started = self.searcher.begin(limit, reduce=False)  # the rotations at the end of the setup: full width
        best, raw, done, pv, ranked = -1, 0, 0, [], None
        try:
            for depth in range(1, min(limit.depth or MAX_DEPTH, MAX_DEPTH) + 1):
                r = self._run(x, o, turn, depth, rank_all)
                if self.out[ABORTED_OUT]:
                    # a root move finished at this depth beats or is the one searched first
                    if self.out[BEST_MOVE] >= 0 and self.out[BEST_SCORE] > -INF:
                        best, raw = int(self.out[BEST_MOVE]), int(self.out[BEST_SCORE])
                        pv = [best]
                    break
                done, raw, best = depth, r, int(self.out[BEST_MOVE])
                ln = int(self.stack.pvlen[0])
                pv = [int(q) for q in self.stack.pv[0, :ln]] or [best]
                if rank_all:
                    done_at = [q for q in range(len(self.rscore)) if self.rscore[q] > -INF - 1]
                    ranked = sorted(((q, Score.from_search(int(self.rscore[q]))) for q in done_at),
                                    key=lambda qs: -qs[1].raw())
                ms = int((time.monotonic() - started) * 1000)
                if on_info is not None:
                    on_info(Info(depth, int(ctl[SELDEPTH]), Score.from_search(raw), int(ctl[NODES]), ms,
                                 [str(q) for q in pv]))
                if abs(raw) > MATE_BOUND and depth >= self._left(x, o):
                    break  # proven, with every placement searched
                if depth >= self._left(x, o) + 8:
                    break  # far past the end of the setup: the rotation search decides now
                if limit.movetime_ms is not None and not limit.infinite:
                    if (time.monotonic() - started) * 1000 > NEXT_ITERATION * limit.movetime_ms:
                        break
        finally:
            self.searcher.end()
            ctl[STOP] = 0
        if best < 0:  # not even the first move of depth 1 finished
            best = self._nearest_free(x, o, turn)
            pv = [best]
            raw = 0
        if rank_all and ranked is None:
            ranked = [(best, Score.from_search(raw))]
        ms = int((time.monotonic() - started) * 1000)
        return best, Score.from_search(raw), done, int(ctl[NODES]), ms, pv, ranked

    def _left(self, x: int, o: int) -> int:
        """Placements still to make."""
        return 2 * self.cfg.balls - x.bit_count() - o.bit_count()

    def _nearest_free(self, x: int, o: int, turn: int) -> int:
        banned = self.cfg.board.centre_mask | (self.cfg.traps_o if turn == 0 else self.cfg.traps_x)
        free = [q for q in range(self.cfg.board.size) if not ((x | o | banned) >> q & 1)]
        return max(free, key=lambda q: int(self.prio[q]))
