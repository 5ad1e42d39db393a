"""Match statistics: Elo from a score with its 95 % interval, likelihood of superiority,
and the sequential probability ratio test — pure arithmetic, as fishtest computes them.

Counts are always ordered from worst to best for the player measured, index ``i`` scoring
``i / (len - 1)`` of the sample's points:

* trinomial ``(L, D, W)``: one game scores 0, 1/2 or 1;
* pentanomial ``(LL, LD, DD+WL, WD, WW)``: one *pair* of games (the same opening with the
  colours swapped) scores 0, 1/2, 1, 3/2 or 2 points, i.e. 0, 1/4, 1/2, 3/4, 1 per game.

The pentanomial counts each pair as one sample, so the luck of an opening that favours one
colour cancels within the pair and the interval is honest for paired games; the trinomial
would treat the two games of a pair as independent.

Elo is the *logistic* Elo throughout: a mean score ``s`` per game is
``-400·log10(1/s - 1)`` Elo, and ``L(e) = 1 / (1 + 10^(-e/400))`` goes back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

Z95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054: the two-sided 95 % quantile
REGULARIZE = 1e-3  # fishtest's stand-in for an empty cell in the SPRT's likelihoods


def elo_from_score(score: float) -> float:
    """Logistic Elo of a mean score per game in 0..1 (``±inf`` at 1 and 0)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score per game of an Elo difference: ``1 / (1 + 10^(-elo/400))``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclass(frozen=True)
class EloEstimate:
    """What a result says about the Elo difference (the player measured minus the other).

    ``score`` is the mean score per game and ``stderr`` its standard error (the samples'
    population variance over their number, as fishtest takes it); ``lower`` / ``upper``
    are the 95 % interval ``score ± 1.96·stderr`` read as Elo; ``margin`` is half its
    width, the ``±`` fishtest prints. ``los`` — likelihood of superiority — is
    ``Φ((score − 1/2) / stderr)``: the probability, under the normal approximation, that
    the player measured is the stronger one.
    """

    games: int
    score: float
    stderr: float
    elo: float
    lower: float
    upper: float
    los: float

    @property
    def margin(self) -> float:
        return (self.upper - self.lower) / 2.0


def _estimate(counts: Sequence[int], games_per_sample: int) -> EloEstimate:
    n = sum(counts)
    if n <= 0 or min(counts) < 0:
        raise ValueError(f"counts must be non-negative with at least one sample, got {list(counts)}")
    values = [i / (len(counts) - 1) for i in range(len(counts))]
    mean = sum(c * v for c, v in zip(counts, values)) / n
    var = sum(c * (v - mean) ** 2 for c, v in zip(counts, values)) / n
    se = math.sqrt(var / n)
    lo, hi = max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se)
    if se > 0:
        los = NormalDist().cdf((mean - 0.5) / se)
    else:  # every sample scored the same
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return EloEstimate(n * games_per_sample, mean, se, elo_from_score(mean), elo_from_score(lo), elo_from_score(hi),
                       los)


def trinomial(*, wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo from single games, each an independent sample (0, 1/2 or 1)."""
    return _estimate((losses, draws, wins), 1)


def pentanomial(pairs: Sequence[int]) -> EloEstimate:
    """Elo from game pairs ``(LL, LD, DD+WL, WD, WW)``, each pair one sample."""
    if len(pairs) != 5:
        raise ValueError(f"a pentanomial has 5 counts, got {len(pairs)}")
    return _estimate(pairs, 2)


# ---------------------------------------------------------------------------- SPRT


@dataclass(frozen=True)
class Sprt:
    """The state of a test of H0: Elo = ``elo0`` against H1: Elo = ``elo1``.

    ``llr`` is the generalised log-likelihood ratio of the results; the test accepts H1
    when it reaches ``upper = ln((1-β)/α)`` and H0 when it falls to ``lower = ln(β/(1-α))``
    (α = β = 0.05: ±2.944), else it goes on.
    """

    elo0: float
    elo1: float
    alpha: float
    beta: float
    llr: float
    lower: float
    upper: float

    @property
    def decision(self) -> str | None:
        """``"H1"`` (accepted: Elo ≥ elo1 side), ``"H0"``, or None while undecided."""
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return None


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds ``(ln(β/(1-α)), ln((1-β)/α))`` on the log-likelihood ratio."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt(counts: Sequence[int], elo0: float, elo1: float, alpha: float = 0.05, beta: float = 0.05) -> Sprt:
    """The GSPRT of fishtest's ``LLR_logistic`` on trinomial or pentanomial ``counts``.

    Logistic Elo (not fishtest's normalised Elo): H0 and H1 say the expected score per game
    is ``s0 = L(elo0)`` and ``s1 = L(elo1)``. The generalised likelihood ratio compares the
    most likely distribution of the outcomes with mean ``s1`` to the one with mean ``s0``
    (each the maximum-likelihood fit to the observed frequencies under that mean, see
    :func:`mle_with_mean`): ``LLR = N · Σ p̂ᵢ·ln(p¹ᵢ / p⁰ᵢ)``. Empty cells count 0.001, as
    fishtest regularises them. Fishtest's dynamic overshoot correction is not applied: a
    test here stops when the LLR crosses Wald's bounds.
    """
    if not elo0 < elo1:
        raise ValueError(f"the SPRT needs elo0 < elo1, got {elo0} and {elo1}")
    lower, upper = sprt_bounds(alpha, beta)
    return Sprt(elo0, elo1, alpha, beta, llr(counts, elo0, elo1), lower, upper)


def llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The generalised log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``)."""
    reg = [c if c > 0 else REGULARIZE for c in counts]
    n = sum(reg)
    values = [i / (len(reg) - 1) for i in range(len(reg))]
    freqs = [c / n for c in reg]
    p0 = mle_with_mean(values, freqs, score_from_elo(elo0))
    p1 = mle_with_mean(values, freqs, score_from_elo(elo1))
    return n * sum(f * (math.log(b) - math.log(a)) for f, a, b in zip(freqs, p0, p1))


def mle_with_mean(values: Sequence[float], freqs: Sequence[float], s: float) -> list[float]:
    """The distribution on ``values`` with mean ``s`` that makes the observed ``freqs`` most likely.

    Maximising ``Σ fᵢ·ln pᵢ`` under ``Σ pᵢ = 1`` and ``Σ pᵢ·vᵢ = s`` (Lagrange) gives
    ``pᵢ = fᵢ / (1 + x·(vᵢ − s))`` with ``x`` the root of ``g(x) = Σ fᵢ·dᵢ / (1 + x·dᵢ) = 0``,
    ``dᵢ = vᵢ − s``, on the interval where every denominator is positive. ``g`` falls
    strictly there, so bisection finds the root.
    """
    d = [v - s for v in values]
    if not min(d) < 0 < max(d):
        raise ValueError(f"a mean of {s} lies outside the values {list(values)}")
    lo, hi = -1.0 / max(d), -1.0 / min(d)  # 1 + x·d > 0 for every d strictly between these
    width = hi - lo
    lo, hi = lo + 1e-12 * width, hi - 1e-12 * width

    def g(x: float) -> float:
        return sum(f * di / (1.0 + x * di) for f, di in zip(freqs, d))

    for _ in range(200):  # bisection to the float's resolution
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    x = (lo + hi) / 2.0
    return [f / (1.0 + x * di) for f, di in zip(freqs, d)]
