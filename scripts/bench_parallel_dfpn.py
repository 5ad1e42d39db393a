"""df-pn on two threads sharing one table against one thread: wall time to settle a fixed set.

    python scripts/bench_parallel_dfpn.py [--threads N] [--runs R] [--only hex3|hex4] [--no-guided] [--no-ceiling]
    python scripts/bench_parallel_dfpn.py --set scripts/parallel_set.txt [--runs R] [--no-guided] [--no-ceiling]

Each position is proven from an empty table on one thread (``Prover(cfg)``) and on
``--threads`` threads (``Prover(cfg, threads=N)``, :mod:`solver.search.parallel`), with no
distance refinement (``refine_nodes=0``), ``--runs`` times each (the median wall time is
kept: which thread proves what first, and when the draw closure runs, vary from run to
run): "settled" means the value (win, loss, draw) is proven, and every run's value must
agree (the script stops if one does not). Then, unless ``--no-ceiling``, the machine's own
ceiling: N one-thread proofs of the same position at once, in N processes with their own
tables — N independent searches, no shared table, no search overhead — against one alone:
``N * alone / together`` is the most any way of spreading one proof over N cores can gain
on this machine for this search (they share the memory system; df-pn's table probes are
cache misses). Then, with ``bench_guided.one``, the same search on the threads guided by
the engine's evaluation (``--guided``): its node count against the plain one's.

The set:

* hex(3) 3v3 ``edge``: the five positions of ``bench_guided``'s set that take one thread
  longest (1 to 2 M nodes) and a draw of 4.7 M nodes;
* hex(4) 13v13: the first-ply and second-ply positions of ``bench_guided``'s set that one
  thread settles within its budget in more than a few nodes (``d3+0``, ``e4+3``,
  ``e4+3 c5+2``, ``e4+3 c5+3``).

``--set FILE`` takes the positions from a file instead, one a line: the rules, ``|``, the
position (``hex3 3 edge | x.o/...o/.ox../.....x/...../.... x``; ``standard | <position>``
for the standard rules; ``#`` starts a comment). ``scripts/parallel_set.txt`` is a set of
harder positions, chosen apart from the built-in one (which the parallel search was tuned
on): one thread proves each in 5 to 60 seconds. ``scripts/parallel_holdout.txt`` holds ten
more, drawn after the parallel search was last changed on those.

Prints a Markdown table and the totals: wall seconds to settle the whole set on one thread
and on the threads, their ratio (the speedup), the slowest position's ratio, and the
ceiling's; and the load average before and after (``os.getloadavg``: other jobs on the
machine skew every figure). Measure on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

from bench_guided import CAP, HEX3_EDGE, STEP, hex4_set, one

from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.search.prover import Prover

HEX3_SET = [HEX3_EDGE[i] for i in (5, 6, 7, 8, 9)] + [
    ".../..../..o../x....x/o..../..ox x",  # a draw: 4.7 M nodes on one thread
]
HEX4_SET = ["d3+0", "e4+3", "e4+3 c5+2", "e4+3 c5+3"]


def read_set(path: str) -> list[tuple[str, object, list[tuple[str, Position]], int, int]]:
    """The sets of a ``--set`` file (see the module docstring), grouped by rules."""
    groups: dict[str, list[tuple[str, Position]]] = {}
    for n, raw in enumerate(open(path, encoding="utf-8"), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        rules, sep, text = (part.strip() for part in line.partition("|"))
        if not sep or not text:
            raise SystemExit(f"{path}:{n}: expected 'RULES | POSITION', got {raw.strip()!r}")
        groups.setdefault(rules, []).append((text, Position(text)))
    sets = []
    for rules, items in groups.items():
        words = rules.split()
        if words == ["standard"]:
            cfg = standard_config()
        else:
            cfg = make_config(words[0], int(words[1]), edge="edge" in words[2:], capture="capture" in words[2:])
        sets.append((rules, cfg, items, 0, 22))
    return sets


def _together(cfg, pos: Position, nodes: int, bits: int, go, out) -> None:
    """One of the ceiling's processes: warm up, wait for the others, prove, report."""
    Prover(cfg, tt_bits=10).prove(pos, nodes=1_000, refine_nodes=0)
    go.wait()
    t = time.monotonic()
    Prover(cfg, tt_bits=bits).prove(pos, nodes=nodes, refine_nodes=0)
    out.put(time.monotonic() - t)


def ceiling(cfg, pos: Position, nodes: int, bits: int, n: int) -> float:
    """Wall seconds of ``n`` one-thread proofs of ``pos`` run at once in ``n`` processes
    (forked: the kernels are already compiled here)."""
    ctx = mp.get_context("fork")
    go, out = ctx.Barrier(n + 1), ctx.Queue()
    procs = [ctx.Process(target=_together, args=(cfg, pos, nodes, bits, go, out)) for _ in range(n)]
    for p in procs:
        p.start()
    go.wait()
    t = time.monotonic()
    for _ in procs:
        out.get()
    wall = time.monotonic() - t
    for p in procs:
        p.join()
    return wall


