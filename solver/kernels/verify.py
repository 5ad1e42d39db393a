"""``rotary verify``'s kernels: every value re-derived from its children's values.

A stored value must be exactly what the rules make of its children's: the fastest win
through a child lost for its mover, else a draw if any child is undecided, else the
slowest loss. :func:`verify_range` walks the positions as the counters pass does
(incremental unranking, the children's shared mover-set block kept, every child ranked
and prefetched before it is read); :func:`verify_range_plain` is the same check written with the plainest kernels
(:func:`unrank`, :func:`is_legal`, :func:`apply_move`, :func:`index_of`), kept as the
tests' reference for the fast one.

Both take the values as ``vals`` and ``dec``: with ``dec`` empty, ``vals`` holds the
database's 16-bit codes; else ``vals`` holds one byte a position and ``dec`` (uint16, at
most 256 entries) turns a byte into its code. A database holds a few hundred distinct codes
at most (win or loss and a distance), so ``verify`` of a database of n positions needs n
bytes, as the one-byte solve does (:mod:`solver.db.verify`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver.kernels.bits import ZERO, prefetch
from solver.kernels.code import DMASK, INVALID, ONGOING_V, RESOLVED, WIN_V, WINBIT, loss_code, win_code
from solver.kernels.encode import index_of, next_subset, unrank, unrank_block
from solver.kernels.moves import apply_move, is_legal, terminal
from solver.kernels.retro import NO_WIN, child_indices


@njit(cache=True, _nrt=False, inline="always")
def code_at(vals, dec, i):
    """The 16-bit code of position ``i``: ``vals[i]``, or ``dec[vals[i]]`` when ``dec`` is not empty."""
    if dec.shape[0] == 0:
        return np.int64(vals[i])
    return np.int64(dec[vals[i]])


@njit(cache=True, _nrt=False, inline="always")
def _want(best_win, max_loss, draw):
    """The value that children summarised as ``(best_win, max_loss, draw)`` give."""
    if best_win != NO_WIN:
        return win_code(best_win)
    if draw:
        return np.uint16(0)
    return loss_code(max_loss)


# A child's code as a merit for its parent, larger = better: a child lost in d (the parent
# wins in d + 1) above every draw, above every child won in d (the parent loses in d + 1).
_LOST = 0x30000
_DRAWN = 0x20000
_WON = 0x10000


@njit(cache=True, _nrt=False, inline="always")
def _follows(vals, dec, gi, buf, n):
    """Whether the code of ``gi`` is what its children ``buf[:n]`` make of it.

    The best child is a maximum of merits computed without branches: which kind of
    value a child holds is unpredictable, and a mispredicted branch per child cost more
    than the arithmetic (hex(3) 6v6 edge, x5v4: 5 % of a verify)."""
    best = _WON - 1  # no child: a loss in 0
    for i in range(n):
        v = code_at(vals, dec, buf[i])
        resolved = v >> 15  # 0 or 1
        won = (v >> 14) & 1
        d = v & np.int64(DMASK)
        lost = _LOST - d
        decided = lost + (_WON + d - lost) * won
        best = max(best, _DRAWN + (decided - _DRAWN) * resolved)
    if best > _DRAWN:
        want = win_code(_LOST - best + 1)
    elif best == _DRAWN:
        want = np.uint16(0)
    else:
        want = loss_code(best - _WON + 1)
    return code_at(vals, dec, gi) == want


@njit(cache=True, nogil=True, _nrt=False)
def verify_range(vals, dec, lo, hi, geo, lay, buf, buf2):
    """First index in ``lo..hi`` whose value does not follow from its children, or -1.

    ``buf``, ``buf2``: int64 scratch of ``6 * npoints``. Software pipelined: a position's
    children are ranked and prefetched, and only then are the children of the live
    position before it read — the value array is far larger than the caches, and the
    misses overlap with the ranking.
    """
    end = lo
    m, p, s, free = ZERO, ZERO, 0, ZERO
    waiting = -1  # the live position before, its children in buf2, prefetched
    nwait = 0
    for gi in range(lo, hi):
        if gi < end:
            p = next_subset(p, free)
        else:
            m, p, s, end, free = unrank_block(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            want = INVALID
        else:
            t = terminal(m, p, geo)
            if t == ONGOING_V:
                n = child_indices(m, p, s, geo, lay, buf)
                for i in range(n):
                    prefetch(vals, buf[i])
                if waiting >= 0 and not _follows(vals, dec, waiting, buf2, nwait):
                    return waiting
                waiting, nwait = gi, n
                buf, buf2 = buf2, buf
                continue
            want = (RESOLVED | WINBIT) if t == WIN_V else RESOLVED
        if waiting >= 0:  # the smaller index first
            if not _follows(vals, dec, waiting, buf2, nwait):
                return waiting
            waiting = -1
        if code_at(vals, dec, gi) != want:
            return gi
    if waiting >= 0 and not _follows(vals, dec, waiting, buf2, nwait):
        return waiting
    return -1


@njit(cache=True, nogil=True, _nrt=False)
def verify_range_plain(vals, dec, lo, hi, geo, lay):
    """:func:`verify_range` with the plainest kernels, one position at a time."""
    for gi in range(lo, hi):
        m, p, s = unrank(gi, geo, lay)
        if m & geo.traps[1 - s] or p & geo.traps[s]:
            want = INVALID
        elif terminal(m, p, geo) != ONGOING_V:
            want = (RESOLVED | WINBIT) if terminal(m, p, geo) == WIN_V else RESOLVED
        else:
            best_win = NO_WIN
            max_loss = 0
            draw = False
            for z in range(geo.npoints):
                if not is_legal(m, p, z, geo):
                    continue
                for k in range(6):
                    m2, p2 = apply_move(m, p, s, z, k, geo)
                    v = code_at(vals, dec, index_of(p2, m2, 1 - s, geo, lay))
                    if not v & RESOLVED:
                        draw = True
                    elif v & WINBIT:
                        max_loss = max(max_loss, int(v & DMASK) + 1)
                    else:
                        best_win = min(best_win, int(v & DMASK) + 1)
            want = _want(best_win, max_loss, draw)
        if code_at(vals, dec, gi) != want:
            return gi
    return -1
