"""The symmetry-reduced index (solver/encoding.py): round trips, canonical invariance, size.

* ``layout.position`` then ``layout.index`` gives back the global index (rank/unrank);
* every plain-symmetry image of a position has the same index, and every colour-swapping
  image (colours exchanged, so the other side moves) too (docs/rules.md §1, §7);
* exhaustively on hex(2): the index maps the orbits of raw positions one to one onto
  ``0 .. total-1``;
* every tier of useful size is within 10 % of ``raw / |G|`` (the best any index can do).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from numba import njit

from solver.game.config import make_config, symmetry_classes
from solver.index import Layout
from solver.kernels.encode import next_subset, unrank, unrank_block

# name -> (make_config kwargs, material)
CONFIGS = {
    "hex2-3v3-base": (dict(board=2, balls=3), (3, 3)),
    "hex2-4v4-edge": (dict(board=2, balls=4, edge=True), (4, 4)),
    "hex2-3v3-capture-asym": (dict(board=2, balls=3, capture=True, traps_x="a1,c1", traps_o="a3,b4"), (3, 3)),
    "hex2-3v3-capture-plain": (dict(board=2, balls=3, capture=True, traps_x="a1,c1", traps_o="a4,b4"), (3, 3)),
    "hex2-3v2-edge-capture-swap": (dict(board=2, balls=3, edge=True, capture=True, traps_x="a1", traps_o="b4"), (3, 2)),
    "hex3-4v4-base": (dict(board=3, balls=4), (4, 4)),
    "hex3-3v2-base": (dict(board=3, balls=3), (3, 2)),
    "hex3-3v3-edge": (dict(board=3, balls=3, edge=True), (3, 3)),
    "hex3-3v3-capture-asym": (dict(board=3, balls=3, capture=True, traps_x="a1,f3", traps_o="a6,a3"), (3, 3)),
    "hex3-3v3-capture-swap": (dict(board=3, balls=3, capture=True, traps_x="a1,d1", traps_o="f3,c6"), (3, 3)),
    "hex3-3v3-capture-plain": (dict(board=3, balls=3, capture=True, traps_x="a1,d1", traps_o="a6,c6"), (3, 3)),
    "hex4-3v3-capture": (dict(board=4, balls=3, capture=True), (3, 3)),
    "hex4-2v3-edge": (dict(board=4, balls=3, edge=True), (2, 3)),
}

_LAYOUTS: dict[str, Layout] = {}


def layout_of(name: str) -> Layout:
    if name not in _LAYOUTS:
        kw, material = CONFIGS[name]
        _LAYOUTS[name] = Layout(make_config(**kw), material)
    return _LAYOUTS[name]


def images(layout: Layout, m: int, p: int, s: int):
    """Every symmetric image ``(mover, opponent, side)`` of a position, same value."""
    cfg = layout.cfg
    board = cfg.board
    plain, swapping = symmetry_classes(cfg)
    for sym in plain:
        yield board.map_bits(sym, m), board.map_bits(sym, p), s
    for sym in swapping:  # the mover's balls change colour: now the other side moves
        yield board.map_bits(sym, m), board.map_bits(sym, p), 1 - s


def random_position(rng, layout: Layout):
    """A raw (not canonical) position of a random tier of the layout."""
    t = layout.tiers[rng.integers(len(layout.tiers))]
    n = layout.cfg.board.size
    pts = rng.permutation(n)
    m = sum(1 << int(q) for q in pts[: t.a])
    p = sum(1 << int(q) for q in pts[t.a : t.a + t.b])
    s = int(rng.integers(2)) if layout.geo.sides == 1 else t.side
    return m, p, s


def test_configs_cover_the_index_paths():
    """The chosen trap sets give: trivial group with two sides, plain symmetry with two
    sides, and one side folded by a non-identity colour swap."""
    kinds = {}
    for name in CONFIGS:
        geo = layout_of(name).geo
        kinds[name] = (geo.sides, len(geo.perm), bool(geo.swap_identity))
    assert kinds["hex2-3v3-capture-asym"] == (2, 1, True)
    assert kinds["hex3-3v3-capture-asym"] == (2, 1, True)
    assert kinds["hex2-3v3-capture-plain"][:2] == (2, 2)
    assert kinds["hex3-3v3-capture-plain"][:2] == (2, 2)
    assert kinds["hex2-3v2-edge-capture-swap"] == (1, 1, False)
    assert kinds["hex3-3v3-capture-swap"] == (1, 1, False)
    assert kinds["hex3-4v4-base"] == (1, 6, True)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_rank_unrank_round_trip(name):
    layout = layout_of(name)
    rng = np.random.default_rng(12345)
    picks = list(rng.integers(0, layout.total, 1500)) + [0, layout.total - 1]
    picks += [t.base for t in layout.tiers] + [t.base + t.size - 1 for t in layout.tiers if t.size]
    for g in picks:
        g = int(g)
        m, p, s = layout.position(g)
        assert m & p == 0
        assert m >> layout.cfg.board.size == 0 and p >> layout.cfg.board.size == 0
        t = layout.tier_of(g)
        assert (m.bit_count(), p.bit_count()) == (t.a, t.b)
        assert layout.index(m, p, s) == g, (name, g, m, p, s)


@pytest.mark.parametrize("name", ["hex2-3v3-base", "hex2-4v4-edge", "hex2-3v3-capture-asym", "hex3-3v2-base"])
def test_incremental_unrank(name):
    """Walking the index with ``unrank_block`` and ``next_subset`` (the counters pass)
    gives every position that ``unrank`` gives, in order."""
    layout = layout_of(name)
    got = _walk(layout.total, layout.geo, layout.lay)
    want = _plain(layout.total, layout.geo, layout.lay)
    assert np.array_equal(got, want)


@njit(cache=True)
def _walk(total, geo, lay):
    out = np.empty((total, 3), np.uint64)
    end = 0
    m, p, s, free = np.uint64(0), np.uint64(0), 0, np.uint64(0)
    for gi in range(total):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        out[gi, 0], out[gi, 1], out[gi, 2] = m, p, s
    return out


@njit(cache=True)
def _plain(total, geo, lay):
    out = np.empty((total, 3), np.uint64)
    for gi in range(total):
        m, p, s = unrank(gi, geo, lay)
        out[gi, 0], out[gi, 1], out[gi, 2] = m, p, s
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_index_is_symmetry_invariant(name):
    layout = layout_of(name)
    rng = np.random.default_rng(777)
    for _ in range(400):
        m, p, s = random_position(rng, layout)
        g = layout.index(m, p, s)
        assert 0 <= g < layout.total
        for im in images(layout, m, p, s):
            assert layout.index(*im) == g, (name, (m, p, s), im)
        # the stored representative is one of the images
        assert layout.position(g) in set(images(layout, m, p, s)), (name, (m, p, s))


def _orbit_key(layout: Layout, m: int, p: int, s: int):
    return min(images(layout, m, p, s))


@pytest.mark.parametrize(
    "name", ["hex2-3v3-base", "hex2-3v3-capture-asym", "hex2-3v3-capture-plain", "hex2-3v2-edge-capture-swap"]
)
def test_index_is_a_bijection_on_orbits_hex2(name):
    """Every raw position of every tier: equal index iff same orbit; all indices used."""
    layout = layout_of(name)
    n = layout.cfg.board.size
    seen: dict[int, tuple] = {}
    for t in layout.tiers:
        sides = (0, 1) if layout.geo.sides == 1 else (t.side,)
        for ms in combinations(range(n), t.a):
            m = sum(1 << q for q in ms)
            rest = [q for q in range(n) if not m >> q & 1]
            for ps in combinations(rest, t.b):
                p = sum(1 << q for q in ps)
                for s in sides:
                    g = layout.index(m, p, s)
                    assert t.base <= g < t.base + t.size, (name, t, m, p, s)
                    key = _orbit_key(layout, m, p, s)
                    assert seen.setdefault(g, key) == key, (name, g, key, seen[g])
    assert sorted(seen) == list(range(layout.total))


def test_index_rejects_what_is_not_indexed():
    layout = layout_of("hex3-3v2-base")
    with pytest.raises(KeyError):
        layout.index(0b111, 0b111000, 0)  # 3 v 3 is not in a 3 v 2 base layout
    with pytest.raises(IndexError):
        layout.position(layout.total)
    with pytest.raises(IndexError):
        layout.position(-1)


# ------------------------------------------------------------------ tier sizes

SIZE_CONFIGS = ["hex3-4v4-base", "hex3-3v3-edge", "hex3-3v3-capture-asym", "hex3-3v3-capture-swap", "hex3-3v3-capture-plain", "hex4-3v3-capture", "hex4-2v3-edge"]


@pytest.mark.parametrize("name", SIZE_CONFIGS)
def test_tier_sizes_near_raw_over_group_order(name):
    """Each tier holds at least one cell per orbit, so size >= raw / |G|; the index may
    waste a little on positions with a non-trivial stabiliser, but not more than 10 %.

    Tiny tiers are exempt: when a side has 0 or 1 ball almost every position is fixed by
    some symmetry (a single ball's orbit on hex(3) has 3 or 6 points, not |G|), so the
    orbit count of a small tier stays far above raw / |G| whatever the index does. From
    raw / |G| >= 1000 on, symmetric positions are a few per cent at most.
    """
    layout = layout_of(name)
    G = layout.group_order()
    checked = 0
    for t in layout.tiers:
        ideal = layout.raw_count(t) / G
        assert t.size >= ideal - 1e-9, (name, t.key, t.size, ideal)
        if ideal >= 1000:
            assert t.size <= 1.10 * ideal, (name, t.key, t.size, ideal)
            checked += 1
    assert checked >= 1
    assert layout.total == sum(t.size for t in layout.tiers)
    bases = [t.base for t in layout.tiers]
    assert bases == sorted(bases) and bases[0] == 0
