"""df-pn's table: 16-byte entries with exact keys, saturation, effort-based replacement."""

from __future__ import annotations

import numpy as np
import pytest

from solver.game.config import make_config
from solver.kernels.table import (DMAX, INF, LBSAT, MIN_BITS, NSAT, key_of, new_tt, tt_count, tt_key, tt_probe, tt_read,
                                  tt_store)


def _keys(rng, npoints: int, n: int) -> list[tuple[np.uint64, np.uint64]]:
    """``n`` random canonical-looking keys: disjoint point sets, side and question bits."""
    out = []
    for _ in range(n):
        occ = rng.random(npoints) < 0.1 + 0.8 * rng.random()
        mine = occ & (rng.random(npoints) < 0.5)
        m = sum(1 << i for i in range(npoints) if mine[i])
        p = sum(1 << i for i in range(npoints) if occ[i] and not mine[i])
        s, q = int(rng.integers(2)), int(rng.integers(2))
        out.append((np.uint64(m | s << 63 | q << 62), np.uint64(p)))
    return out


@pytest.mark.parametrize("npoints,bits", [(12, 4), (27, 8), (39, 10), (48, 18), (48, 22)])
def test_keys_are_exact(npoints, bits):
    """Bucket and stored word stand for exactly one key: it is read back from them, so two
    keys can never share an entry (no collision can make a wrong proof)."""
    tt = new_tt(bits, npoints=npoints)
    seen = {}
    for k1, k2 in _keys(np.random.default_rng(npoints), npoints, 3000):
        b, sw = tt_key(tt, k1, k2)
        a1, a2, ok = key_of(tt, b, np.uint64(sw))
        assert (int(a1), int(a2), ok) == (int(k1), int(k2), 1) and key_of(tt, b + 3, np.uint64(sw))[:2] == (a1, a2)
        assert seen.setdefault((b, int(sw)), (k1, k2)) == (k1, k2)


def test_an_entry_is_16_bytes_and_a_bucket_one_cache_line():
    tt = new_tt(20)
    assert tt.dw.strides == (16,) and tt.kw.strides == (16,) and tt.dw.ctypes.data - tt.kw.ctypes.data == 8
    assert tt.kw.ctypes.data % 64 == 0 and tt.dw.shape == (1 << 20,)
    assert new_tt(8).dw.shape == (1 << MIN_BITS,)  # 80-bit keys: the bucket holds 16 of their bits
    assert new_tt(8, npoints=27).dw.shape == (1 << 8,)


def test_numbers_saturate_and_resolved_entries_keep_their_distances():
    tt = new_tt(18)
    (a1, a2), (b1, b2), (c1, c2) = _keys(np.random.default_rng(1), 48, 3)
    tt_store(tt, a1, a2, 10**8, 3 * 10**7, DMAX, 1000, 5, 1)
    assert tt_probe(tt, a1, a2)[1:] == (NSAT, NSAT, DMAX, LBSAT)  # smaller, still positive: never a proof
    tt_store(tt, b1, b2, 0, INF, 40_000, 30_000, 77, 1)
    assert tt_read(tt, b1, b2)[1:] == (0, INF, 40_000, 30_000, 77)
    tt_store(tt, b1, b2, 0, INF, 39_999, 29_000, 12, 1)  # a faster win: the distance tightens
    assert tt_read(tt, b1, b2)[1:] == (0, INF, 39_999, 30_000, 12)
    tt_store(tt, b1, b2, 4, 4, DMAX, 0, -1, 1)  # a proof is never undone
    assert tt_read(tt, b1, b2)[1] == 0
    tt_store(tt, c1, c2, INF, 0, DMAX, 0, 9, 1)
    assert tt_read(tt, c1, c2)[1:3] == (INF, 0)


def test_replacement_keeps_the_expensive_entries():
    """A bucket's four entries: a new key evicts the open one with the least effort; a
    resolved entry goes after every open one."""
    tt = new_tt(18)
    by_bucket: dict[int, list] = {}
    for k in set(_keys(np.random.default_rng(2), 48, 200_000)):
        by_bucket.setdefault(tt_key(tt, *k)[0], []).append(k)
    keys = next(v for v in by_bucket.values() if len(v) >= 7)
    efforts = [10**6, 3, 5_000, 80]
    for (k1, k2), e in zip(keys, efforts):
        tt_store(tt, k1, k2, 2, 2, DMAX, 0, -1, e)
    tt_store(tt, *keys[4], 2, 2, DMAX, 0, -1, 10)
    kept = [tt_probe(tt, *k)[0] >= 0 for k in keys[:5]]
    assert kept == [True, False, True, True, True]
    tt_store(tt, *keys[0], 0, INF, 7, 7, 3, 1)  # the expensive one proven
    tt_store(tt, *keys[5], 2, 2, DMAX, 0, -1, 10**7)  # evicts the cheapest open one (10)
    tt_store(tt, *keys[6], 2, 2, DMAX, 0, -1, 10**7)  # then 80; the proof stays
    kept = [tt_probe(tt, *k)[0] >= 0 for k in keys[:7]]
    assert kept == [True, False, True, False, False, True, True]


def test_a_torn_record_reads_as_absent():
    tt = new_tt(18)
    (k1, k2), = _keys(np.random.default_rng(3), 48, 1)
    i = tt_store(tt, k1, k2, 0, INF, 17, 9, 42, 5)
    assert tt_probe(tt, k1, k2) == (i, 0, INF, 17, 9)
    for bit in (0, 9, 20, 41, 63):
        tt.dw[i] ^= np.uint64(1 << bit)
        assert tt_probe(tt, k1, k2)[0] == -1, bit
        tt.dw[i] ^= np.uint64(1 << bit)
    assert tt_probe(tt, k1, k2)[0] == i


def test_a_small_full_table_gives_only_true_answers(solved_db):
    """hex(2) 3v3 with a table of 256 entries (replacement at nearly every store): every
    answer and every entry left in the table agrees with the retrograde database."""
    from solver.db.database import open_db
    from solver.search.check import check_all

    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        rep = check_all(cfg, db, tt_bits=8)
    assert not rep.wrong, rep.wrong[:5]
    assert rep.table_checked > 0 and rep.table_wrong == 0
