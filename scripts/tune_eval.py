"""Fit the evaluation's weights to self-play outcomes (Texel tuning) and print the figures.

    python scripts/tune_eval.py --data /work/runs/eval/data --variant base
    python scripts/tune_eval.py --games 1500 --seed 1 --variant both --out tune.npz

With ``--data DIR`` the positions are those that ``scripts/selfplay_positions.py`` saved in
DIR (``VARIANT-*.npz``; ``--variant`` base, capture or edge): the weights are fitted on
80 % of the games, and the held-out loss of the other 20 % is printed for the eleven
weights fitted before the patterns, for the eleven features refitted on the same games,
and for all features; the last line is the ``FITTED`` entry for solver/engine/weights.py.

Without ``--data``, the script

plays ``--games`` self-play games a variant (hex(4) 13 v 13 from the standard start, base
rules and/or ``capture`` with the standard traps; see :mod:`solver.engine.tuning`), fits
the weights on 80 % of the games and reports the loss on the other 20 % (split by game),
then prints the weights as a tuple for ``FITTED`` in solver/engine/weights.py. With
``--rounds 2`` the second round's games are played with the first round's fit and the fit
is made again on the games of both rounds. ``--match N`` plays the fit against the
hand-set weights from N openings with both colours in each variant. ``--out`` saves the
positions (npz: m, p, s, game, y, variant) and the weights.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.engine.score import Limit  # noqa: E402
from solver.engine.tuning import (  # noqa: E402
    HAND_SET, SelfPlay, feature_rows, fit, fit_antisymmetric, loss, match, match_openings, positions, self_play, split_games,
)
from solver.engine.tuning import MY_THREATS  # noqa: E402
from solver.engine.weights import ELEVEN, NAMES  # noqa: E402
from solver.kernels.evaluate import NF  # noqa: E402
from solver.game.config import standard_config  # noqa: E402
from solver.play.elo import pentanomial  # noqa: E402

VARIANTS = {"base": False, "capture": True}
RULES = {"base": {}, "capture": {"capture": True}, "edge": {"edge": True}}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1500, help="self-play games a variant and round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variant", choices=("base", "capture", "edge", "both"), default="both")
    ap.add_argument("--data", type=Path, default=None, help="fit on the positions saved in this folder")
    ap.add_argument("--free", action="store_true", help="with --data: print the unconstrained fit's weights "
                    "(default: the antisymmetric fit's, see solver.engine.tuning.MIRRORED)")
    ap.add_argument("--nodes", type=int, default=SelfPlay.nodes, help="self-play budget a move (jittered)")
    ap.add_argument("--random-plies", type=int, default=SelfPlay.random_plies)
    ap.add_argument("--max-plies", type=int, default=SelfPlay.max_plies)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--held-out", type=float, default=0.2)
    ap.add_argument("--match", type=int, default=0, help="openings of the check match a variant (0: none)")
    ap.add_argument("--match-nodes", type=int, default=20000)
    ap.add_argument("--out", type=Path, default=None)
    return ap.parse_args(argv)


def shares(results: list[float]) -> str:
    c = collections.Counter(results)
    n = max(len(results), 1)
    return f"light wins {c[1.0] / n:.1%}, draws {c[0.5] / n:.1%}, dark wins {c[0.0] / n:.1%}"


def fit_saved(a: argparse.Namespace) -> int:
    """The fit on saved positions (``--data``): old features against new on the same games."""
    if a.variant == "both":
        print("error: --data fits one rule set at a time (--variant base, capture or edge)", file=sys.stderr)
        return 2
    files = sorted(a.data.glob(f"{a.variant}-*.npz"))
    if not files:
        print(f"error: no {a.variant}-*.npz in {a.data}", file=sys.stderr)
        return 2
    cfg = standard_config(**RULES[a.variant])
    parts = [np.load(f) for f in files]
    m = np.concatenate([d["m"] for d in parts])
    p = np.concatenate([d["p"] for d in parts])
    y = np.concatenate([d["y"] for d in parts])
    g = np.concatenate([d["game"] for d in parts])
    t = time.monotonic()
    X = feature_rows(cfg, m, p)
    quiet = X[:, MY_THREATS] == 0
    X, y, g = X[quiet], y[quiet], g[quiet]
    n_games = int(g.max()) + 1
    test = split_games(n_games, a.held_out, a.seed)[g]
    print(f"{a.variant}: {len(files)} files, {len(np.unique(g))} games, {len(m)} positions, {len(y)} quiet; "
          f"held out {int(np.sum(test))} positions of {len(np.unique(g[test]))} games; features {time.monotonic() - t:.0f} s")
    old = X.copy()
    old[:, len(ELEVEN):] = 0.0  # fit leaves features that are 0 throughout at their start
    shipped = np.array(ELEVEN)
    w_old = fit(old[~test], y[~test], HAND_SET, l2=a.l2)
    t = time.monotonic()
    w_free = fit(X[~test], y[~test], HAND_SET, l2=a.l2)
    w_anti = fit_antisymmetric(X[~test], y[~test], HAND_SET, l2=a.l2)
    print(f"  fit {time.monotonic() - t:.0f} s, L2 {a.l2:g}")
    w_new = w_free if a.free else w_anti
    for name, Xs, w in (("the eleven weights fitted before the patterns", X, shipped), ("eleven features refitted", old, w_old),
                        (f"all {NF} features, unconstrained", X, w_free),
                        (f"all {NF} features, antisymmetric", X, w_anti)):
        print(f"  {name}: train {loss(Xs[~test], y[~test], w):.4f}, held-out {loss(Xs[test], y[test], w):.4f}")
    print("  " + ", ".join(f"{n} {x:+.3f}" for n, x in zip(NAMES, w_new)))
    print(f'  "{a.variant}": (' + ", ".join(f"{x:.3f}" for x in w_new) + "),")
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    if a.data is not None:
        return fit_saved(a)
    how = SelfPlay(nodes=a.nodes, random_plies=a.random_plies, max_plies=a.max_plies)
    names = list(VARIANTS) if a.variant == "both" else [a.variant]
    cfgs = {v: standard_config(capture=VARIANTS[v]) for v in names}
    print(f"self-play: hex(4) 13v13 {'+'.join(names)}, {a.games} games a variant and round, seed {a.seed}, "
          f"{how.nodes} nodes a move (x{1 - how.jitter:.1f}..{1 + how.jitter:.1f} per game and side), "
          f"0..{how.random_plies} random plies, draw at ply {how.max_plies} or a third repetition")
    cols: dict[str, list[np.ndarray]] = collections.defaultdict(list)
    n_games = 0
    w_play = np.array(HAND_SET)
    w = w_play
    for rnd in range(a.rounds):
        print(f"round {rnd + 1}: self-play weights {tuple(round(float(x), 3) for x in w_play)}")
        for vi, v in enumerate(names):
            cfg = cfgs[v]
            t, cpu = time.monotonic(), time.process_time()
            games = self_play(cfg, a.games, a.seed, how, w_play, first=rnd * a.games)
            secs, cpu = time.monotonic() - t, time.process_time() - cpu
            m, p, s, g, y = positions(cfg, games)
            X = feature_rows(cfg, m, p)
            ends = collections.Counter(gm.end for gm in games)
            print(f"  {v}: {len(games)} games in {secs:.0f} s ({cpu:.0f} s CPU), {len(m)} positions, "
                  f"{int(np.sum(X[:, 6] == 0))} quiet; {shares([gm.result for gm in games])}; "
                  f"mean length {np.mean([len(gm.moves) for gm in games]):.1f} plies; "
                  f"ends {dict(ends)}")
            for k, arr in (("m", m), ("p", p), ("s", s), ("game", g + n_games), ("y", y), ("X", X),
                           ("variant", np.full(len(m), vi, np.int8)), ("round", np.full(len(m), rnd, np.int8))):
                cols[k].append(arr)
            n_games += len(games)
        data = {k: np.concatenate(v) for k, v in cols.items()}
        w = report_fit(data, n_games, names, a)
        w_play = w
    if a.out is not None:
        np.savez_compressed(a.out, **{k: v for k, v in data.items() if k != "X"}, fitted=w, hand_set=np.array(HAND_SET))
        print(f"saved {a.out}")
    if a.match:
        limit = Limit(nodes=a.match_nodes)
        for v in names:
            cfg = cfgs[v]
            t, cpu = time.monotonic(), time.process_time()
            openings = match_openings(cfg, a.match, a.seed)
            r = match(cfg, w, HAND_SET, openings, limit)
            e = pentanomial(r.pairs)
            print(f"match {v}: fitted vs hand-set, {r.games} games ({a.match} openings x 2 colours), "
                  f"{a.match_nodes} nodes a move: {r.score:g}/{r.games} = {r.score / r.games:.1%} "
                  f"(+{r.wins} ={r.draws} -{r.losses}; pairs LL..WW {r.pairs}); Elo {e.elo:+.0f} "
                  f"[{e.lower:+.0f}, {e.upper:+.0f}] 95 %, LOS {e.los:.1%}; {time.monotonic() - t:.0f} s "
                  f"({time.process_time() - cpu:.0f} s CPU)")
    return 0


def report_fit(data: dict[str, np.ndarray], n_games: int, names: list[str], a: argparse.Namespace) -> np.ndarray:
    quiet = data["X"][:, 6] == 0
    X, y, g, var = data["X"][quiet], data["y"][quiet], data["game"][quiet], data["variant"][quiet]
    test = split_games(n_games, a.held_out, a.seed)[g]
    t = time.monotonic()
    w = fit(X[~test], y[~test], HAND_SET, l2=a.l2)
    secs = time.monotonic() - t
    n_test = int(np.sum(split_games(n_games, a.held_out, a.seed)))
    print(f"  fit: {n_games - n_test} games / {int(np.sum(~test))} quiet positions, held out {n_test} games / "
          f"{int(np.sum(test))} positions; L2 {a.l2:g}; {secs:.1f} s")
    zero = np.zeros(len(HAND_SET))
    print(f"  loss (mean cross-entropy; 0.6931 = a coin): train hand-set {loss(X[~test], y[~test], HAND_SET):.4f} -> "
          f"fitted {loss(X[~test], y[~test], w):.4f}; held-out hand-set {loss(X[test], y[test], HAND_SET):.4f} -> "
          f"fitted {loss(X[test], y[test], w):.4f} (zero weights {loss(X[test], y[test], zero):.4f})")
    if len(names) > 1:
        for vi, v in enumerate(names):
            sel = test & (var == vi)
            print(f"    held-out {v}: hand-set {loss(X[sel], y[sel], HAND_SET):.4f} -> fitted {loss(X[sel], y[sel], w):.4f}")
    print("  " + ", ".join(f"{n} {x:+.3f}" for n, x in zip(NAMES, w)))
    print("  FITTED = (" + ", ".join(f"{x:.3f}" for x in w) + ")")
    return w


if __name__ == "__main__":
    sys.exit(main())
