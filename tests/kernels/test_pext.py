"""``bits.pext`` against a bit-by-bit reference, on both of its paths: the BMI2
instruction (where the host has it) and the loop used elsewhere."""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels import bits


def _reference(x: int, mask: int) -> int:
    out, j = 0, 0
    for i in range(64):
        if mask >> i & 1:
            out |= (x >> i & 1) << j
            j += 1
    return out


def _pairs(n: int = 500):
    rng = np.random.default_rng(7)
    top = np.uint64(1) << np.uint64(63)
    for _ in range(n):  # the top bit set half the time: uint64 arithmetic must not go signed
        x = np.uint64(rng.integers(0, 2**63)) | (top if rng.integers(2) else np.uint64(0))
        m = np.uint64(rng.integers(0, 2**63)) | (top if rng.integers(2) else np.uint64(0))
        yield x, m


def test_pext_as_compiled_for_this_host():
    f = njit(lambda x, m: bits.pext(x, m))
    for x, m in _pairs():
        assert int(f(x, m)) == _reference(int(x), int(m))


def test_pext_loop_where_the_host_lacks_bmi2(monkeypatch):
    monkeypatch.setattr(bits, "HAS_PEXT", False)  # read when a function using pext compiles
    f = njit(lambda x, m: bits.pext(x, m))
    for x, m in _pairs():
        assert int(f(x, m)) == _reference(int(x), int(m))
