"""Ctrl-C held back while a compiled kernel runs in this thread.

A signal that arrives while a numba kernel runs is handled when the kernel next calls
into Python — for kernels that allocate, from inside numba's own runtime, where the
``KeyboardInterrupt`` raised there is reported as a ``SystemError`` and can leave the
process to crash (measured: a Ctrl-C during the index build of hex(3) 13v13 ended in a
segmentation fault). Inside :func:`held_interrupts` a Ctrl-C is only noted; it is raised
as a plain ``KeyboardInterrupt`` when the block ends, outside the kernel.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


@contextmanager
def held_interrupts():
    """Hold SIGINT back for the block (main thread only; elsewhere there is nothing to hold)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    caught: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt
