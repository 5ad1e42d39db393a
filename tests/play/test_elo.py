"""Match statistics against values worked out by hand (the arithmetic is in each docstring)."""

from __future__ import annotations

import math

import pytest

from solver.play.elo import (
    elo_from_score, llr, mle_with_mean, pentanomial, score_from_elo, sprt, sprt_bounds, trinomial,
)

Z = 1.959963984540054  # the 97.5 % quantile of the standard normal law


def test_elo_of_a_score_and_back():
    """0.75 -> -400·log10(1/0.75 - 1) = 400·log10(3) = 190.85; 0.5 -> 0; L(190.85) = 0.75."""
    assert elo_from_score(0.75) == pytest.approx(190.848501887865)
    assert elo_from_score(0.5) == 0.0
    assert elo_from_score(0.25) == pytest.approx(-190.848501887865)
    assert score_from_elo(400 * math.log10(3)) == pytest.approx(0.75)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_trinomial_150_wins_50_losses():
    """150 W / 0 D / 50 L: score 150/200 = 0.75, Elo 190.85.

    Variance per game: 0.75·(1 - 0.75)² + 0.25·(0 - 0.75)² = 0.046875 + 0.140625 = 0.1875;
    standard error sqrt(0.1875 / 200) = 0.0306186; 1.96·se = 0.0600122, so the score lies
    in 0.6899878 .. 0.8100122, i.e. Elo -400·log10(1/0.6899878 - 1) = 138.99 ..
    -400·log10(1/0.8100122 - 1) = 251.91; ± half the width = 56.46.
    LOS = Φ(0.25 / 0.0306186) = Φ(8.165) = 1 - 1.6e-16.
    """
    e = trinomial(wins=150, draws=0, losses=50)
    assert e.games == 200
    assert e.score == 0.75
    assert e.elo == pytest.approx(190.8485, abs=1e-4)
    assert e.stderr == pytest.approx(0.0306186, abs=1e-7)
    assert e.lower == pytest.approx(138.986, abs=1e-3)
    assert e.upper == pytest.approx(251.905, abs=1e-3)
    assert e.margin == pytest.approx(56.460, abs=1e-3)
    assert e.los > 1 - 1e-12


def test_trinomial_with_draws():
    """6 W / 8 D / 6 L: score (6 + 4) / 20 = 0.5, Elo 0, LOS exactly one half.

    Variance: (6·0.25 + 8·0 + 6·0.25) / 20 = 0.15; se = sqrt(0.15 / 20) = 0.0866025; the
    interval 0.5 ± 0.169738 = 0.330262 .. 0.669738 is symmetric: 1/0.669738 - 1 = 0.493122,
    log10 of it -0.307046, so Elo ±122.82.
    """
    e = trinomial(wins=6, draws=8, losses=6)
    assert e.elo == 0.0 and e.los == 0.5
    assert e.stderr == pytest.approx(math.sqrt(0.15 / 20))
    assert e.upper == pytest.approx(122.82, abs=0.01)
    assert e.lower == pytest.approx(-122.82, abs=0.01)


def test_pentanomial_of_ten_pairs():
    """Pairs LL 0, LD 1, DD+WL 3, WD 4, WW 2 (ten pairs, twenty games).

    Per-game scores of the pairs: 0, 1/4, 1/2, 3/4, 1. Mean (0.25 + 1.5 + 3 + 2) / 10 = 0.675;
    variance (1·0.425² + 3·0.175² + 4·0.075² + 2·0.325²) / 10 = 0.50625 / 10 = 0.050625;
    se = sqrt(0.050625 / 10) = 0.0711512. Elo -400·log10(1/0.675 - 1) = 126.97; the score
    interval 0.675 ± 0.139454 = 0.535546 .. 0.814454 gives 24.74 .. 256.97 Elo.
    LOS = Φ(0.175 / 0.0711512) = Φ(2.45955) = 0.99304.
    """
    e = pentanomial([0, 1, 3, 4, 2])
    assert e.games == 20
    assert e.score == pytest.approx(0.675)
    assert e.stderr == pytest.approx(0.0711512, abs=1e-7)
    assert e.elo == pytest.approx(126.968, abs=1e-3)
    assert e.lower == pytest.approx(24.742, abs=1e-3)
    assert e.upper == pytest.approx(256.966, abs=1e-3)
    assert e.los == pytest.approx(0.99304, abs=1e-5)


def test_pentanomial_is_narrower_than_the_trinomial_when_pairs_split():
    """Ten pairs each won once and lost once (WL): 10 W, 10 L. As single games the score
    varies (variance 0.25, se 0.1118); as pairs every pair scores exactly 1/2 (variance
    0): the pairs show that the colour, not the players, decided each game."""
    tri = trinomial(wins=10, draws=0, losses=10)
    pen = pentanomial([0, 0, 10, 0, 0])
    assert tri.stderr == pytest.approx(math.sqrt(0.25 / 20))
    assert pen.stderr == 0.0 and pen.elo == 0.0 and pen.margin == 0.0 and pen.los == 0.5


