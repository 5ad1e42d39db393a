"""A tier's blocks, packed by several threads, read back as they were written."""

from __future__ import annotations

import threading

import numpy as np

from solver.db import store
from solver.db.store import BLOCK, PACK_BATCH, block_key, packed_blocks, unpack_block


class OneThreadSequence:
    """A sequence that may only be read from the thread that made it, as the Ray
    driver's window over its actors is (it keeps the last window it fetched)."""

    def __init__(self, values: np.ndarray):
        self.values, self.owner, self.readers = values, threading.get_ident(), set()

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, s: slice) -> np.ndarray:
        self.readers.add(threading.get_ident())
        return self.values[s]


def test_blocks_round_trip_in_key_order_and_are_cut_in_the_callers_thread():
    rng = np.random.default_rng(5)
    n = BLOCK * (PACK_BATCH + 3) + 1234  # two batches, a short last block
    values = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    seq = OneThreadSequence(values)
    out = list(packed_blocks(7, seq, keyed=True))
    assert seq.readers == {seq.owner}
    assert [k for k, _ in out] == [block_key(7, b) for b in range(-(-n // BLOCK))]
    back = np.concatenate([unpack_block(data, "test", k) for k, data in out])
    assert np.array_equal(back, values)


def test_the_write_counts_its_positions_block_by_block_from_0_again_when_the_map_grows(tmp_path, monkeypatch):
    """``write_tiers``' ``counted``: positions written so far, rising block by block to the
    tiers' total; when the map is full the transaction is redone and the count with it."""
    monkeypatch.setattr(store, "_MAP_START", 1 << 18)  # random values do not compress: it grows
    rng = np.random.default_rng(3)
    tiers = [(i, rng.integers(0, 1 << 16, n, dtype=np.uint16), f"t{i}", {}) for i, n in enumerate((5 * BLOCK + 7, 2 * BLOCK))]
    calls: list[int] = []
    st = store.Store(tmp_path / "db", create=True)
    try:
        st.write_tiers(tiers, calls.append)
    finally:
        st.close()
    total = sum(len(v) for _, v, _, _ in tiers)
    restarts = [i for i in range(1, len(calls)) if calls[i] < calls[i - 1]]
    assert restarts  # the map grew at least once
    last = calls[restarts[-1]:]
    assert last == [min((i + 1) * BLOCK, 5 * BLOCK + 7) for i in range(6)] + [5 * BLOCK + 7 + BLOCK, total]
