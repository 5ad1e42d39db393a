"""Workers for the solvers: spawned process pools, an inline executor, value arrays.

Workers are *processes* started with ``spawn`` (never ``fork``: numba's threading layers
and open LMDB environments must not cross a fork). The retrograde driver and the df-pn
workers both start their pools here.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from solver.memory import huge_zeros

SMALL_GROUP = 1 << 17  # groups below this many cells are solved in the main process


def spawn_pool(jobs: int, initializer, initargs: tuple) -> ProcessPoolExecutor:
    """``jobs`` spawned worker processes, each set up by ``initializer(*initargs)``.

    Each worker leaves when its parent is gone (see :func:`_worker_start`)."""
    return ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_start,
        initargs=(os.getpid(), initializer, initargs),
    )


def _worker_start(parent: int, initializer, initargs: tuple) -> None:
    """A worker's first step: watch the parent, then ``initializer(*initargs)``.

    A parent killed with ``kill -9`` cannot shut its pool down, and its workers, blocked
    on a queue whose write end they hold themselves, would wait forever (each with its
    own copy of the layout). A daemon thread sees the parent go (this process is handed
    to another parent) and ends the worker at once."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=watch, name="rotary-parent-watch", daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def split_range(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    """``lo..hi`` in at most ``parts`` contiguous ranges of (nearly) equal size."""
    step = max(1, -(-(hi - lo) // parts))
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]


class InlineExecutor(Executor):
    """Runs each task at once in this process (``-j 1``)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        f: Future = Future()
        try:
            f.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            f.set_exception(e)
        return f


def completed(run: Executor, fn, arglist):
    """``fn(*args)`` for each of ``arglist`` submitted to ``run``, the results yielded as
    the tasks finish.

    No finished future is held once its result is yielded (``as_completed`` lets go of
    its own; the list of them is never kept): a ply's tasks return lists of positions for
    the next ply, and a list of every future of a ply kept them all to its end — hex(3)
    12v12 at ply 0: 2,514 tasks, about 3.3 GB; 11v11 ran out of 24 GB."""
    for f in as_completed([run.submit(fn, *args) for args in arglist]):
        yield f.result()


def values_folder() -> str:
    """Where :func:`shared_values` puts the value file: ``/dev/shm``, else the temp folder."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


def stale_value_files(folder: str) -> list[Path]:
    """Value files in ``folder`` left by solves that no longer run (killed)."""
    out = []
    for old in Path(folder).glob("rotary-values-*-*.u16"):
        pid = old.name.split("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            out.append(old)
    return out


def shared_values(total: int) -> tuple[str, np.memmap]:
    """A fresh value file in ``/dev/shm`` (or the temp folder), named with our pid.

    A ``kill -9`` leaves its file behind; files of processes that no longer exist are
    removed here, so that memory does not leak across interrupted solves.
    """
    folder = values_folder()
    for old in stale_value_files(folder):
        old.unlink(missing_ok=True)
    fd, path = tempfile.mkstemp(prefix=f"rotary-values-{os.getpid()}-", suffix=".u16", dir=folder)
    try:
        # reserve the whole file now: a full tmpfs is an error here, not SIGBUS at a write
        os.posix_fallocate(fd, 0, 2 * max(total, 1))
    except OSError as e:
        os.close(fd)
        Path(path).unlink(missing_ok=True)
        from solver.db.guard import megabytes
        from solver.errors import StoreError

        raise StoreError(
            f"no room in {folder} for the solve's value array: it needs {megabytes(2 * max(total, 1))} "
            f"({(e.strerror or str(e)).lower()}); free some space and run the same command again"
        ) from None
    os.close(fd)
    vals = np.memmap(path, dtype=np.uint16, mode="r+", shape=(max(total, 1),))
    return path, vals


def private_values(total: int) -> np.ndarray:
    """The value array in this process's own memory, for solves whose workers are threads:
    on huge pages (:func:`solver.memory.huge_zeros`), which halve the cost of the
    propagation's random updates on multi-GB arrays. Memory the kernel refuses is a
    :class:`~solver.errors.ResourceError` in one line."""
    try:
        return huge_zeros(max(total, 1))
    except OSError as e:
        from solver.db.guard import megabytes
        from solver.errors import ResourceError

        raise ResourceError(
            f"no memory for the solve's value array: it needs {megabytes(2 * max(total, 1))} "
            f"({(e.strerror or str(e)).lower()}); free some memory, or solve it on a Ray cluster "
            "(--executor ray -j N --address HOST:PORT)"
        ) from None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _ranges(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    step = max(1, -(-(hi - lo) // parts))
    return [(a, min(a + step, hi)) for a in range(lo, hi, step)]
