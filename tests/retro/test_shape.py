"""The index's shape told before it is built (:mod:`solver.retro.shape`): tier sizes by
Burnside's lemma against the built index and against orbits counted one pair at a time;
table sizes bound the built ones; a configuration far too large is told in milliseconds."""

from __future__ import annotations

import time
from itertools import combinations

import pytest

from solver.game.config import make_config, symmetry_classes
from solver.index import Layout
from solver.retro.budget import table_bytes
from solver.retro.shape import Shape, cycles, fixed_pairs, orbit_count

H2_ASYM = dict(traps_x="a1,c1", traps_o="a3,b4")
H2_PLAIN = dict(traps_x="a1,c1", traps_o="a4,b4")
H2_SWAP = dict(traps_x="a1", traps_o="b4")

CONFIGS = [
    ("hex2", 3, {}), ("hex2", 4, {"edge": True}), ("hex2", 3, dict(capture=True, **H2_ASYM)),
    ("hex2", 4, dict(capture=True, **H2_PLAIN)), ("hex2", 3, dict(capture=True, edge=True, **H2_SWAP)),
    ("hex3", 3, {}), ("hex3", 3, {"edge": True}), ("hex3", 2, dict(capture=True, traps_x="a1,e3", traps_o="c5,a3")),
    ("hex4", 2, {}),
]


@pytest.mark.parametrize("board,balls,kw", CONFIGS, ids=lambda x: str(x))
def test_the_shape_is_the_built_index(board, balls, kw):
    cfg = make_config(board, balls, **kw)
    shape, layout = Shape(cfg, (balls, balls)), Layout(cfg)
    assert [(t.key, t.side, t.a, t.b, t.base, t.size) for t in shape.tiers] == \
        [(t.key, t.side, t.a, t.b, t.base, t.size) for t in layout.tiers]
    assert shape.groups == layout.groups and shape.total == layout.total
    assert table_bytes(layout) <= shape.table_bytes + 40_000  # + the binomials' table


def test_tier_sizes_are_orbits_counted_one_by_one():
    """Orbits of (mover, opponent) pairs under the plain symmetries, each pair mapped
    by every symmetry and counted where it is the smallest of its images."""
    for kw in ({"edge": True}, dict(capture=True, **H2_PLAIN), dict(capture=True, **H2_ASYM)):
        cfg = make_config("hex2", 3, **kw)
        plain, _ = symmetry_classes(cfg)
        n = cfg.board.size
        sizes = {(t.a, t.b): t.size for t in Shape(cfg, (3, 3)).tiers}
        for a, b in ((2, 2), (1, 3), (3, 0)):
            orbits = 0
            for m in combinations(range(n), a):
                for p in combinations([q for q in range(n) if q not in m], b):
                    images = [(sorted(g[i] for i in m), sorted(g[i] for i in p)) for g in plain]
                    orbits += (list(m), list(p)) == min(images)
            assert orbit_count(plain, a, b) == orbits == sizes[(a, b)], (kw, a, b)


def test_fixed_pairs_by_hand():
    assert cycles([1, 0, 2]) == [2, 1]
    # the identity on 5 points fixes every pair: C(5, 2) C(3, 1)
    assert fixed_pairs([1] * 5, 2, 1) == 30
    # cycles 2, 2, 1: M of 2 is one 2-cycle (2 ways), P of 1 the fixed point
    assert fixed_pairs([2, 2, 1], 2, 1) == 2
    assert fixed_pairs([3], 1, 0) == 0


def test_a_huge_configuration_is_told_at_once():
    cfg = make_config("hex4", 13)
    t0 = time.perf_counter()
    shape = Shape(cfg, (13, 13))
    total, tables = shape.total, shape.table_bytes
    assert time.perf_counter() - t0 < 2
    from math import comb

    raw = comb(48, 13) * comb(35, 13)  # one side to move (colours fold), 6 symmetries
    assert raw // 6 <= total <= raw // 6 * 1.01
    assert tables > 5 * comb(48, 13)
