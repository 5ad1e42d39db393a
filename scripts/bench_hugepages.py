"""Random 16-bit read-modify-writes over a large array: a ``/dev/shm`` file, plain
anonymous memory, and anonymous memory on huge pages (:mod:`solver.memory`).

    python scripts/bench_hugepages.py --gb 8 --updates 50000000

Prints nanoseconds an update for each kind of memory and how much of it the kernel put on
huge pages (``AnonHugePages`` of ``/proc/self/smaps_rollup``). The update loop is the
shape of the propagation's parent updates: a random cell, read, compared, written.
"""

from __future__ import annotations

import argparse
import mmap
import os
import tempfile
import time

import numba as nb
import numpy as np

from solver.memory import huge_page_bytes, huge_zeros


@nb.njit(nogil=True)
def _updates(a, n, seed):
    x = np.uint64(seed)
    m = np.uint64(a.size)
    s = 0
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        j = x % m
        v = a[j]
        if v < 1000:
            a[j] = v + 1
        s += v
    return s


def _arrays(nbytes: int):
    folder = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    fd, path = tempfile.mkstemp(dir=folder, suffix=".u16")
    os.posix_fallocate(fd, 0, nbytes)
    os.close(fd)
    try:
        yield f"file in {folder}", np.memmap(path, dtype=np.uint16, mode="r+", shape=(nbytes // 2,))
    finally:
        os.unlink(path)
    mm = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    yield "anonymous, 4 kB pages", np.frombuffer(mm, dtype=np.uint16)
    yield "anonymous, huge pages", huge_zeros(nbytes // 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=8.0, help="array size in GB (default 8)")
    ap.add_argument("--updates", type=int, default=50_000_000, help="random updates timed (default 50 M)")
    args = ap.parse_args()
    nbytes = int(args.gb * 2**30) // 2 * 2
    for name, a in _arrays(nbytes):
        before = huge_page_bytes()
        a[:] = 1
        _updates(a, 1000, 1)  # compile
        t = time.perf_counter()
        _updates(a, args.updates, 7)
        ns = (time.perf_counter() - t) / args.updates * 1e9
        huge = huge_page_bytes() - before
        print(f"{name:24s} {ns:6.1f} ns an update   huge pages: {huge / nbytes:4.0%} of {args.gb:g} GB")
        del a


if __name__ == "__main__":
    main()
