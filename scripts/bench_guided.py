"""Guided against plain df-pn: nodes and seconds until a position's value is settled.

    python scripts/bench_guided.py [--hex3-nodes N] [--hex4-nodes N] [--step S] [--cap C] [--only hex3|hex4]

Each position is proven twice from an empty table, by plain df-pn and by df-pn with
initial numbers from the engine's evaluation (``Prover(cfg, guided=True)``, see
:mod:`solver.search.guide`), one process, one core, no distance refinement
(``refine_nodes=0``): "settled" means the value (win, loss, draw) is proven. The set is fixed:

* hex(3) 3v3 ``edge``: ten positions of random placements (three balls a side) whose plain
  search settles them within 200,000 to 2,500,000 nodes (about 1 to 20 seconds on one core);
* hex(4) 13v13: the 11 first-ply positions of the standard start, and the first four
  distinct replies after ``e4+3`` (2 plies).

A search that reaches its node budget unsettled is shown as ``open``. Prints a Markdown table
and the totals over the positions both searches settled.
"""

from __future__ import annotations

import argparse
import time

from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import apply, moves, parse_move
from solver.game.start import standard_start
from solver.search.guide import CAP, STEP
from solver.search.prover import Prover

HEX3_EDGE = [
    ".../o.xx/.o.../.....x/...o./.... o",
    ".../x.../..o../....ox/....x/..o. o",
    "x../..../.o.../ox..../...x./o... x",
    ".../...o/.x.../....ox/o.x../.... o",
    "o../.o../xx.../..o.../....x/.... o",
    "x.o/...o/.ox../.....x/...../.... x",
    ".../x.../...../o..x../ox.o./.... x",
    ".../...x/.o.../....xo/...o./x... o",
    "..o/o..o/....x/...x.x/...../.... x",
    ".x./.o../...../..o.../.o.../.xx. o",
]


def distinct_children(cfg, pos: Position) -> list[tuple[str, Position]]:
    """``(move, child)`` for the first move to each distinct child (symmetric ones merged)."""
    probe = Prover(cfg, tt_bits=4)
    seen, out = set(), []
    for mv in moves(cfg, pos):
        c = apply(cfg, pos, mv)
        k = probe.key(c.mover, c.opponent, c.turn, 0)
        if k not in seen:
            seen.add(k)
            out.append((mv.text(cfg.board), c))
    return out


def hex4_set(cfg) -> list[tuple[str, Position]]:
    start = standard_start()
    first = distinct_children(cfg, start)
    after = apply(cfg, start, parse_move(cfg, start, "e4+3"))
    second = [(f"e4+3 {mv}", c) for mv, c in distinct_children(cfg, after)[:4]]
    return first + second


def one(cfg, pos: Position, guided: bool, nodes: int, tt_bits: int, step: int, cap: int,
        threads: int = 1) -> tuple[str, int, float]:
    prover = Prover(cfg, tt_bits=tt_bits, guided=guided, threads=threads)
    if guided and (step, cap) != (STEP, CAP):
        from solver.search.guide import make_guide

        prover.guide = make_guide(cfg, True, step, cap)  # an argument of the kernel: no rebuild needed
    t = time.monotonic()
    r = prover.prove(pos, nodes=nodes, refine_nodes=0)
    dt = time.monotonic() - t
    text = r.result + (f" {r.plies}" if r.plies is not None else "")
    return (text if r.resolved else "open"), r.nodes, dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hex3-nodes", type=int, default=6_000_000, help="budget per hex(3) search")
    ap.add_argument("--hex4-nodes", type=int, default=1_000_000, help="budget per hex(4) search")
    ap.add_argument("--step", type=int, default=STEP, help=f"guide: hundredths of a logit per unit (default {STEP})")
    ap.add_argument("--cap", type=int, default=CAP, help=f"guide: the largest addition to 1 (default {CAP})")
    ap.add_argument("--only", choices=["hex3", "hex4"])
    args = ap.parse_args()
    sets = []
    if args.only != "hex4":
        edge = make_config("hex3", 3, edge=True)
        sets.append(("hex3 edge", edge, [(p, Position(p)) for p in HEX3_EDGE], args.hex3_nodes, 20))
    if args.only != "hex3":
        std = standard_config()
        sets.append(("hex4", std, hex4_set(std), args.hex4_nodes, 22))
    # compile (or load) the kernels before any clock runs
    warm = make_config("hex3", 3, edge=True)
    for g in (False, True):
        Prover(warm, tt_bits=10, guided=g).prove(Position(HEX3_EDGE[0]), nodes=1_000)
    print(f"guide: step {args.step}, cap {args.cap}\n")
    print("| set | position | plain | nodes | s | guided | nodes | s | nodes guided/plain |")
    print("|---|---|---|---:|---:|---|---:|---:|---:|")
    totals: dict[str, list[float]] = {}
    t0 = time.monotonic()
    for name, cfg, items, nodes, bits in sets:
        tot = totals.setdefault(name, [0, 0, 0.0, 0.0, 0, 0])
        for label, pos in items:
            a = one(cfg, pos, False, nodes, bits, args.step, args.cap)
            b = one(cfg, pos, True, nodes, bits, args.step, args.cap)
            ratio = f"{b[1] / a[1]:.2f}" if a[0] != "open" and b[0] != "open" else "–"
            if a[0] != "open" and b[0] != "open":
                assert a[0].split()[0] == b[0].split()[0], (label, a, b)  # the same value, always
                tot[0] += a[1]
                tot[1] += b[1]
                tot[2] += a[2]
                tot[3] += b[2]
            tot[4] += a[0] != "open"
            tot[5] += b[0] != "open"
            print(f"| {name} | `{label}` | {a[0]} | {a[1]:,} | {a[2]:.1f} | {b[0]} | {b[1]:,} | {b[2]:.1f} | {ratio} |",
                  flush=True)
    print()
    for name, (pn, gn, ps, gs, pk, gk) in totals.items():
        print(f"{name}: settled plain {pk}, guided {gk}; over those both settled: plain {pn:,.0f} nodes {ps:.1f} s, "
              f"guided {gn:,.0f} nodes {gs:.1f} s")
    print(f"\n{time.monotonic() - t0:.0f} s in all")


if __name__ == "__main__":
    main()
