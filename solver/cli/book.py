"""``rotary book``: build, grow and read the opening book of a proof store.

Two ways to build (:mod:`solver.search.book`): ``--depth D`` expands every position to D
plies (full width); ``--minutes M`` and/or ``--expand N`` grow it best first (drop-out
expansion by the engine's scores, :mod:`solver.search.bookgrow`). Every position gets an
engine search and a df-pn proof; values and scores are backed up to the root. ``--show D``,
``--stats`` and ``--export FILE`` read the stored book (after building, or alone).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from solver.cli.find import leaf_database_path, store_path
from solver.cli.options import add_json_option, add_quiet_option, load_position, start_position
from solver.cli.prove import _budget, _common
from solver.errors import UsageError

GROW_NODES = 50_000  # df-pn's default budget per position when growing best first


def _check(args: argparse.Namespace) -> str | None:
    """What to build: ``"depth"``, ``"grow"`` or None (only read); a one-line UsageError
    for options that cannot work together."""
    if args.depth is not None and args.depth < 0:
        raise UsageError(f"--depth must be at least 0, got {args.depth}")
    if args.minutes is not None and args.minutes <= 0:
        raise UsageError(f"--minutes must be positive, got {args.minutes}")
    if args.expand is not None and args.expand < 1:
        raise UsageError(f"--expand must be at least 1, got {args.expand}")
    if args.engine_nodes < 0:
        raise UsageError(f"--engine-nodes must be at least 0, got {args.engine_nodes}")
    if args.ply_cost < 0:
        raise UsageError(f"--ply-cost must be at least 0, got {args.ply_cost}")
    if args.show is not None and args.show < 0:
        raise UsageError(f"--show must be at least 0, got {args.show}")
    if args.depth is not None and args.expand is not None:
        raise UsageError("--depth (every position to a depth) and --expand (best first) exclude each other")
    if args.depth is not None:
        return "depth"
    if args.minutes is not None or args.expand is not None:
        return "grow"
    if args.show is None and not args.stats and not args.export:
        raise UsageError("book needs --depth D (full width) or --minutes M / --expand N (best first), "
                         "or --show D / --stats / --export FILE to read the stored book")
    return None


def cmd_book(args: argparse.Namespace) -> int:
    mode = _check(args)
    if mode == "grow" and args.nodes is None and args.time is None:
        args.nodes = GROW_NODES
    nodes, seconds = _budget(args)
    if args.start:
        cfg, start = load_position(args.start, args)
    else:
        cfg, start = start_position(args)
    db_path = leaf_database_path(args, start)
    sp = store_path(args, cfg)
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    report = None
    if mode == "depth":
        report = _full_width(args, cfg, start, sp, db_path, nodes, seconds, deadline)
    elif mode == "grow":
        report = _grow(args, cfg, start, sp, db_path, nodes, seconds, deadline)
    else:
        _stored(cfg, start, sp)  # refuses a store without this book
    book, root = _load(cfg, start, sp)
    if args.export:
        from solver.search.bookgraph import export_json
        from solver.search.proofs import store_rules

        export_json(book, root, args.export, store_rules(cfg))
    if mode is None:
        return _read(args, book, root)
    if args.json:
        print(json.dumps(report))
        return 0
    if args.show is not None or (mode == "depth" and not args.no_tree):
        from solver.search.bookgraph import tree_text

        text = tree_text(book, root, args.show)
        print(text if len(text) < 20000 else text[:20000] + "...\n", end="")
    print(report["text"])
    return 0


def _stored(cfg, start, sp: Path) -> None:
    from solver.search.book import book_lookup

    if book_lookup(sp, cfg, start) is None:
        raise UsageError(f"no book from {start.text()} in the proof store {sp} (build one with --depth or --minutes)")


def _load(cfg, start, sp: Path) -> tuple[dict, bytes]:
    from solver.search.booknode import node_key
    from solver.search.proofs import ProofStore
    from solver.search.prover import Prover

    with ProofStore(sp, cfg) as store:
        book = dict(store.items("book"))
    return book, node_key(Prover(cfg, tt_bits=4), start)


def _read(args: argparse.Namespace, book: dict, root: bytes) -> int:
    """``--show``, ``--stats``, ``--export`` alone: the stored book, nothing built."""
    from solver.search.bookgraph import statistics, tree_text

    stats = statistics(book, root)
    if args.json:
        print(json.dumps(stats))
        return 0
    if args.show is not None:
        print(tree_text(book, root, args.show), end="")
    if args.stats or args.show is None:
        print(stats_text(stats))
    return 0


def stats_text(s: dict) -> str:
    """Statistics in words: nodes, expanded, proven, by value, depth, the root."""
    from solver.search.bookgraph import score_text, value_text

    r = s["root"]
    value = value_text({"result": r["value"], "plies": r["plies"], "exact": r["exact"]})
    score = score_text(None if not r["score"] else dict(r["score"], depth=r["score_depth"]))
    by = ", ".join(f"{n} {k}" for k, n in s["by_value"].items() if n)
    per = "; ".join(f"depth {lv['depth']}: {lv['positions']} ({lv['proven']} proven)" for lv in s["levels"][:12])
    more = f"; ... to depth {s['depth']}" if len(s["levels"]) > 12 else ""
    return (f"book: {s['nodes']:,} positions ({s['expanded']:,} expanded, {s['leaves']:,} leaves), {s['proven']:,} proven, "
            f"{s['open']:,} open; by value: {by}\n{per}{more}\n"
            f"root: {value}, score {score}, best move {r['best_move'] or '-'}; "
            f"searched with {s['engine_nodes']:,} engine nodes and {s['proof_nodes']:,} df-pn nodes")


def _files(args, sp: Path, book: dict, root: bytes, cfg) -> list[str]:
    """The export after a build: ``<prefix>.json`` (docs/pns.md) and the tree ``<prefix>.txt``."""
    from solver.search.bookgraph import export_json, tree_text
    from solver.search.proofs import store_rules

    prefix = Path(args.out) if args.out else sp / "book"
    export_json(book, root, f"{prefix}.json", store_rules(cfg))
    Path(f"{prefix}.txt").write_text(tree_text(book, root))
    return [f"{prefix}.json", f"{prefix}.txt"]


def _full_width(args, cfg, start, sp, db_path, nodes, seconds, deadline) -> dict:
    from solver.search.book import build_book

    show = None
    if sys.stderr.isatty() and not args.quiet:
        def show(d, n, s):
            print(f"\r  depth {d}: {n} positions searched, {s:.0f} s   ", end="", file=sys.stderr, flush=True)
    out = build_book(cfg, start, args.depth, sp, nodes=nodes, seconds=seconds, jobs=args.jobs,
                     db_path=None if db_path is None else str(db_path), progress=show, deadline=deadline,
                     tt_bits=args.tt_bits, guided=args.guided, engine_nodes=args.engine_nodes)
    if show:
        print(file=sys.stderr)
    report = book_report(out, args.depth, db_path, _files(args, sp, out["book"], out["root"], cfg))
    return dict(report, text=book_report_text(report)) if not args.json else report


def _grow(args, cfg, start, sp, db_path, nodes, seconds, deadline) -> dict:
    from solver.search.bookgraph import statistics
    from solver.search.bookgrow import grow_book

    bar = None
    if not args.quiet and not args.json:
        bar = _Progress(args.expand, 60 * args.minutes if args.minutes else None)
    try:
        out = grow_book(cfg, start, sp, deadline=deadline, expansions=args.expand, nodes=nodes, seconds=seconds,
                        jobs=args.jobs, db_path=None if db_path is None else str(db_path), tt_bits=args.tt_bits,
                        guided=args.guided, engine_nodes=args.engine_nodes, ply_cost=args.ply_cost,
                        progress=None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    stats = statistics(out["book"], out["root"])
    files = _files(args, sp, out["book"], out["root"], cfg)
    report = {"statistics": stats, "expanded": out["expanded"], "searches": out["searched"], "stopped": out["stopped"],
              "seconds": round(out["seconds"], 3), "leaf_db": None if db_path is None else str(db_path), "files": files}
    if args.json:
        return report
    why = {"time": "time is up", "expansions": "--expand reached", "done": "nothing left to expand"}
    text = (stats_text(stats) + f"\nthis run: {out['expanded']} leaves expanded, {out['searched']} positions searched "
            f"in {out['seconds']:.1f} s ({why[out['stopped']]}) -> {', '.join(files)}")
    return dict(report, text=text)


class _Progress:
    """A tqdm bar on a terminal (expansions, or seconds with only --minutes); elsewhere (a
    log file) one line a minute."""

    def __init__(self, total_expansions: int | None, total_seconds: float | None):
        self.tty = sys.stderr.isatty()
        self.t0 = time.monotonic()
        self.last = 0.0
        self.bar = None
        self.by_time = total_expansions is None
        if self.tty:
            from tqdm import tqdm

            total = total_expansions if total_expansions is not None else (int(total_seconds) if total_seconds else None)
            self.bar = tqdm(total=total, unit="exp" if not self.by_time else "s", desc="book", file=sys.stderr,
                            leave=False)

    def update(self, info: dict) -> None:
        from solver.search.bookgraph import score_text

        r = info["root"]
        score = score_text(None if not r["score"] else dict(r["score"], depth=r["score_depth"]))
        fields = {"positions": info["nodes"], "proven": info["proven"], "root": f"{r['value']} {score}",
                  "best": r["best_move"]}
        if self.bar is not None:
            self.bar.n = int(info["seconds"]) if self.by_time else info["expanded"]
            self.bar.set_postfix(fields, refresh=True)
        elif info["seconds"] - self.last >= 60:
            self.last = info["seconds"]
            print(f"{info['seconds']:.0f} s: {info['expanded']} expanded, " + ", ".join(f"{k} {v}" for k, v in fields.items()),
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def book_counts(book: dict, root: bytes, depth: int) -> list[dict]:
    """Per level of the book from ``root`` to ``depth``: positions, proven (an exact
    result: win, loss or draw) and open (anything less: a bound or unknown)."""
    levels = []
    seen, level = {root}, [root]
    for d in range(depth + 1):
        proven = sum(1 for k in level if _proven(book[k]))
        levels.append({"depth": d, "positions": len(level), "proven": proven, "open": len(level) - proven})
        nxt = []
        for k in level if d < depth else ():
            for m in book[k].get("moves") or []:
                ck = bytes.fromhex(m["key"])
                if ck in book and ck not in seen:
                    seen.add(ck)
                    nxt.append(ck)
        if not nxt:
            break
        level = nxt
    return levels


def _proven(node: dict) -> bool:
    v = node.get("value")
    return bool(v) and v["lo"] == v["hi"]


def book_report(out: dict, depth: int, db_path, files: list[str]) -> dict:
    """``rotary book --depth D --json``: what the book holds now, counted as it is."""
    book, root = out["book"], out["root"]
    levels = book_counts(book, root, depth)
    v = book[root].get("value") or {}
    s = book[root].get("score")
    stopped = None
    if out["partial"]:
        d, done, todo = out["partial"]
        stopped = {"depth": d, "searched": done, "to_search": todo}
    return {
        "root": {"position": book[root]["position"], "value": v.get("result", "unknown"), "plies": v.get("plies"),
                 "exact": bool(v.get("exact")) and v.get("lo") == v.get("hi")},
        "score": None if not s else {"kind": s["kind"], "value": s["value"], "depth": s["depth"], "move": s["move"]},
        "depth": depth,
        "positions": sum(lv["positions"] for lv in levels),
        "proven": sum(lv["proven"] for lv in levels),
        "open": sum(lv["open"] for lv in levels),
        "levels": levels,
        "stopped": stopped,
        "searches": out["proved"],
        "seconds": round(out["seconds"], 3),
        "leaf_db": None if db_path is None else str(db_path),
        "files": files,
    }


def book_report_text(r: dict) -> str:
    from solver.search.bookgraph import score_text

    per = "; ".join(f"depth {lv['depth']}: {lv['proven']} of {lv['positions']} proven" for lv in r["levels"])
    root = r["root"]
    value = root["value"] + ("" if root["plies"] is None else f" in {'' if root['exact'] else '<='}{root['plies']}")
    text = (f"book to depth {r['depth']}: {r['positions']} positions, {r['proven']} proven, {r['open']} open ({per}); "
            f"root {value}, score {score_text(r['score'])}")
    if r["stopped"]:
        st = r["stopped"]
        text += (f"; time ran out at depth {st['depth']} with {st['searched']} of {st['to_search']} positions searched "
                 f"(a re-run goes on)")
    text += f"; {r['searches']} searches in {r['seconds']:.1f} s -> {', '.join(r['files'])}"
    return text


def register(sub, commands: dict) -> None:
    p = sub.add_parser(
        "book", help="build, grow or read an opening book (engine scores and df-pn proofs)",
        description="An opening book in the proof store: every position searched by the engine and by df-pn, "
        "values (proven) and scores (the engine's) backed up to the root. --depth D expands every position to D "
        "plies; --minutes M / --expand N grow it best first (drop-out expansion by the engine's scores); "
        "--show, --stats and --export read it. A re-run extends the same book (docs/pns.md).")
    p.add_argument("--start", help="start position (default: the standard start, or the empty board with --setup)")
    p.add_argument("--depth", type=int, help="expand every position to this many plies (full width)")
    p.add_argument("--minutes", type=float,
                   help="stop after this long (checked between positions and inside each proof); without --depth: "
                        "grow best first; a re-run goes on")
    p.add_argument("--expand", type=int, metavar="N", help="grow best first by N leaves (with --minutes: whichever comes first)")
    _common(p)
    p.add_argument("--engine-nodes", type=int, default=20_000, metavar="N",
                   help="the engine's search per position, in nodes (default 20,000; 0: no engine scores)")
    p.add_argument("--ply-cost", type=int, default=30, metavar="CP",
                   help="best first: a ply deeper costs as much as a move CP hundredths of a logit worse than the best "
                        "(default 30; smaller: deeper main lines, larger: wider)")
    p.add_argument("--show", type=int, metavar="DEPTH", help="print the book's tree to DEPTH plies")
    p.add_argument("--stats", action="store_true", help="print the book's statistics (nodes, proven, depth, by value)")
    p.add_argument("--export", metavar="FILE", help="write the book as JSON to FILE (the format: docs/pns.md)")
    p.add_argument("--out", help="export prefix after building (default <store>/book): writes .json and .txt")
    p.add_argument("--no-tree", action="store_true", help="do not print the tree after --depth")
    add_quiet_option(p)
    add_json_option(p, "the report (or with --stats/--show alone the statistics) as one JSON object")
    commands["book"] = cmd_book
