"""df-pn benchmark: nodes per second, -j 1 vs -j 2 on the standard start's first plies,
and how far the standard-start book gets in a few minutes with -j 2.

    python scripts/bench_pns.py [--nodes N] [--minutes M] [--skip-book]

Nodes are df-pn expansions (each generates and evaluates all of a node's children: a
terminal test, a canonical key and a table probe per child); "children/s" counts those.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from solver.game.config import standard_config
from solver.search.prover import Prover, make_pool, worker_prove
from solver.game.rules import apply, moves
from solver.game.start import standard_start


def first_plies():
    cfg = standard_config()
    pos = standard_start()
    probe = Prover(cfg, tt_bits=4)
    seen, kids = set(), []
    for mv in moves(cfg, pos):
        c = apply(cfg, pos, mv)
        k = probe.key(c.mover, c.opponent, c.turn, 0)
        if k not in seen:
            seen.add(k)
            kids.append(c)
    return cfg, kids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=300_000, help="budget per first-ply position")
    ap.add_argument("--minutes", type=float, default=10.0, help="book run length")
    ap.add_argument("--book-nodes", type=int, default=200_000, help="budget per book node")
    ap.add_argument("--skip-book", action="store_true")
    args = ap.parse_args()
    cfg, kids = first_plies()
    print(f"standard start: {len(kids)} distinct first-ply positions")

    # 1. single core speed
    pr = Prover(cfg, tt_bits=22)
    pr.prove(kids[0], nodes=20_000)  # compile / warm up
    pr = Prover(cfg, tt_bits=22)
    t = time.perf_counter()
    n0, c0 = pr.nodes, int(pr.stats[1])
    pr.search(kids[0].mover, kids[0].opponent, kids[0].turn, 0, 1_000_000)
    dt = time.perf_counter() - t
    ds = pr.search_seconds
    print(f"one core: df-pn kernel {(pr.nodes - n0) / ds:,.0f} nodes/s, {(pr.stats[1] - c0) / ds:,.0f} children/s; "
          f"with the draw closure ({pr.closure_seconds:.2f} s, {int(pr.closure_stats[3])} nodes proven) "
          f"{(pr.nodes - n0) / dt:,.0f} nodes/s ({pr.nodes - n0:,} nodes in {dt:.2f} s)")

    # 2. -j 1 vs -j 2 on the same budget
    texts = [k.text() for k in kids]
    for jobs in (1, 2):
        with make_pool(jobs, cfg, tt_bits=21) as pool:
            list(pool.map(worker_prove, [texts[0]] * jobs, [1000] * jobs, [None] * jobs))  # start + compile
            t = time.perf_counter()
            res = list(pool.map(worker_prove, texts, [args.nodes] * len(texts), [None] * len(texts)))
            dt = time.perf_counter() - t
        total = sum(r["nodes"] for r in res)
        print(f"-j {jobs}: {len(texts)} positions x {args.nodes:,} nodes: {dt:.1f} s wall, {total / dt:,.0f} nodes/s; "
              f"results {sorted(r['result'] for r in res)}")

    # 3. the book
    if not args.skip_book:
        from solver.search.book import build_book, reach_text

        tmp = Path(tempfile.mkdtemp(prefix="rotary-book-"))
        try:
            deadline = time.monotonic() + 60 * args.minutes
            out = build_book(cfg, standard_start(), 20, tmp / "store", nodes=args.book_nodes, jobs=2,
                             deadline=deadline)
            book = out["book"]
            root = book[out["root"]]["value"]
            solved = sum(1 for v in book.values() if v.get("proof") and v["proof"]["lo"] == v["proof"]["hi"])
            print(f"book -j 2, {args.minutes} min, {args.book_nodes:,} nodes/position: {reach_text(out)}; "
                  f"{out['nodes']} positions, {solved} resolved, root {root['result']}, {out['seconds']:.0f} s")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
