"""The engine's static evaluation: features of a rotation-phase position and their weighted sum.

A position is seen from the mover's view ``(m, p)`` (mover's balls, opponent's). Every
feature is a small integer; the score is ``round(SCALE * w · f)``, so a score of ``SCALE``
is one logit of the fitted win probability (``solver.engine.tuning`` fits ``w`` to game
outcomes by logistic regression). The features (index: meaning):

* ``0`` centre: the mover's balls on the centre minus the opponent's;
* ``1`` two of three: the mover holds two centre points and the opponent none, minus the
  same for the opponent;
* ``2``, ``3`` the first and second ring around the centre: balls, mover minus opponent;
* ``4`` mobility: the mover's legal points minus the opponent's (as if he were to move);
* ``5`` central mobility: the same, counting only the centre and its first ring;
* ``6``, ``7`` threats: the mover's / the opponent's points where a turn completes his
  centre at once (at most 3 counted);
* ``8`` material: balls, mover minus opponent (balls leave only under ``edge``/``capture``);
* ``9`` cramped: the opponent has at most one legal point, minus the same for the mover;
* ``10`` tempo: 1 (the side to move's share).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz, popcount
from solver.kernels.moves import legal_pivots, ring_pattern

NF = 11
SCALE = 100.0
ZONES = 4  # centre, first ring, second ring, central pivots (centre and first ring)


def zone_masks(neighbours, centre: int) -> np.ndarray:
    """``zones[i]`` as bit masks: the centre, its first and second rings, and both together."""
    ring1 = 0
    for z in range(len(neighbours)):
        if centre >> z & 1:
            for q in neighbours[z]:
                if q >= 0:
                    ring1 |= 1 << q
    ring1 &= ~centre
    ring2 = 0
    for z in range(len(neighbours)):
        if ring1 >> z & 1:
            for q in neighbours[z]:
                if q >= 0:
                    ring2 |= 1 << q
    ring2 &= ~(centre | ring1)
    return np.array([centre, ring1, ring2, centre | ring1], dtype=np.uint64)


@njit(cache=True, _nrt=False)
def threat_points(m, p, legal, geo, zones):
    """How many of the points in ``legal`` (``m``'s legal points) have a turn that fills
    the centre with ``m``'s balls."""
    c = geo.centre
    cand = legal & zones[3]
    n = 0
    while cand:
        z = ctz(cand)
        cand &= cand - ONE
        keep = m & ~geo.ringmask[z]
        pat = ring_pattern(m, z, geo.ringmask)
        for k in range(1, 6):
            if (keep | geo.rot[z, k, pat]) & c == c:
                n += 1
                break
    return n


@njit(cache=True, _nrt=False)
def features(m, p, geo, zones, out):
    """Write the features of ``(m, p)`` (mover to move, position not over) into ``out``."""
    c = zones[0]
    cm = np.int64(popcount(m & c))  # popcount is uint64: differences need signed ints
    cp = np.int64(popcount(p & c))
    out[0] = cm - cp
    out[1] = (1 if cm == 2 and cp == 0 else 0) - (1 if cp == 2 and cm == 0 else 0)
    out[2] = np.int64(popcount(m & zones[1])) - np.int64(popcount(p & zones[1]))
    out[3] = np.int64(popcount(m & zones[2])) - np.int64(popcount(p & zones[2]))
    lm = legal_pivots(m, p, geo)
    lp = legal_pivots(p, m, geo)
    nm = np.int64(popcount(lm))
    np_ = np.int64(popcount(lp))
    out[4] = nm - np_
    out[5] = np.int64(popcount(lm & zones[3])) - np.int64(popcount(lp & zones[3]))
    out[6] = min(threat_points(m, p, lm, geo, zones), 3)
    out[7] = min(threat_points(p, m, lp, geo, zones), 3)
    out[8] = np.int64(popcount(m)) - np.int64(popcount(p))
    out[9] = (1 if np_ <= 1 else 0) - (1 if nm <= 1 else 0)
    out[10] = 1


@njit(cache=True, _nrt=False)
def features_batch(ms, ps, geo, zones, out):
    """:func:`features` of each ``(ms[i], ps[i])`` into the row ``out[i]`` (``out`` is
    ``len(ms)`` by ``NF``; the fit of :mod:`solver.engine.tuning` reads positions in bulk)."""
    for i in range(ms.shape[0]):
        features(ms[i], ps[i], geo, zones, out[i])


@njit(cache=True, _nrt=False)
def evaluate(m, p, geo, zones, w, buf):
    """The score of ``(m, p)`` for the mover, in hundredths of a logit (clamped to ±20000)."""
    features(m, p, geo, zones, buf)
    s = 0.0
    for i in range(NF):
        s += w[i] * buf[i]
    v = int(round(s * SCALE))
    if v > 20000:
        return 20000
    if v < -20000:
        return -20000
    return v
