"""The draw closure on a prover's threads (:mod:`solver.kernels.closure_par`).

    proven = close_on_threads(prover, k1, k2, limit, stop)

The region grows in chunks of ``CHUNK`` nodes a thread: each thread expands its share of
a chunk (``nogil``), then one merges them in node order; the attractor and the stores
follow on one thread. ``stop[0]`` set by another thread (a deadline, Ctrl-C) leaves the
closure between chunks, proving nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from solver.kernels import closure_par as cp

CHUNK = 2048  # nodes a thread expands between merges (its buffer: CHUNK * maxc children)


class ClosureThreads:
    """A pool of ``n`` threads and their expansion buffers, kept for a prover's closures."""

    def __init__(self, n: int, max_children: int):
        self.n = n
        self.pool = ThreadPoolExecutor(max_workers=n - 1) if n > 1 else None
        self.exps = [cp.new_exp(CHUNK, max_children) for _ in range(n)]
        self.run = np.zeros(5, dtype=np.int64)


def close_on_threads(prover, k1, k2, limit: int, stop: np.ndarray, th: ClosureThreads) -> int:
    """Grow the closure's region from the root key on ``th``'s threads and conclude; the
    number of nodes proven (0 when stopped)."""
    ctx, cl, run = prover.ctx, prover.closure_buffers(), th.run
    if not cp.begin(ctx, cl, np.uint64(k1), np.uint64(k2), limit, run):
        return 0
    lo = 0
    while lo < run[cp.NN]:
        if stop[0]:
            cp.abandon(cl, run)
            return 0
        if run[cp.FULL]:
            hi = int(run[cp.NN])
            cp.merge(cl, lo, hi, th.exps[0], run)  # full: every node left may win, none expanded
            break
        hi = int(min(run[cp.NN], lo + th.n * CHUNK))
        size = -(-(hi - lo) // th.n)
        parts = [(a, min(a + size, hi)) for a in range(lo, hi, size)]
        futures = [th.pool.submit(cp.expand, ctx, cl, a, b, th.exps[t]) for t, (a, b) in enumerate(parts[1:], 1)]
        cp.expand(ctx, cl, parts[0][0], parts[0][1], th.exps[0])
        for f in futures:
            f.result()
        for t, (a, b) in enumerate(parts):
            cp.merge(cl, a, b, th.exps[t], run)
        lo = hi
    return int(cp.finish(ctx, cl, run, prover.closure_stats))
