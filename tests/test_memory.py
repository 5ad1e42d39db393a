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
