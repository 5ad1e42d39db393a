"""Fit the evaluation's network to saved self-play positions and write it for the engine.

    python scripts/fit_network.py --data DIR [DIR ...] --variant base --hidden 16 --epochs 10 \
        --out solver/engine/nets/base.npz

The positions are those of ``scripts/selfplay_positions.py`` (``VARIANT-*.npz`` in each
DIR); the quiet ones (the mover cannot fill the centre at once) are fitted, 80 % of the games
(and the images of their positions under the board's symmetries) for the fit and 20 % held
out, split by game. It prints the held-out mean cross-entropy of the antisymmetric linear fit
(the evaluation without the network) and, after each epoch, of the network
(:mod:`solver.engine.netfit`), and writes the weight vector with the board it was fitted on.

    python scripts/fit_network.py --data DIR --variant base --score solver/engine/nets/base.npz

fits nothing: it prints the mean cross-entropy on every quiet position in DIR of the rule
set's shipped linear weights and of the network in the file (games that neither was fitted
on, for a held-out figure of a shipped network).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.engine.netfit import Model, NetFit, board_bits, cross_entropy, fit_network  # noqa: E402
from solver.engine.tuning import HAND_SET, MY_THREATS, feature_rows, fit_antisymmetric, loss, split_games  # noqa: E402
from solver.engine.weights import linear_weights  # noqa: E402
from solver.kernels.evaluate import HMAX  # noqa: E402
from solver.game.config import standard_config, symmetry_classes  # noqa: E402

RULES = {"base": {}, "capture": {"capture": True}, "edge": {"edge": True}}


def load(dirs: list[Path], variant: str) -> tuple[np.ndarray, ...]:
    """``m, p, y, game`` of every saved position (games numbered apart folder by folder)."""
    cols: dict[str, list[np.ndarray]] = {"m": [], "p": [], "y": [], "game": []}
    for i, d in enumerate(dirs):
        files = sorted(d.glob(f"{variant}-*.npz"))
        if not files:
            raise ValueError(f"no {variant}-*.npz in {d}")
        for f in files:
            z = np.load(f)
            for k in ("m", "p", "y"):
                cols[k].append(z[k])
            cols["game"].append(z["game"].astype(np.int64) + i * 10**8)
    return tuple(np.concatenate(cols[k]) for k in ("m", "p", "y", "game"))


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except (OSError, ValueError, KeyError) as e:  # a missing or foreign file, a bad --hidden
        print(f"error: {e}", file=sys.stderr)
        return 2


def run(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, nargs="+", required=True)
    ap.add_argument("--variant", choices=tuple(RULES), default="base")
    ap.add_argument("--hidden", type=int, default=NetFit.hidden)
    ap.add_argument("--epochs", type=int, default=NetFit.epochs)
    ap.add_argument("--seed", type=int, default=1, help="the held-out split's seed")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--score", type=Path, default=None, help="score this network on the data instead of fitting")
    a = ap.parse_args(argv)
    if not 1 <= a.hidden <= HMAX:
        ap.error(f"--hidden must be 1..{HMAX}, not {a.hidden}")
    cfg = standard_config(**RULES[a.variant])
    m, p, y, g = load(a.data, a.variant)
    X = feature_rows(cfg, m, p)
    quiet = X[:, MY_THREATS] == 0
    X, m, p, y, g = X[quiet], m[quiet], p[quiet], y[quiet], g[quiet]
    if a.score is not None:
        return score(a.score, cfg, X, m, p, y, len(np.unique(g)))
    # the same number in two folders is the same opening (a series' random plies): one side of the split
    games, gi = np.unique(g % 10**8, return_inverse=True)
    test = split_games(len(games), 0.2, a.seed)[gi]
    print(f"{a.variant}: {len(np.unique(g))} games, {len(y)} quiet positions; held out {int(test.sum())} positions "
          f"of {len(np.unique(g[test]))} games; {len(symmetry_classes(cfg)[0])} symmetries", flush=True)
    w_lin = fit_antisymmetric(X[~test], y[~test], HAND_SET)
    print(f"  linear, antisymmetric: train {loss(X[~test], y[~test], w_lin):.4f}, "
          f"held-out {loss(X[test], y[test], w_lin):.4f}", flush=True)
    n = cfg.board.size
    Mt, Pt = board_bits(m[test], n), board_bits(p[test], n)
    t0 = time.monotonic()

    def report(epoch, model):
        z = model.logits(X[test].astype(np.float32), Mt, Pt)
        print(f"  network of {a.hidden}, epoch {epoch + 1}: held-out {cross_entropy(z, y[test]):.4f} "
              f"({time.monotonic() - t0:.0f} s)", flush=True)

    how = NetFit(hidden=a.hidden, epochs=a.epochs)
    model = fit_network(X[~test], m[~test], p[~test], y[~test], symmetry_classes(cfg)[0], w_lin, how, report)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = a.out.with_suffix(".tmp.npz")
        np.savez(tmp, w=model.vector(), board=np.int64(cfg.board.n), variant=a.variant)
        tmp.rename(a.out)
        print(f"wrote {a.out}")
    return 0


def score(path: Path, cfg, X: np.ndarray, m: np.ndarray, p: np.ndarray, y: np.ndarray, n_games: int) -> int:
    """Print the shipped linear weights' and the network's loss on all the positions."""
    with np.load(path) as z:
        model = Model.from_vector(z["w"])
    n = model.n
    z = model.logits(X, board_bits(m, n), board_bits(p, n))
    print(f"{n_games} games, {len(y)} quiet positions: shipped linear weights {loss(X, y, linear_weights(cfg)):.4f}, "
          f"{path.name} {cross_entropy(z, y):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
