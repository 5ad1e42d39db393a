"""The counters pass of the lean solve over one partition held apart: the disk mode.

:func:`~solver.kernels.lean.lean_init` writes ``cells[gi]`` of a whole group in memory;
the disk mode (:mod:`solver.retro.disk`) holds one partition ``lo..hi`` at a time, as
``part[gi - lo]``. :func:`init_block8` is ``lean_init`` on such a partition, for a group
without lower tiers (the disk mode solves those): positions are walked as ``lean_init``
walks them (a block of positions sharing the mover's balls at a time,
:func:`~solver.kernels.encode.unrank_block`), and the codes are those of
:mod:`solver.kernels.lean`. The plies run on the partition kernels of the Ray lean solve
(:mod:`solver.kernels.lean_partition`), which index a part the same way.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.code import ONGOING_V, WIN_V
from solver.kernels.encode import next_subset, unrank_block
from solver.kernels.lean import AT_LOSS, AT_WIN, BAD
from solver.kernels.moves import terminal
from solver.kernels.retro import in_group_moves
from solver.kernels.bits import ZERO


@njit(cache=True, nogil=True, _nrt=False)
def init_block8(part, lo, hi, geo, lay, buf):
    """Counters and immediate values of ``lo..hi`` (a group with no lower tiers) into
    ``part[gi - lo]``. Returns ``(positions decided at ply 0, cells that are no
    position)``."""
    invalid = 0
    decided = 0
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        q = gi - lo
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            part[q] = BAD
            invalid += 1
            continue
        t = terminal(m, p, geo)
        if t != ONGOING_V:
            part[q] = AT_WIN if t == WIN_V else AT_LOSS  # decided at ply 0 (parity 0)
            decided += 1
            continue
        n, nl = in_group_moves(m, p, s, geo, lay, buf)
        if nl:
            return -1, -1  # a lower-tier child: not a group the disk mode solves
        if n == 0:
            part[q] = AT_LOSS  # no move and no lower tier: lost at once (the counting's zero)
            decided += 1
        else:
            part[q] = np.uint8(n)  # at most MAXC: the driver checks lean.fits
    return decided, invalid


@njit(cache=True, nogil=True, _nrt=False)
def pack_updates(updates, out):
    """The sorted ``updates`` (int64, 0 or more) as the LEB128 varints of their gaps into
    ``out`` (uint8, room for 10 a value); the bytes written. Sorted updates of one
    partition lie close together: about 3 bytes each instead of 8."""
    prev = np.int64(0)
    k = 0
    for i in range(updates.shape[0]):
        d = np.int64(updates[i] - prev)
        prev = updates[i]
        while d >= 128:
            out[k] = np.uint8((d & 127) | 128)
            d >>= 7
            k += 1
        out[k] = np.uint8(d)
        k += 1
    return k


@njit(cache=True, nogil=True, _nrt=False)
def unpack_updates(data, n, out):
    """``out[:n]``: the updates :func:`pack_updates` wrote into ``data``; the bytes read."""
    prev = np.int64(0)
    k = 0
    for i in range(n):
        d = np.int64(0)
        shift = np.int64(0)
        while True:
            b = np.int64(data[k])
            k += 1
            d |= (b & 127) << shift
            if b < 128:
                break
            shift += 7
        prev += d
        out[i] = prev
    return k
