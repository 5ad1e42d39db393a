"""The uint16 value code of the databases, and the kernels' small result vocabulary.

One value per canonical position, stored as a ``uint16`` (the database format; read by
:class:`solver.game.values.Value`)::

    0x0000              draw (also: unresolved, while a group of tiers is being solved)
    0x8000 | d          loss in d plies for the side to move    (RESOLVED)
    0xC000 | d          win in d plies for the side to move     (RESOLVED | WINBIT)
    0x4000              not a position of the game: a ball on a trap field of the other
                        colour (``capture``); indexed, never solved (INVALID)

``d`` is at most ``MAX_PLIES``. The constants are typed ``np.uint16`` so that kernel
arithmetic on codes stays ``uint16``; :mod:`solver.kernels.retro` describes the working
states a cell goes through while its group is solved.

Results as small integers (the compiled counterpart of the strings of
:mod:`solver.game.values`), for the side to move:

* ``LOSS_V < DRAW_V < WIN_V``: ordered, so a partial answer is an interval ``lo..hi`` of
  them (``LOSS_V..DRAW_V``: not a win; ``DRAW_V..WIN_V``: not a loss; ``LOSS_V..WIN_V``:
  nothing known) — the prover, the table answers and the database check all speak so;
* ``ONGOING_V``: what :func:`solver.kernels.moves.terminal` says of a position that is
  not over (otherwise it says ``WIN_V`` or ``LOSS_V``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

RESOLVED = np.uint16(0x8000)  # the value is known (win or loss); clear: draw / unresolved
WINBIT = np.uint16(0x4000)  # with RESOLVED: the side to move wins
DMASK = np.uint16(0x3FFF)  # the plies of a win or loss
INVALID = np.uint16(0x4000)  # WINBIT without RESOLVED: not a position of the game
DRAW_CODE = np.uint16(0)
MAX_PLIES = 0x3FFF  # the longest distance a code can hold

LOSS_V = 0  # the side to move loses
DRAW_V = 1  # neither side can force a win
WIN_V = 2  # the side to move wins
ONGOING_V = -1  # the position is not over (terminal's answer; never a stored result)

_BIG = 1 << 20  # merit's scale: more than any distance


@njit(cache=True, _nrt=False)
def win_code(d):
    """Code of a win in ``d`` plies."""
    return RESOLVED | WINBIT | np.uint16(d)


@njit(cache=True, _nrt=False)
def loss_code(d):
    """Code of a loss in ``d`` plies."""
    return RESOLVED | np.uint16(d)


@njit(cache=True, _nrt=False)
def result_of(code):
    """``(LOSS_V / DRAW_V / WIN_V, plies)`` of a resolved or draw code (plies -1 for a draw)."""
    if not code & RESOLVED:
        return DRAW_V, -1
    return (WIN_V if code & WINBIT else LOSS_V), np.int64(code & DMASK)


@njit(cache=True, _nrt=False)
def after(code):
    """A child's value seen from its parent: the other side's view, one ply more."""
    if not code & RESOLVED:
        return DRAW_CODE
    d = np.uint16((code & DMASK) + 1)
    if code & WINBIT:
        return RESOLVED | d
    return RESOLVED | WINBIT | d


@njit(cache=True, _nrt=False)
def merit(code):
    """Order of codes for the side to move: fastest win > … > draw > … > slowest loss."""
    if not code & RESOLVED:
        return _BIG
    d = np.int64(code & DMASK)
    if code & WINBIT:
        return 3 * _BIG - d
    return d
