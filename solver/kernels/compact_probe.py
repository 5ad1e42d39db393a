"""Single probes of an exported set (:mod:`solver.db.compact_reader`) in one compiled call.

A probe of one position is a handful of nanoseconds of work behind microseconds of
calls: the position's index, the tier and block it falls in, the pool row holding that
block decoded, the cell. :func:`probe_code` does all of it in one call, from the
position's bit masks, so that a warm probe from Python costs one kernel call.

The pool of decoded blocks is a 2-D ``uint16`` array, one block a row; ``slot_of[gb]``
is the row of global block ``gb`` (``blk0[t] + local // block`` of tier ``t``), -1 when
it is not decoded; ``stamp[row]`` is when it was last read, ``stamp[-1]`` the clock (the
reader evicts the row of the smallest stamp: least recently used).

``Geo`` and ``Lay`` travel as plain tuples and are rebuilt inside the kernel: numba
types a plain tuple of arrays in a fraction of the time a namedtuple takes (measured:
about 2 µs against 3.5 µs a call), and the call is most of a warm probe.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import popcount
from solver.kernels.encode import Lay, bsearch, index_of
from solver.kernels.geometry import Geo

MISSING = -(1 << 62)  # probe_code: the position's material has no tier in the layout


@njit(cache=True, nogil=True, _nrt=False)
def code_at(g, t_lo, blk0, block, slot_of, stamp, pool):
    """The code of global index ``g`` if its block is in the pool (its stamp renewed),
    else ``-1 - gb`` (``gb``: the global block to decode)."""
    t = bsearch(t_lo, 0, t_lo.shape[0], g + 1) - 1
    local = g - t_lo[t]
    gb = blk0[t] + local // block
    row = slot_of[gb]
    if row < 0:
        return -1 - gb
    tick = stamp[stamp.shape[0] - 1] + 1
    stamp[stamp.shape[0] - 1] = tick
    stamp[row] = tick
    return np.int64(pool[row, local % block])


@njit(cache=True, nogil=True, _nrt=False)
def probe_code(m, p, s, gt, lt, t_lo, blk0, block, slot_of, stamp, pool):
    """The code of position ``(mover m, opponent p, side s)`` as :func:`code_at` gives it
    (``gt``, ``lt``: ``tuple(geo)``, ``tuple(lay)``); :data:`MISSING` if no tier of the
    layout has its material."""
    geo = Geo(*gt)
    lay = Lay(*lt)
    mm = np.uint64(m)
    pp = np.uint64(p)
    a = popcount(mm)
    b = popcount(pp)
    tb = lay.tier_base
    side = 0 if geo.sides == 1 else s
    if a >= tb.shape[1] or b >= tb.shape[2] or tb[side, a, b] < 0:
        return np.int64(MISSING)
    g = index_of(mm, pp, s, geo, lay)
    return code_at(g, t_lo, blk0, block, slot_of, stamp, pool)
