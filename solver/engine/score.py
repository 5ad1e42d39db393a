"""What the engine says of a position: a score, a search limit, progress and the answer.

A :class:`Score` is either an estimate (``cp``: hundredths of a logit of the fitted win
probability, the side to move's) or a proven result found by the search: a win or loss in
``plies`` (the duel rule: the engine wins as fast and loses as slowly as it can).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from solver.game.position import Move
from solver.game.values import LOSS, UNKNOWN, WIN, Value
from solver.kernels.alphabeta import MATE, MATE_BOUND


@dataclass(frozen=True)
class Score:
    """``kind`` is ``"cp"`` (an estimate in ``value``), ``"win"`` or ``"loss"`` (in ``value`` plies)."""

    kind: str
    value: int

    @staticmethod
    def from_search(raw: int) -> "Score":
        """The kernel's integer score (:mod:`solver.kernels.alphabeta`) as a Score."""
        if raw > MATE_BOUND:
            return Score(WIN, MATE - raw)
        if raw < -MATE_BOUND:
            return Score(LOSS, MATE + raw)
        return Score("cp", int(raw))

    @staticmethod
    def from_value(v: Value) -> "Score":
        """A proven database or proof value as a Score (a draw is ``cp 0``)."""
        if v.result in (WIN, LOSS) and v.plies is not None:
            return Score(v.result, v.plies)
        return Score("cp", 0)

    @property
    def proven(self) -> bool:
        return self.kind != "cp"

    def raw(self) -> int:
        """The kernel's integer for this score (for ordering)."""
        if self.kind == WIN:
            return MATE - self.value
        if self.kind == LOSS:
            return -(MATE - self.value)
        return self.value

    def negate_after_move(self) -> "Score":
        """The score of the parent through this child: the other side's view, one ply more."""
        if self.kind == WIN:
            return Score(LOSS, self.value + 1)
        if self.kind == LOSS:
            return Score(WIN, self.value + 1)
        return Score("cp", -self.value)

    def win_probability(self) -> float:
        """The side to move's expected score, 0..1 (1 for a proven win)."""
        if self.kind == WIN:
            return 1.0
        if self.kind == LOSS:
            return 0.0
        return 1.0 / (1.0 + math.exp(-self.value / 100.0))

    def protocol(self) -> str:
        """As the line protocol writes it: ``cp 37``, ``win 11``, ``loss 10``."""
        return f"{self.kind} {self.value}"

    def value_of(self) -> Value:
        """The answer-schema value: proven results exact, estimates ``unknown``."""
        if self.kind in (WIN, LOSS):
            return Value(self.kind, self.value)
        return Value(UNKNOWN)

    def __str__(self) -> str:
        if self.kind == "cp":
            return f"{self.value / 100:+.2f}"
        return f"{self.kind} in {self.value}"


@dataclass(frozen=True)
class Limit:
    """How long to think: any combination; the first one reached ends the search.
    None everywhere (or ``infinite``) means until stopped."""

    movetime_ms: int | None = None
    nodes: int | None = None
    depth: int | None = None
    infinite: bool = False


@dataclass
class Info:
    """One line of progress: a finished iteration of the search."""

    depth: int
    seldepth: int
    score: Score
    nodes: int
    time_ms: int
    pv: list[str]

    @property
    def nps(self) -> int:
        return int(self.nodes * 1000 / max(self.time_ms, 1))

    def protocol(self) -> str:
        pv = " ".join(self.pv)
        return (f"info depth {self.depth} seldepth {self.seldepth} score {self.score.protocol()} "
                f"nodes {self.nodes} nps {self.nps} time {self.time_ms} pv {pv}").rstrip()


@dataclass
class SearchResult:
    """The answer: the move to play, its score and line, how deep and how much was searched.

    ``ranked`` (when asked for) holds every move with its score, best first; ``source`` says
    who answered: ``"engine"`` (the search), ``"database"`` or ``"rules"``; ``exact`` is
    True when a proven score's distance is exact (not only an upper bound).
    """

    move: Move | None
    score: Score
    depth: int = 0
    nodes: int = 0
    time_ms: int = 0
    pv: list[str] = field(default_factory=list)
    ranked: list[tuple[Move, Score]] | None = None
    source: str = "engine"
    exact: bool = False
