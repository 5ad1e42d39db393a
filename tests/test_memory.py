"""Large arrays on huge pages (:mod:`solver.memory`): zero-filled, writable, and where the
kernel offers transparent huge pages, actually on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver.memory import huge_page_bytes, huge_zeros


@pytest.mark.parametrize("n, dtype", [(0, np.uint16), (1, np.uint16), (12345, np.uint16), (1000, np.int64)])
def test_zero_filled_and_writable(n, dtype):
    a = huge_zeros(n, dtype)
    assert a.dtype == np.dtype(dtype) and a.size == n
    assert not a.any()
    a[:] = 7
    if n:
        a[-1] = 9
        assert int(a.sum()) == 7 * (n - 1) + 9


THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.mark.skipif(
    not THP.is_file() or not any(f"[{m}]" in THP.read_text() for m in ("madvise", "always")),
    reason="no transparent huge pages on this kernel",
)
def test_on_huge_pages_where_the_kernel_has_them():
    before = huge_page_bytes()
    a = huge_zeros(64 << 20)  # 128 MB
    a[::4096] = 1  # touch every 8 kB: each 2 MB region faults once
    got = huge_page_bytes() - before
    assert got >= a.nbytes // 2, f"only {got} of {a.nbytes} bytes on huge pages"


ARENA_SCRIPT = """
import sys, threading, numpy as np
from solver.memory import return_large_frees
if sys.argv[1] == "fixed":
    assert return_large_frees()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
def work(seed):
    rng = np.random.default_rng(seed)
    keep = []
    for _ in range(60):
        a = np.empty(int(rng.integers(1, 4 << 20)), np.int64)  # up to 32 MB, like a task's list
        a[: a.size // 2] = 1
        keep.append(np.ones(1000))  # small blocks that pin the top of the thread's arena
        del a
r0 = rss()
threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print((rss() - r0) >> 20)
"""


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="needs /proc")
def test_large_frees_go_back_to_the_system():
    """Threads that allocate and free buffers of up to 32 MB: with the fixed threshold the
    process keeps none of them (without it glibc keeps them in the threads' arenas: about
    150 MB here)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", ARENA_SCRIPT, "fixed"], capture_output=True, text=True, check=True)
    assert int(out.stdout) < 48, out.stdout
