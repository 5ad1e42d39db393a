"""The draw closure on several threads (:mod:`solver.search.closure_threads`) against the
one-thread closure (:func:`solver.kernels.closure.close`): on the same table, the same
region, the same disproofs stored, whatever the chunk boundaries and buffer limits."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from solver.game.config import make_config
from solver.game.position import Position
from solver.search import closure_threads
from solver.search.closure_threads import ClosureThreads
from solver.search.prover import Prover

DRAW = ".../..../..o../x....x/o..../..ox x"  # hex3 3v3 edge: a draw the closure proves


def _twins(nodes: int) -> tuple[Prover, Prover, Position]:
    """Two provers with the same table: a partial search of DRAW with the closure on (so
    the table holds open regions and stored disproofs), copied into the second."""
    cfg = make_config("hex3", 3, edge=True)
    pos = Position(DRAW)
    a, b = Prover(cfg, tt_bits=18), Prover(cfg, tt_bits=18)
    a.prove(pos, nodes=nodes, refine_nodes=0)
    for f in a.tt._fields:
        getattr(b.tt, f)[:] = getattr(a.tt, f)
    return a, b, pos


def _same_tables(a: Prover, b: Prover) -> bool:
    return all(np.array_equal(getattr(a.tt, f), getattr(b.tt, f)) for f in a.tt._fields)


@pytest.mark.parametrize("limit", [300, 5_000, 10**7])  # the limit reached early, late, never
@pytest.mark.parametrize("threads, chunk", [(2, 2048), (2, 7), (3, 1)])
def test_threads_grow_the_one_thread_region(monkeypatch, limit, threads, chunk):
    monkeypatch.setattr(closure_threads, "CHUNK", chunk)
    a, b, pos = _twins(60_000)
    grown = full = 0
    a.closure_stats[:] = 0  # the partial search's closures counted there
    for q in (0, 1):
        k1, k2 = a.key(pos.mover, pos.opponent, pos.turn, q)
        a.close(k1, k2, limit)
        b.close(k1, k2, limit, threads=ClosureThreads(threads, b.maxc))
        assert list(a.closure_stats) == list(b.closure_stats)  # nodes, edges, full, proven
        grown = max(grown, int(a.closure_stats[0]))
        full = max(full, int(a.closure_stats[2]))
        assert _same_tables(a, b)
    assert grown > 50  # a real region, not just the root
    assert full == (limit < 10**7)  # the buffers' limit met by the small limits only


def test_threads_leave_when_told_to_stop():
    a, b, pos = _twins(60_000)
    k1, k2 = b.key(pos.mover, pos.opponent, pos.turn, 1)
    before = [np.copy(getattr(b.tt, f)) for f in b.tt._fields]
    stop = np.array([1, 0], dtype=np.int64)
    assert not b.close(k1, k2, 10**7, stop, ClosureThreads(2, b.maxc))
    assert b.closure_stats[3] == 0
    assert all(np.array_equal(x, getattr(b.tt, f)) for x, f in zip(before, b.tt._fields))
    # the marks were cleared: a closure after it is the one-thread closure's
    a.close(k1, k2, 10**7)
    b.close(k1, k2, 10**7, threads=ClosureThreads(2, b.maxc))
    assert _same_tables(a, b)


def test_the_kernels_first_call_is_not_counted_as_the_closures_time(monkeypatch):
    """A first call compiles the closure's kernel (or loads it from numba's cache): seconds
    that, counted against the closure's share of the search's time, held it off for most
    of a short proof. Later calls are counted."""
    from solver.search import prover as prover_mod

    real = prover_mod.closure

    class Compiling:  # the kernel as numba shows it: no signature before its first call
        signatures: list = []

        def __call__(self, *args):
            time.sleep(0.2)
            Compiling.signatures = ["compiled"]
            return real.close(*args)

    _, b, pos = _twins(20_000)
    monkeypatch.setattr(prover_mod, "closure", SimpleNamespace(close=Compiling(), new_closure=real.new_closure))
    k1, k2 = b.key(pos.mover, pos.opponent, pos.turn, 1)
    b.closure_seconds = 0.0
    b.close(k1, k2, 1_000)
    assert b.closure_seconds == 0.0
    b.close(k1, k2, 1_000)
    assert b.closure_seconds >= 0.2
