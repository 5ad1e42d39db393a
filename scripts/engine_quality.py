"""The engine's moves against exact values: how often a move keeps the value, and how often a
won position is converted against the perfect defender.

    python scripts/engine_quality.py --db rotary-db/hex3-5v5 --positions 1000 --movetime 100 --games 100

Positions are sampled (fixed seed) among the database's wins and draws for the side to move,
still in play. The engine gets no database: it searches each one for ``--movetime`` ms; its
move *keeps the value* when a win stays a win (the child is a loss for the opponent) and a
draw stays at least a draw. Then ``--games`` won positions are played out: the engine moves
for the winner, the database's best reply (the slowest loss) for the defender, until the game
ends or ``--max-plies``; a conversion is a game the winner wins. Prints both shares, the
engine's node rate, and the peak resident memory.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver.db.database import open_db  # noqa: E402
from solver.engine.engine import Engine  # noqa: E402
from solver.engine.score import Limit  # noqa: E402
from solver.game.position import Position  # noqa: E402
from solver.game.rules import ONGOING, apply, status  # noqa: E402
from solver.game.values import DRAW, LOSS, WIN  # noqa: E402


def sample(db, n: int, seed: int, want: tuple[str, ...]) -> list[Position]:
    rng = random.Random(seed)
    lay, cfg = db.layout, db.cfg
    out = []
    while len(out) < n:
        m, p, s = lay.position(rng.randrange(lay.total))
        x, o = (m, p) if s == 0 else (p, m)
        pos = Position.make(cfg.board, x, o, s)
        if status(cfg, pos) == ONGOING and db.probe(pos).result in want:
            out.append(pos)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="a solved rotation-phase database")
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--movetime", type=int, default=100, help="ms a move (default 100)")
    ap.add_argument("--games", type=int, default=100, help="won positions to convert (default 100)")
    ap.add_argument("--max-plies", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    with open_db(args.db) as db:
        cfg = db.cfg
        engine = Engine(cfg)
        engine.warm_up()
        limit = Limit(movetime_ms=args.movetime)
        kept = wins = draws = 0
        nodes = ms = 0
        for pos in sample(db, args.positions, args.seed, (WIN, DRAW)):
            truth = db.probe(pos)
            engine.new_game()
            r = engine.think(pos, limit)
            nodes, ms = nodes + r.nodes, ms + r.time_ms
            after = db.probe(apply(cfg, pos, r.move)).after_move()
            if truth.result == WIN:
                wins += 1
                kept += after.result == WIN
            else:
                draws += 1
                kept += after.result in (WIN, DRAW)
        total = wins + draws
        print(f"{db.description}: {total} positions ({wins} wins, {draws} draws for the side to move), "
              f"{args.movetime} ms a move")
        print(f"value kept: {kept} / {total} = {100 * kept / total:.1f} %")
        converted = 0
        for pos in sample(db, args.games, args.seed + 1, (WIN,)):
            winner, game = pos.turn, [pos]
            engine.new_game()
            while status(cfg, game[-1]) == ONGOING and len(game) <= args.max_plies:
                cur = game[-1]
                if cur.turn == winner:
                    move = engine.think(cur, limit, game).move
                else:
                    move = db.best_moves(cur)[0][0]
                game.append(apply(cfg, cur, move))
            end = game[-1]
            converted += status(cfg, end) != ONGOING and (status(cfg, end) == LOSS) == (end.turn != winner)
        print(f"wins converted against the perfect defender: {converted} / {args.games} = "
              f"{100 * converted / args.games:.1f} % (at most {args.max_plies} plies)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"engine: {nodes:,} nodes in {ms / 1000:.1f} s = {nodes / max(ms, 1) * 1000:,.0f} nodes/s; "
              f"peak resident {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
