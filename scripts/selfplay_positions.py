"""Play self-play games of the current engine and save their positions for the fit.

    python scripts/selfplay_positions.py --variant base --games 12000 --seed 7 --chunk 500 \
        --weights eleven --out /work/runs/eval/data

plays games ``first .. first + games - 1`` of the self-play series ``--seed``
(:func:`solver.engine.tuning.self_play`: the standard start of hex(4) 13 v 13 after 0..6
random plies, both sides the engine at about ``--nodes`` nodes a move, with the rules'
fitted weights or, with ``--weights eleven``, the eleven weights from before the patterns)
and writes every ``--chunk`` games to ``OUT/VARIANT-FIRST.npz`` (``m, p, s, game, y``: the
searched positions from the mover's view, the game's number in the series and its result for
the mover). A chunk already on disk is skipped, so a stopped run resumes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.engine.tuning import SelfPlay, positions, self_play  # noqa: E402
from solver.engine.weights import ELEVEN, default_weights  # noqa: E402
from solver.game.config import standard_config  # noqa: E402

RULES = {"base": {}, "capture": {"capture": True}, "edge": {"edge": True}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", choices=tuple(RULES), default="base")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--nodes", type=int, default=SelfPlay.nodes)
    ap.add_argument("--chunk", type=int, default=500)
    ap.add_argument("--weights", choices=("fitted", "eleven"), default="fitted")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    cfg = standard_config(**RULES[a.variant])
    how = SelfPlay(nodes=a.nodes)
    w = default_weights(cfg) if a.weights == "fitted" else np.array(ELEVEN)
    a.out.mkdir(parents=True, exist_ok=True)
    for first in range(a.first, a.first + a.games, a.chunk):
        n = min(a.chunk, a.first + a.games - first)
        path = a.out / f"{a.variant}-{first:07d}.npz"
        if path.exists():
            continue
        t = time.monotonic()
        games = self_play(cfg, n, a.seed, how, w, first=first)
        m, p, s, g, y = positions(cfg, games)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, m=m, p=p, s=s, game=g + first, y=y)
        tmp.rename(path)
        print(f"{path.name}: {n} games, {len(m)} positions, {time.monotonic() - t:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
