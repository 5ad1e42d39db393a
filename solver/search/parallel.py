"""df-pn on several threads over one shared table: :meth:`solver.search.prover.Prover.search`
for ``Prover(cfg, threads=N)``.

    prover = Prover(cfg, threads=2)          # rotary prove POS --threads 2
    prover.prove(pos, nodes=5_000_000)       # the same answers as one thread, sooner

Each thread runs the compiled search (:func:`solver.kernels.dfpn.dfpn_thread`, ``nogil``) on
the same root with its own stack, counters and path, in chunks of at most ``slice_nodes``
nodes; the table is shared without locks (each record checked against its key,
:mod:`solver.kernels.table`) and
the threads spread over the tree by virtual proof numbers (:mod:`solver.kernels.shared`).
A thread that settles the root sets the stop flag and every thread leaves at its next node.

The draw closure runs as in one thread (at doubling node counts, while its work is no more
than the searches', all threads' counted), on every thread: the searches leave at their next
node, the main thread grows the closure's region on all of them
(:mod:`solver.search.closure_threads`; its results are the one-thread closure's on the same
table), and the searches start again from the root. (A closure on one thread while the
others searched, which wins' proofs used to take, left the closure's seconds on one core:
on two threads it cost the hex(3) wins of ``scripts/parallel_set.txt`` about a tenth of
their time.) The main thread also stops the threads at the deadline,
for a checkpoint of the proof store (a table is only saved while no thread writes it) and
on Ctrl-C, and shows progress.

Node budgets are shared: each chunk takes at most its thread's share of what is left, so
the threads together stay within the budget. Which thread proves what first varies from
run to run, so node counts and distance bounds do too; answers (win, loss, draw, and
distances made exact by refinement) do not.
"""

from __future__ import annotations

import threading
import time

import numpy as np

from solver.kernels.dfpn import Ctx, dfpn_thread, new_stack
from solver.kernels.shared import new_par
from solver.kernels.table import DMAX, INF
from solver.search.closure_threads import ClosureThreads
from solver.search.limits import NODES, PATH, TIME

MAX_THREADS = 64  # the table's thread counts are 16-bit; far beyond any machine here


class Threads:
    """The per-thread state of a prover's search on ``n`` threads (thread 0 uses the
    prover's own stack and counters)."""

    def __init__(self, prover, n: int, spin: int = 0, seed: int = 0, vnum: int = 1):
        if not 2 <= n <= MAX_THREADS:
            raise ValueError(f"threads must be 2..{MAX_THREADS}, got {n}")
        self.n = n
        self.ctl = np.zeros(2, dtype=np.int64)
        self.stats = [prover.stats] + [np.zeros_like(prover.stats) for _ in range(n - 1)]
        self.ctx = [Ctx(prover.geo, prover.symtab, prover.tt, prover.dbinfo, prover.dbvals, prover.lay, s)
                    for s in self.stats]
        self.stacks = [prover.stack] + [new_stack(prover.maxd, prover.maxc) for _ in range(n - 1)]
        self.outs = [np.zeros(6, dtype=np.int64) for _ in range(n)]
        self.guides = [prover.guide._replace(buf=np.zeros_like(prover.guide.buf)) for _ in range(n)]
        self.pars = [new_par(prover.tt, self.ctl, t, spin, seed, vnum) for t in range(n)]
        self.closure = ClosureThreads(n, prover.maxc)

    def nodes(self) -> int:
        return int(sum(int(s[0]) for s in self.stats))

    def work(self) -> int:
        """The threads' df-pn work so far (as :meth:`solver.search.prover.Prover.work`)."""
        return int(sum(int(s[1]) + int(s[3]) for s in self.stats))