def test_every_game_won():
    """A perfect score has infinite Elo; LOS 1; the interval reaches +inf."""
    e = trinomial(wins=4, draws=0, losses=0)
    assert e.elo == math.inf and e.upper == math.inf and e.los == 1.0


def test_bad_counts():
    with pytest.raises(ValueError):
        pentanomial([1, 2, 3])
    with pytest.raises(ValueError):
        trinomial(wins=0, draws=0, losses=0)


def test_sprt_bounds_for_five_percent():
    """ln(0.05 / 0.95) = -2.944439, ln(0.95 / 0.05) = +2.944439."""
    lo, hi = sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(-2.944439, abs=1e-6) and hi == pytest.approx(2.944439, abs=1e-6)


def test_mle_with_mean_keeps_the_observed_distribution_when_its_mean_fits():
    """Observed 1/3 each on 0, 1/2, 1 has mean 1/2 already: the fit is the observation."""
    assert mle_with_mean([0, 0.5, 1], [1 / 3] * 3, 0.5) == pytest.approx([1 / 3] * 3)
    p = mle_with_mean([0, 0.5, 1], [0.2, 0.3, 0.5], 0.6)
    assert sum(p) == pytest.approx(1) and sum(pi * v for pi, v in zip(p, [0, 0.5, 1])) == pytest.approx(0.6)


def test_llr_of_equal_thirds_against_the_quadratic():
    """10 L, 10 D, 10 W; H0 Elo 0 (s0 = 1/2), H1 Elo 100 (s1 = L(100) = 0.6400650).

    Under H0 the fit is the observation (x = 0). Under H1, with dᵢ = vᵢ - s1 and equal
    weights, Σ dᵢ/(1 + x·dᵢ) = 0 clears to the quadratic
    3·d₁d₂d₃·x² + 2·(d₁d₂ + d₁d₃ + d₂d₃)·x + (d₁ + d₂ + d₃) = 0, solved here by its formula
    (the code bisects). Then p¹ᵢ = (1/3)/(1 + x·dᵢ) and LLR = 30·Σ (1/3)·ln(p¹ᵢ / (1/3))
    = -10·Σ ln(1 + x·dᵢ) = -1.82179.
    """
    s1 = 1 / (1 + 10 ** (-100 / 400))
    d = [0 - s1, 0.5 - s1, 1 - s1]
    a = 3 * d[0] * d[1] * d[2]
    b = 2 * (d[0] * d[1] + d[0] * d[2] + d[1] * d[2])
    c = sum(d)
    roots = [(-b + sgn * math.sqrt(b * b - 4 * a * c)) / (2 * a) for sgn in (1, -1)]
    x = [r for r in roots if all(1 + r * di > 0 for di in d)]
    assert len(x) == 1
    expected = -10 * sum(math.log(1 + x[0] * di) for di in d)
    assert expected == pytest.approx(-1.82179, abs=1e-5)
    assert llr((10, 10, 10), 0, 100) == pytest.approx(expected, abs=1e-9)


def test_llr_of_wins_and_losses_only_is_the_binomial_ratio():
    """40 L, 0 D, 60 W: with two outcomes the fit with mean s is p(W) = s, so
    LLR = 60·ln(s1/s0) + 40·ln((1 - s1)/(1 - s0)) = 60·ln(1.2801300) + 40·ln(0.7198700)
    = 14.8177 - 13.1474 = 1.67031 for Elo 0 vs 100. The empty draw cell counts 0.001
    (fishtest's regularisation), which moves the value by about 2e-5."""
    s0, s1 = 0.5, 1 / (1 + 10 ** (-100 / 400))
    binomial = 60 * math.log(s1 / s0) + 40 * math.log((1 - s1) / (1 - s0))
    assert binomial == pytest.approx(1.67031, abs=1e-5)
    assert llr((40, 0, 60), 0, 100) == pytest.approx(binomial, abs=1e-4)


def test_llr_against_the_brownian_approximation():
    """Fishtest's example pentanomial (10789, 19328, 33806, 19402, 10543), Elo -3 vs 1.
    For nearby hypotheses the exact GSPRT is close to the approximation
    N·(s1 - s0)·(2s - s0 - s1) / (2·var) (fishtest's LLR_alt2), computed here from scratch."""
    counts = (10789, 19328, 33806, 19402, 10543)
    n = sum(counts)
    v = [i / 4 for i in range(5)]
    s = sum(c * x for c, x in zip(counts, v)) / n
    var = sum(c * (x - s) ** 2 for c, x in zip(counts, v)) / n
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (-3, 1))
    approx = n * (s1 - s0) * (2 * s - s0 - s1) / var / 2
    assert llr(counts, -3, 1) == pytest.approx(approx, rel=1e-3)


def test_sprt_decisions():
    """Strong evidence either way crosses a bound; a little does not."""
    assert sprt((0, 0, 0, 0, 40), 0, 50).decision == "H1"  # forty pairs won twice
    assert sprt((40, 0, 0, 0, 0), 0, 50).decision == "H0"
    state = sprt((1, 2, 3, 2, 1), 0, 10)
    assert state.decision is None and state.lower < state.llr < state.upper
    with pytest.raises(ValueError):
        sprt((1, 1, 1), 5, 5)
