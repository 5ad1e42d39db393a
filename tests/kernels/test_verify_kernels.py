"""``rotary verify``'s fast kernel against its plain reference, and ``-j`` against one thread.

:func:`solver.kernels.verify.verify_range` (incremental unranking, shared mover-set
blocks, children prefetched a position ahead) must name the same first bad index as
:func:`verify_range_plain` (one :func:`unrank` and :func:`index_of` per position and child)
on intact databases and on copies with cells changed at random — over whole tables and
over ranges that start and end inside a mover set's block — on boards with one side table
(base, edge), two (traps) and folded sides (colour-swapping traps).
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.db.database import open_db
from solver.db.verify import verify_db
from solver.game.config import make_config
from solver.kernels.verify import verify_range, verify_range_plain

CASES = {
    "hex2-4v4-base": (dict(board=2, balls=4), (4, 4)),
    "hex2-3v3-edge": (dict(board=2, balls=3, edge=True), (3, 3)),
    "hex2-3v3-capture-asym": (dict(board=2, balls=3, capture=True, traps_x="a1,c1", traps_o="a3,b4"), (3, 3)),
    "hex2-3v3-capture-swap": (dict(board=2, balls=3, capture=True, traps_x="a1", traps_o="b4"), (3, 3)),
    "hex3-3v3-base": (dict(board=3, balls=3), (3, 3)),
}


def _fast(vals, lo, hi, layout) -> int:
    buf, buf2 = (np.empty(6 * layout.geo.npoints, dtype=np.int64) for _ in range(2))
    return int(verify_range(vals, np.zeros(0, dtype=np.uint16), lo, hi, layout.geo, layout.lay, buf, buf2))


def _bytes(vals, lo, hi, layout) -> int:
    """:func:`_fast` on the values as ``verify`` keeps them: one byte a position and a
    table of the codes (``np.unique``'s inverse: an independent encoding)."""
    dec, inv = np.unique(vals, return_inverse=True)
    assert len(dec) <= 256
    buf, buf2 = (np.empty(6 * layout.geo.npoints, dtype=np.int64) for _ in range(2))
    return int(verify_range(inv.astype(np.uint8), dec.astype(np.uint16), lo, hi, layout.geo, layout.lay, buf, buf2))


def _plain(vals, lo, hi, layout) -> int:
    return int(verify_range_plain(vals, np.zeros(0, dtype=np.uint16), lo, hi, layout.geo, layout.lay))


@pytest.fixture(params=sorted(CASES))
def solved(request, solved_db):
    kw, material = CASES[request.param]
    path = solved_db(make_config(**kw), material)
    with open_db(path) as db:
        return path, db.layout, db.values().copy()


def test_intact_database_passes_both(solved):
    _, layout, vals = solved
    assert _plain(vals, 0, layout.total, layout) == -1
    assert _fast(vals, 0, layout.total, layout) == -1
    assert _bytes(vals, 0, layout.total, layout) == -1


@pytest.mark.parametrize("seed", range(6))
def test_damaged_cells_give_the_same_first_bad_index(solved, seed):
    _, layout, vals = solved
    rng = np.random.default_rng(seed)
    bad = vals.copy()
    # a few cells to random codes of every kind: wins, losses, draws, counters, invalid
    n = 1 + seed * 3
    where = rng.integers(0, layout.total, n)
    codes = np.array([0x0000, 0x4000, 0x8000, 0xC000], dtype=np.uint16)[rng.integers(0, 4, n)]
    bad[where] = codes | rng.integers(0, 12, n).astype(np.uint16)
    for lo, hi in [(0, layout.total)] + [tuple(sorted(rng.integers(0, layout.total + 1, 2))) for _ in range(20)]:
        want = _plain(bad, lo, hi, layout)
        assert _fast(bad, lo, hi, layout) == want, (lo, hi)
        assert _bytes(bad, lo, hi, layout) == want, (lo, hi)
    if np.any(bad != vals):
        assert _plain(bad, 0, layout.total, layout) >= 0  # the damage is seen


def test_ranges_inside_blocks_pass_on_intact_values(solved):
    _, layout, vals = solved
    rng = np.random.default_rng(1)
    for _ in range(50):
        lo, hi = sorted(int(x) for x in rng.integers(0, layout.total + 1, 2))
        assert _fast(vals, lo, hi, layout) == -1


def test_threads_agree_with_one(tmp_path):
    """``verify -j 2`` names the same position as ``-j 1`` whatever the threads' timing."""
    from solver.retro.driver import solve

    from tests.retro.test_retrograde import _biggest_tier, _put_block
    from solver.db.store import BLOCK, Store, block_key, pack_block

    cfg = make_config(board=3, balls=3)
    path = tmp_path / "db"
    solve(cfg, path, material=(3, 3), progress=False)
    one, two = verify_db(path, progress=False), verify_db(path, progress=False, jobs=2)
    assert one.ok and two.ok and one.checked == two.checked == one.checked
    layout, no, t = _biggest_tier(path)
    store = Store(path)
    values = store.read_tier(no, t.size).copy()
    store.close()
    # two damaged cells far apart: the first must be named, by one thread as by two
    for local in (t.size // 3, t.size - 5):
        values[local] ^= np.uint16(0x8001)
        block = local // BLOCK
        _put_block(path, no, block, pack_block(values[block * BLOCK : (block + 1) * BLOCK], block_key(no, block)))
    one, two = verify_db(path, progress=False), verify_db(path, progress=False, jobs=2)
    assert not one.ok and one.message == two.message
    assert one.checked == two.checked
