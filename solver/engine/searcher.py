"""Iterative deepening over the alpha-beta kernel: time, node and depth limits, stopping.

:class:`Searcher` holds one configuration's kernel arrays (board, evaluation weights,
transposition table, move-ordering tables) across searches, as an engine keeps its hash
between moves. :meth:`Searcher.rotation` searches a rotation-phase position;
:meth:`Searcher.children` scores given child positions (the setup game's handover
phases use it, see :mod:`solver.engine.engine`).

Thread safety: one search at a time per Searcher. :meth:`Searcher.stop` may be called
from any thread: the kernel runs without the GIL and looks at the flag every 1024 nodes.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Sequence

import numpy as np

from solver.engine.score import Info, Limit, Score
from solver.engine.weights import default_weights
from solver.game.config import Config
from solver.game.position import Move
from solver.index import build_geo
from solver.kernels.alphabeta import (
    ABORTED, CONTEMPT, CTL_SIZE, DB_HITS, INF, LMR_FROM, MATE_BOUND, MAX_CHILDREN, MAX_PLY, NODE_LIMIT, NODES, REDUCE, SELDEPTH, STOP,
    new_stack, new_tables, position_hash, search,
)
from solver.kernels.evaluate import zone_masks
from solver.kernels.leaves import DbInfo

InfoCallback = Callable[[Info], None]
NO_LIMIT = np.iinfo(np.int64).max
MAX_DEPTH = 64
DEFAULT_CONTEMPT = 20  # hundredths of a logit a repetition costs the searching side
ASPIRATION = 40  # half the first window around the previous iteration's score, hundredths of a logit
ASPIRATION_DEPTH = 4  # iterations from this depth on start with a window
# late-move reductions start at this child slot on boards smaller than hex(4): their
# searches reach deep enough that a reduced late move is most often where a long win or
# loss hides (hex(3) 4v4 at 100 ms a move kept the exact value in 98 % of positions with
# the reductions from slot 3, 99 % from slot 5; on hex(4) slot 5 lost strength)
SMALL_BOARD_LMR_FROM = 5


class Searcher:
    """The kernel's state for one configuration; see the module docstring."""

    def __init__(self, cfg: Config, tt_bits: int = 22, weights: np.ndarray | None = None,
                 contempt: int = DEFAULT_CONTEMPT, db=None, reduce: bool = True):
        """``db``: a database of these rules whose positions the search takes as exact
        leaves (its values are read into memory: 2 bytes a position). ``reduce``: search
        with late-move reductions, the null move and aspiration windows (False: the plain
        full-width search)."""
        self.cfg = cfg
        self.contempt = contempt
        self.reduce = reduce
        self.full_width = True  # the last rotation's answer came from a search without reductions
        if db is not None:
            from solver.db.compact_reader import require_distances

            require_distances(db, "search leaves")
            self.dbinfo = DbInfo(True, cfg.variable_material, int(db.material[0]), int(db.material[1]))
            self.dbvals, self.lay = db.values(), db.layout.lay
        else:
            from solver.index import Layout

            self.dbinfo = DbInfo(False, False, 0, 0)
            self.dbvals, self.lay = np.zeros(1, dtype=np.uint16), Layout(cfg, (0, 0)).lay
        self.geo = build_geo(cfg)
        self.zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
        self.w = default_weights(cfg) if weights is None else np.asarray(weights, dtype=np.float64)
        self.tt = new_tables(tt_bits)
        self.st = new_stack()
        self.ctl = np.zeros(CTL_SIZE, dtype=np.int64)
        self.killers = np.full((MAX_PLY + 2, 2), -1, dtype=np.int32)
        self.history = np.zeros((2, MAX_CHILDREN), dtype=np.int64)
        self.root_score = np.zeros(MAX_CHILDREN, dtype=np.int32)
        self._timer: threading.Timer | None = None

    # ----------------------------------------------------------------- control

    @property
    def db_hits(self) -> int:
        """Positions of the last search answered by the database."""
        return int(self.ctl[DB_HITS])

    def stop(self) -> None:
        """Ask the running search to stop as soon as it can (any thread)."""
        self.ctl[STOP] = 1

    def clear(self) -> None:
        """Forget the transposition table and the move-ordering statistics (a new game)."""
        self._clear_table()
        self.killers[:] = -1
        self.history[:] = 0

    def _start(self, limit: Limit, reduce: bool = False) -> float:
        self.history >>= 2  # older statistics count less
        return self.begin(limit, reduce)

    def begin(self, limit: Limit, reduce: bool = False) -> float:
        """Arm the kernel's controls for a search under ``limit`` (a timer sets the stop
        flag at ``movetime``); the start time. Every search ends with :meth:`end`."""
        self.ctl[:] = 0
        self.ctl[CONTEMPT] = self.contempt
        self.ctl[REDUCE] = int(reduce)
        self.ctl[LMR_FROM] = SMALL_BOARD_LMR_FROM if self.cfg.board.n < 4 else 0
        self.ctl[NODE_LIMIT] = NO_LIMIT if limit.nodes is None or limit.infinite else max(int(limit.nodes), 1)
        started = time.monotonic()
        if limit.movetime_ms is not None and not limit.infinite:
            self._timer = threading.Timer(max(limit.movetime_ms, 1) / 1000.0, self.stop)
            self._timer.daemon = True
            self._timer.start()
        return started

    def end(self) -> None:
        """The timer of :meth:`begin` cancelled."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _hist(self, history: Sequence[tuple[int, int, int]]) -> np.ndarray:
        out = np.zeros(max(len(history), 1), dtype=np.uint64)
        for i, (m, p, s) in enumerate(history):
            out[i] = position_hash(np.uint64(m), np.uint64(p), s)
        return out

    def _run(self, m: int, p: int, s: int, depth: int, alpha: int, beta: int, hist: np.ndarray, nhist: int,
             full: bool) -> int:
        return int(search(np.uint64(m), np.uint64(p), s, depth, alpha, beta, self.geo, self.zones, self.w, self.tt,
                          self.st, hist, nhist, self.ctl, self.killers, self.history, full, self.root_score,
                          self.dbinfo, self.dbvals, self.lay))

    # ----------------------------------------------------------------- searches

    def rotation(self, m: int, p: int, s: int, limit: Limit, history: Sequence[tuple[int, int, int]] = (),
                 on_info: InfoCallback | None = None, rank_all: bool = False) -> tuple:
        """Search the rotation-phase position ``(m, p, s)`` (mover's view, not over).

        ``history``: the game's earlier positions as ``(mover, opponent, side)``, for
        repetitions. Returns ``(move code, Score, depth, nodes, ms, pv codes, ranked)`` where
        ``ranked`` is ``[(code, Score)]`` best first for every move when ``rank_all``
        (each root move searched with the full window), else None.
        """
        hist = self._hist(history)
        reduce = self.reduce
        started = self._start(limit, reduce)
        best_code, best_raw, done_depth, pv, ranked = -1, 0, 0, [], None
        kept = None  # a proven answer of a reduced search, while a full-width one looks for the distance
        try:
            max_depth = min(limit.depth or MAX_DEPTH, MAX_DEPTH)
            depth = 1
            while depth <= max_depth:
                raw = self._iteration(m, p, s, depth, best_raw if reduce and done_depth else None, hist, len(history),
                                      rank_all)
                n = int(self.st.nch[0])
                if self.ctl[ABORTED]:
                    # a root move finished in the unfinished iteration that beats the
                    # previous best was searched as deep: take it
                    if not rank_all and n:
                        scores = self.root_score[:n]
                        j = int(np.argmax(scores))
                        if scores[j] > -INF - 1 and int(self.st.cmv[0, j]) != best_code and scores[j] > best_raw \
                                and best_code >= 0:
                            best_code, best_raw = int(self.st.cmv[0, j]), int(scores[j])
                            pv = [best_code]
                    break
                done_depth = depth
                best_raw = raw
                ln = int(self.st.pvlen[0])
                pv = [int(c) for c in self.st.pv[0, :ln]]
                if ln:
                    best_code = pv[0]
                elif n:
                    best_code = int(self.st.cmv[0, 0])
                if rank_all and n:
                    order = sorted(range(n), key=lambda j: -int(self.root_score[j]))
                    ranked = [(int(self.st.cmv[0, j]), Score.from_search(int(self.root_score[j]))) for j in order]
                    best_code, best_raw = ranked[0][0], ranked[0][1].raw()
                    if not pv or pv[0] != best_code:
                        pv = [best_code]
                ms = int((time.monotonic() - started) * 1000)
                if on_info is not None:
                    on_info(Info(depth, int(self.ctl[SELDEPTH]), Score.from_search(best_raw), int(self.ctl[NODES]),
                                 ms, [str(c) for c in pv]))
                proven = abs(best_raw) > MATE_BOUND
                if proven and reduce:
                    # a proven result of a reduced search is true, but a faster win (or a
                    # longer defence) may hide in a reduced line: search again at full width
                    # for the distance (it takes the reduced search's moves from the table,
                    # not its scores)
                    kept = (best_code, best_raw, pv, ranked, done_depth)
                    reduce = False
                    self.ctl[REDUCE] = 0
                    depth, done_depth = 1, 0
                    continue
                if proven and (MATE_BOUND + 1000 - abs(best_raw)) <= depth:
                    break  # a win or loss no deeper search can shorten
                if n == 1 and limit.depth is None and not limit.infinite and limit.nodes is None:
                    break  # one legal move: nothing to choose
                if limit.movetime_ms is not None and not limit.infinite:
                    spent = (time.monotonic() - started) * 1000
                    if spent > 0.6 * limit.movetime_ms:
                        break  # the next iteration would not finish in time
                depth += 1
        finally:
            self.end()
        self.full_width = not reduce
        if kept is not None and not abs(best_raw) > MATE_BOUND:
            # the full-width search found no proof in time: the reduced search's proven answer
            best_code, best_raw, pv, ranked, done_depth = kept
            self.full_width = False
        ms = int((time.monotonic() - started) * 1000)
        return best_code, Score.from_search(best_raw), done_depth, int(self.ctl[NODES]), ms, pv, ranked

    def _iteration(self, m: int, p: int, s: int, depth: int, guess: int | None, hist: np.ndarray, nhist: int,
                   full: bool) -> int:
        """One depth; with ``guess`` (the previous iteration's score, not proven) first in an
        aspiration window around it, widened to the side it failed on."""
        if guess is None or full or depth < ASPIRATION_DEPTH or abs(guess) > MATE_BOUND:
            return self._run(m, p, s, depth, -INF, INF, hist, nhist, full)
        lo, hi = guess - ASPIRATION, guess + ASPIRATION
        while True:
            raw = self._run(m, p, s, depth, lo, hi, hist, nhist, full)
            if self.ctl[ABORTED]:
                return raw
            if raw <= lo and lo > -INF:
                lo = -INF
            elif raw >= hi and hi < INF:
                hi = INF
            else:
                return raw

    def _clear_table(self) -> None:
        for a in self.tt:
            a[:] = 0
        self.tt.move[:] = -1

    def children(self, kids: Sequence[tuple[int, int, int]], limit: Limit, on_info: InfoCallback | None = None) \
            -> tuple[list[Score], int, int, int]:
        """Scores of the given positions for the side to move *there* (mover's view
        ``(m, p, s)``), searched with iterative deepening as one budget; finished positions
        are scored at once. Returns ``(scores, depth, nodes, ms)``."""
        hist = self._hist(())
        started = self._start(limit)
        scores: list[Score | None] = [None] * len(kids)
        depth_done = 0
        try:
            for depth in range(0, min(limit.depth or MAX_DEPTH, MAX_DEPTH)):
                round_scores = []
                for m, p, s in kids:
                    raw = self._run(m, p, s, depth, -INF, INF, hist, 0, False)
                    if self.ctl[ABORTED]:
                        break
                    round_scores.append(Score.from_search(raw))
                if self.ctl[ABORTED]:
                    break
                scores = round_scores
                depth_done = depth + 1
                if on_info is not None:
                    best = max(scores, key=lambda sc: -sc.raw()) if scores else Score("cp", 0)
                    on_info(Info(depth_done, int(self.ctl[SELDEPTH]), best.negate_after_move(), int(self.ctl[NODES]),
                                 int((time.monotonic() - started) * 1000), []))
                if limit.movetime_ms is not None and not limit.infinite:
                    if (time.monotonic() - started) * 1000 > 0.5 * limit.movetime_ms:
                        break
                if all(sc.proven for sc in scores):
                    break
        finally:
            self.end()
        if scores and scores[0] is None:  # not even depth 0 finished: the static evaluation
            scores = [Score.from_search(self.static(m, p, s)) for m, p, s in kids]
        return scores, depth_done, int(self.ctl[NODES]), int((time.monotonic() - started) * 1000)

    def static(self, m: int, p: int, s: int) -> int:
        """The depth-0 score of ``(m, p, s)``: the evaluation, or a win in 1 where the mover
        can fill the centre at once (the kernel's integer)."""
        self.ctl[:] = 0
        self.ctl[CONTEMPT] = self.contempt
        self.ctl[NODE_LIMIT] = NO_LIMIT
        return self._run(m, p, s, 0, -INF, INF, self._hist(()), 0, False)


def move_of_code(code: int) -> Move:
    """The rotation of a kernel move code ``point * 6 + k``."""
    return Move.rotate(code // 6, code % 6)