def search(prover, m: int, p: int, s: int, q: int, budget: int, deadline: float | None = None, tick=None):
    """:meth:`solver.search.prover.Prover.search` on the prover's threads: ``(pn, dn, dist,
    lb, best move)`` of the root, and ``prover.last_stop`` set as there."""
    th: Threads = prover.threads_state
    k1, k2 = prover.key(m, p, s, q)
    k1, k2 = np.uint64(k1), np.uint64(k2)
    start = prover.nodes
    lock = threading.Lock()
    state = {"close_at": prover.first_slice, "closing": False, "stop": None, "out": None, "error": None}
    nostop = np.zeros(2, dtype=np.int64)
    args = (np.uint64(m), np.uint64(p), s, q)

    def spent() -> int:
        return prover.nodes - start

    def finish(stop, out=None) -> None:
        """End the search: ``out`` (the root's numbers) when it is settled or cut, else
        ``stop`` says why. A settled root wins over a cut one; the first reason stays."""
        with lock:
            if out is not None and (state["out"] is None or (state["stop"] == PATH and stop is None)):
                state["out"] = out
                state["stop"] = stop
            elif state["out"] is None and state["stop"] is None:
                state["stop"] = stop
        th.ctl[0] = 1

    def closures_cheap() -> bool:
        """Whether the closures' work so far is within their share of the searches' (all
        threads'), counted as on one thread (:meth:`solver.search.prover.Prover.closure_cheap`)."""
        return prover.closure_cheap(th.work())

    def closure_due() -> bool:
        with lock:
            used = spent()
            cheap = closures_cheap()
            if state["closing"] or not (prover.use_closure and used >= state["close_at"] and cheap):
                return False
            state["closing"] = True
            state["close_at"] = 2 * used
            return True

    def run_closure() -> bool:
        """One closure on every thread (the searches stopped); whether it disproved the root."""
        limit = state["close_at"] + prover.first_slice  # twice the nodes searched, as one thread
        before = int(prover.closure_stats[3])
        disproven = prover.close(k1, k2, limit, nostop, th.closure)
        proven = int(prover.closure_stats[3]) - before
        with lock:
            state["closing"] = False
        if proven:
            th.ctl[1] += 1  # new disproofs: every thread starts again from the root, as one thread does
        if disproven:
            finish(None, (INF, 0, DMAX, DMAX, -1, INF))
        return disproven

    def work(t: int) -> None:
        try:
            while not th.ctl[0]:
                if closure_due():
                    th.ctl[0] = 1  # every thread leaves its search; the main thread runs the closure on all
                    break
                left = budget - spent()
                if left <= 0:
                    finish(NODES)
                    break
                # a share of what is left, ending near the next closure (then it is run)
                chunk = min(prover.slice_nodes, max(left // th.n, 1), max((state["close_at"] - spent()) // th.n, 1000))
                t0 = time.monotonic()
                rc = dfpn_thread(th.ctx[t], th.stacks[t], *args, chunk, th.outs[t], th.guides[t], th.pars[t])
                with lock:
                    prover.search_seconds += time.monotonic() - t0
                o = th.outs[t]
                if rc == 0 and (o[0] == 0 or o[1] == 0):
                    finish(None, tuple(int(v) for v in o[:6]))
                elif rc and not th.ctl[0]:
                    # every line this thread had left was cut at the path-length limit
                    finish(PATH, (1, 1, DMAX, int(o[3]), -1, INF))
        except BaseException as e:  # noqa: BLE001  (handed to the main thread)
            state["error"] = e
            th.ctl[0] = 1

    while True:
        th.ctl[0] = 0
        workers = [threading.Thread(target=work, args=(t,), daemon=True) for t in range(th.n)]
        for w in workers:
            w.start()
        pause = False
        try:
            while True:
                alive = [w for w in workers if w.is_alive()]
                if not alive:
                    break
                alive[0].join(0.05)
                if deadline is not None and time.monotonic() >= deadline:
                    finish(TIME)
                if prover.checkpoint_due():
                    pause = True
                    th.ctl[0] = 1
                if tick is not None:
                    tick()
        except BaseException:
            th.ctl[0] = 1  # Ctrl-C: the threads unwind (storing what they found), then it goes on
            for w in workers:
                w.join()
            raise
        for w in workers:
            w.join()
        if state["error"] is not None:
            raise state["error"]
        if state["stop"] is None and state["out"] is None:
            if state["closing"]:
                if run_closure():
                    break
                continue
            if pause:
                prover.checkpoint()
                continue
        break
    out = state["out"]
    stop = state["stop"]
    if out is None or stop == PATH:
        # unsettled: the last look of the draw closure, as one thread does at the end
        late = stop == TIME
        cheap = closures_cheap()
        if stop != PATH and prover.use_closure and cheap and (late or spent() >= budget) and prover.close(
                k1, k2, 2 * spent() + prover.first_slice, nostop, th.closure):
            out, stop = (INF, 0, DMAX, DMAX, -1, INF), None
        elif out is None:
            o = th.outs[0]
            out = (int(o[0]), int(o[1]), DMAX, int(o[3]), -1, INF)
    prover.out[:6] = out
    prover.last_stop = stop
    return tuple(int(v) for v in prover.out[:5])
