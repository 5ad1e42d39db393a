"""The rotation search's transposition table: two slots a key, the deep entry of this move kept,
entries of earlier moves given way."""

from __future__ import annotations

import numpy as np

from solver.kernels.alphabeta import EXACT, GEN_SHIFT, LOWER, UPPER, _tt_slot, _tt_store, new_tables

BITS = 6


def _keys_of_one_pair(count: int) -> list[np.uint64]:
    """Distinct nonzero keys that share the table's first pair of slots."""
    return [np.uint64((k << 12) | 1) for k in range(1, count + 1)]


def _entry(tt, h):
    i = _tt_slot(tt, h)
    if i < 0:
        return None
    return int(tt.depth[i]), int(tt.score[i]), int(tt.move[i]), int(tt.flag[i]) & 3


def test_a_deep_entry_of_this_search_outlives_shallow_ones():
    tt = new_tables(BITS)
    deep, a, b, c = _keys_of_one_pair(4)
    _tt_store(tt, deep, 7, 55, 9, LOWER, 0, False, 1)
    for h, mv in ((a, 1), (b, 2), (c, 3)):
        _tt_store(tt, h, mv, 10, 2, UPPER, 0, False, 1)
        assert _entry(tt, deep) == (9, 55, 7, LOWER)
        assert _entry(tt, h) == (2, 10, mv, UPPER)  # the newest shallow entry is found
    assert _entry(tt, a) is None and _entry(tt, b) is None  # the second slot is always replaced


def test_an_entry_of_an_earlier_search_gives_way():
    tt = new_tables(BITS)
    old, a, b = _keys_of_one_pair(3)
    _tt_store(tt, old, 7, 55, 12, EXACT, 0, False, 1)
    _tt_store(tt, a, 1, 10, 1, UPPER, 0, False, 2)
    _tt_store(tt, b, 2, 11, 1, UPPER, 0, False, 2)
    assert _entry(tt, old) is None
    assert _entry(tt, a) == (1, 10, 1, UPPER) and _entry(tt, b) == (1, 11, 2, UPPER)
    assert int(tt.flag[_tt_slot(tt, a)]) >> GEN_SHIFT == 2


def test_the_same_position_keeps_its_deeper_bound_and_its_move():
    tt = new_tables(BITS)
    (h,) = _keys_of_one_pair(1)
    _tt_store(tt, h, 7, 55, 9, LOWER, 0, False, 3)
    _tt_store(tt, h, 4, 20, 3, UPPER, 0, False, 3)
    assert _entry(tt, h) == (9, 55, 7, LOWER)
    _tt_store(tt, h, -1, 60, 10, LOWER, 0, False, 3)  # a cutoff without a move keeps the move
    assert _entry(tt, h) == (10, 60, 7, LOWER)
    _tt_store(tt, h, 5, 30, 2, UPPER, 0, False, 4)  # a later search's result replaces it
    assert _entry(tt, h) == (2, 30, 5, UPPER)
