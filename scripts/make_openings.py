"""Write an openings file for ``rotary match``: positions a few plies from a start, drawn by
random walks and kept where a short df-pn search decides nothing.

    python scripts/make_openings.py [--plies 4] [--count 24] [--seed 1] [--nodes 100000]
                                    [--position POS] [rule options] -o FILE

Each walk plays ``--plies`` moves from the start (the standard start of the rules, or
``--position``), each chosen uniformly among the distinct positions one move away. A walk's
end is kept if the game is not over there, it is new up to the board's symmetries (the
prover's canonical key: rotations, reflections and, without traps, the colour swap), and
df-pn (:class:`solver.search.prover.Prover`) with ``--nodes`` nodes proves neither a win nor
a loss nor a draw for the side to move there (df-pn proves rotation-phase positions: a
position of the setup game's placements is kept without that test, e.g. ``--setup offer
--balls 13`` from the empty board). The file's header names the exact command.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from pathlib import Path

from solver.cli.options import add_rule_options, load_position, start_position
from solver.game.position import PLAY
from solver.game.rules import ONGOING, children, status
from solver.play.openings import write_openings
from solver.search.prover import Prover


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True, help="the openings file to write")
    ap.add_argument("--plies", type=int, default=4, help="moves from the start (default %(default)s)")
    ap.add_argument("--count", type=int, default=24, help="positions to write (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random walks (default %(default)s)")
    ap.add_argument("--nodes", type=int, default=100_000, help="df-pn budget per position (default %(default)s)")
    ap.add_argument("--tt-bits", type=int, default=20,
                    help="df-pn's table: 2^N entries of 16 bytes (default %(default)s; 24 for budgets of millions)")
    ap.add_argument("--tries", type=int, default=10_000, help="give up after this many walks (default %(default)s)")
    ap.add_argument("--position", help="start from this position instead of the standard start")
    add_rule_options(ap)
    args = ap.parse_args(argv)
    cfg, start = load_position(args.position, args) if args.position else start_position(args)
    rng = random.Random(args.seed)
    prover = Prover(cfg, tt_bits=args.tt_bits)
    kept, seen = [], set()
    over = repeated = decided = walks = 0
    t0 = time.monotonic()
    while len(kept) < args.count and walks < args.tries:
        walks += 1
        pos = start
        for _ in range(args.plies):
            kids = children(cfg, pos)
            if not kids:
                break
            pos = rng.choice(kids)
        if status(cfg, pos) != ONGOING:
            over += 1
            continue
        key = prover.key(pos.mover, pos.opponent, pos.turn, 0)
        if key in seen:
            repeated += 1
            continue
        seen.add(key)
        if pos.phase != PLAY:
            kept.append(pos)
            continue
        res = prover.prove(pos, nodes=args.nodes)
        if res.resolved:
            decided += 1
            continue
        kept.append(pos)
    seconds = time.monotonic() - t0
    given = argv if argv is not None else sys.argv[1:]
    command = "python scripts/make_openings.py " + " ".join(shlex.quote(a) for a in given)
    where = "--position " + args.position if args.position else "the standard start" if start.phase == PLAY \
        else "the empty board"
    header = [
        f"rotary match openings: {len(kept)} positions {args.plies} plies from {where}, rules {cfg.describe()}",
        f"drawn by random walks (seed {args.seed}) among the distinct positions one move away, kept where the",
        f"game is not over, new up to symmetry, and df-pn with {args.nodes} nodes proves no result"
        + (" (placements: no df-pn)" if start.phase != PLAY else ""),
        f"({walks} walks: {over} ended the game, {repeated} repeated, {decided} decided by df-pn)",
        f"made by: {command}",
    ]
    write_openings(args.output, kept, header)
    print(f"wrote {len(kept)} positions to {args.output} in {seconds:.1f} s ({walks} walks: {over} over, "
          f"{repeated} repeated, {decided} decided)")
    if len(kept) < args.count:
        print(f"only {len(kept)} of {args.count} positions found in {walks} walks", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
