"""Nodes a second of the engine's search with the network and with the linear weights alone.

    python scripts/bench_eval.py --nodes 300000 --openings 8 --rounds 2

searches the first ``--openings`` positions of ``data/openings/standard-4ply.txt`` (base
rules, hex(4) 13 v 13) to ``--nodes`` nodes each (``Searcher.rotation``, the table cleared
before each search), the two weight vectors interleaved position by position, ``--rounds``
times, and prints each one's nodes, the searching thread's CPU seconds and nodes a second
(CPU time, so that other work on the machine moves the figures less than wall time would).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.engine.score import Limit  # noqa: E402
from solver.engine.searcher import Searcher  # noqa: E402
from solver.engine.weights import default_weights, linear_weights  # noqa: E402
from solver.game.config import standard_config  # noqa: E402
from solver.game.start import standard_start  # noqa: E402
from solver.play.openings import read_openings  # noqa: E402

OPENINGS = Path(__file__).resolve().parents[1] / "data" / "openings" / "standard-4ply.txt"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=300_000)
    ap.add_argument("--openings", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args(argv)
    cfg = standard_config()
    arms = {"network": default_weights(cfg), "linear": linear_weights(cfg)}
    searchers = {k: Searcher(cfg, weights=w) for k, w in arms.items()}
    for s in searchers.values():  # compile the kernels outside the measurement
        s.rotation(*_view(standard_start()), Limit(nodes=1000))
    views = [_view(pos) for _, pos in read_openings(OPENINGS)[: a.openings]]
    total = {k: [0, 0.0] for k in arms}
    for _ in range(a.rounds):
        for v in views:
            for k, s in searchers.items():
                s.clear()
                t = time.thread_time()
                nodes = s.rotation(*v, Limit(nodes=a.nodes))[3]
                total[k][0] += nodes
                total[k][1] += time.thread_time() - t
    for k, (nodes, secs) in total.items():
        print(f"{k}: {nodes:,} nodes in {secs:.2f} s CPU, {nodes / secs / 1e6:.3f} M nodes/s")
    return 0


def _view(pos) -> tuple[int, int, int]:
    return pos.mover, pos.opponent, pos.turn


if __name__ == "__main__":
    sys.exit(main())
