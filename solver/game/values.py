"""A game-theoretic value: win / loss / draw for the side to move, with plies (RULES.md §4)."""

from __future__ import annotations

from dataclasses import dataclass

WIN, LOSS, DRAW = "win", "loss", "draw"

_RESOLVED, _WINBIT, _DMASK = 0x8000, 0x4000, 0x3FFF


@dataclass(frozen=True)
class Value:
    """``result`` is win, loss or draw; ``plies`` is None exactly for draws."""

    result: str
    plies: int | None = None

    @staticmethod
    def from_code(code: int) -> "Value":
        """Decode a stored uint16 (0 = draw, 0x8000|d = loss in d, 0xC000|d = win in d)."""
        code = int(code)
        if not code & _RESOLVED:
            return DRAW_VALUE
        return Value(WIN if code & _WINBIT else LOSS, code & _DMASK)

    @property
    def code(self) -> int:
        if self.result == DRAW:
            return 0
        return _RESOLVED | (_WINBIT if self.result == WIN else 0) | int(self.plies)

    def after_move(self) -> "Value":
        """The value of the parent through this child: the other side's view, one ply more."""
        if self.result == DRAW:
            return DRAW_VALUE
        return Value(LOSS if self.result == WIN else WIN, self.plies + 1)

    def sort_key(self) -> tuple:
        """Best first for the side to move: fastest win, then draws, then slowest loss."""
        if self.result == WIN:
            return (0, self.plies)
        if self.result == DRAW:
            return (1, 0)
        return (2, -self.plies)

    def __str__(self) -> str:
        return self.result if self.result == DRAW else f"{self.result} in {self.plies}"


DRAW_VALUE = Value(DRAW, None)
