"""A match between two engines on the same budget: MCTS-Solver against alpha-beta by default.

    python scripts/compare_engines.py [--pairs 50] [--movetime 100] [-j 1] [--seed 1]
        [--a mcts] [--b ab] [--ply-limit 300] [--variants capture,edge]

Openings are the standard start plus 2–4 random plies (distinct, no position repeated, no move
of them ending the game at once); each is played
twice with the colours swapped (a pair). A game is drawn at the ply limit (counted from the
standard start) or when a position occurs for the third time. Every engine gets
``Limit(movetime_ms=...)`` per move and the game's earlier positions as its history.

An engine is ``ab`` (:class:`solver.engine.searcher.Searcher`, its table cleared before
each game) or ``mcts`` (:class:`solver.engine.mcts.MctsSearcher`), optionally with
parameters: ``mcts:c_puct=1.5,prior_t=100,leaf_mode=0``. The result is printed for engine
A: W/D/L, the pairs as pentanomial counts and the Elo difference A − B with its 95 %
interval from the pairs (:mod:`solver.play.elo`).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import time
from collections import Counter

from solver.engine.mcts import MctsSearcher
from solver.engine.score import Limit
from solver.engine.searcher import Searcher, move_of_code
from solver.game.config import Config, standard_config
from solver.game.position import Position
from solver.game.rules import LOSS, ONGOING, WIN, apply, moves, play, status
from solver.game.start import standard_start
from solver.play.elo import pentanomial, trinomial


def make_engine(spec: str, cfg: Config):
    """An engine from ``ab``, ``mcts`` or ``mcts:key=value,...``."""
    name, _, rest = spec.partition(":")
    kwargs = {}
    for item in filter(None, rest.split(",")):
        k, _, v = item.partition("=")
        kwargs[k] = float(v) if "." in v else int(v)
    if name == "ab":
        return Searcher(cfg, **kwargs)
    if name == "mcts":
        return MctsSearcher(cfg, **kwargs)
    raise SystemExit(f"unknown engine {spec!r}: expected ab or mcts[:key=value,...]")


def openings(cfg: Config, pairs: int, seed: int, lo: int = 2, hi: int = 4) -> list[tuple[Position, list[Position]]]:
    """``pairs`` distinct openings: (position, the positions before it) after lo..hi random plies."""
    rng = random.Random(seed)
    seen: set[Position] = set()
    out = []
    while len(out) < pairs:
        pos, before = standard_start(), []
        for _ in range(rng.randint(lo, hi)):
            before.append(pos)
            pos = apply(cfg, pos, rng.choice(moves(cfg, pos)))
            if status(cfg, pos) != ONGOING:
                break
        if status(cfg, pos) != ONGOING or pos in seen or pos in before or len(set(before)) < len(before):
            continue  # over, met already, or a repetition (a pass answered by a pass)
        if any(status(cfg, apply(cfg, pos, m)) != ONGOING for m in moves(cfg, pos)):
            continue  # decided at once: a pair from here says nothing
        seen.add(pos)
        out.append((pos, before))
    return out


def play_game(cfg: Config, engines: dict, pos: Position, before: list[Position], movetime: int, ply_limit: int):
    """One game; ``engines[colour]`` moves for that colour. Returns (winner colour or None,
    plies, reason, {colour: [(nodes, ms) per move]})."""
    for e in engines.values():
        e.clear()
    history = list(before)
    seen = Counter(history + [pos])
    nodes: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    while True:
        st = status(cfg, pos)
        if st != ONGOING:
            winner = pos.turn if st == WIN else 1 - pos.turn
            return winner, len(history), st, nodes
        if len(history) >= ply_limit:
            return None, len(history), "ply limit", nodes
        if seen[pos] >= 3:
            return None, len(history), "repetition", nodes
        eng = engines[pos.turn]
        hist = [(h.mover, h.opponent, h.turn) for h in history]
        code, _score, _depth, n, ms, *_ = eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(movetime_ms=movetime),
                                                       hist)
        nodes[pos.turn].append((n, ms))
        history.append(pos)
        pos = play(cfg, pos, move_of_code(code))  # raises on an illegal move
        seen[pos] += 1


_STATE: dict = {}


def _init(cfg: Config, a: str, b: str) -> None:
    _STATE["cfg"] = cfg
    _STATE["a"] = make_engine(a, cfg)
    _STATE["b"] = make_engine(b, cfg)
    start = standard_start()
    for e in (_STATE["a"], _STATE["b"]):  # compile before any clock runs
        e.rotation(start.mover, start.opponent, start.turn, Limit(nodes=64))


def play_pair(job: tuple) -> tuple:
    """Both games of one opening: A as light, then A as dark. Returns A's points per game
    and a line per game."""
    i, pos, before, movetime, ply_limit = job
    cfg, a, b = _STATE["cfg"], _STATE["a"], _STATE["b"]
    points, lines = [], []
    usage = {"A": [0, 0, 0], "B": [0, 0, 0]}  # moves, nodes, ms
    for a_colour in (0, 1):
        engines = {a_colour: a, 1 - a_colour: b}
        t0 = time.monotonic()
        winner, plies, why, nodes = play_game(cfg, engines, pos, before, movetime, ply_limit)
        pts = 0.5 if winner is None else 1.0 if winner == a_colour else 0.0
        points.append(pts)
        moves_of = {side: nodes[a_colour if side == "A" else 1 - a_colour] for side in "AB"}
        for side, v in moves_of.items():
            usage[side][0] += len(v)
            usage[side][1] += sum(n for n, _ in v)
            usage[side][2] += sum(ms for _, ms in v)
        avg = {side: sum(n for n, _ in v) // max(len(v), 1) for side, v in moves_of.items()}
        lines.append(f"pair {i:3d} A={'xo'[a_colour]} {pos.text()}  A scores {pts:.1f}  {plies} plies ({why}) "
                     f"A nodes/move {avg['A']} B nodes/move {avg['B']}  {time.monotonic() - t0:.1f}s")
    return i, points, lines, usage


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=50, help="openings, each played twice (default 50: 100 games)")
    ap.add_argument("--movetime", type=int, default=100, help="ms per move for both engines")
    ap.add_argument("--ply-limit", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1, help="the openings' random seed")
    ap.add_argument("--a", default="mcts", help="engine A (the one the result is for)")
    ap.add_argument("--b", default="ab", help="engine B")
    ap.add_argument("--variants", default="", help="e.g. capture,edge")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    cfg = standard_config(**{v: True for v in filter(None, args.variants.split(","))})
    jobs = [(i, pos, before, args.movetime, args.ply_limit)
            for i, (pos, before) in enumerate(openings(cfg, args.pairs, args.seed))]
    print(f"A = {args.a}, B = {args.b}: {len(jobs)} pairs, {args.movetime} ms a move, ply limit {args.ply_limit}, "
          f"seed {args.seed}, -j {args.jobs}", flush=True)
    t0 = time.monotonic()
    penta = [0] * 5
    w = d = l = 0
    usage = {"A": [0, 0, 0], "B": [0, 0, 0]}
    if args.jobs <= 1:
        _init(cfg, args.a, args.b)
        results = map(play_pair, jobs)
    else:
        pool = mp.get_context("spawn").Pool(args.jobs, initializer=_init, initargs=(cfg, args.a, args.b))
        results = pool.imap_unordered(play_pair, jobs)
    for _i, points, lines, used in results:
        for side in usage:
            usage[side] = [a + b for a, b in zip(usage[side], used[side])]
        for line in lines:
            print(line, flush=True)
        penta[int(round(2 * sum(points)))] += 1
        w += points.count(1.0)
        d += points.count(0.5)
        l += points.count(0.0)
    est = pentanomial(penta)
    tri = trinomial(wins=w, draws=d, losses=l)
    print(f"\n{w + d + l} games in {time.monotonic() - t0:.0f} s")
    for side, spec in (("A", args.a), ("B", args.b)):
        n, nodes, ms = usage[side]
        print(f"{side} ({spec}): {n} moves, {nodes // max(n, 1)} nodes and {ms / max(n, 1):.0f} ms a move on average")
    print(f"A ({args.a}) against B ({args.b}): W {w}  D {d}  L {l}  score {est.score:.3f}")
    print(f"pairs (LL, LD, DD+WL, WD, WW): {tuple(penta)}")
    print(f"Elo A - B: {est.elo:+.0f}  95% interval [{est.lower:+.0f}, {est.upper:+.0f}] (pentanomial), "
          f"[{tri.lower:+.0f}, {tri.upper:+.0f}] (trinomial); LOS {est.los:.3f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
