"""Task results of the solvers' executors (:func:`solver.retro.pool.completed`)."""

from __future__ import annotations

import gc
import threading
from concurrent.futures import ThreadPoolExecutor

from solver.retro.pool import InlineExecutor, completed

LIVE: set[int] = set()
LOCK = threading.Lock()


class Result:
    """A task's result that counts how many of its kind are alive."""

    def __init__(self, n: int):
        self.n = n
        with LOCK:
            LIVE.add(n)

    def __del__(self):
        with LOCK:
            LIVE.discard(self.n)


def make(n: int) -> Result:
    return Result(n)


def test_every_result_once():
    with ThreadPoolExecutor(3) as run:
        got = sorted(r.n for r in completed(run, make, [(i,) for i in range(50)]))
    assert got == list(range(50))
    got = sorted(r.n for r in completed(InlineExecutor(), make, [(i,) for i in range(5)]))
    assert got == list(range(5))


def test_results_are_let_go_as_they_are_taken():
    """A consumer that drops each result: once it has taken k of n, at most the n - k
    not yet taken and the last one are alive (a list of every future kept all n alive)."""
    LIVE.clear()
    n, alive = 200, []
    with ThreadPoolExecutor(2) as run:
        for k, r in enumerate(completed(run, make, [(i,) for i in range(n)]), 1):
            del r
            gc.collect()
            alive.append(len(LIVE))
            assert alive[-1] <= n - k + 1, (k, alive[-1])  # + the one the generator holds until the next
    assert alive[-1] <= 1
