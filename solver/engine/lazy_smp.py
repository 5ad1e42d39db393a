"""Helper threads for one search: the same root searched beside the main iteration, a ply
deeper, over the shared transposition table (lazy SMP).

The helpers fill the table with entries the main search then finds (a deeper score, a
better first move); and where a helper finished an iteration deeper than the main
thread's last, with a score that proves nothing, its move and score are the answer (a
deeper search of the same root with the same rules), as in other lazy SMP engines.
Proven scores always come from the main thread's iterations. Each helper has its own stack, move-ordering
tables and controls; the kernel runs without the GIL, so helpers take other cores.
The table is shared without locks: an entry's key is stored XOR its fields, and a torn
entry reads as absent (:mod:`solver.kernels.alphabeta`).
"""

from __future__ import annotations

import os
import threading

import numpy as np

from solver.kernels.alphabeta import (
    ABORTED, CONTEMPT, CTL_SIZE, INF, LMR_FROM, MAX_CHILDREN, MAX_PLY, NODE_LIMIT, NODES, REDUCE, STOP, new_stack, search,
)

NO_LIMIT = np.iinfo(np.int64).max
MAX_DEFAULT_THREADS = 2  # the most threads `rotary engine` takes unasked (measured on 2 cores)


def default_threads() -> int:
    """The cores this process may run on, at most :data:`MAX_DEFAULT_THREADS`."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT_THREADS))


class _Helper:
    """One helper's arrays."""

    def __init__(self) -> None:
        self.st = new_stack()
        self.ctl = np.zeros(CTL_SIZE, dtype=np.int64)
        self.killers = np.full((MAX_PLY + 2, 2), -1, dtype=np.int32)
        self.history = np.zeros((2, MAX_CHILDREN), dtype=np.int64)
        self.root_score = np.zeros(MAX_CHILDREN, dtype=np.int32)
        self.thread: threading.Thread | None = None
        self.done: tuple[int, int, list[int]] | None = None  # the deepest finished: depth, score, line


class Helpers:
    """``n`` helper threads of a :class:`~solver.engine.searcher.Searcher`."""

    def __init__(self, n: int) -> None:
        self.helpers = [_Helper() for _ in range(n)]
        self.main_depth = 0  # the depth the main thread is searching now

    def clear(self) -> None:
        """Forget the move-ordering statistics (a new game)."""
        for h in self.helpers:
            h.killers[:] = -1
            h.history[:] = 0

    def start(self, searcher, m: int, p: int, s: int, hist: np.ndarray, nhist: int) -> None:
        """Start searching ``(m, p, s)`` beside ``searcher``'s iterations, until :meth:`stop`."""
        for k, h in enumerate(self.helpers):
            h.history //= 4
            h.ctl[:] = 0
            h.ctl[CONTEMPT] = searcher.ctl[CONTEMPT]
            h.ctl[LMR_FROM] = searcher.ctl[LMR_FROM]
            h.ctl[NODE_LIMIT] = NO_LIMIT
            h.done = None
            h.thread = threading.Thread(target=self._run, args=(searcher, h, k, m, p, s, hist, nhist), daemon=True)
            h.thread.start()

    def _run(self, searcher, h: _Helper, k: int, m: int, p: int, s: int, hist: np.ndarray, nhist: int) -> None:
        depth = 0
        while not h.ctl[STOP]:
            # a ply or two beyond the main iteration, the helpers spread over both
            depth = max(depth + 1, self.main_depth + 1 + (k & 1))
            if depth > MAX_PLY // 2:
                break
            h.ctl[REDUCE] = searcher.ctl[REDUCE]
            raw = search(np.uint64(m), np.uint64(p), s, depth, -INF, INF, searcher.geo, searcher.zones, searcher.w,
                   searcher.tt, h.st, hist, nhist, h.ctl, h.killers, h.history, False, h.root_score,
                   searcher.dbinfo, searcher.dbvals, searcher.lay)
            if h.ctl[ABORTED]:
                break
            ln = int(h.st.pvlen[0])
            if ln:
                h.done = (depth, int(raw), [int(c) for c in h.st.pv[0, :ln]])

    def stop(self) -> None:
        """Ask every helper to stop (any thread)."""
        for h in self.helpers:
            h.ctl[STOP] = 1

    def join(self) -> None:
        """Stop the helpers and wait for them (each leaves within 1024 nodes)."""
        self.stop()
        for h in self.helpers:
            if h.thread is not None:
                h.thread.join()
                h.thread = None

    def deepest(self) -> tuple[int, int, list[int]] | None:
        """The deepest iteration a helper finished, after :meth:`join`: ``(depth, score, line)``."""
        done = [h.done for h in self.helpers if h.done is not None]
        return max(done, key=lambda d: d[0]) if done else None

    @property
    def nodes(self) -> int:
        """The nodes the helpers searched since :meth:`start`."""
        return sum(int(h.ctl[NODES]) for h in self.helpers)
