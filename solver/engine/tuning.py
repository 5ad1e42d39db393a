"""Fitting the evaluation's weights to game outcomes (Texel tuning).

* :func:`self_play` plays the searcher against itself from the standard start, a few
  random plies away from it (uniform over the legal moves), at a node budget per move
  drawn per game and side around a given one, so that games differ. A game ends with the
  rules (the centre filled, no legal point), as a draw at the third occurrence of a
  position or at a ply limit. :func:`positions` lists every searched position (mover's
  view ``m, p, s``) with the game's result for its mover: 1, 0.5 or 0.
* :func:`design` computes the features in bulk (:func:`~solver.kernels.evaluate.features_batch`)
  and keeps the quiet positions: those where the mover cannot fill the centre at once,
  which the search answers exactly and never evaluates.
* :func:`fit` is a logistic regression of the result on the features, one logit per unit
  of ``w · f`` (the scale of :func:`~solver.kernels.evaluate.evaluate`), by Newton's
  method with a little L2 regularisation; the tempo feature (always 1) is the intercept and
  is not regularised. A feature that is 0 in every position (``my_threats`` in quiet
  positions, ``material`` without captures) says nothing: its weight stays as given.
* :func:`match` plays two weight vectors against each other, each opening with both colours.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from solver.engine.score import Limit
from solver.engine.searcher import Searcher, move_of_code
from solver.game.config import Config
from solver.game.position import X, Move, Position
from solver.game.rules import ONGOING, WIN, apply, moves, status
from solver.game.start import standard_start
from solver.index import build_geo
from solver.kernels.evaluate import NF, features_batch, zone_masks

# The first, hand-set guesses: the baseline that the fit is measured against and the
# weights of the first round's self-play (kept here so that a run reproduces whatever
# solver.engine.weights.FITTED holds).
HAND_SET = (0.30, 0.60, 0.10, 0.03, 0.05, 0.10, 0.80, -0.90, 0.25, 0.40, 0.05) + (0.0,) * (NF - 11)
MY_THREATS, TEMPO = 6, 10
DRAW_AT = 3  # occurrences of a position that make a draw
CENTRE, NO_MOVE, REPETITION, PLY_LIMIT = "centre", "no move", "repetition", "ply limit"


@dataclass(frozen=True)
class SelfPlay:
    """How the self-play games are played.

    Each side's budget per move is ``nodes`` times a factor drawn per game and side from
    ``1 ± jitter``; the first ``0..random_plies`` plies (drawn per game) are random.
    """

    nodes: int = 4000
    jitter: float = 0.5
    random_plies: int = 6
    max_plies: int = 300
    tt_bits: int = 18


@dataclass
class Game:
    """A finished game: its start, its moves, its result for light (1, 0.5, 0) and why it
    ended; ``searched_from`` is the first ply chosen by the search (the earlier ones
    are the random opening)."""

    start: Position
    moves: list[Move] = field(default_factory=list)
    result: float = 0.5
    end: str = PLY_LIMIT
    searched_from: int = 0


def _view(pos: Position) -> tuple[int, int, int]:
    return pos.mover, pos.opponent, pos.turn


def random_opening(cfg: Config, rng: np.random.Generator, plies: int) -> tuple[Position, list[Move]]:
    """The standard start after ``plies`` uniformly random legal moves; drawn again
    until the game is still on."""
    while True:
        pos, played = standard_start(), []
        for _ in range(plies):
            legal = moves(cfg, pos)
            if not legal:
                break
            mv = legal[int(rng.integers(len(legal)))]
            pos = apply(cfg, pos, mv)
            played.append(mv)
        if status(cfg, pos) == ONGOING:
            return pos, played


def play_game(cfg: Config, start: Position, opening: Sequence[Move], searchers: Sequence[Searcher],
              limits: Sequence[Limit], max_plies: int = 300) -> Game:
    """Play from ``start`` through ``opening`` (legal moves), then ``searchers[c]`` with
    ``limits[c]`` for colour ``c`` until the game ends; each searcher's tables are cleared
    first, so that a game depends only on its arguments."""
    for s in {id(s): s for s in searchers}.values():
        s.clear()
    game = Game(start, list(opening), searched_from=len(opening))
    pos = start
    seen: dict[tuple[int, int, int], int] = {}
    since: list[tuple[int, int, int]] = []  # positions since the last capture, for the search
    trail = [pos]
    for mv in opening:
        pos = apply(cfg, pos, mv)
        trail.append(pos)
    for q in trail:
        key = (q.x, q.o, q.turn)
        seen[key] = seen.get(key, 0) + 1
        if since and (q.x | q.o).bit_count() != (since[-1][0] | since[-1][1]).bit_count():
            since.clear()
        since.append(_view(q))
    while True:
        st = status(cfg, pos)
        if st != ONGOING:
            game.result = 1.0 if (st == WIN) == (pos.turn == X) else 0.0
            game.end = CENTRE if _centre_full(cfg, pos) else NO_MOVE
            return game
        if seen[(pos.x, pos.o, pos.turn)] >= DRAW_AT:
            game.result, game.end = 0.5, REPETITION
            return game
        if len(game.moves) >= max_plies:
            game.result, game.end = 0.5, PLY_LIMIT
            return game
        c = pos.turn
        m, p, s = _view(pos)
        code = searchers[c].rotation(m, p, s, limits[c], history=since[:-1])[0]
        mv = move_of_code(code)
        before = (pos.x | pos.o).bit_count()
        pos = apply(cfg, pos, mv)
        game.moves.append(mv)
        key = (pos.x, pos.o, pos.turn)
        seen[key] = seen.get(key, 0) + 1
        if (pos.x | pos.o).bit_count() != before:
            since.clear()
        since.append(_view(pos))


def _centre_full(cfg: Config, pos: Position) -> bool:
    c = cfg.board.centre_mask
    return pos.x & c == c or pos.o & c == c


def self_play(cfg: Config, games: int, seed: int, how: SelfPlay = SelfPlay(),
              weights: Sequence[float] = HAND_SET, first: int = 0) -> list[Game]:
    """Games ``first .. first + games - 1`` of the self-play series ``seed``: game ``i``
    depends only on ``(seed, i)``, the settings and the weights."""
    searcher = Searcher(cfg, tt_bits=how.tt_bits, weights=np.asarray(weights, dtype=np.float64))
    out = []
    for i in range(first, first + games):
        rng = np.random.default_rng([seed, i])
        _, opening = random_opening(cfg, rng, int(rng.integers(how.random_plies + 1)))
        budgets = [max(1, int(round(how.nodes * rng.uniform(1 - how.jitter, 1 + how.jitter)))) for _ in range(2)]
        limits = [Limit(nodes=b) for b in budgets]
        out.append(play_game(cfg, standard_start(), opening, [searcher, searcher], limits, how.max_plies))
    return out


def positions(cfg: Config, games: Sequence[Game]) -> tuple[np.ndarray, ...]:
    """Every searched position of ``games`` as arrays ``(m, p, s, game, y)``: mover's view,
    the game's index in ``games`` and its result for the mover."""
    ms, ps, ss, gs, ys = [], [], [], [], []
    for g, game in enumerate(games):
        pos = game.start
        for ply, mv in enumerate(game.moves):
            if ply >= game.searched_from:
                ms.append(pos.mover)
                ps.append(pos.opponent)
                ss.append(pos.turn)
                gs.append(g)
                ys.append(game.result if pos.turn == X else 1.0 - game.result)
            pos = apply(cfg, pos, mv)
    return (np.array(ms, dtype=np.uint64), np.array(ps, dtype=np.uint64), np.array(ss, dtype=np.int8),
            np.array(gs, dtype=np.int64), np.array(ys, dtype=np.float64))


