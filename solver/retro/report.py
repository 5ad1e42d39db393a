"""What a solve reports: per-tier counts, distance histograms, longest wins and losses;
and the progress bars it shows while it runs."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from solver.kernels.code import DMASK


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

    return summary_from_counts(t.key, t.size, count_values(vals, t.base, t.base + t.size, DMASK), seconds)


def summary_from_counts(key: str, size: int, counts, seconds: float) -> TierSummary:
    """A tier's summary from ``count_values``' ``(wins[d], losses[d], draws, invalid)``
    (summed over the parts of a partitioned tier)."""
    wins, losses, draws, invalid = counts
    lw = int(np.nonzero(wins)[0].max()) if wins.any() else None
    ll = int(np.nonzero(losses)[0].max()) if losses.any() else None
    return TierSummary(
        key,
        size - int(invalid),
        int(wins.sum()),
        int(losses.sum()),
        int(draws),
        lw,
        ll,
        round(seconds, 3),
        [int(x) for x in wins[: (lw or 0) + 1]],
        [int(x) for x in losses[: (ll or 0) + 1]],
    )


class ProgressBar:
    """A progress bar on stderr (tqdm) that counts what its label says and ends at 100 %.

    ``add(n)`` counts ``n`` more; ``note(text)`` shows what is being done (e.g. the ply).
    The bar is redrawn at least every :attr:`REFRESH` seconds while work is reported, even
    when a task adds nothing. ``eta=False`` shows the elapsed time and the rate, no time
    left: for work whose total time is not known in advance (the plies of a group), a time
    left would be a guess. ``initial``: already counted (a resumed group), not in the rate.
    """

    REFRESH = 1.0

    def __init__(self, desc: str, total: int, unit: str, enabled: bool = True, eta: bool = True, initial: int = 0):
        from tqdm import tqdm

        fmt = None if eta else "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit + " [{elapsed}, {rate_fmt}{postfix}]"
        self.desc, self.total, self.unit, self.eta = desc, total, unit, eta
        self.n = initial
        self._bar = tqdm(
            total=total, desc=desc, unit=unit, unit_scale=True, disable=not enabled, leave=False, bar_format=fmt,
            mininterval=0.5, initial=initial,
        )
        self._drawn = time.monotonic()

    def add(self, n: int) -> None:
        self.n += n
        self._bar.update(n)
        now = time.monotonic()
        if now - self._drawn >= self.REFRESH:
            self._bar.refresh()
            self._drawn = now

    def note(self, text: str) -> None:
        self._bar.set_postfix_str(text, refresh=False)

    def __enter__(self) -> "ProgressBar":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self._bar.refresh()  # the last state drawn is the final one
        self._bar.close()


def count(n: int) -> str:
    """A count in a few characters, as the bars print theirs: ``987``, ``9.80M``."""
    from tqdm import tqdm

    return tqdm.format_sizeof(n)


def ply_note(level: int, last: int | None, left: int) -> str:
    """The values bar's note: the ply running, how many positions the ply before decided
    (they fall ply after ply towards the end of a group), and the positions whose value is
    not known yet — the draws among them, which are known only when the group ends."""
    before = f", ply {level - 1}: {count(last)}" if last is not None else ""
    return f"ply {level}{before}, {count(left)} left (draws among them)"
