"""The Texel fit's parts: the bulk features against the one-position kernel and the rules,
the fit against weights it must recover, the self-play games against the rules."""

from __future__ import annotations

import numpy as np
import pytest

from solver.engine.score import Limit
from solver.engine.tuning import (
    CENTRE, DRAW_AT, HAND_SET, MIRRORED, MY_THREATS, NO_MOVE, PLY_LIMIT, REPETITION, SYMMETRIC, TEMPO, SelfPlay,
    antisymmetric_basis, design, feature_rows, fit, fit_antisymmetric, loss, match, match_openings, positions,
    self_play, split_games,
)
from solver.engine.weights import FITTED, linear_weights, rules_key
from solver.game.config import standard_config
from solver.game.position import X
from solver.game.rules import LOSS, ONGOING, WIN, legal_points, play, status
from solver.game.start import standard_start
from solver.index import build_geo
from solver.kernels.evaluate import NF, features, features_batch, zone_masks

CONFIGS = [standard_config(), standard_config(capture=True)]


def random_positions(cfg, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random placements of 8..13 balls each on the board (mover's, opponent's)."""
    rng = np.random.default_rng(seed)
    size = cfg.board.size
    ms, ps = [], []
    for _ in range(n):
        a, b = rng.integers(8, 14, size=2)
        cells = rng.permutation(size)[: a + b]
        ms.append(sum(1 << int(c) for c in cells[:a]))
        ps.append(sum(1 << int(c) for c in cells[a:]))
    return np.array(ms, dtype=np.uint64), np.array(ps, dtype=np.uint64)


@pytest.mark.parametrize("cfg", CONFIGS, ids=["base", "capture"])
def test_features_batch_equals_features(cfg):
    m, p = random_positions(cfg, 300, 7)
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    out = np.zeros((len(m), NF), dtype=np.int64)
    features_batch(m, p, geo, zones, out)
    one = np.zeros(NF, dtype=np.float64)
    for i in range(len(m)):
        features(m[i], p[i], geo, zones, one)
        assert np.array_equal(out[i], one), i
    # and a few features against the rules module, independently
    c = cfg.board.centre_mask
    for i in range(len(m)):
        mi, pi = int(m[i]), int(p[i])
        mob = len(legal_points(cfg, mi, pi)) - len(legal_points(cfg, pi, mi))
        assert out[i, 4] == mob
        assert out[i, 0] == (mi & c).bit_count() - (pi & c).bit_count()
        assert out[i, 8] == mi.bit_count() - pi.bit_count()
        assert out[i, 10] == 1
    assert np.array_equal(feature_rows(cfg, m, p), out.astype(np.float64))


def synthetic(w_true: np.ndarray, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer features like the evaluation's (the last one 1) and 0/1 results drawn
    from the logistic model with weights ``w_true``."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-3, 4, size=(n, len(w_true))).astype(np.float64)
    X[:, -1] = 1.0
    q = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    return X, (rng.random(n) < q).astype(np.float64)


def test_fit_recovers_known_weights():
    w_true = np.array([0.4, -0.7, 0.1, 0.0, 1.2, -0.25, 0.3])
    X, y = synthetic(w_true, 60_000, 1)
    w = fit(X, y, np.zeros(len(w_true)), l2=0.0)
    assert np.max(np.abs(w - w_true)) < 0.05, w
    # the maximum of the likelihood is at least as good as the truth on its own data
    assert loss(X, y, w) <= loss(X, y, w_true)


def test_fit_exact_on_expected_results():
    """With results equal to the model's probabilities the minimum is the truth itself."""
    rng = np.random.default_rng(2)
    w_true = np.zeros(NF)
    w_true[[0, 1, 2, 10, NF - 1]] = (0.5, -1.0, 0.25, 0.15, 0.3)
    X = rng.integers(-2, 3, size=(5000, NF)).astype(np.float64)
    X[:, 6] = 0.0  # a feature absent from the data keeps its starting weight
    X[:, 10] = 1.0
    y = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    w = fit(X, y, HAND_SET, l2=0.0)
    free = [i for i in range(NF) if i != 6]
    assert np.allclose(w[free], w_true[free], atol=1e-6)
    assert w[6] == HAND_SET[6]


def test_l2_shrinks_all_but_the_intercept():
    w_true = np.array([1.0, 1.0, 0.8])
    X, y = synthetic(w_true, 5000, 3)
    w0 = fit(X, y, np.zeros(3), l2=0.0)
    w1 = fit(X, y, np.zeros(3), l2=0.05)
    assert np.all(np.abs(w1[:2]) < np.abs(w0[:2]))


def test_split_is_by_game():
    test = split_games(50, 0.2, 4)
    assert test.sum() == 10
    assert np.array_equal(test, split_games(50, 0.2, 4))


def replay(cfg, game) -> list:
    """The game's positions, each move checked by the rules (``play`` raises if illegal)."""
    trail = [game.start]
    for mv in game.moves:
        trail.append(play(cfg, trail[-1], mv))
    return trail


@pytest.mark.parametrize("cfg", CONFIGS, ids=["base", "capture"])
def test_self_play_games_are_legal(cfg):
    how = SelfPlay(nodes=300, random_plies=4, max_plies=40, tt_bits=12)
    games = self_play(cfg, 6, 11, how)
    assert len({tuple(g.moves) for g in games}) > 1  # the games differ
    for g in games:
        assert g.start == standard_start()
        trail = replay(cfg, g)
        end = trail[-1]
        assert all(status(cfg, q) == ONGOING for q in trail[:-1])
        if g.end in (CENTRE, NO_MOVE):
            st = status(cfg, end)
            assert st in (WIN, LOSS)
            assert g.result == (1.0 if (st == WIN) == (end.turn == X) else 0.0)
            c = cfg.board.centre_mask
            assert (end.x & c == c or end.o & c == c) == (g.end == CENTRE)
        else:
            assert status(cfg, end) == ONGOING and g.result == 0.5
            if g.end == REPETITION:
                assert trail.count(end) == DRAW_AT
            else:
                assert g.end == PLY_LIMIT and len(g.moves) == how.max_plies
    m, p, s, gi, y = positions(cfg, games)
    assert len(m) == sum(len(g.moves) - g.searched_from for g in games)
    i = 0
    for k, g in enumerate(games):
        trail = replay(cfg, g)
        for pos in trail[g.searched_from:-1]:
            assert (int(m[i]), int(p[i]), int(s[i]), gi[i]) == (pos.mover, pos.opponent, pos.turn, k)
            assert y[i] == (g.result if pos.turn == X else 1.0 - g.result)
            i += 1
    rows, yq, _ = design(cfg, games)
    assert np.all(rows[:, 6] == 0) and len(yq) <= len(y)


def test_self_play_is_reproducible():
    cfg = CONFIGS[0]
    how = SelfPlay(nodes=200, max_plies=30, tt_bits=12)
    a = self_play(cfg, 3, 5, how)
    b = self_play(cfg, 2, 5, how, first=1)
    assert [g.moves for g in a[1:]] == [g.moves for g in b]


def test_match_counts_every_game():
    cfg = CONFIGS[0]
    openings = match_openings(cfg, 3, 1)
    assert openings[0] == [] and len({tuple(o) for o in openings}) == 3
    r = match(cfg, HAND_SET, HAND_SET, openings, Limit(nodes=200), max_plies=30, tt_bits=12)
    assert r.games == 6 and sum(r.pairs) == 3
    assert r.score == sum(i / 2 * n for i, n in enumerate(r.pairs)) == r.wins + 0.5 * r.draws


def test_antisymmetric_fit_ties_the_mirrored_weights():
    """The tied fit recovers an antisymmetric truth, and its weights stay tied on any data."""
    rng = np.random.default_rng(4)
    T = antisymmetric_basis()
    v_true = rng.normal(0.0, 0.3, T.shape[1])
    v_true[MY_THREATS] = 0.0
    w_true = T @ v_true
    X = rng.integers(0, 3, size=(20_000, NF)).astype(np.float64)
    X[:, MY_THREATS] = 0.0
    X[:, TEMPO] = 1.0
    y = 1.0 / (1.0 + np.exp(-(X @ w_true)))
    w = fit_antisymmetric(X, y, HAND_SET, l2=0.0)
    free = [i for i in range(NF) if i != MY_THREATS]
    assert np.allclose(w[free], w_true[free], atol=1e-5)
    assert w[MY_THREATS] == HAND_SET[MY_THREATS]
    noise = (rng.random(len(y)) < 0.5).astype(np.float64)  # results unrelated to the features
    w = fit_antisymmetric(X, noise, HAND_SET)
    for i, j in MIRRORED:
        assert w[i] == -w[j]
    assert all(w[i] == 0.0 for i in SYMMETRIC)


def test_default_weights_follow_the_rules():
    for cfg in (standard_config(), standard_config(capture=True), standard_config(edge=True)):
        key = rules_key(cfg)
        assert key in FITTED
        assert np.array_equal(linear_weights(cfg), np.array(FITTED[key]))
    assert rules_key(standard_config()) == "base"