def runs(cfg, pos: Position, nodes: int, bits: int, threads: int, r: int) -> tuple[str, int, float]:
    """``r`` proofs: (value, median nodes, median wall seconds); the value is "open" when
    most runs ran out of budget (an open run counts with its nodes and time: a bound), and
    the settled runs' values must agree."""
    got = [one(cfg, pos, False, nodes, bits, STEP, CAP, threads=threads) for _ in range(r)]
    values = {g[0].split()[0] for g in got if g[0] != "open"}
    if len(values) > 1:
        raise SystemExit(f"{pos.text()}: {threads} thread(s) gave {sorted(values)} in {r} runs")
    opened = sum(g[0] == "open" for g in got)
    value = "open" if 2 * opened > r or not values else next(g[0] for g in got if g[0] != "open")
    return value, int(statistics.median(g[1] for g in got)), statistics.median(g[2] for g in got)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="threads of the parallel search (default 2)")
    ap.add_argument("--runs", type=int, default=3, help="runs of each search; the median is kept (default 3)")
    ap.add_argument("--hex3-nodes", type=int, default=12_000_000, help="budget per hex(3) search")
    ap.add_argument("--hex4-nodes", type=int, default=2_000_000, help="budget per hex(4) search")
    ap.add_argument("--only", choices=["hex3", "hex4"])
    ap.add_argument("--set", help="a file of positions instead of the built-in set (the module docstring)")
    ap.add_argument("--nodes", type=int, default=40_000_000, help="budget per search of a --set position")
    ap.add_argument("--no-guided", action="store_true", help="skip the guided searches")
    ap.add_argument("--no-ceiling", action="store_true", help="skip the independent searches at once")
    args = ap.parse_args()
    n = args.threads
    sets = []
    if args.set:
        sets = [(name, cfg, items, args.nodes, bits) for name, cfg, items, _, bits in read_set(args.set)]
    elif args.only != "hex4":
        edge = make_config("hex3", 3, edge=True)
        sets.append(("hex3 edge", edge, [(p, Position(p)) for p in HEX3_SET], args.hex3_nodes, 22))
    if args.only != "hex3" and not args.set:
        std = standard_config()
        sets.append(("hex4", std, [(label, pos) for label, pos in hex4_set(std) if label in HEX4_SET],
                     args.hex4_nodes, 22))
    # compile (or load) the kernels before any clock runs
    warm = make_config("hex3", 3, edge=True)
    for threads in (1, n):
        for guided in (False, True):
            Prover(warm, tt_bits=10, threads=threads, guided=guided).prove(Position(HEX3_SET[0]), nodes=2_000)
    print(f"{n} threads against 1, median of {args.runs} runs; no refinement; guided: step {STEP}, cap {CAP}")
    print("load average before: {:.2f} {:.2f} {:.2f}\n".format(*os.getloadavg()))
    head = f"| set | position | value | 1 thread nodes | s | {n} threads nodes | s | speedup |"
    rule = "|---|---|---|---:|---:|---:|---:|---:|"
    if not args.no_ceiling:
        head += f" {n} one-thread searches at once s | ceiling |"
        rule += "---:|---:|"
    if not args.no_guided:
        head += f" guided {n} threads nodes | guided/plain nodes |"
        rule += "---:|---:|"
    print(head)
    print(rule)
    t_one = t_many = t_alone = t_together = 0.0
    worst = None
    settled = 0
    t0 = time.monotonic()
    for name, cfg, items, nodes, bits in sets:
        for label, pos in items:
            a = runs(cfg, pos, nodes, bits, 1, args.runs)
            b = runs(cfg, pos, nodes, bits, n, args.runs)
            if a[0] != "open" and b[0] != "open" and a[0].split()[0] != b[0].split()[0]:
                raise SystemExit(f"{label}: one thread says {a[0]}, {n} threads say {b[0]}")
            value = a[0].split()[0] if a[0] != "open" else ("open" if b[0] == "open" else b[0].split()[0])
            both = a[0] != "open" and b[0] != "open"
            if both:
                t_one += a[2]
                t_many += b[2]
                settled += 1
                worst = a[2] / b[2] if worst is None else min(worst, a[2] / b[2])
            row = f"| {name} | `{label}` | {value} | {a[1]:,} | {a[2]:.1f} | {b[1]:,} | {b[2]:.1f} | {a[2] / b[2]:.2f} |"
            if not args.no_ceiling:
                together = ceiling(cfg, pos, nodes, bits, n)
                if both:
                    t_alone += a[2]
                    t_together += together
                row += f" {together:.1f} | {n * a[2] / together:.2f} |"
            if not args.no_guided:
                g = one(cfg, pos, True, nodes, bits, STEP, CAP, threads=n)
                if g[0] != "open" and b[0] != "open" and g[0].split()[0] != b[0].split()[0]:
                    raise SystemExit(f"{label}: guided says {g[0]}, plain says {b[0]}")
                row += f" {g[1]:,}{' (open)' if g[0] == 'open' else ''} | {g[1] / b[1]:.2f} |"
            print(row, flush=True)
    print(f"\nsettled by both: {settled}; wall to settle them: 1 thread {t_one:.1f} s, {n} threads {t_many:.1f} s, "
          f"speedup {t_one / t_many:.2f}, the slowest position's {worst:.2f}; every value equal")
    if not args.no_ceiling and t_together:
        print(f"ceiling: {n} independent one-thread searches of each at once took {t_together:.1f} s "
              f"against {t_alone:.1f} s for one: {n * t_alone / t_together:.2f}x the work of one core")
    print(f"{time.monotonic() - t0:.0f} s in all; load average after: " + "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
