"""The tasks of a lean pass, a few in flight at a time, so that the solve can stop between them.

A pass of the lean solve (:mod:`solver.retro.lean`) — its counters, or one ply — is cut
into tasks that write the shared byte cells while they run. A checkpoint inside a ply
(:mod:`solver.retro.lean_checkpoint`) must see the cells with no task half done, so
:class:`Units` submits at most ``ahead`` tasks at a time (enough to keep every worker
busy while the caller takes a result in) and :meth:`Units.drain` lets the ones in
flight finish, their results taken in, without starting more: then nothing writes the
cells until the iteration goes on. On one thread (:class:`~solver.retro.pool.InlineExecutor`)
each task runs when it is submitted, a Ctrl-C held until it returns.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait

from solver.retro.pool import InlineExecutor
from solver.retro.signals import held_interrupts


class Units:
    """``fn(*args)`` for each of ``arglist`` on ``run``, the results yielded as the tasks
    finish; at most ``ahead`` tasks submitted and not yet taken in."""

    def __init__(self, run: Executor, fn, arglist, ahead: int):
        self.run, self.fn = run, fn
        self.inline = isinstance(run, InlineExecutor)
        self.todo = deque(arglist)
        self.ahead = 1 if self.inline else max(1, ahead)
        self._flight: set[Future] = set()
        self._ready: deque[Future] = deque()  # finished, result not yet yielded

    def _call(self, *args):
        if self.inline:
            with held_interrupts():
                return self.fn(*args)
        return self.fn(*args)

    def _next(self):
        if not self._ready:
            done, self._flight = wait(self._flight, return_when=FIRST_COMPLETED)
            self._ready.extend(done)
        return self._ready.popleft().result()  # no future is kept once its result is taken

    def __iter__(self):
        while True:
            while self.todo and len(self._flight) + len(self._ready) < self.ahead:
                self._flight.add(self.run.submit(self._call, *self.todo.popleft()))
            if not (self._flight or self._ready):
                return
            yield self._next()

    def drain(self):
        """The results of the tasks submitted and not yet taken in; none is started. Once
        it is exhausted no task of this pass runs until the iteration goes on."""
        while self._flight or self._ready:
            yield self._next()

    @property
    def left(self) -> int:
        """Tasks not yet submitted."""
        return len(self.todo)
