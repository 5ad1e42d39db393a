"""A match's games in worker processes, their reports handed back in game order.

A *table* is what one process plays with: ``make_table(setup)`` builds it (its players),
``table.play(i, stop)`` plays game ``i`` and returns its report (None if ``stop`` was set),
``table.close()`` lets its programs go.

Workers are started with the ``spawn`` method: each imports rotary afresh and builds its
own players (compiled numba kernels and running programs are never inherited over
``fork``). Every worker takes game numbers from one queue; the reports come back on
another and are reordered here, so the caller sees game 1, 2, 3, ... whatever finished
first. Closing the generator (the SPRT decided, ^C, an error) sets a stop event: a worker
abandons its game at the next move, quits its programs and exits.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import signal
import time
import traceback
from typing import Callable, Iterator

from solver.errors import RotaryError, UsageError

JOIN_S = 30.0  # how long stopped workers get to finish a move and quit their programs


def reports_in_order(make_table: Callable, setup, games: int, jobs: int,
                     on_ready: Callable[[], None] | None = None) -> Iterator[dict]:
    """The reports of games 0..``games``-1, in order, played by ``jobs`` processes (1: this one).

    ``make_table`` must be importable by name (a module-level class or function): the
    workers receive it pickled. ``on_ready`` is called once every table is built (its
    programs started and ready), before the first report."""
    if jobs <= 1:
        table = make_table(setup)
        if on_ready:
            on_ready()
        try:
            for g in range(games):
                yield table.play(g)
        finally:
            table.close()
        return
    ctx = mp.get_context("spawn")
    tasks, results, stop = ctx.Queue(), ctx.Queue(), ctx.Event()
    n = min(jobs, games)
    for g in range(games):
        tasks.put(g)
    for _ in range(n):
        tasks.put(None)
    workers = [ctx.Process(target=_worker, args=(make_table, setup, tasks, results, stop), daemon=True)
               for _ in range(n)]
    for w in workers:
        w.start()
    waiting: dict[int, dict] = {}
    ready = 0
    try:
        for g in range(games):
            while g not in waiting:
                try:
                    kind, i, payload = results.get(timeout=0.5)
                except queue.Empty:
                    if not any(w.is_alive() for w in workers):
                        raise RuntimeError("every match worker ended before the match did") from None
                    continue
                if kind == "error":
                    raise UsageError(payload)
                if kind == "crash":
                    raise RuntimeError(f"a match worker failed:\n{payload}")
                if kind == "ready":
                    ready += 1
                    if ready == n and on_ready:
                        on_ready()
                    continue
                waiting[i] = payload
            yield waiting.pop(g)
    finally:
        stop.set()
        _wind_down(workers, results)


def _wind_down(workers: list, results) -> None:
    """Let stopped workers finish; read their late reports so that none blocks on a full pipe."""
    deadline = time.monotonic() + JOIN_S
    while any(w.is_alive() for w in workers) and time.monotonic() < deadline:
        try:
            while True:
                results.get_nowait()
        except queue.Empty:
            pass
        for w in workers:
            w.join(0.05)
    for w in workers:
        if w.is_alive():
            w.terminate()
            w.join()


class _Stop:
    """Set when the parent says so, or when the parent is gone (killed: no one reads our reports)."""

    def __init__(self, event):
        self.event, self.parent = event, mp.parent_process()

    def is_set(self) -> bool:
        return self.event.is_set() or (self.parent is not None and not self.parent.is_alive())


def _worker(make_table: Callable, setup, tasks, results, event) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is the parent's to handle: it stops us
    stop = _Stop(event)
    try:
        table = make_table(setup)
    except RotaryError as e:
        results.put(("error", None, str(e)))
        return
    results.put(("ready", None, None))
    try:
        while not stop.is_set():
            try:
                g = tasks.get(timeout=0.2)
            except queue.Empty:
                continue
            if g is None:
                break
            report = table.play(g, stop)
            if report is None:
                break
            results.put(("game", g, report))
    except Exception:  # a bug: shown in full by the parent
        results.put(("crash", None, traceback.format_exc()))
    finally:
        table.close()
