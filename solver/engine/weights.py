"""The evaluation's weights (:mod:`solver.kernels.evaluate`), fitted to game outcomes, one
vector per rule set.

``FITTED["base"]`` comes from ``python scripts/tune_eval.py --data DIR --variant base`` on
the positions that ``python scripts/selfplay_positions.py --variant base --games 12000
--seed 7 --chunk 500 --weights eleven --out DIR`` saves (self-play games of hex(4) 13 v 13 and their
outcomes; an antisymmetric logistic fit, see :mod:`solver.engine.tuning`); the figures are
in docs/engine.md. ``ELEVEN``, the first eleven features' weights before the patterns, came
from ``python scripts/tune_eval.py --games 2000 --seed 1 --variant both``.
``FITTED["capture"]`` and ``FITTED["edge"]``: the same fit with ``--variant capture`` /
``edge`` on 2,500 games each (``selfplay_positions.py --games 2500``). A rule set
without its own vector takes the nearest: ``capture`` where captures are on, else ``edge``
where it is on, else ``base``.

A rule set may also have a network (``nets/KEY.npz``: the whole weight vector, its linear
weights fitted with it, and the board it was fitted on), written by ``python
scripts/fit_network.py``; the engine plays with it on that board (base rules and
``capture`` on hex(4)), and with the linear weights elsewhere.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from solver.kernels.evaluate import HMAX, NCORE, NF, network_length

NETS = Path(__file__).resolve().parent / "nets"  # a rule set's network: nets/KEY.npz

NAMES = ("centre", "two_of_three", "ring1", "ring2", "mobility", "central_mobility", "my_threats",
         "their_threats", "material", "cramped", "tempo",
         "centre_1_0", "centre_0_1", "centre_2_0", "centre_0_2", "centre_1_1", "centre_2_1", "centre_1_2",
         "centre_legal_mine", "centre_legal_theirs",
         "two_mine", "two_theirs", "two_legal_mine", "two_legal_theirs",
         "one_mine", "one_theirs", "one_legal_mine", "one_legal_theirs",
         "ring2_legal_mine", "ring2_legal_theirs", "far_legal_mine", "far_legal_theirs",
         "latent_mine", "latent_theirs", "double_threat")
# the first eleven features' weights before the patterns (one vector for every rule set)
ELEVEN = (0.133, 0.210, 0.195, 0.146, 0.079, 0.126, 0.800, -0.252, 0.679, 2.174, 0.192)
# the df-pn guide's weights (:mod:`solver.search.guide`), with which its step and cap were chosen
GUIDE = ELEVEN
# in logits per unit of each feature
FITTED: dict[str, tuple[float, ...]] = {
    "base": (0.146, -0.026, 0.226, 0.303, 0.377, 0.231, 0.800, -0.073, 0.250, 1.033, 0.408, 0.182, -0.182, -0.026,
             0.026, 0.000, 0.016, -0.016, 0.078, -0.078, 0.189, -0.189, 0.063, -0.063, 0.037, -0.037, 0.090, -0.090,
             0.146, -0.146, 0.000, 0.000, 0.216, -0.216, -1.371),
    "capture": (0.240, 0.085, 0.067, 0.099, 0.140, 0.111, 0.800, -0.055, 1.296, 1.583, 0.345, -0.053, 0.053, 0.085,
                -0.085, 0.000, 0.122, -0.122, 0.211, -0.211, 0.117, -0.117, 0.115, -0.115, -0.049, 0.049, -0.216, 0.216,
                0.029, -0.029, 0.000, 0.000, -0.047, 0.047, -0.024),
    "edge": (0.117, 0.007, 0.142, 0.217, 0.063, 0.132, 0.800, -0.534, 1.184, 0.073, 0.266, 0.013, -0.013, 0.007, -0.007,
             0.000, 0.090, -0.090, 0.008, -0.008, 0.112, -0.112, 0.154, -0.154, 0.031, -0.031, -0.030, 0.030, 0.024,
             -0.024, -0.093, 0.093, 0.136, -0.136, 0.263),
}


def rules_key(cfg=None) -> str:
    """The rule set whose weights ``cfg`` plays with: ``base``, ``capture`` or ``edge``."""
    if cfg is None:
        return "base"
    if cfg.capture and "capture" in FITTED:
        return "capture"
    if cfg.edge and "edge" in FITTED:
        return "edge"
    return "base"


def default_weights(cfg=None) -> np.ndarray:
    """A fresh copy of the weights that ``cfg``'s rules play with, as the kernels take them:
    the rule set's network where one was fitted on ``cfg``'s board (``nets/KEY.npz``, from
    ``scripts/fit_network.py``), else its linear weights (base rules without either)."""
    if cfg is not None:
        net = network_weights(rules_key(cfg), cfg.board.n)
        if net is not None:
            return net.copy()
    return linear_weights(cfg)


def linear_weights(cfg=None) -> np.ndarray:
    """A fresh copy of the fitted linear weights of ``cfg``'s rules (the evaluation without a network)."""
    w = np.array(FITTED[rules_key(cfg)], dtype=np.float64)
    assert w.shape in ((NCORE,), (NF,)) and len(NAMES) == NF
    return w


@lru_cache(maxsize=None)
def network_weights(key: str, board_n: int) -> np.ndarray | None:
    """The weight vector of the network fitted for rule set ``key`` on the board hex(``board_n``), or None."""
    path = NETS / f"{key}.npz"
    if not path.exists():
        return None
    with np.load(path) as z:
        if int(z["board"]) != board_n:
            return None
        w = np.array(z["w"], dtype=np.float64)
    h, n = int(w[NF]), int(w[NF + 1])
    if not (1 <= h <= HMAX and w.shape == (network_length(n, h),)):
        raise ValueError(f"{path} is not a network of the evaluation's layout")
    w.setflags(write=False)
    return w
