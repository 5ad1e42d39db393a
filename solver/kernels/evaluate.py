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

Patterns around the centre, each a 0/1 indicator or a count of points with one weight, so
that the board's symmetries (which permute the centre's points and its first ring) give
equal configurations equal weights:

* ``11..17`` the centre's ownership pattern, one-hot: the mover's and the opponent's balls
  on it ``(a, b)`` in the order of :data:`CENTRE_PATTERNS` (``(0, 0)`` is the reference: all
  seven 0);
* ``18``, ``19`` centre points that are empty and legal for the mover / for the opponent;
* ``20..23`` the first ring's three points next to two centre points (a turn there moves two
  centre points): the mover's ball, the opponent's ball, empty and legal for the mover,
  empty and legal for the opponent (counts of points);
* ``24..27`` the same for the first ring's six points next to one centre point;
* ``28``, ``29`` legal points in the second ring: the mover's, the opponent's;
* ``30``, ``31`` legal points further out: the mover's, the opponent's;
* ``32``, ``33`` latent threats: first-ring points where a turn would complete the mover's /
  the opponent's centre but which are not his legal points now (a ball stands there, or
  he lacks the majority) — one move from a threat;
* ``34`` double threat: the opponent has two or more threat points (one move rarely
  stops both).

A weight vector of ``NCORE`` entries scores with the first eleven alone and skips the
patterns' cost (:func:`evaluate`).

