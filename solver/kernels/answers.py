"""What df-pn's table already proves about whole ranges of database positions.

Used by the full cross-check of df-pn against a retrograde database
(:mod:`solver.search.check`): positions whose two questions the shared table already answers
(earlier proofs, the draw closure, the pass argument) are read here in one compiled pass
instead of one Python call each; only the rest are searched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import DRAW_V, LOSS_V, ONGOING_V, WIN_V
from solver.kernels.encode import unrank
from solver.kernels.leaves import db_probe, leaf_value
from solver.kernels.moves import terminal
from solver.kernels.symkeys import canon, decode_key
from solver.kernels.table import FREE, decode, key_of, tt_probe


@njit(cache=True, _nrt=False)
def table_answers(gidx, geo, lay, symtab, tt, out):
    """For each global index ``gidx[i]``: what the table says of it for the side to move,
    as ``out[i, :] = lo, hi, plies, lower``: the value lies in ``lo..hi``
    (:mod:`solver.kernels.code`; ``LOSS_V..WIN_V`` when nothing is known) and a win or loss
    has a distance of at most ``plies`` and at least ``lower`` (-1, -1 where there is none).
    """
    for i in range(gidx.shape[0]):
        m, p, s = unrank(gidx[i], geo, lay)
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            out[i, 0] = t
            out[i, 1] = t
            out[i, 2] = 0
            out[i, 3] = 0
            continue
        out[i, 0] = LOSS_V
        out[i, 1] = WIN_V
        out[i, 2] = -1
        out[i, 3] = -1
        k1, k2 = canon(m, p, s, 0, geo, symtab)
        a, apn, adn, adist, alb = tt_probe(tt, k1, k2)
        k1, k2 = canon(m, p, s, 1, geo, symtab)
        b, bpn, bdn, bdist, blb = tt_probe(tt, k1, k2)
        if a >= 0 and apn == 0:
            out[i, 0] = WIN_V
            out[i, 2] = adist
            out[i, 3] = alb
        elif b >= 0 and bpn == 0:
            out[i, 1] = LOSS_V
            out[i, 2] = bdist
            out[i, 3] = blb
        else:
            if a >= 0 and adn == 0:  # the mover does not win
                out[i, 1] = DRAW_V
            if b >= 0 and bdn == 0:  # the mover does not lose
                out[i, 0] = DRAW_V


@njit(cache=True, _nrt=False)
def audit_table(tt, geo, lay, dbinfo, dbvals, bad):
    """Check every resolved entry of a df-pn table against a complete database (the
    entries ``dbinfo`` says it holds).

    An entry is a question about a canonical position (the attacker is the mover for
    ``q = 0``, the opponent for ``q = 1``): a proof must be a database win of the attacker
    within ``dist`` plies and not faster than ``lb``; a disproof must not be a database win
    of the attacker. Indices of wrong entries go to ``bad``; returns (checked, wrong).
    """
    checked = 0
    nbad = 0
    for i in range(tt.dw.shape[0]):
        dw = tt.dw[i]
        kind = dw & np.uint64(3)
        if kind == FREE or kind == 0:
            continue
        k1, k2, ok = key_of(tt, i, tt.kw[i] ^ dw)
        if not ok:
            continue
        pn, _, dist, lb, _ = decode(dw)
        m, p, s, q = decode_key(k1, k2)
        code = db_probe(m, p, s, geo, dbinfo, dbvals, lay)
        if code < 0:
            continue
        checked += 1
        a, _, d = leaf_value(code, q)
        if pn == 0:
            ok = a == 0 and d <= dist and d >= lb
        else:
            ok = a != 0
        if not ok:
            if nbad < bad.shape[0]:
                bad[nbad] = i
            nbad += 1
    return checked, nbad
