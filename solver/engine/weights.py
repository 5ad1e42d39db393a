"""The evaluation's weights (:mod:`solver.kernels.evaluate`), fitted to game outcomes.

``FITTED`` comes from ``python scripts/tune_eval.py --games 2000 --seed 1 --variant both``
(self-play positions of hex(4) 13 v 13, base rules and ``capture``, and their outcomes; a
logistic fit, see :mod:`solver.engine.tuning`); the fit's command and figures are in docs/engine.md.
"""

from __future__ import annotations

import numpy as np

from solver.kernels.evaluate import NF

NAMES = ("centre", "two_of_three", "ring1", "ring2", "mobility", "central_mobility", "my_threats",
         "their_threats", "material", "cramped", "tempo")
# in logits per unit of each feature
FITTED = (0.133, 0.210, 0.195, 0.146, 0.079, 0.126, 0.800, -0.252, 0.679, 2.174, 0.192)


def default_weights() -> np.ndarray:
    """A fresh copy of the fitted weights, as the kernels take them."""
    w = np.array(FITTED, dtype=np.float64)
    assert w.shape == (NF,) and len(NAMES) == NF
    return w