def feature_rows(cfg: Config, m: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The features of the positions ``(m[i], p[i])``, one row each (float64)."""
    out = np.zeros((len(m), NF), dtype=np.float64)
    if len(m):
        geo = build_geo(cfg)
        zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
        features_batch(np.ascontiguousarray(m, dtype=np.uint64), np.ascontiguousarray(p, dtype=np.uint64), geo,
                       zones, out)
    return out


def design(cfg: Config, games: Sequence[Game]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, game)`` of the quiet searched positions of ``games`` (see the module docstring)."""
    m, p, _, g, y = positions(cfg, games)
    X = feature_rows(cfg, m, p)
    quiet = X[:, MY_THREATS] == 0
    return X[quiet], y[quiet], g[quiet]


# ------------------------------------------------------------------------------ the fit


def loss(X: np.ndarray, y: np.ndarray, w: Sequence[float]) -> float:
    """Mean cross-entropy of results ``y`` (0..1) against ``sigmoid(X @ w)`` (a ``w`` of the
    first features only: the others weigh 0)."""
    w = np.asarray(w, dtype=np.float64)
    z = X[:, : len(w)] @ w
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def fit(X: np.ndarray, y: np.ndarray, w0: Sequence[float] = HAND_SET, l2: float = 1e-4, iters: int = 50,
        tol: float = 1e-12) -> np.ndarray:
    """The weights minimising ``loss(X, y, w) + l2/2 · |w|²`` (the intercept ``TEMPO`` not
    penalised), by Newton's method with step halving from ``w0``; features that are 0
    throughout keep their ``w0`` weight."""
    w = np.array(w0, dtype=np.float64)
    free = np.flatnonzero(np.any(X != 0, axis=0))
    if free.size == 0:
        return w
    A = X[:, free]
    pen = np.where(free == TEMPO, 0.0, l2)
    n = len(y)

    def objective(v: np.ndarray) -> float:
        z = A @ v
        return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * np.sum(pen * v * v))

    v = w[free].copy()
    f = objective(v)
    for _ in range(iters):
        z = A @ v
        q = 1.0 / (1.0 + np.exp(-z))
        grad = A.T @ (q - y) / n + pen * v
        hess = (A * (q * (1.0 - q))[:, None]).T @ A / n + np.diag(pen) + 1e-12 * np.eye(len(v))
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-6:
            v_new = v - t * step
            f_new = objective(v_new)
            if f_new <= f:
                break
            t *= 0.5
        else:
            break
        done = f - f_new < tol
        v, f = v_new, f_new
        if done:
            break
    w[free] = v
    return w


