"""Time management: how long to think on one move of a game played on a clock.

``go wtime W btime B [winc I binc J] [movestogo N]`` (as in UCI) gives each side's time
left and increment in milliseconds; :func:`allot_ms` turns the mover's into one move's
``movetime``: an even share of what is left over the moves still to play, most of the
increment, never more than a quarter of what is left, and a reserve kept for the answer's
way back.
"""

from __future__ import annotations

MOVES_LEFT = 25  # a rotation-phase game of hex(4) is decided in about 50 plies: 25 moves a side
RESERVE_MS = 30  # kept back on every move: the stop path and the answer's way back


def allot_ms(left_ms: int, inc_ms: int = 0, moves_to_go: int | None = None) -> int:
    """The thinking time of one move with ``left_ms`` on the clock and ``inc_ms`` added after it."""
    usable = max(left_ms - RESERVE_MS, 1)
    share = usable // max(moves_to_go or MOVES_LEFT, 1) + inc_ms * 3 // 4
    return max(1, min(share, usable // 4 if (moves_to_go or 2) > 1 else usable))
