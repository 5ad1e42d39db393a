"""Symmetry keys: the canonical key of a search question, and its inverse.

A key ``(k1, k2)`` stands for a position seen from its mover ``(m, p, s)`` and a question
``q`` (0: the mover is the attacker; 1: the mover defends): the smallest (mover image,
opponent image) over the plain board symmetries, side-``o`` positions folded by a
colour-swapping symmetry where one exists, the side dropped where there are no traps
(there it changes nothing). ``k1`` holds the mover image with ``s`` in bit 63 and ``q`` in
bit 62, ``k2`` the opponent image. Symmetric positions share a key, so the tables of
:mod:`solver.kernels.table` and :mod:`solver.kernels.refine` hold each once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ONE, ZERO


def sym_tables(geo) -> np.ndarray:
    """``symtab[g, b, v]``: the image under symmetry ``g`` of the points ``8b..8b+7`` given
    by the byte ``v`` — a set is permuted with one lookup per byte instead of one per bit.
    Row ``G`` (after the plain symmetries) is the colour-swapping map used to fold side ``o``
    (the identity where there is none)."""
    n = geo.npoints
    nb = (n + 7) // 8
    perms = [geo.perm[g] for g in range(geo.perm.shape[0])] + [geo.swap]
    tab = np.zeros((len(perms), nb, 256), dtype=np.uint64)
    vals = np.arange(256)
    for g, perm in enumerate(perms):
        for b in range(nb):
            for i in range(8):
                pt = 8 * b + i
                if pt < n:
                    tab[g, b, (vals >> i) & 1 == 1] |= np.uint64(1) << np.uint64(perm[pt])
    return tab


@njit(cache=True, _nrt=False)
def permute8(bits, g, symtab):
    """Image of a point set under symmetry ``g`` (see :func:`sym_tables`)."""
    out = ZERO
    b = 0
    while bits:
        out |= symtab[g, b, np.int64(bits & np.uint64(0xFF))]
        bits >>= np.uint64(8)
        b += 1
    return out


@njit(cache=True, _nrt=False)
def canon(m, p, s, q, geo, symtab):
    """Canonical key ``(k1, k2)`` of ``(m, p, s)`` with question ``q``: the smallest
    (mover image, opponent image) over the plain symmetries (the identity is the first)."""
    ng = geo.perm.shape[0]
    if (geo.traps[0] | geo.traps[1]) == ZERO:
        s = 0  # without traps the side to move changes nothing
    elif geo.sides == 1 and s == 1:
        m = permute8(m, ng, symtab)
        p = permute8(p, ng, symtab)
        s = 0
    bm = m
    bp = p
    for g in range(1, ng):
        mg = permute8(m, g, symtab)
        if mg > bm:
            continue
        pg = permute8(p, g, symtab)
        if mg < bm or pg < bp:
            bm = mg
            bp = pg
    k1 = bm | (np.uint64(s) << np.uint64(63)) | (np.uint64(q) << np.uint64(62))
    return k1, bp


@njit(cache=True, _nrt=False)
def decode_key(k1, k2):
    """``(m, p, s, q)`` of a key made by :func:`canon`: a position the key stands for (its
    canonical image; ``s`` is 0 where :func:`canon` dropped the side)."""
    m = k1 & np.uint64((1 << 62) - 1)
    s = np.int64((k1 >> np.uint64(63)) & ONE)
    q = np.int64((k1 >> np.uint64(62)) & ONE)
    return m, k2, s, q
