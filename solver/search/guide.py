"""Guided df-pn (df-pn+): initial proof and disproof numbers from the engine's evaluation.

    prover = Prover(cfg, guided=True)      # rotary prove --guided

A child that df-pn meets for the first time normally starts with ``pn = dn = 1``. Guided,
it starts with numbers from the static evaluation of :mod:`solver.kernels.evaluate` (the
engine's, with its fitted weights), seen from the attacker of the question:
``pn = 1 + min(cap, -a // step)`` when the attacker's score ``a`` is below 0, ``dn = 1 +
min(cap, a // step)`` when above (:func:`solver.kernels.dfpn.initial_numbers`). A child
that looks good for the attacker is then tried first at his turns and last at the
defender's. The numbers stay positive integers, so the search proves and disproves exactly
what plain df-pn does; only the order of the search, and so its cost and the proof tree
(the distance bound it finds), change.
"""

from __future__ import annotations

import numpy as np

from solver.game.config import Config
from solver.kernels.dfpn import Guide, no_guide
from solver.kernels.evaluate import EBUF, zone_masks

STEP = 200  # hundredths of a logit per unit of a number: two logits
CAP = 4  # at most 1 + CAP: a bad guess costs a bounded detour


def make_guide(cfg: Config, on: bool, step: int = STEP, cap: int = CAP, weights=None) -> Guide:
    """The kernel's :class:`~solver.kernels.dfpn.Guide` for ``cfg`` (``on`` False: plain df-pn);
    ``weights`` default to the engine's eleven-feature weights of base rules
    (:data:`solver.engine.weights.GUIDE`), with which the guide's step and cap were chosen."""
    if not on:
        return no_guide()
    if step < 1 or cap < 0:
        raise ValueError(f"guided df-pn needs step >= 1 and cap >= 0, got step {step}, cap {cap}")
    from solver.engine.weights import GUIDE

    w = np.array(GUIDE if weights is None else weights, dtype=np.float64)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    return Guide(1, zones, w, np.zeros(EBUF, dtype=np.float64), int(step), int(cap))
