"""``next_at``, the four-cells-a-word scan of a ply, against a plain scan of the cells."""

from __future__ import annotations

import numpy as np
import pytest

from solver.kernels.code import loss_code, win_code
from solver.kernels.retro import as_words, next_at


def _plain(vals, gi, hi, a, b):
    for i in range(gi, hi):
        if vals[i] == a or vals[i] == b:
            return i
    return hi


@pytest.mark.parametrize("seed", range(6))
def test_next_at_finds_what_a_plain_scan_finds(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    a, b = loss_code(7), win_code(7)
    # cells near the targets in every lane: one bit off, the other code, neighbours, top bits
    pool = np.array([a, b, a ^ 1, b ^ 1, a + 1, b - 1, loss_code(6), win_code(8), 0, 0xFFFF, 0x8000, 0x4000, 3],
                    dtype=np.uint16)
    vals = pool[rng.integers(0, len(pool), n)]
    vals[rng.random(n) < 0.8] = pool[2 + rng.integers(0, len(pool) - 2, 1)]  # mostly no target
    words = as_words(vals)
    for _ in range(60):
        gi = int(rng.integers(0, n + 1))
        hi = int(rng.integers(gi, n + 1))
        at = gi
        while True:  # every hit of the range in turn, as level_range walks it
            want = _plain(vals, at, hi, a, b)
            got = next_at(vals, words, at, hi, a, b)
            assert got == want, (seed, at, hi)
            if got >= hi:
                break
            at = got + 1


def test_no_target_anywhere_gives_the_range_end():
    vals = np.full(1001, loss_code(3), dtype=np.uint16)
    assert next_at(vals, as_words(vals), 5, 1000, loss_code(4), win_code(4)) == 1000
    vals[999] = win_code(4)  # in the part after the last whole word but one
    assert next_at(vals, as_words(vals), 5, 1000, loss_code(4), win_code(4)) == 999
    vals[1000] = loss_code(4)  # past hi: not found
    assert next_at(vals, as_words(vals), 0, 999, loss_code(4), win_code(4)) == 999
