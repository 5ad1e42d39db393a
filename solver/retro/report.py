"""What a solve reports: per-tier counts, distance histograms, longest wins and losses;
and the progress bars it shows while it runs."""

from __future__ import annotations

import math
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
    peak_kb: int | None = None  # the solve's peak resident memory when the tier was written

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


def peak_memory_kb() -> int:
    """This process's peak resident size and its finished children's largest, in kB
    (``ru_maxrss``; the shared value array's pages count in it once touched). With the
    default thread executor the solve is this process alone; with spawned workers their
    shared pages are counted twice, a bound from above."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(own + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


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
    when a task adds nothing. ``eta=False`` shows the elapsed time and the rate and leaves
    the time left to the note: for the plies of a group, whose total counts draws that
    are never worked on, tqdm's own time left would be wrong (see :func:`time_left`).
    ``initial``: already counted (a resumed group), not in the rate.
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


def group_name(tiers) -> str:
    """A group's name in its bars and checkpoints: its tiers' keys joined by ``+``."""
    return "+".join(t.key for t in tiers)


def write_tiers(store, tiers: list, name: str, progress: bool, step: int | None = None) -> None:
    """``store.write_tiers(tiers)`` behind a bar ``{name} write`` that counts the positions
    compressed and written (minutes for a group of billions, after its values bar ends);
    ``step``: at most that many blocks a transaction (:meth:`Store.write_tiers_in_steps`)."""
    with ProgressBar(f"{name} write", sum(len(values) for _, values, _, _ in tiers), "pos", progress) as bar:
        if step is None:
            store.write_tiers(tiers, lambda n: bar.add(n - bar.n))
        else:
            store.write_tiers_in_steps(tiers, step, lambda n: bar.add(n - bar.n))


def count(n: int) -> str:
    """A count in a few characters, as the bars print theirs: ``987``, ``9.80M``."""
    from tqdm import tqdm

    return tqdm.format_sizeof(n)


def ply_note(level: int, last: int | None, left: int, time_left: float | None = None) -> str:
    """The values bar's note: the ply running, how many positions the ply before decided
    (they fall ply after ply towards the end of a group), the positions whose value is not
    known yet — the draws among them, which are known only when the group ends — and,
    once :func:`to_come` can tell it, an estimate of the time left, worded as the forecast
    it is: the counts can stop falling (hex(4) 4v4 base: they fell steadily for 13 plies,
    the estimate said 20 minutes, then they stayed flat from ply 15 to past ply 45, and
    the estimate was withdrawn)."""
    before = f", ply {level - 1}: {count(last)}" if last is not None else ""
    eta = f", about {_interval(time_left)} left if the fall goes on" if time_left is not None else ""
    return f"ply {level}{before}, {count(left)} left (draws among them){eta}"


def to_come(per_ply: list[int]) -> int | None:
    """An estimate of how many positions the plies still to run will decide, from what
    each ply so far decided (``per_ply[L]``: positions decided at exactly ``L`` plies);
    ``None`` while it cannot be told.

    Past their peak the counts fall geometrically, every second ply alike (wins are
    decided at odd plies, losses at even ones): the tail ahead is the last two plies' sum
    ``a`` times ``r / (1 - r)``, ``r`` the ratio of ``a`` to the sum of the two plies
    before. Told only where the fall is steady: two such sums fallen in a row, ``r <
    0.9`` (near the peak ``r`` is close to 1 and the tail is anybody's guess), and the
    estimate two plies before, less what those plies decided, within 30 % of this one —
    with lower tiers the counts can fall for a while and rise again twentyfold (hex(3)
    3v3 ``edge``, plies 3 to 8), and that test keeps the early fall from being taken for
    the tail. On hex(3) 4v4 the estimate is within 20 % of the truth from ply 9 to ply 53
    (a few thousand positions left).
    """
    now = _tail(per_ply)
    before = _tail(per_ply[:-2])
    if now is None or before is None:
        return None
    expected = before - per_ply[-1] - per_ply[-2]
    if expected <= 0 or abs(expected - now) > 0.3 * max(now, expected):
        return None
    return now


def _tail(per_ply: list[int]) -> int | None:
    if len(per_ply) < 6:
        return None
    a, b, c = (per_ply[-1] + per_ply[-2]), (per_ply[-3] + per_ply[-4]), (per_ply[-5] + per_ply[-6])
    if not a < b < c or a >= 0.9 * b:
        return None
    r = a / b
    return int(a * r / (1 - r))


def time_left(per_ply: list[int], seconds: list[float], scan: float, plies_at_least: int = 0) -> float | None:
    """Seconds the rest of a group's plies should take, or ``None`` (see :func:`to_come`).

    ``seconds[L]``: what ply ``L`` took; ``scan``: what a ply's scan of the group takes by
    itself (measured by the driver before the plies). A ply costs its scan plus the work on each position it
    decides, at the rate of the last two plies (a loss ply and a win ply: their positions
    cost differently, and the tail alternates the same way); the time left is the
    positions to come at that rate and the plies to come — until the geometric tail falls
    below one position, and at least ``plies_at_least`` (up to the longest distance
    already written) — at one scan each."""
    ahead = to_come(per_ply)
    if ahead is None:
        return None
    a, b = per_ply[-1] + per_ply[-2], per_ply[-3] + per_ply[-4]
    per_pos = max(0.0, seconds[-1] + seconds[-2] - 2 * scan) / a
    plies = max(plies_at_least, 2 * math.ceil(math.log(max(a, 2)) / -math.log(a / b)))
    return ahead * per_pos + plies * scan


def _interval(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
