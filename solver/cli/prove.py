"""``rotary prove`` and ``rotary check-tree``: forward proofs (df-pn) and proof trees (``rotary book``: :mod:`solver.cli.book`).

Proven results are kept in a proof store (LMDB), by default ``rotary-proofs/<rules>``
(``ROTARY_PROOFS`` changes the folder, ``--store`` names another), so a second run
resumes where the first stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from solver.cli.find import leaf_database_path, store_path
from solver.cli.options import (
    RULES_HELP, add_db_option, add_json_option, add_quiet_option, add_rule_options, add_store_option, check_jobs, load_position,
)
from solver.errors import UsageError


def _budget(args) -> tuple[int | None, float | None]:
    if args.nodes is not None and args.nodes < 1:
        raise UsageError(f"--nodes must be at least 1, got {args.nodes}")
    if args.time is not None and args.time <= 0:
        raise UsageError(f"--time must be positive, got {args.time}")
    check_jobs(args.jobs)
    if not 8 <= args.tt_bits <= 32:
        raise UsageError(f"--tt-bits must be 8..32 (a table of 2^N entries), got {args.tt_bits}")
    nodes = args.nodes
    if nodes is None and args.time is None:
        nodes = 1_000_000
    return nodes, args.time


LOG_EVERY_S = 60.0  # a line of progress this often where stderr is a file (a long proof's log)


def _progress(enabled: bool):
    """The proof's progress on stderr: one line rewritten twice a second on a terminal, a
    new line every minute elsewhere (a proof run in the background, its output in a file)."""
    if not enabled:
        return None
    tty = sys.stderr.isatty()
    every = 0.5 if tty else LOG_EVERY_S
    last = [0.0]

    def show(nodes: int, seconds: float) -> None:
        if seconds - last[0] >= every:
            last[0] = seconds
            rate = nodes / seconds if seconds else 0
            line = f"  {nodes:,} nodes  {seconds:.1f} s  {rate:,.0f} nodes/s"
            if tty:
                print(f"\r{line}   ", end="", file=sys.stderr, flush=True)
            else:
                print(line, file=sys.stderr, flush=True)

    return show


def cmd_prove(args: argparse.Namespace) -> int:
    from solver.analysis import proof_answer
    from solver.db.database import open_db
    from solver.search.prover import Prover, combine_children, make_pool, result_from_json, worker_prove
    from solver.search.proofs import ProofStore
    from solver.game.rules import apply, moves

    nodes, seconds = _budget(args)
    _check_threads(args.threads)
    cfg, pos = load_position(args.position, args)
    children = None  # (move, its child's result) when the children were proven one by one
    if pos.phase != "play":
        raise UsageError(f"prove works on rotation-phase positions; this one is in phase {pos.phase!r} (use 'rotary book --setup')")
    sp = store_path(args, cfg)
    db_path = leaf_database_path(args, pos)  # as query finds it; None: no leaves
    t0 = time.monotonic()
    if args.jobs == 1:
        leaves = None if db_path is None else open_db(db_path)
        try:
            prover = Prover(cfg, tt_bits=args.tt_bits, db=leaves, guided=args.guided,  # reads the leaf values in
                            threads=args.threads)
        finally:
            if leaves is not None:
                leaves.close()
        store = None if args.no_store else ProofStore(sp, cfg)
        try:
            if store is not None:
                prover.attach(store)
            res = prover.prove(pos, nodes=nodes, seconds=seconds, progress=_progress(not args.json and not args.quiet))
            prover.save_result(pos, res)
        finally:  # closed however the proof ends (a full disk, ^C): the folder can be opened again
            if store is not None:
                store.close()
    else:
        # job-level parallelism: the root's children are proven by the workers
        kids = []
        seen = set()
        probe = Prover(cfg, tt_bits=4)
        every = []  # (move, key of its child): every legal move, for the answer's moves
        for mv in moves(cfg, pos):
            c = apply(cfg, pos, mv)
            k = probe.key(c.mover, c.opponent, c.turn, 0)
            every.append((mv.text(cfg.board), k))
            if k not in seen:
                seen.add(k)
                kids.append((mv.text(cfg.board), c))
        if not kids:
            prover = Prover(cfg, tt_bits=4)
            res = prover.prove(pos)
        else:
            per = None if nodes is None else max(1, nodes // len(kids))
            pool = make_pool(args.jobs, cfg, None if db_path is None else str(db_path), None if args.no_store else sp, args.tt_bits,
                             args.guided, args.threads)
            with pool:
                futs = [(mv, pool.submit(worker_prove, c.text(), per, seconds)) for mv, c in kids]
                results = [(mv, result_from_json(f.result())) for mv, f in futs]
            res = combine_children(results, pos.text())
            first = dict(results)  # the first move to each distinct child -> its result
            by_key = {k: first[mv] for mv, k in every if mv in first}
            children = [(mv, by_key[k]) for mv, k in every]
    res.seconds = time.monotonic() - t0
    if sys.stderr.isatty() and not args.json:
        print("\r" + " " * 60 + "\r", end="", file=sys.stderr)
    if args.json:  # the one answer schema (docs/json.md), with best_move, nodes, seconds, stopped
        print(json.dumps(proof_answer(cfg, pos, res, children)), flush=True)
    else:
        _print_result(res, pos)
    if args.tree:
        if args.jobs != 1:  # the workers' tables are gone: a prover of its own finds the distances
            prover = Prover(cfg, tt_bits=args.tt_bits)
        _write_tree(args.tree, prover, pos, res, nodes, quiet=args.json or args.quiet)
    return 0


def _check_threads(threads: int) -> None:
    from solver.search.parallel import MAX_THREADS

    if not 1 <= threads <= MAX_THREADS:
        raise UsageError(f"--threads must be 1..{MAX_THREADS} (df-pn threads on one table), got {threads}")


def _write_tree(path: str, prover, pos, res, nodes: int | None, quiet: bool) -> None:
    """``prove --tree FILE``: the proof tree of the proven result (solver.search.tree)."""
    from solver.search.tree import proof_tree, write_tree

    t0 = time.monotonic()
    tree = proof_tree(prover, pos, res, nodes=10_000_000 if nodes is None else max(nodes, 1_000_000))
    write_tree(tree, path)
    if not quiet:
        print(f"proof tree: {len(tree['nodes']):,} nodes -> {path} ({time.monotonic() - t0:.1f} s; "
              f"check it with 'rotary check-tree {path}')")


def cmd_check_tree(args: argparse.Namespace) -> int:
    """``rotary check-tree FILE``: check a proof tree by the rules alone; 0 if it holds, 1 if not."""
    from solver.search.tree_check import check_tree_file

    rep = check_tree_file(args.file)
    if args.json:
        print(json.dumps({"file": args.file, "ok": rep.ok, "position": rep.position, "result": rep.result,
                          "plies": rep.plies, "winner": rep.winner, "nodes": rep.nodes, "finished": rep.finished,
                          "faults": rep.faults}))
    else:
        print(rep.line())
        for f in rep.faults[1:] if len(rep.faults) > 1 else ():
            print(f"  {f}")
    return 0 if rep.ok else 1


def _print_result(res, pos) -> None:
    rate = res.nodes / res.seconds if res.seconds > 0 else 0.0
    print(res.position)
    print(f"value: {res.text()} for {'xo'[pos.turn]}" + ("" if res.plies is None or res.exact else " (bound)"))
    if res.best_move:
        print(f"best move: {res.best_move}")
    if res.stopped:
        print(f"stopped: {res.stopped}")
    print(f"nodes: {res.nodes:,}  seconds: {res.seconds:.2f}  nodes/s: {rate:,.0f}", flush=True)


def _common(p: argparse.ArgumentParser) -> None:
    add_rule_options(p)
    add_db_option(p, "; its positions are leaves of the proofs (none found: no leaves)")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--nodes",
        type=int,
        help="df-pn's node budget per position (default 1,000,000 without --time; 50,000 for a book grown best first); "
             "what df-pn leaves unspent goes to refining a distance bound into an exact one",
    )
    g.add_argument("--time", type=float, help="time budget in seconds")
    p.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    add_store_option(p)
    p.add_argument("--tt-bits", type=int, default=22, help="transposition table: 2^N entries of 16 bytes (default 22: 64 MiB)")
    p.add_argument("--guided", action="store_true",
                   help="df-pn+: a new node's proof and disproof numbers from the engine's evaluation "
                        "(the same answers, another search order; docs/pns.md)")


def register(sub, commands: dict) -> None:
    p = sub.add_parser("prove", help="prove a position's value with df-pn")
    p.add_argument("position", help=f"position text ({RULES_HELP} §9), quoted")
    _common(p)
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("--no-store", action="store_true", help="do not read or write the proof store")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="df-pn on N threads sharing one table: one proof, the same answers, sooner on N cores "
                        "(default 1; with -j, each worker's; docs/pns.md)")
    p.add_argument("--tree", metavar="FILE",
                   help="write the proof tree of a proven win or loss (exact distance) to FILE: JSON Lines, "
                        "gzip if FILE ends in .gz; 'rotary check-tree FILE' checks it")
    add_quiet_option(p)
    commands["prove"] = cmd_prove

    p = sub.add_parser("check-tree", help="check a proof tree (prove --tree) against the rules alone",
                       description="Check a proof tree written by 'rotary prove --tree' using the plain-Python rules "
                       "(no compiled kernels): every move legal, every reply of the loser present, every leaf a "
                       "finished game won by the winner, every distance right. Exit status 0 if it holds, 1 if not.")
    p.add_argument("file", help="the tree file (.jsonl or .jsonl.gz)")
    add_json_option(p, "the report as one JSON object")
    commands["check-tree"] = cmd_check_tree
