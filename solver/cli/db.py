"""``rotary solve / stats / verify``: build a configuration's database, describe it, check it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from solver.cli.find import database_path, open_database
from solver.cli.options import (
    DEFAULT_BALLS, DEFAULT_SOLVE_BOARD, add_db_option, add_json_option, add_quiet_option, add_rule_options, check_jobs,
    config_from_args,
)
from solver.db import catalog
from solver.retro.checkpoint import EVERY_S
from solver.errors import StoreError, UsageError


def cmd_solve(args: argparse.Namespace) -> int:
    from solver.retro.driver import solve
    from solver.retro.setup import solve_setup

    args.balls = args.balls or str(DEFAULT_BALLS)
    cfg, material = config_from_args(args, default_board=DEFAULT_SOLVE_BOARD)
    check_jobs(args.jobs)
    path = Path(args.db) if args.db else catalog.db_path(cfg, material)
    if path.exists() and not path.is_dir():  # before the memory and disk figures, not after
        raise StoreError(f"{path} is a file, not a database folder")
    if args.address and args.executor != "ray":
        raise UsageError("--address names a Ray cluster: use it with --executor ray")
    asked = getattr(args, "checkpoint", EVERY_S)  # absent: not given (the default)
    checkpoint = EVERY_S if asked is ... else asked
    lean = None  # the budget picks: two bytes a position where they fit, else one
    if args.lean:
        if cfg.setup:
            raise UsageError("--lean solves the rotation phase: leave out --setup")
        if args.executor == "process":
            raise UsageError("the lean solve runs with threads or on Ray: leave out --executor process")
        lean = True
    run = dict(jobs=args.jobs, progress=not args.quiet, executor=args.executor, address=args.address,
               checkpoint_s=checkpoint, force=args.force)
    if not cfg.setup:
        run["lean"] = lean
        run["memory"] = args.memory
    elif args.memory is not None:
        raise UsageError("--memory budgets the rotation phase's solve: leave out --setup")
    try:
        if cfg.setup:
            report = solve_setup(cfg, path, **run)
        else:
            report = solve(cfg, path, material=material, **run)
    except SystemError as e:
        if interrupted(e):
            raise KeyboardInterrupt from None  # "rotary: interrupted", as anywhere else
        raise
    seconds = report.seconds if report.solved_now else None
    if args.json:
        print(json.dumps(solve_json(report, path, seconds)))
        return 0
    if not report.solved_now:
        print(f"{report.description}: already solved in {path}")
    print_summary(report.description, report.tiers, path, report.db_bytes, seconds)
    return 0


def interrupted(e: BaseException) -> bool:
    """Whether ``e`` is a Ctrl-C in disguise: a signal that arrives while a compiled
    kernel runs is raised when the kernel next calls into Python, and numba reports it as
    a ``SystemError`` ("returned a result with an exception set") caused by the
    ``KeyboardInterrupt``."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def memory_size(text: str) -> int:
    """``--memory``: bytes, with an optional K, M, G or T (powers of 1024), e.g. 100M or 1.5G."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1:] if t[-1:] in units and t[-1:] else ""
    try:
        value = float(t[: len(t) - len(unit)])
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):  # NaN fails the comparison
        raise argparse.ArgumentTypeError(f"a size such as 100M or 8G, got {text!r}")
    return int(value * units[unit])


def _seconds_or_off(text: str) -> float | None:
    """``--checkpoint``: seconds (0 or more) or ``off``."""
    if text.strip().lower() == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):  # NaN fails the comparison
        raise argparse.ArgumentTypeError(f"seconds (0 or more) or 'off', got {text!r}")
    return value


def solve_json(report, path, seconds: float | None) -> dict:
    """``rotary solve --json``: the summary table as one object."""
    tiers = [t.meta() for t in report.tiers]
    total = {k: sum(t[k] for t in tiers) for k in ("positions", "wins", "losses", "draws")}
    return {
        "description": report.description,
        "path": str(path),
        "solved_now": list(report.solved_now),
        "already_solved": not report.solved_now,
        "seconds": None if seconds is None else round(seconds, 3),
        "db_bytes": report.db_bytes,
        "total": total,
        "tiers": tiers,
    }


def print_summary(description: str, tiers, path, db_bytes: int, seconds: float | None) -> None:
    print(f"{description}  ->  {path}")
    w = max([8, *(len(t.key) for t in tiers)])  # placement layers are named place:<key>
    head = f"{'tier':>{w}} {'positions':>12} {'wins':>11} {'losses':>11} {'draws':>11} {'max win':>8} {'max loss':>9} {'seconds':>8}"
    print(head)
    print("-" * len(head))
    total = [0, 0, 0, 0]
    for t in tiers:
        print(
            f"{t.key:>{w}} {t.positions:>12,} {t.wins:>11,} {t.losses:>11,} {t.draws:>11,} "
            f"{_opt(t.longest_win):>8} {_opt(t.longest_loss):>9} {t.seconds:>8.1f}"
        )
        for i, v in enumerate((t.positions, t.wins, t.losses, t.draws)):
            total[i] += v
    print("-" * len(head))
    print(f"{'all':>{w}} {total[0]:>12,} {total[1]:>11,} {total[2]:>11,} {total[3]:>11,}")
    tail = f"database {db_bytes / 1e6:.1f} MB"
    if seconds is not None:
        tail += f", {seconds:.1f} s"
    print(tail)


def _opt(x) -> str:
    return "-" if x is None else str(x)


# ---------------------------------------------------------------------------- stats / verify


def cmd_stats(args: argparse.Namespace) -> int:
    with open_database(args) as db:
        keys = db.tier_keys()
        tiers = [db.tier_meta[k] for k in keys if k in db.tier_meta]
        if args.checksums:
            tiers = [dict(t, sha256=db.tier_sha256(t["key"])) for t in tiers]
        if args.json:
            print(json.dumps({"description": db.description, "rules": db.header["rules"], "material": db.material, "tiers": tiers}))
            return 0
        print(f"{db.description}  ({len(tiers)} of {len(keys)} tiers solved)")
        for t in tiers:
            print(
                f"{t['key']}: {t['positions']:,} positions  {t['wins']:,} wins  {t['losses']:,} losses  {t['draws']:,} draws"
                + (f"  sha256 {t['sha256']}" if args.checksums else "")
            )
            for name, hist in (("win", t["win_hist"]), ("loss", t["loss_hist"])):
                cells = [f"{d}:{n}" for d, n in enumerate(hist) if n]
                if cells:
                    print(f"  {name} plies  " + " ".join(cells))
    return 0


def _part(text: str) -> tuple[int, int | None]:
    """``FROM:TO`` (either side may be left empty) as ``(first, end or None)``."""
    head, sep, tail = text.partition(":")
    try:
        if not sep:
            raise ValueError
        first = int(head.replace(",", "").replace("_", "")) if head.strip() else 0
        end = int(tail.replace(",", "").replace("_", "")) if tail.strip() else None
    except ValueError:
        raise UsageError(f"--positions {text!r}: expected FROM:TO, numbers of positions such as 0:1000000 "
                         "or 1000000: (to the last)") from None
    return first, end


def cmd_verify(args: argparse.Namespace) -> int:
    from solver.db.verify import verify_db

    if args.sample is not None and args.sample < 1:
        raise UsageError(f"--sample must be at least 1, got {args.sample} (leave it out to check every position)")
    path = database_path(args)
    check_jobs(args.jobs)
    if args.restart and args.sample is not None:
        raise UsageError("--restart is for a full verify: a --sample check never resumes")
    tiers = None
    if args.tier is not None:
        tiers = [k.strip() for k in args.tier.replace("+", ",").split(",") if k.strip()]
    part = None if args.positions is None else _part(args.positions)
    result = verify_db(path, sample=args.sample, seed=args.seed, progress=not args.quiet, jobs=args.jobs,
                       restart=args.restart, tiers=tiers, part=part)
    if args.json:
        print(json.dumps({"path": str(path), "ok": result.ok, "checked": result.checked, "sample": args.sample,
                          "resumed": result.resumed, "message": result.message}))
    else:
        print(result.message)
    return 0 if result.ok else 1


DB_BOARD_HELP = "board hex2..hex5 (default: the board of the database: --db, else the smallest one of these rules found)"
DB_BALLS_HELP = "the database's balls per side K, or light's and dark's as AvB (default: any)"


def register(sub, commands: dict) -> None:
    """Add the database commands to the ``rotary`` parser."""
    p = sub.add_parser("solve", help="solve every position of a configuration into a database")
    add_rule_options(p, board_default=DEFAULT_SOLVE_BOARD, balls_help=f"balls per side K, or light's and dark's as AvB (default {DEFAULT_BALLS})")
    p.add_argument(
        "--db", metavar="PATH",
        help="the value database to write (default: its name by the rules, e.g. hex3-4v4, under $ROTARY_DB or ./rotary-db)",
    )
    p.add_argument("-j", "--jobs", type=int, default=1, help="workers (default 1)")
    p.add_argument(
        "--executor",
        choices=("process", "thread", "ray"),
        default="thread",
        help="threads in this process (default: the kernels let go of the GIL), spawned worker processes "
        "sharing one value file, "
        "or ray: -j partitioned actors on a Ray cluster (pip install 'rotary[cluster]')",
    )
    p.add_argument(
        "--address", metavar="HOST:PORT",
        help="with --executor ray: join the cluster started by 'ray start --head' there (default: an embedded local cluster)",
    )
    p.add_argument(
        "--checkpoint", metavar="SECONDS", type=_seconds_or_off, default=...,
        help=f"inside a long group, save its state in the database folder at a ply boundary (--lean: inside a ply "
        f"too) at most every SECONDS (default {EVERY_S:g}; 0: at every ply boundary; off: never), so that a killed "
        "solve, two-byte or --lean, resumes there (not with --executor ray)",
    )
    p.add_argument(
        "--lean", action="store_true",
        help="solve in one byte a position instead of two, the distances kept in temporary files in the database "
        "folder (the same database; taken by itself where the two-byte solve does not fit in memory; threads, "
        "or Ray actors with --executor ray; its checkpoints, as --checkpoint says, take a byte a position of the "
        "group)",
    )
    p.add_argument(
        "--memory", metavar="SIZE", type=memory_size,
        help="a memory budget for the per-position arrays, e.g. 100M or 8G (default: what the machine has): the "
        "two-byte solve where it holds two bytes a position, the lean solve where it holds one, else the lean "
        "solve's disk mode, its partitions in files in the database folder, one in memory at a time (rules "
        "without --edge/--capture; one thread)",
    )
    p.add_argument(
        "--force", action="store_true",
        help="solve even where the memory, /dev/shm or disk it needs looks short (a full disk stops the solve "
        "in one line, and the rerun resumes; too little memory swaps)",
    )
    add_quiet_option(p)
    add_json_option(p, "the summary as one JSON object: per tier counts, totals, path, seconds")
    commands["solve"] = cmd_solve

    p = sub.add_parser("stats", help="per tier: positions, wins / losses / draws, distances")
    add_rule_options(p, board_help=DB_BOARD_HELP, balls_help=DB_BALLS_HELP)
    add_db_option(p)
    p.add_argument(
        "--checksums", action="store_true",
        help="also each tier's SHA-256 over its values (little-endian uint16 in index order); 'rotary checksums' "
        "compares them with the published ones",
    )
    add_json_option(p)
    commands["stats"] = cmd_stats

    p = sub.add_parser("verify", help="re-derive values from children and check checksums")
    add_rule_options(p, board_help=DB_BOARD_HELP, balls_help=DB_BALLS_HELP)
    add_db_option(p)
    p.add_argument("--sample", type=int, metavar="N", help="check N random positions (N >= 1) instead of all")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (default 0)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="threads re-deriving values (default 1)")
    p.add_argument(
        "--tier", metavar="KEYS",
        help="check only the positions of these rotation tiers, e.g. x5v6,x6v5 (or a group as the solve names "
             "it, x5v6+x6v5); only their groups and the groups before them are read, so the finished tiers of a "
             "database still being solved can be checked",
    )
    p.add_argument(
        "--positions", metavar="FROM:TO",
        help="check only positions FROM..TO-1 of those chosen (all, or --tier's), counted in index order from 0; "
             "TO left out: to the last. Splits one long check over runs or machines",
    )
    p.add_argument(
        "--restart", action="store_true",
        help="check every position again, not resuming an interrupted verify (whose progress it notes in the "
             "database folder: verify.progress)",
    )
    add_quiet_option(p)
    add_json_option(p, "one JSON object: ok, positions checked, resumed (of them, by an interrupted run), message")
    commands["verify"] = cmd_verify
