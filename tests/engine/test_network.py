"""The evaluation's network: the kernel against the numpy model it is fitted as, its
antisymmetry, which rule sets and boards get one, and the fit learning what the linear
features cannot see."""

from __future__ import annotations

import numpy as np
import pytest

from solver.engine.netfit import Model, NetFit, board_bits, cross_entropy, fit_network
from solver.engine.tuning import HAND_SET, feature_rows
from solver.engine.weights import FITTED, default_weights, linear_weights, network_weights, rules_key
from solver.game.config import make_config, standard_config, symmetry_classes
from solver.index import build_geo
from solver.kernels.evaluate import EBUF, HMAX, NET, NF, evaluate, network, zone_masks
from tests.engine.test_tuning import random_positions
from tests.helpers import load_script


def random_model(cfg, hidden: int, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    model = Model(cfg.board.size, hidden, np.array(FITTED["base"]), seed)
    model.b[:] = rng.normal(0, 0.5, hidden)
    model.v[:] = rng.normal(0, 1.0, hidden)
    return model


@pytest.mark.parametrize("hidden", [1, 7, 16])
def test_the_kernel_scores_as_the_fitted_model(hidden):
    cfg = standard_config()
    model = random_model(cfg, hidden, seed=hidden)
    w = model.vector()
    assert w.shape == (NET + 2 * cfg.board.size * hidden + 2 * hidden,)
    m, p = random_positions(cfg, 300, seed=3)
    X = feature_rows(cfg, m, p)
    n = cfg.board.size
    want = np.clip(np.round(model.logits(X.astype(np.float32), board_bits(m, n), board_bits(p, n)).astype(np.float64)
                            * 100), -20000, 20000)
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    buf = np.zeros(EBUF)
    got = np.array([evaluate(a, b, geo, zones, w, buf) for a, b in zip(m, p)])
    # the numpy model sums in float32: a score may round the other way at a half
    assert np.max(np.abs(got - want)) <= 1
    assert np.mean(got == want) > 0.95
    assert np.std(got) > 50  # the network moves the scores: not a test of zeros


def test_a_model_read_back_from_its_vector_scores_as_it_did():
    cfg = standard_config()
    model = random_model(cfg, 5, seed=9)
    back = Model.from_vector(model.vector())
    m, p = random_positions(cfg, 100, seed=9)
    X = feature_rows(cfg, m, p)
    n = cfg.board.size
    M, P = board_bits(m, n), board_bits(p, n)
    assert np.allclose(back.logits(X, M, P), model.logits(X.astype(np.float32), M, P), atol=1e-4)
    assert np.array_equal(back.vector(), model.vector())
    with pytest.raises(ValueError, match="layout"):
        Model.from_vector(model.vector()[:-1])


def test_the_network_is_antisymmetric():
    cfg = standard_config()
    w = random_model(cfg, HMAX, seed=5).vector()
    buf = np.zeros(EBUF)
    m, p = random_positions(cfg, 200, seed=4)
    for a, b in zip(m, p):
        x = network(a, b, w, buf)
        assert network(b, a, w, buf) == pytest.approx(-x, abs=1e-9)


@pytest.mark.parametrize("cfg", [standard_config(), standard_config(capture=True)], ids=["base", "capture"])
def test_base_and_capture_on_hex4_play_with_their_shipped_networks(cfg):
    w = default_weights(cfg)
    h, n = int(w[NF]), int(w[NF + 1])
    assert n == cfg.board.size and 1 <= h <= HMAX
    assert np.array_equal(w, network_weights(rules_key(cfg), cfg.board.n))
    w[0] += 1.0  # a fresh copy: the cached vector stays as it was
    assert default_weights(cfg)[0] == w[0] - 1.0


def test_the_two_networks_differ():
    assert not np.array_equal(default_weights(standard_config()), default_weights(standard_config(capture=True)))


@pytest.mark.parametrize("cfg", [make_config("hex3", 4), make_config("hex3", 4, edge=True), standard_config(edge=True)],
                         ids=["hex3", "hex3-edge", "edge"])
def test_without_a_network_for_the_board_or_rules_the_linear_weights_play(cfg):
    assert np.array_equal(default_weights(cfg), linear_weights(cfg))
    assert np.array_equal(linear_weights(cfg), np.array(FITTED[rules_key(cfg)]))


def test_the_fit_learns_what_the_features_cannot_see():
    """Results decided by two points far from the centre, which no feature looks at: the
    network's loss falls well below the linear fit's."""
    cfg = standard_config()
    m, p = random_positions(cfg, 3000, seed=6)
    a, b = 0, cfg.board.size - 1  # two corners; the labels have no symmetry, so the identity alone below
    y = (((m >> np.uint64(a)) & np.uint64(1)) | ((m >> np.uint64(b)) & np.uint64(1))).astype(np.float64)
    X = feature_rows(cfg, m, p)
    lin = np.array(HAND_SET)
    start = cross_entropy(X @ lin, y)
    model = fit_network(X, m, p, y, symmetry_classes(cfg)[0][:1], lin, NetFit(hidden=4, epochs=6, batch=256, lr=1e-2))
    n = cfg.board.size
    end = cross_entropy(model.logits(X.astype(np.float32), board_bits(m, n), board_bits(p, n)), y)
    assert end < 0.5 * start


def test_fit_network_writes_a_vector_the_engine_takes_and_scores_it(tmp_path, capsys):
    cfg = standard_config()
    m, p = random_positions(cfg, 400, seed=8)
    rng = np.random.default_rng(8)
    data = tmp_path / "data"
    data.mkdir()
    np.savez(data / "base-0000000.npz", m=m, p=p, s=np.zeros(len(m), np.int8), game=np.arange(len(m)) // 4,
             y=(rng.random(len(m)) < 0.5).astype(np.float64))
    fit = load_script("fit_network")
    out = tmp_path / "net.npz"
    assert fit.main(["--data", str(data), "--hidden", "3", "--epochs", "1", "--out", str(out)]) == 0
    with np.load(out) as z:
        w, board = z["w"], int(z["board"])
    assert board == cfg.board.n and int(w[NF]) == 3 and w.shape == (NET + 2 * cfg.board.size * 3 + 6,)
    buf = np.zeros(EBUF)
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    assert all(abs(evaluate(a, b, geo, zones, w, buf)) <= 20000 for a, b in zip(m[:20], p[:20]))
    capsys.readouterr()
    assert fit.main(["--data", str(data), "--score", str(out)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "shipped linear weights" in line and "net.npz" in line
    assert fit.main(["--data", str(data), "--score", str(tmp_path / "none.npz")]) == 2
    assert fit.main(["--data", str(tmp_path / "empty"), "--variant", "base"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(e.startswith("error: ") for e in err) and "none.npz" in err[0]
