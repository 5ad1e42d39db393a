"""The evaluation's features against a plain reading of the rules, position by position."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver.game.config import make_config, standard_config
from solver.game.rules import is_legal_point, rotate
from solver.index import build_geo
from solver.kernels.evaluate import CENTRE_PATTERNS, NCORE, NF, SCALE, evaluate, features, zone_masks

CONFIGS = [standard_config(), standard_config(capture=True), standard_config(edge=True), make_config(3, 5)]


def centred_position(cfg, rng: random.Random) -> tuple[int, int]:
    """A random (mover, opponent) position, not over: each centre point empty, the mover's
    or the opponent's with equal chances, the other balls (up to the rules' count) anywhere else."""
    board = cfg.board
    centre = [q for q in range(board.size) if board.centre_mask >> q & 1]
    while True:
        own = [rng.randrange(3) for _ in centre]
        if own not in ([1, 1, 1], [2, 2, 2]):
            break
    m = sum(1 << q for q, o in zip(centre, own) if o == 1)
    p = sum(1 << q for q, o in zip(centre, own) if o == 2)
    rest = [q for q in range(board.size) if q not in centre]
    rng.shuffle(rest)
    a = rng.randint(max(cfg.balls - 4, 1), cfg.balls) - m.bit_count()
    b = rng.randint(max(cfg.balls - 4, 1), cfg.balls) - p.bit_count()
    m |= sum(1 << q for q in rest[:a])
    p |= sum(1 << q for q in rest[a:a + b])
    return m, p


def reference(cfg, m: int, p: int) -> list[int]:
    """Features 11 and on, from the rules module and the board's neighbour lists."""
    board = cfg.board
    c = board.centre_mask
    nbrs = board.neighbours
    ring1 = {q for z in range(board.size) if c >> z & 1 for q in nbrs[z] if q >= 0 and not c >> q & 1}
    ring2 = {q for z in ring1 for q in nbrs[z] if q >= 0 and not c >> q & 1 and q not in ring1}
    two = {z for z in ring1 if sum(1 for q in nbrs[z] if q >= 0 and c >> q & 1) == 2}
    one = ring1 - two
    legal_m = {z for z in range(board.size) if is_legal_point(cfg, m, p, z)}
    legal_p = {z for z in range(board.size) if is_legal_point(cfg, p, m, z)}
    mine = {z for z in range(board.size) if m >> z & 1}
    theirs = {z for z in range(board.size) if p >> z & 1}
    centre = {z for z in range(board.size) if c >> z & 1}

    def fills(side: int, other: int, z: int) -> bool:
        return any(rotate(cfg, side, other, z, k)[0] & c == c for k in range(1, 6))

    def threats(side: int, other: int, legal: set[int]) -> int:
        return sum(1 for z in legal if fills(side, other, z))

    f = [0] * (NF - 11)
    ab = ((m & c).bit_count(), (p & c).bit_count())
    if ab in CENTRE_PATTERNS:
        f[CENTRE_PATTERNS.index(ab)] = 1
    f[7], f[8] = len(legal_m & centre), len(legal_p & centre)
    f[9:13] = len(mine & two), len(theirs & two), len(legal_m & two), len(legal_p & two)
    f[13:17] = len(mine & one), len(theirs & one), len(legal_m & one), len(legal_p & one)
    f[17], f[18] = len(legal_m & ring2), len(legal_p & ring2)
    far = set(range(board.size)) - centre - ring1 - ring2
    f[19], f[20] = len(legal_m & far), len(legal_p & far)
    f[21] = sum(1 for z in ring1 - legal_m if fills(m, p, z))
    f[22] = sum(1 for z in ring1 - legal_p if fills(p, m, z))
    f[23] = int(threats(p, m, legal_p) >= 2)
    return f


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.describe())
def test_pattern_features_match_the_rules(cfg):
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    rng = random.Random(5)
    buf = np.zeros(NF)
    seen = np.zeros(NF, dtype=bool)
    for _ in range(400):
        m, p = centred_position(cfg, rng)
        features(np.uint64(m), np.uint64(p), geo, zones, buf)
        assert list(buf[11:].astype(int)) == reference(cfg, m, p), (m, p)
        seen |= buf != 0
    # every pattern feature met a position where it is not 0, but legal points in a zone
    # without pivots (the second ring and beyond: edge points unless with edge)
    pivots = int(geo.pivots)
    r2, far = int(zones[2]), ~int(zones[2] | zones[3])
    none = ({28, 29} if pivots & r2 == 0 else set()) | ({30, 31} if pivots & far == 0 else set())
    assert all(seen[i] for i in range(11, NF) if i not in none), np.flatnonzero(~seen)


@pytest.mark.parametrize("cfg", CONFIGS[:3], ids=lambda c: c.describe())
def test_evaluate_is_the_weighted_sum(cfg):
    """Full weights score ``w · f``; the first eleven alone score as if the patterns weighed 0."""
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    rng = random.Random(8)
    w = np.array([rng.uniform(-1.0, 1.0) for _ in range(NF)])
    core = w[:NCORE].copy()
    padded = np.concatenate([core, np.zeros(NF - NCORE)])
    buf, f = np.zeros(NF), np.zeros(NF)
    for _ in range(200):
        m, p = centred_position(cfg, rng)
        features(np.uint64(m), np.uint64(p), geo, zones, f)
        assert evaluate(np.uint64(m), np.uint64(p), geo, zones, w, buf) == int(round(SCALE * float(w @ f)))
        short = evaluate(np.uint64(m), np.uint64(p), geo, zones, core, buf)
        assert short == evaluate(np.uint64(m), np.uint64(p), geo, zones, padded, buf)
        assert short == int(round(SCALE * float(core @ f[:NCORE])))
