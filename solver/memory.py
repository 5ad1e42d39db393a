"""Large arrays on transparent huge pages, and how much memory can be had.

The retrograde propagation and ``verify`` read and update cells of multi-GB uint16 arrays
at random; with 4 kB pages nearly every such access also misses the TLB, and the page
walk costs as much as the access. Anonymous pages advised ``MADV_HUGEPAGE`` (2 MB) take
that away where the kernel offers them (``/sys/kernel/mm/transparent_hugepage/enabled``
set to ``madvise`` or ``always``; ``/dev/shm`` files get them only where shmem huge pages
are on). ``python scripts/bench_hugepages.py`` compares the three (a ``/dev/shm`` file,
plain anonymous memory, huge pages) on random read-modify-writes in a numba loop.
"""

from __future__ import annotations

import ctypes
import mmap
from pathlib import Path

import numpy as np


def huge_zeros(n: int, dtype=np.uint16) -> np.ndarray:
    """A zero-filled array of ``n`` items in anonymous memory advised as huge
    pages. Where the kernel has no transparent huge pages the advice is ignored and the
    array is an ordinary one. Pages are taken when first written, as with ``np.zeros``."""
    dt = np.dtype(dtype)
    mm = mmap.mmap(-1, max(n, 1) * dt.itemsize, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if advice is not None:
        try:
            mm.madvise(advice)
        except OSError:
            pass  # no transparent huge pages: 4 kB pages, the same values
    return np.frombuffer(mm, dtype=dt)[:n]  # a mapping has at least one item: n may be 0


def huge_page_bytes() -> int:
    """Bytes of this process's anonymous memory on transparent huge pages now
    (``AnonHugePages`` of ``/proc/self/smaps_rollup``; 0 where it cannot be read)."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            return 1024 * sum(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))
    except OSError:
        return 0


M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc malloc.h)
MMAP_THRESHOLD = 1 << 20


def return_large_frees() -> bool:
    """Make glibc's malloc give every block of 1 MB or more back to the system when it is
    freed (``mallopt(M_MMAP_THRESHOLD, 1 MB)``).

    Solver tasks in threads allocate and free buffers of up to 32 MB again and again.
    glibc raises its mmap threshold to the size of each large block freed (up to 32 MB),
    so from then on such buffers come from the threads' arenas, and a freed one stays in
    its arena: on hex(3) 12v12 the solve's resident size grew by 3.5 GB of 64 MB arena
    heaps beside a 2.6 GB value array. A fixed threshold turns that off. Returns whether it
    could be set (False off glibc, where nothing changes)."""
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


def mem_available() -> int | None:
    """Memory that can be had without swapping: ``MemAvailable``, lowered to what the
    cgroup's limit leaves (``memory.max`` less what is used and cannot be reclaimed);
    None where neither can be read."""
    found = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    found = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError):
        pass
    cg = _cgroup_room()
    if cg is not None:
        found = cg if found is None else min(found, cg)
    return found


def _cgroup_room() -> int | None:
    root = Path("/sys/fs/cgroup")
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int((root / "memory.current").read_text())
        stat = dict(line.split() for line in (root / "memory.stat").read_text().splitlines() if len(line.split()) == 2)
        return max(0, int(limit) - used + int(stat.get("inactive_file", 0)))
    except (OSError, ValueError):
        return None
