"""Bounds on the standard start's first-ply positions that df-pn has not settled.

    python scripts/first_ply_bounds.py [--light N] [--dark M] [--nodes B] [--bits K] [MOVE ...]

For each first-ply position (dark to move; by default the eight open ones of
docs/pns.md), the exhaustive depth-limited search (:func:`solver.search.distance.wins_within`,
the search that makes df-pn's distances exact) asks whether light wins within ``N`` plies
and whether dark wins within ``M``. "no" to both leaves a loss for dark in ``N + 2`` or
more, a win for dark in ``M + 2`` or more, or a draw; "yes" with the bound below it gives
the exact distance. ``--light 0`` or ``--dark 0`` skips that question. ``--nodes``: the budget of each question ("open" when it is spent);
``--bits``: the search table's size, 2^K entries (24: 400 MB; ``rotary prove`` keeps it at
2^20). Prints a Markdown table with the nodes and seconds of each answer.
"""

from __future__ import annotations

import argparse
import sys
import time

from solver.game.config import standard_config
from solver.game.position import Position
from solver.game.rules import distinct_children
from solver.game.start import standard_start
from solver.search.prover import Prover

OPEN = ["d3+1", "d3+2", "d3+3", "d3+4", "d3+5", "e4+1", "e4+2", "e4+4"]


def ask(pos: Position, light: bool, plies: int, nodes: int, bits: int) -> tuple[str, int, float]:
    """Whether light (``light``) or dark wins within ``plies`` from ``pos`` (dark to move):
    ``yes``/``no``/``open``, the nodes and the seconds it took."""
    prover = Prover(standard_config(), tt_bits=20)
    prover.rtt_bits = bits
    t0, n0 = time.perf_counter(), prover.nodes
    # the question as df-pn asks it: 0, the mover (dark) attacks; 1, he defends
    r = prover.wins_within(pos.mover, pos.opponent, pos.turn, 1 if light else 0, plies, nodes)
    return {True: "yes", False: "no", None: "open"}[r], prover.nodes - n0, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("moves", nargs="*", default=OPEN, help="first moves (default: the eight open ones)")
    ap.add_argument("--light", type=int, default=14, help="does light win within N plies (even; 0: not asked)")
    ap.add_argument("--dark", type=int, default=15, help="does dark win within M plies (odd; 0: not asked)")
    ap.add_argument("--nodes", type=float, default=150e6, help="node budget of each question")
    ap.add_argument("--bits", type=int, default=24, help="search table of 2^K entries")
    args = ap.parse_args()
    kids = distinct_children(standard_config(), standard_start())
    unknown = [m for m in args.moves if m not in kids]
    if unknown:
        print(f"first_ply_bounds.py: error: not a first move of the standard start: {', '.join(unknown)} "
              f"(they are: {', '.join(sorted(kids))})", file=sys.stderr)
        raise SystemExit(2)
    print(f"| first move | light wins within {args.light} | nodes | s | dark wins within {args.dark} | nodes | s |")
    print("|---|---|---:|---:|---|---:|---:|")
    for mv in args.moves:
        row = [mv]
        for light, plies in ((True, args.light), (False, args.dark)):
            if plies <= 0:
                row += ["", "", ""]
                continue
            answer, nodes, seconds = ask(kids[mv], light, plies, int(args.nodes), args.bits)
            row += [answer, f"{nodes:,}", f"{seconds:.1f}"]
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