# The evaluation is kept antisymmetric: the same board with the other side to move scores
# about the negative (only the intercept ``TEMPO`` and the opponent's threats, which the
# search meets only at the mover's leaves, break it). An evaluation whose side-to-move part
# is large swings by it between odd and even depths, and an iterative deepening search with
# aspiration windows pays for that swing in nodes. So each feature about the mover's side
# shares its weight, negated, with its counterpart about the opponent's, and a feature of a
# symmetric configuration has none.
MIRRORED = ((11, 12), (13, 14), (16, 17), (18, 19), (20, 21), (22, 23), (24, 25), (26, 27), (28, 29), (30, 31),
            (32, 33))
SYMMETRIC = (15,)


def antisymmetric_basis(nf: int = NF) -> np.ndarray:
    """``T`` (``nf`` by the free parameters) with ``w = T @ v`` antisymmetric as above:
    one column per feature not in :data:`MIRRORED` or :data:`SYMMETRIC`, one per mirrored
    pair (+1 on the mover's feature, -1 on the opponent's)."""
    tied = {j for pair in MIRRORED for j in pair} | set(SYMMETRIC)
    cols = []
    for i in range(nf):
        if i not in tied:
            cols.append(np.eye(nf)[i])
    for i, j in MIRRORED:
        cols.append(np.eye(nf)[i] - np.eye(nf)[j])
    return np.array(cols).T


def fit_antisymmetric(X: np.ndarray, y: np.ndarray, w0: Sequence[float] = HAND_SET, l2: float = 1e-4) -> np.ndarray:
    """:func:`fit` with the weights held antisymmetric (:func:`antisymmetric_basis`)."""
    T = antisymmetric_basis(X.shape[1])
    w0 = np.asarray(w0, dtype=np.float64)
    v0 = np.linalg.lstsq(T, w0, rcond=None)[0]
    assert T[TEMPO, TEMPO] == 1  # the intercept keeps its column, which fit leaves unpenalised
    w = T @ fit(X @ T, y, v0, l2=l2)
    fixed = ~np.any(X != 0, axis=0)  # features absent from the data keep their start
    w[fixed] = w0[fixed]
    return w


def split_games(n_games: int, held_out: float, seed: int) -> np.ndarray:
    """A boolean per game: True for the ``held_out`` share (rounded) drawn at random."""
    rng = np.random.default_rng([seed, 0x7E57])
    test = np.zeros(n_games, dtype=bool)
    test[rng.permutation(n_games)[: int(round(held_out * n_games))]] = True
    return test


# ------------------------------------------------------------------------------ matches


@dataclass
class MatchResult:
    """A match's games from the first player's view: wins, draws, losses, and the pairs
    (one opening, both colours) as the pentanomial ``(LL, LD, DD+WL, WD, WW)``."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    pairs: list[int] = field(default_factory=lambda: [0] * 5)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return self.wins + 0.5 * self.draws


def match(cfg: Config, wa: Sequence[float], wb: Sequence[float], openings: Sequence[Sequence[Move]], limit: Limit,
          max_plies: int = 300, tt_bits: int = 20) -> MatchResult:
    """Weights ``wa`` against ``wb`` at ``limit`` a move: every opening (moves from the
    standard start) played twice, ``wa`` light in the first game."""
    a = Searcher(cfg, tt_bits=tt_bits, weights=np.asarray(wa, dtype=np.float64))
    b = Searcher(cfg, tt_bits=tt_bits, weights=np.asarray(wb, dtype=np.float64))
    out = MatchResult()
    for opening in openings:
        pair = 0.0
        for a_colour in (0, 1):
            sides = [a, b] if a_colour == 0 else [b, a]
            g = play_game(cfg, standard_start(), opening, sides, [limit, limit], max_plies)
            r = g.result if a_colour == 0 else 1.0 - g.result
            out.wins += r == 1.0
            out.draws += r == 0.5
            out.losses += r == 0.0
            pair += r
        out.pairs[int(round(2 * pair))] += 1
    return out


def match_openings(cfg: Config, count: int, seed: int, lo: int = 2, hi: int = 4) -> list[list[Move]]:
    """``count`` distinct random openings of ``lo..hi`` plies from the standard start
    (the first one empty: the standard start itself)."""
    rng = np.random.default_rng([seed, 0x0DE5])
    out: list[list[Move]] = [[]]
    seen = {standard_start()}
    while len(out) < count:
        pos, played = random_opening(cfg, rng, int(rng.integers(lo, hi + 1)))
        if pos not in seen:
            seen.add(pos)
            out.append(played)
    return out[:count]
