"""The board and rules of a configuration as plain arrays for the kernels.

:func:`make_geo` takes plain masks, neighbour lists and permutations;
:func:`solver.index.build_geo` gives it those of a ``Config``.

``Geo`` is a namedtuple of arrays and ints (numba passes namedtuples into ``@njit``
functions). Sides: a position is stored from the mover's view ``(mover, opponent, side)``
where ``side`` is the mover's colour. Where a colour-swapping symmetry exists (always
without ``capture``), side-``o`` positions are folded onto side ``x`` by it and only
``sides == 1`` table exists.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

Geo = namedtuple(
    "Geo",
    "npoints nbr ringmask pivots centre traps perm permbits swap swap_identity sides rot",
)


def _bits(points) -> np.uint64:
    out = 0
    for p in points:
        out |= 1 << int(p)
    return np.uint64(out)


def make_geo(neighbours, pivots: int, centre: int, traps_x: int, traps_o: int, plain, swapping) -> Geo:
    """Arrays of a board, its rules and the symmetry group used for indexing.

    ``neighbours[z]``: the six neighbours of point z in ring order (-1 off the board);
    ``pivots``, ``centre``, ``traps_x``, ``traps_o``: point sets as bit masks (``pivots``:
    the points a ring may turn around); ``plain`` / ``swapping``: the symmetries (point
    permutations) that keep / exchange the colours' trap fields, the identity first.
    """
    n = len(neighbours)
    nbr = np.array(neighbours, dtype=np.int64)
    ringmask = np.array([_bits(q for q in ring if q >= 0) for ring in neighbours], dtype=np.uint64)
    traps = np.array([traps_x, traps_o], dtype=np.uint64)
    perm = np.array(plain, dtype=np.int64)
    permbits = np.zeros((len(plain), n), dtype=np.uint64)
    for g, sym in enumerate(plain):
        for p in range(n):
            permbits[g, p] = np.uint64(1) << np.uint64(sym[p])
    if swapping:
        swap = np.array(swapping[0], dtype=np.int64)
        sides = 1
    else:
        swap = np.arange(n, dtype=np.int64)
        sides = 2
    swap_identity = bool(np.all(swap == np.arange(n)))
    return Geo(n, nbr, ringmask, np.uint64(pivots), np.uint64(centre), traps, perm, permbits, swap, swap_identity,
               sides, ring_tables(nbr))


def ring_tables(nbr: np.ndarray) -> np.ndarray:
    """``rot[z, k, pattern]``: the board bits of a ring's content after turning by k.

    ``pattern`` is the ring's content as :func:`solver.kernels.moves.ring_pattern` reads
    it — the ring's points packed in the order of their numbers (``pext`` of the board
    by the ring's mask), so reading it is one instruction; a ball turned onto an
    off-board neighbour is gone.
    """
    n = len(nbr)
    rot = np.zeros((n, 6, 64), dtype=np.uint64)
    for z in range(n):
        slots = sorted((i for i in range(6) if nbr[z, i] >= 0), key=lambda i: nbr[z, i])  # bit j: slots[j]
        for k in range(6):
            for pattern in range(1 << len(slots)):
                out = 0
                for j, i in enumerate(slots):
                    dst = nbr[z, (i + k) % 6]
                    if pattern >> j & 1 and dst >= 0:
                        out |= 1 << int(dst)
                rot[z, k, pattern] = np.uint64(out)
    return rot