A longer vector adds a small network over the board (:data:`NET`): after the ``NF`` weights
come ``H`` and the board's number of points ``n``, then ``W`` (``2n`` rows of ``H``: row
``z`` for the mover's ball on point ``z``, row ``n + z`` for the opponent's), the biases
``b`` (``H``) and the output weights ``v`` (``H``). It adds ``v · (relu(h(m, p)) -
relu(h(p, m)))`` logits, ``h(m, p) = b + Σ W[z] + Σ W[n + z']`` over the mover's points
``z`` and the opponent's ``z'``: seen from the other side the sum changes sign, so the
evaluation stays antisymmetric but for the side to move's share, as the patterns do.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ctz, pext, popcount
from solver.kernels.moves import legal_pivots, ring_pattern

NF = 35
NCORE = 11  # the features before the patterns
NET = NF + 2  # where a network's rows start in the weight vector (after NF weights, H and n)
HMAX = 64  # the most hidden units a network may have
EBUF = NF + 2 * HMAX  # the scratch that evaluate needs: the features, then h(m, p) and h(p, m)


def network_length(n: int, h: int) -> int:
    """The weight vector's length with a network of ``h`` hidden units on a board of ``n`` points."""
    return NET + 2 * n * h + 2 * h

SCALE = 100.0
# zones[i]: 0 the centre, 1 its first ring, 2 the second ring, 3 the centre and the first
# ring (the points from which a turn changes the centre), 4 / 5 the first ring's points next
# to two / one centre points; 6 + j: the points around which a turn may fill the centre
# for a side holding the centre points of pattern j (the centre's bits packed in point
# order): those whose ring holds every centre point the side lacks
ZONES = 14
FILL = 6
CENTRE_PATTERNS = ((1, 0), (0, 1), (2, 0), (0, 2), (1, 1), (2, 1), (1, 2))
# the feature of a centre pattern (a, b) at index a * 4 + b, -1 for none
_PATTERN_INDEX = np.full(16, -1, dtype=np.int64)
for _i, (_a, _b) in enumerate(CENTRE_PATTERNS):
    _PATTERN_INDEX[_a * 4 + _b] = 11 + _i


def zone_masks(neighbours, centre: int) -> np.ndarray:
    """The evaluation's zones as bit masks (see ``ZONES``)."""
    n = len(neighbours)

    def around(mask: int) -> int:
        out = 0
        for z in range(n):
            if mask >> z & 1:
                for q in neighbours[z]:
                    if q >= 0:
                        out |= 1 << q
        return out

    ring1 = around(centre) & ~centre
    ring2 = around(ring1) & ~(centre | ring1)
    two = 0
    for z in range(n):
        if ring1 >> z & 1 and sum(1 for q in neighbours[z] if q >= 0 and centre >> q & 1) == 2:
            two |= 1 << z
    points = [q for q in range(n) if centre >> q & 1]
    fill = []
    for j in range(1 << len(points)):
        held = sum(1 << q for i, q in enumerate(points) if j >> i & 1)
        ok = 0
        for z in range(n):
            ring = sum(1 << q for q in neighbours[z] if q >= 0)
            if not centre >> z & 1 and centre & ~held & ~ring == 0:
                ok |= 1 << z
        fill.append(ok)
    return np.array([centre, ring1, ring2, centre | ring1, two, ring1 & ~two] + fill, dtype=np.uint64)


@njit(cache=True, _nrt=False)
def filling_points(m, cand, geo, zones):
    """How many of the pivots in ``cand`` (empty or not, off the centre) have a turn that
    fills the centre with ``m``'s balls (whether or not ``m`` may turn there)."""
    c = geo.centre
    cand &= zones[FILL + np.int64(pext(m, c))]  # a centre point off the ring stays as it is
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
def threat_points(m, p, legal, geo, zones):
    """How many of the points in ``legal`` (``m``'s legal points) have a turn that fills
    the centre with ``m``'s balls."""
    return filling_points(m, legal & zones[3], geo, zones)


@njit(cache=True, _nrt=False, inline="always")
def _core(m, p, geo, zones, out):
    """Features ``0 .. NCORE - 1`` into ``out``; returns what the patterns reuse: both sides'
    legal points, their balls on the centre and the opponent's threat points."""
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
    tp = threat_points(p, m, lp, geo, zones)
    out[6] = min(threat_points(m, p, lm, geo, zones), 3)
    out[7] = min(tp, 3)
    out[8] = np.int64(popcount(m)) - np.int64(popcount(p))
    out[9] = (1 if np_ <= 1 else 0) - (1 if nm <= 1 else 0)
    out[10] = 1
    return lm, lp, cm, cp, tp


@njit(cache=True, _nrt=False, inline="always")
def _patterns(m, p, lm, lp, cm, cp, tp, geo, zones, out):
    """Features ``NCORE .. NF - 1`` into ``out`` (the arguments as :func:`_core` returns them)."""
    for i in range(NCORE, NF):
        out[i] = 0
    f = _PATTERN_INDEX[cm * 4 + cp]
    if f >= 0:
        out[f] = 1
    c = zones[0]
    out[18] = np.int64(popcount(lm & c))
    out[19] = np.int64(popcount(lp & c))
    two = zones[4]
    one = zones[5]
    out[20] = np.int64(popcount(m & two))
    out[21] = np.int64(popcount(p & two))
    out[22] = np.int64(popcount(lm & two))
    out[23] = np.int64(popcount(lp & two))
    out[24] = np.int64(popcount(m & one))
    out[25] = np.int64(popcount(p & one))
    out[26] = np.int64(popcount(lm & one))
    out[27] = np.int64(popcount(lp & one))
    r2 = zones[2]
    out[28] = np.int64(popcount(lm & r2))
    out[29] = np.int64(popcount(lp & r2))
    far = ~(zones[3] | r2)
    out[30] = np.int64(popcount(lm & far))
    out[31] = np.int64(popcount(lp & far))
    ring1 = zones[1] & geo.pivots
    out[32] = filling_points(m, ring1 & ~lm, geo, zones)
    out[33] = filling_points(p, ring1 & ~lp, geo, zones)
    out[34] = 1 if tp >= 2 else 0


@njit(cache=True, _nrt=False)
def features(m, p, geo, zones, out):
    """Write the features of ``(m, p)`` (mover to move, position not over) into ``out``."""
    lm, lp, cm, cp, tp = _core(m, p, geo, zones, out)
    _patterns(m, p, lm, lp, cm, cp, tp, geo, zones, out)


@njit(cache=True, _nrt=False)
def features_batch(ms, ps, geo, zones, out):
    """:func:`features` of each ``(ms[i], ps[i])`` into the row ``out[i]`` (``out`` is
    ``len(ms)`` by ``NF``; the fit of :mod:`solver.engine.tuning` reads positions in bulk)."""
    for i in range(ms.shape[0]):
        features(ms[i], ps[i], geo, zones, out[i])


@njit(cache=True, _nrt=False, inline="always")
def _add_rows(x, n, h, w, buf, a, b):
    """For each point ``z`` of ``x``: ``W[z]`` into ``buf[a:a + h]``, ``W[n + z]`` into ``buf[b:b + h]``."""
    while x:
        z = np.int64(ctz(x))
        x &= x - ONE
        own = NET + z * h
        other = NET + (n + z) * h
        for j in range(h):
            buf[a + j] += w[own + j]
            buf[b + j] += w[other + j]


@njit(cache=True, _nrt=False, inline="always")
def network(m, p, w, buf):
    """The network's share of the score of ``(m, p)`` in logits (the layout in the module's
    docstring); ``buf[NF:NF + 2H]`` is its scratch, ``h(m, p)`` then ``h(p, m)``."""
    h = np.int64(w[NF])
    n = np.int64(w[NF + 1])
    bias = NET + 2 * n * h
    a = NF
    b = NF + h
    for j in range(h):
        buf[a + j] = w[bias + j]
        buf[b + j] = w[bias + j]
    _add_rows(m, n, h, w, buf, a, b)  # the mover's balls: his rows in h(m, p), the opponent's in h(p, m)
    _add_rows(p, n, h, w, buf, b, a)
    out = bias + h
    s = 0.0
    for j in range(h):
        s += w[out + j] * (max(buf[a + j], 0.0) - max(buf[b + j], 0.0))
    return s


@njit(cache=True, _nrt=False)
def evaluate(m, p, geo, zones, w, buf):
    """The score of ``(m, p)`` for the mover, in hundredths of a logit (clamped to ±20000).

    ``w`` holds ``NF`` weights, or only the first ``NCORE``: then the patterns are neither
    computed nor counted; or ``NF`` and a network (see the module's docstring). ``buf``
    keeps ``EBUF`` entries."""
    lm, lp, cm, cp, tp = _core(m, p, geo, zones, buf)
    n = min(w.shape[0], NF)
    if n > NCORE:
        _patterns(m, p, lm, lp, cm, cp, tp, geo, zones, buf)
    s = 0.0
    for i in range(n):
        s += w[i] * buf[i]
    if w.shape[0] > NF:
        s += network(m, p, w, buf)
    v = int(round(s * SCALE))
    if v > 20000:
        return 20000
    if v < -20000:
        return -20000
    return v
