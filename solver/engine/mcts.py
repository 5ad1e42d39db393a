"""MCTS-Solver as an engine: :class:`MctsSearcher`, a drop-in for :class:`~solver.engine.searcher.Searcher`.

:meth:`MctsSearcher.rotation` grows a tree (:mod:`solver.kernels.mcts`) for the given
time, iterations or depth and answers with the same tuple as
:meth:`Searcher.rotation <solver.engine.searcher.Searcher.rotation>`, so that a player or a
match runner can use either engine. The move chosen: the fastest proven win if the root is
won; else the most visited child that is not a proven loss (ties: the better value); if
every move loses, the slowest loss. The score: the proven result, else the chosen child's
mean value as hundredths of a logit.

With ``reuse`` (the default) the searcher keeps its last tree: a search of a position one
or two plies below the last root (the reply to the move it chose, say) starts from that
subtree, copied into a second set of arrays, as an alpha-beta engine keeps its hash
table between moves. :meth:`clear` forgets it.

Thread safety: one search at a time per MctsSearcher; :meth:`stop` from any thread (the
kernel runs without the GIL and looks at the flag every few iterations).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Sequence

import numpy as np

from solver.engine.score import Limit, Score
from solver.engine.weights import default_weights
from solver.game.config import Config
from solver.game.values import LOSS, WIN
from solver.index import build_geo
from solver.kernels.alphabeta import position_hash
from solver.kernels.evaluate import zone_masks
from solver.kernels.mcts import (
    CTL_SIZE, ITER_LIMIT, ITERS, LOSS_P, MAXDEPTH, NODES, STOP, UNKNOWN_P, WIN_P, default_params, new_tree, reroot,
    search,
)

NO_LIMIT = np.iinfo(np.int64).max
CP_CLAMP = 20000  # the evaluation's own bound
DEPTH_ROUND = 256


class MctsSearcher:
    """The kernel's arrays for one configuration; see the module docstring.

    ``nodes_cap``: rows of the tree (about 53 bytes each; once a search fills them its tree
    stops growing).
    ``params``: keyword arguments of :func:`solver.kernels.mcts.default_params`.
    """

    def __init__(self, cfg: Config, nodes_cap: int = 1 << 21, weights: np.ndarray | None = None, reuse: bool = True,
                 **params):
        self.cfg = cfg
        self.geo = build_geo(cfg)
        self.zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
        self.w = default_weights(cfg) if weights is None else np.asarray(weights, dtype=np.float64)
        self.tree = new_tree(max(int(nodes_cap), 2))
        self._spare = new_tree(max(int(nodes_cap), 2)) if reuse else None
        self.prm = default_params(**params)
        self.ctl = np.zeros(CTL_SIZE, dtype=np.int64)
        self._timer: threading.Timer | None = None
        self._root: tuple[int, int, int] | None = None  # the last search's root, while its tree is kept

    def stop(self) -> None:
        """Ask the running search to stop as soon as it can (any thread)."""
        self.ctl[STOP] = 1

    def clear(self) -> None:
        """Forget the last search's tree (a new game)."""
        self._root = None
        self.ctl[:] = 0

    def _reuse(self, m: int, p: int, s: int) -> bool:
        """Move the last tree's subtree of ``(m, p, s)`` — one or two plies below its root,
        expanded — to the root of the tree; False (a fresh tree) if there is none."""
        if self._spare is None or self._root is None:
            return False
        t = self.tree
        level = [0]
        for ply in (1, 2):
            level = [c for node in level for c in self._children(node)]
            if (self._root[2] + ply) & 1 != s:
                continue
            for c in level:
                if int(t.m[c]) == m and int(t.p[c]) == p and t.first[c] >= 0:
                    reroot(t, self._spare, c, self.ctl)
                    self.tree, self._spare = self._spare, t
                    return True
        return False

    def rotation(self, m: int, p: int, s: int, limit: Limit, history: Sequence[tuple[int, int, int]] = (),
                 on_info=None, rank_all: bool = False) -> tuple:
        """Search the rotation-phase position ``(m, p, s)`` (mover's view, not over).

        ``history``: the game's earlier positions ``(mover, opponent, side)``, each a draw
        if the search meets it again. ``limit.nodes`` counts iterations; ``limit.depth``
        ends the search once the most visited line is that deep. Returns ``(move code,
        Score, depth, iterations, ms, pv codes, None)``; ``on_info`` and ``rank_all`` are
        accepted for Searcher's interface and ignored.
        """
        hist = np.zeros(max(len(history), 1), dtype=np.uint64)
        for i, (hm, hp, hs) in enumerate(history):
            hist[i] = position_hash(np.uint64(hm), np.uint64(hp), hs)
        kept = self._reuse(m, p, s)
        nodes = int(self.ctl[NODES]) if kept else 0
        self.ctl[:] = 0
        self.ctl[NODES] = nodes
        self.ctl[ITER_LIMIT] = NO_LIMIT if limit.nodes is None or limit.infinite else max(int(limit.nodes), 1)
        started = time.monotonic()
        if limit.movetime_ms is not None and not limit.infinite:
            self._timer = threading.Timer(max(limit.movetime_ms, 1) / 1000.0, self.stop)
            self._timer.daemon = True
            self._timer.start()
        try:
            if limit.depth is not None and not limit.infinite:
                self._grow_to_depth(m, p, s, limit, hist, len(history))
            else:
                self._run(m, p, s, hist, len(history))
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        self._root = (m, p, s)
        ms = int((time.monotonic() - started) * 1000)
        code, score = self._choice()
        pv = self.principal_line()
        return code, score, len(pv), int(self.ctl[ITERS]), ms, pv, None

    def _run(self, m: int, p: int, s: int, hist: np.ndarray, nhist: int) -> int:
        return int(search(np.uint64(m), np.uint64(p), s, self.geo, self.zones, self.w, self.tree, hist, nhist,
                          self.ctl, self.prm))

    def _grow_to_depth(self, m: int, p: int, s: int, limit: Limit, hist: np.ndarray, nhist: int) -> None:
        """Grow the tree in rounds of ``DEPTH_ROUND`` iterations until the most visited
        line is ``limit.depth`` long, the root is proven, or another limit ends it."""
        cap = int(self.ctl[ITER_LIMIT])
        total = 0
        while True:
            self.ctl[ITER_LIMIT] = min(DEPTH_ROUND, cap - total)
            done = self._run(m, p, s, hist, nhist)
            total += done
            if self.ctl[STOP] or self.tree.proven[0] != UNKNOWN_P or done < self.ctl[ITER_LIMIT] \
                    or total >= cap or len(self.principal_line()) >= limit.depth:
                break
        self.ctl[ITERS] = total

    # ----------------------------------------------------------------- reading the tree

    def _children(self, node: int) -> range:
        f = int(self.tree.first[node])
        return range(f, f + int(self.tree.nch[node])) if f >= 0 else range(0)

    def _best_child(self, node: int) -> int:
        """The child to play at ``node`` (see the module docstring); -1 if not expanded."""
        t = self.tree
        kids = self._children(node)
        if not kids:
            return -1
        if t.proven[node] == WIN_P:  # the fastest proven loss for the opponent
            return min((c for c in kids if t.proven[c] == LOSS_P), key=lambda c: int(t.dist[c]))
        if t.proven[node] == LOSS_P:  # the slowest loss
            return max(kids, key=lambda c: (int(t.dist[c]), int(t.visits[c])))
        open_kids = [c for c in kids if t.proven[c] == UNKNOWN_P]
        return max(open_kids, key=lambda c: (int(t.visits[c]), self._q(c)))

    def _q(self, c: int) -> float:
        """The mean value of child ``c`` for the player who moved into it."""
        t = self.tree
        if t.visits[c] > 0:
            return float(t.wsum[c]) / int(t.visits[c])
        return 1.0 / (1.0 + math.exp(int(t.ev[c]) / 100.0))

    def _choice(self) -> tuple[int, Score]:
        t = self.tree
        c = self._best_child(0)
        if t.proven[0] == WIN_P:
            return int(t.move[c]), Score(WIN, int(t.dist[0]))
        if t.proven[0] == LOSS_P:
            return int(t.move[c]), Score(LOSS, int(t.dist[0]))
        if c < 0:  # stopped before the root was expanded
            return -1, Score("cp", int(t.ev[0]))
        q = min(max(self._q(c), 1e-9), 1 - 1e-9)
        cp = int(round(100.0 * math.log(q / (1.0 - q))))
        return int(t.move[c]), Score("cp", max(-CP_CLAMP, min(CP_CLAMP, cp)))

    def principal_line(self) -> list[int]:
        """The move codes of the line of chosen children from the root (the last search)."""
        line: list[int] = []
        node = 0
        while True:
            c = self._best_child(node)
            if c < 0:
                return line
            line.append(int(self.tree.move[c]))
            node = c

    def root_stats(self) -> list[tuple[int, int, float, int, int]]:
        """``(code, visits, mean value, proven, distance)`` for every root move of the last
        search; proven is the child's: 1 won, -1 lost for the opponent, 0 open."""
        t = self.tree
        return [(int(t.move[c]), int(t.visits[c]), self._q(c), int(t.proven[c]), int(t.dist[c]))
                for c in self._children(0)]

    @property
    def max_depth(self) -> int:
        """The deepest node the last search reached."""
        return int(self.ctl[MAXDEPTH])
