"""What a search knows of a position without searching it: the game is over, or a
database holds it.

A retrograde database of the same rules answers for the positions of its material
(``DbInfo``: whether one is used, whether its material is variable — then it holds every
position of at most ``A`` light and ``B`` dark balls — and ``A``, ``B``); its values
(``dbvals``, indexed by the database's ``lay``, :mod:`solver.kernels.encode`) are the
codes of :mod:`solver.kernels.code`. Answers are for the *attacker* of a question ``q``
(0: the mover attacks, 1: the mover defends), as proof and disproof numbers.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import popcount
from solver.kernels.code import DMASK, ONGOING_V, RESOLVED, WIN_V, WINBIT
from solver.kernels.encode import index_of
from solver.kernels.moves import terminal
from solver.kernels.table import DMAX, INF

DbInfo = namedtuple("DbInfo", "use var A B")

NOT_LEAF, TERMINAL, DATABASE = 0, 1, 2  # what :func:`leaf` found


@njit(cache=True, _nrt=False)
def db_probe(m, p, s, geo, dbinfo, dbvals, lay):
    """Stored value code of a position a database answers for, else -1."""
    if not dbinfo.use:
        return -1
    x = m if s == 0 else p
    o = p if s == 0 else m
    nx = popcount(x)
    no = popcount(o)
    if dbinfo.var:
        if nx > dbinfo.A or no > dbinfo.B:
            return -1
    elif nx != dbinfo.A or no != dbinfo.B:
        return -1
    return _db_code(m, p, s, geo, dbvals, lay)


@njit(cache=True, _nrt=False)
def _db_code(m, p, s, geo, dbvals, lay):
    return np.int64(dbvals[index_of(m, p, s, geo, lay)])


@njit(cache=True, _nrt=False)
def leaf_value(code, q):
    """(pn, dn, plies) for the attacker from a database code (draw: disproven)."""
    if code & RESOLVED == 0:
        return INF, 0, DMAX
    d = code & DMASK
    mover_wins = (code & WINBIT) != 0
    if mover_wins == (q == 0):
        return 0, INF, d
    return INF, 0, DMAX


@njit(cache=True, _nrt=False)
def leaf(m, p, s, q, geo, dbinfo, dbvals, lay):
    """``(kind, pn, dn, plies)`` of ``(m, p, s)`` for the attacker of question ``q`` when
    it is settled without a search: ``kind`` is ``TERMINAL`` (the game is over: plies 0
    for a win) or ``DATABASE`` (:func:`leaf_value` of its code), else ``NOT_LEAF``."""
    t = terminal(m, p, geo)
    if t != ONGOING_V:
        if (t == WIN_V) == (q == 0):
            return TERMINAL, 0, INF, 0
        return TERMINAL, INF, 0, DMAX
    code = db_probe(m, p, s, geo, dbinfo, dbvals, lay)
    if code >= 0:
        a, b, d = leaf_value(code, q)
        return DATABASE, a, b, d
    return NOT_LEAF, 1, 1, DMAX
