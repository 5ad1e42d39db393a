"""Game-theoretic values: the one result vocabulary of rotary (docs/rules.md §4).

A result is always the side to move's:

* ``win``, ``loss``, ``draw`` — proven; a win or loss comes with its distance in plies
  (the duel rule makes speed part of the result), exact or, from a search that stopped
  early, an upper bound;
* ``not-win``, ``not-loss`` — half known (a draw or a loss; a draw or a win);
* ``unknown`` — nothing known.

Databases know only the first three, exactly; df-pn proofs and opening books may leave a
position half known or unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.kernels.code import DMASK, RESOLVED, WINBIT

WIN, LOSS, DRAW = "win", "loss", "draw"
NOT_WIN, NOT_LOSS, UNKNOWN = "not-win", "not-loss", "unknown"
RESULTS = (WIN, LOSS, DRAW, NOT_WIN, NOT_LOSS, UNKNOWN)
PROVEN = (WIN, LOSS, DRAW)

# the same result seen by the other side: a win for one is a loss for the other
_OTHER_SIDE = {WIN: LOSS, LOSS: WIN, DRAW: DRAW, NOT_WIN: NOT_LOSS, NOT_LOSS: NOT_WIN, UNKNOWN: UNKNOWN}
# best first for the side to move: fastest win, what may still win, draw, unknown, what
# may still lose, slowest loss
_RANK = {WIN: 0, NOT_LOSS: 1, DRAW: 2, UNKNOWN: 3, NOT_WIN: 4, LOSS: 5}

# the stored uint16 code (solver.kernels.code), as plain ints for Python arithmetic
_RESOLVED, _WINBIT, _DMASK = int(RESOLVED), int(WINBIT), int(DMASK)


def other_side(result: str) -> str:
    """``result`` as the other side sees it (win <-> loss, not-win <-> not-loss)."""
    try:
        return _OTHER_SIDE[result]
    except KeyError:
        raise ValueError(f"not a result: {result!r} (one of {', '.join(RESULTS)})") from None


@dataclass(frozen=True)
class Value:
    """A result for the side to move and its distance.

    ``result`` is one of :data:`RESULTS` (a ``ValueError`` otherwise); ``plies`` is the
    distance of a win or loss (None for every other result, and for a win or loss whose
    distance is not known); ``exact`` says whether it is the distance itself (True) or an
    upper bound on it. A database's values are always exact; a result that is not proven
    (not-win, not-loss, unknown) never is. A frozen dataclass: hashable, safe to share and
    to pickle. Values are not ordered by ``<``: sort them with :meth:`sort_key` (best
    first for the side to move).

    >>> Value.from_code(0xC007)
    Value(result='win', plies=7, exact=True)
    >>> print(Value(WIN, 7), "/", Value(WIN, 7).after_move(), "/", Value(NOT_LOSS))
    win in 7 / loss in 8 / not-loss
    >>> [str(v) for v in sorted([Value(LOSS, 6), DRAW_VALUE, Value(WIN, 9), Value(WIN, 7)], key=Value.sort_key)]
    ['win in 7', 'win in 9', 'draw', 'loss in 6']
    """

    result: str
    plies: int | None = None
    exact: bool = True

    def __post_init__(self) -> None:
        if self.result not in _RANK:
            raise ValueError(f"not a result: {self.result!r} (one of {', '.join(RESULTS)})")
        if self.result not in (WIN, LOSS) and self.plies is not None:
            object.__setattr__(self, "plies", None)
        if self.result not in PROVEN or (self.result != DRAW and self.plies is None):
            object.__setattr__(self, "exact", False)

    @staticmethod
    def from_code(code: int) -> "Value":
        """Decode a stored uint16 (0 = draw, 0x8000|d = loss in d, 0xC000|d = win in d)."""
        code = int(code)
        if not code & _RESOLVED:
            return DRAW_VALUE
        return Value(WIN if code & _WINBIT else LOSS, code & _DMASK)

    @property
    def code(self) -> int:
        """The database's uint16 for this value (proven, exact values only)."""
        if self.result == DRAW:
            return 0
        if self.result not in (WIN, LOSS) or not self.exact:
            raise ValueError(f"{self} has no database code: only exact wins, losses and draws are stored")
        return _RESOLVED | (_WINBIT if self.result == WIN else 0) | int(self.plies)

    @property
    def proven(self) -> bool:
        return self.result in PROVEN

    def after_move(self) -> "Value":
        """The value of the parent through this child: the other side's view, one ply more."""
        if self.result == DRAW:
            return DRAW_VALUE
        return Value(other_side(self.result), None if self.plies is None else self.plies + 1, self.exact)

    def sort_key(self) -> tuple:
        """Best first for the side to move: fastest win, not-loss, draw, unknown, not-win,
        slowest loss (an exact distance before a bound of the same plies)."""
        rank = _RANK[self.result]
        if self.plies is None:
            return (rank, 0, 0)
        return (rank, self.plies if self.result == WIN else -self.plies, 0 if self.exact else 1)

    def __str__(self) -> str:
        if self.plies is None:
            return self.result
        return f"{self.result} in {self.plies}" if self.exact else f"{self.result} in <={self.plies}"


DRAW_VALUE = Value(DRAW, None)
