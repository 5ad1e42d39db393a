"""What a solve reports: per-tier counts, distance histograms, longest wins and losses."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.kernels.retro import DMASK


@dataclass
class TierSummary:
    key: str
    positions: int  # indexed cells that are positions of the game
    wins: int
    losses: int
    draws: int
    longest_win: int | None
    longest_loss: int | None
    seconds: float
    win_hist: list[int] = field(default_factory=list)
    loss_hist: list[int] = field(default_factory=list)

    def meta(self) -> dict:
        return self.__dict__.copy()

    @classmethod
    def from_meta(cls, meta: dict) -> "TierSummary":
        """From a stored tier record (which carries the store's own fields too)."""
        return cls(**{k: v for k, v in meta.items() if k in cls.__dataclass_fields__})


@dataclass
class SolveReport:
    description: str
    tiers: list[TierSummary]
    solved_now: list[str]
    seconds: float
    db_bytes: int


def summarise(vals, t, seconds: float) -> TierSummary:
    from solver.kernels.retro import count_values

    wins, losses, draws, invalid = count_values(vals, t.base, t.base + t.size, DMASK)
    lw = int(np.nonzero(wins)[0].max()) if wins.any() else None
    ll = int(np.nonzero(losses)[0].max()) if losses.any() else None
    return TierSummary(
        t.key,
        t.size - int(invalid),
        int(wins.sum()),
        int(losses.sum()),
        int(draws),
        lw,
        ll,
        round(seconds, 3),
        [int(x) for x in wins[: (lw or 0) + 1]],
        [int(x) for x in losses[: (ll or 0) + 1]],
    )
