"""Retrograde-analysis kernels: one uint16 per canonical position, updated in place.

Cell encoding while a group of tiers is being solved (RESOLVED bit clear = working state)::

    0x0000 | n          unresolved; n = distinct canonical children not yet known to be
                        wins for their mover (+1 if some child in a lower tier is a draw)
    0x8000 | d          loss in d plies (final)
    0xC000 | d          win in d plies (a win found through a lower tier may still shrink
                        until ply d is reached; one found in-group is final)

After the group is finished every cell still unresolved becomes 0x0000: a draw.

The counting method: ``init_range`` gives every position its counter (or its value if
finished or decided by lower tiers); then ``level_range(L)`` takes every position decided
at exactly L plies and updates its in-group parents — a loss makes each parent a win in
L+1; a win decrements each parent's counter, and the last decrement makes it a loss.
Each position's parents are generated once, so a group costs about one pass over its
edges; the per-ply scan only reads the value array. Parents may belong to another
worker's range, so updates are atomic compare-and-swap loops: the outcome does not depend
on the order in which workers run.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import index_of, unrank
from .bits import cas_u16
from .moves import ONGOING, WIN0, apply_move, is_legal, parents, terminal

RESOLVED = np.uint16(0x8000)
WINBIT = np.uint16(0x4000)
DMASK = np.uint16(0x3FFF)
MAX_PLIES = 0x3FFF
NO_WIN = 1 << 30


@njit(cache=True, inline="always")
def _add_unique(buf, n, x):
    for i in range(n):
        if buf[i] == x:
            return n
    buf[n] = x
    return n + 1


@njit(cache=True)
def _scan_children(m, p, s, glo, ghi, vals, geo, lay, buf):
    """Children of a live position: distinct in-group ones into ``buf``; summary of the rest.

    Returns ``(n_in_group, best_win, max_loss, draw_below)`` where ``best_win`` is the
    fastest win through a lower-tier child lost for its mover and ``max_loss`` the
    slowest loss among lower-tier children won for theirs.
    """
    n = 0
    best_win = NO_WIN
    max_loss = 0
    draw_below = 0
    null_done = False
    for z in range(geo.npoints):
        if not is_legal(m, p, z, geo):
            continue
        for k in range(6):
            if k == 0:
                if null_done:
                    continue
                null_done = True
            m2, p2 = apply_move(m, p, s, z, k, geo)
            ci = index_of(p2, m2, 1 - s, geo, lay)
            if glo <= ci < ghi:
                n = _add_unique(buf, n, ci)
            else:
                v = vals[ci]
                if v & RESOLVED:
                    d = int(v & DMASK) + 1
                    if v & WINBIT:
                        if d > max_loss:
                            max_loss = d
                    elif d < best_win:
                        best_win = d
                else:
                    draw_below = 1
    return n, best_win, max_loss, draw_below


@njit(cache=True, nogil=True)
def init_range(vals, lo, hi, glo, ghi, geo, lay):
    """Counters and immediate values for global indices ``lo..hi`` of group ``glo..ghi``.

    Returns the largest distance written (-1 if none).
    """
    buf = np.empty(6 * geo.npoints, dtype=np.int64)
    top = -1
    for gi in range(lo, hi):
        m, p, s = unrank(gi, geo, lay)
        t = terminal(m, p, geo)
        if t != ONGOING:
            vals[gi] = (RESOLVED | WINBIT) if t == WIN0 else RESOLVED
            if top < 0:
                top = 0
            continue
        n, best_win, max_loss, draw_below = _scan_children(m, p, s, glo, ghi, vals, geo, lay, buf)
        if best_win != NO_WIN:
            vals[gi] = RESOLVED | WINBIT | np.uint16(best_win)
            top = max(top, best_win)
        elif n + draw_below == 0:
            vals[gi] = RESOLVED | np.uint16(max_loss)
            top = max(top, max_loss)
        else:
            vals[gi] = np.uint16(n + draw_below)
    return top


@njit(cache=True)
def _loss_plies(gi, level, glo, ghi, vals, geo, lay, buf):
    """Distance of a position all of whose children are wins, the last in-group at ``level``."""
    m, p, s = unrank(gi, geo, lay)
    _, _, max_loss, _ = _scan_children(m, p, s, glo, ghi, vals, geo, lay, buf)
    return max(level + 1, max_loss)


@njit(cache=True, nogil=True)
def level_range(vals, lo, hi, glo, ghi, level, geo, lay):
    """Propagate every position of ``lo..hi`` decided at exactly ``level`` plies.

    Returns ``(largest distance written or -1, positions seen at this level)``.
    """
    buf = np.empty(6 * geo.npoints, dtype=np.int64)
    scratch = np.empty(6 * geo.npoints, dtype=np.int64)
    top = -1
    seen = 0
    target_loss = RESOLVED | np.uint16(level)
    target_win = RESOLVED | WINBIT | np.uint16(level)
    win_next = RESOLVED | WINBIT | np.uint16(level + 1)
    for gi in range(lo, hi):
        v = vals[gi]
        if v != target_loss and v != target_win:
            continue
        seen += 1
        m, p, s = unrank(gi, geo, lay)
        pm, pp = parents(m, p, s, geo)
        n = 0
        for i in range(len(pm)):
            n = _add_unique(buf, n, index_of(pm[i], pp[i], 1 - s, geo, lay))
        for i in range(n):
            q = buf[i]
            if v == target_loss:
                while True:
                    old = vals[q]
                    if old & RESOLVED and (not old & WINBIT or (old & DMASK) <= level + 1):
                        break
                    if cas_u16(vals, q, old, win_next) == old:
                        top = max(top, level + 1)
                        break
            else:
                while True:
                    old = vals[q]
                    if old & RESOLVED:
                        break
                    if old == 1:
                        d = _loss_plies(q, level, glo, ghi, vals, geo, lay, scratch)
                        new = RESOLVED | np.uint16(d)
                    else:
                        d = -1
                        new = old - np.uint16(1)
                    if cas_u16(vals, q, old, new) == old:
                        top = max(top, d)
                        break
    return top, seen


@njit(cache=True, nogil=True)
def finish_range(vals, lo, hi):
    """Unresolved cells become draws (0)."""
    for gi in range(lo, hi):
        if not vals[gi] & RESOLVED:
            vals[gi] = 0


@njit(cache=True)
def count_values(vals, lo, hi, maxd):
    """Histogram ``(wins[d], losses[d], draws)`` of a finished range."""
    wins = np.zeros(maxd + 1, dtype=np.int64)
    losses = np.zeros(maxd + 1, dtype=np.int64)
    draws = 0
    for gi in range(lo, hi):
        v = vals[gi]
        if not v & RESOLVED:
            draws += 1
        elif v & WINBIT:
            wins[v & DMASK] += 1
        else:
            losses[v & DMASK] += 1
    return wins, losses, draws
