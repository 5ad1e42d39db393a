"""``rotary solve / query / stats / verify``: build and read position databases.

Databases live in ``rotary-db/<name>`` under the current folder unless ``--db`` names
one (``ROTARY_DB`` changes the default folder). ``query`` without ``--db`` picks the
database there whose rules are the ones asked for (no variant flags: the base game) and
whose material holds the position.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Callable

from solver.game.config import Config, make_config
from solver.game.values import Value

DEFAULT_BOARD, DEFAULT_BALLS = "hex3", 4


def db_root() -> Path:
    return Path(os.environ.get("ROTARY_DB", "rotary-db"))


def db_name(cfg: Config, material: tuple[int, int]) -> str:
    """Folder name of a configuration's database, e.g. ``hex3-4v4-edge``."""
    A, B = material
    parts = [cfg.board.label, f"{A}v{B}"]
    if cfg.edge:
        parts.append("edge")
    if cfg.capture:
        traps = "".join(cfg.names(cfg.traps_x)) + "-" + "".join(cfg.names(cfg.traps_o))
        parts.append("capture" if cfg.board.n == 4 and cfg.traps_x == make_config(4, capture=True).traps_x and cfg.traps_o == make_config(4, capture=True).traps_o else f"capture-{traps}")
    if cfg.setup:
        parts.append(f"setup-{cfg.setup}")
    return "-".join(parts)


def parse_material(text: str | None, board: str | None) -> tuple[int, int] | None:
    """``'4'`` -> (4, 4); ``'3v2'`` -> light 3, dark 2."""
    if text is None:
        return None
    if isinstance(text, int):
        return text, text
    try:
        if "v" in text:
            a, b = text.lower().split("v")
            return int(a), int(b)
        return int(text), int(text)
    except ValueError:
        raise ValueError(f"bad --balls {text!r}: expected K or AvB, e.g. 4 or 3v2") from None


def _rules(args: argparse.Namespace, board: str | None = None) -> tuple[Config, tuple[int, int]]:
    material = parse_material(args.balls, args.board) or (DEFAULT_BALLS, DEFAULT_BALLS)
    if args.setup and material[0] != material[1]:
        raise ValueError("the setup game needs equal balls per side (--balls K)")
    cfg = make_config(
        board or args.board or DEFAULT_BOARD,
        max(material),
        edge=args.edge,
        capture=args.capture,
        traps_x=args.traps_x,
        traps_o=args.traps_o,
        setup=args.setup,
    )
    return cfg, material


# ---------------------------------------------------------------------------- solve


def cmd_solve(args: argparse.Namespace) -> int:
    from solver.retro.driver import solve

    cfg, material = _rules(args)
    if args.jobs < 1:
        raise ValueError(f"-j must be at least 1, got {args.jobs}")
    path = Path(args.db) if args.db else db_root() / db_name(cfg, material)
    if cfg.setup:
        from solver.retro.setup import solve_setup

        report = solve_setup(cfg, path, jobs=args.jobs, progress=not args.quiet, executor=args.executor)
    else:
        report = solve(cfg, path, jobs=args.jobs, material=material, progress=not args.quiet, executor=args.executor)
    if not report.solved_now:
        print(f"{report.description}: already solved in {path}")
    print_summary(report.description, report.tiers, path, report.db_bytes, report.seconds if report.solved_now else None)
    return 0


def print_summary(description: str, tiers, path, db_bytes: int, seconds: float | None) -> None:
    print(f"{description}  ->  {path}")
    head = f"{'tier':>8} {'positions':>12} {'wins':>11} {'losses':>11} {'draws':>11} {'max win':>8} {'max loss':>9} {'seconds':>8}"
    print(head)
    print("-" * len(head))
    total = [0, 0, 0, 0]
    for t in tiers:
        print(
            f"{t.key:>8} {t.positions:>12,} {t.wins:>11,} {t.losses:>11,} {t.draws:>11,} "
            f"{_opt(t.longest_win):>8} {_opt(t.longest_loss):>9} {t.seconds:>8.1f}"
        )
        for i, v in enumerate((t.positions, t.wins, t.losses, t.draws)):
            total[i] += v
    print("-" * len(head))
    print(f"{'all':>8} {total[0]:>12,} {total[1]:>11,} {total[2]:>11,} {total[3]:>11,}")
    tail = f"database {db_bytes / 1e6:.1f} MB"
    if seconds is not None:
        tail += f", {seconds:.1f} s"
    print(tail)


def _opt(x) -> str:
    return "-" if x is None else str(x)


# ---------------------------------------------------------------------------- query


def find_db(args: argparse.Namespace, pos=None) -> Path:
    """The database to read: ``--db``, else the one under the default folder that fits."""
    from solver.db.database import Database

    if args.db:
        with Database(args.db) as db:
            _check_flags(args, db)
        return Path(args.db)
    root = db_root()
    candidates = sorted(p for p in root.iterdir() if (p / "data.mdb").exists()) if root.is_dir() else []
    fitting = []
    for path in candidates:
        with Database(path) as db:
            rules = db.cfg
            if rules.edge != args.edge or rules.capture != args.capture or rules.setup != args.setup:
                continue
            if args.balls is not None and db.material != parse_material(args.balls, None):
                continue
            if pos is not None:
                if db.get_reason(pos) is not None:
                    continue
            elif args.board and rules.board.label != args.board:
                continue
            fitting.append((path, db.material))
    if not fitting:
        what = pos.text() if pos is not None else "these rules"
        raise FileNotFoundError(f"no database under {root}/ answers for {what} (solve one with 'rotary solve' or name it with --db)")
    return min(fitting, key=lambda f: sum(f[1]))[0]


def _check_flags(args: argparse.Namespace, db) -> None:
    """Rule flags given together with ``--db`` must be the database's own rules."""
    rules = db.cfg
    asked = [("--edge", args.edge, rules.edge), ("--capture", args.capture, rules.capture)]
    if getattr(args, "setup", None) is not None:
        asked.append((f"--setup {args.setup}", args.setup, rules.setup))
    for flag, want, have in asked:
        if want and want != have:
            raise ValueError(f"{flag} asked, but {args.db} holds {db.description}")


def query_report(db, pos, line_plies: int = 0) -> dict:
    """The answer for one position: its value and every move's, best first.

    With ``line_plies`` the report also gives the principal line: best moves for both
    sides (fastest win, slowest loss) until the game ends, up to that many plies.
    """
    from solver.play.perfect import best_moves
    from solver.game.rules import apply

    value = db.probe(pos)
    ranked = best_moves(db, db.cfg, pos)
    report = {
        "position": pos.text(),
        "value": value.result,
        "plies": value.plies,
        "moves": [
            {"move": m.text(db.cfg.board), "position": apply(db.cfg, pos, m).text(), "value": v.result, "plies": v.plies}
            for m, v in ranked
        ],
    }
    if line_plies:
        line, cur = [], pos
        while ranked and len(line) < line_plies:
            move = ranked[0][0]
            line.append(move.text(db.cfg.board))
            cur = apply(db.cfg, cur, move)
            ranked = best_moves(db, db.cfg, cur)
        report["line"] = line
    return report


def _positions(args: argparse.Namespace):
    texts = args.positions or []
    if texts == ["-"]:
        texts = [line.strip() for line in sys.stdin if line.strip()]
    if not texts:
        raise ValueError("no position given (give one or more, or - to read them from standard input)")
    return texts


def cmd_query(args: argparse.Namespace) -> int:
    from solver.db.database import open_db
    from solver.game.position import parse_position

    if not args.positions and args.setup:
        from solver.game.start import empty_setup

        cfg, _ = _rules(args)
        texts = [empty_setup(cfg).text()]
    else:
        texts = _positions(args)
    first = parse_position(texts[0])
    path = find_db(args, first)
    with open_db(path) as db:
        for text in texts:
            pos = parse_position(text)
            report = query_report(db, pos, line_plies=args.line)
            if args.json:
                print(json.dumps(report), flush=True)
                continue
            print(f"{report['position']}  [{db.description}]")
            print(f"value: {_value_text(report['value'], report['plies'])} for {'xo'[pos.turn]}")
            for m in report["moves"]:
                print(f"  {m['move']:<14} {_value_text(m['value'], m['plies']):<12} {m['position']}")
            if report.get("line"):
                print("line: " + "  ".join(report["line"]))
    return 0


def _value_text(result: str, plies) -> str:
    return str(Value(result, plies))


# ---------------------------------------------------------------------------- stats / verify


def cmd_stats(args: argparse.Namespace) -> int:
    from solver.db.database import open_db

    with open_db(find_db(args)) as db:
        keys = db.tier_keys()
        tiers = [db.tier_meta[k] for k in keys if k in db.tier_meta]
        if args.json:
            print(json.dumps({"description": db.description, "rules": db.header["rules"], "material": db.material, "tiers": tiers}))
            return 0
        print(f"{db.description}  ({len(tiers)} of {len(keys)} tiers solved)")
        for t in tiers:
            print(
                f"{t['key']}: {t['positions']:,} positions  {t['wins']:,} wins  {t['losses']:,} losses  {t['draws']:,} draws"
            )
            for name, hist in (("win", t["win_hist"]), ("loss", t["loss_hist"])):
                cells = [f"{d}:{n}" for d, n in enumerate(hist) if n]
                if cells:
                    print(f"  {name} plies  " + " ".join(cells))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from solver.db.verify import verify_db

    result = verify_db(find_db(args), sample=args.sample, seed=args.seed, progress=not args.quiet)
    print(result.message)
    return 0 if result.ok else 1


def _db_options(p: argparse.ArgumentParser, solve: bool = False) -> None:
    g = p.add_argument_group("rules")
    g.add_argument("--board", help=f"board hex2..hex5 (default {DEFAULT_BOARD})" if solve else "board of the database")
    g.add_argument(
        "--balls", help=f"balls per side K, or light v dark as AvB (default {DEFAULT_BALLS})" if solve else "material of the database"
    )
    g.add_argument("--setup", choices=("offer", "last"), help="the setup game (jointly formed opening)")
    g.add_argument("--edge", action="store_true", help="rotation at empty edge points; balls fall off")
    g.add_argument("--capture", action="store_true", help="trap fields capture the other colour's balls")
    g.add_argument("--traps-x", help="light's trap fields, e.g. a2,c1,f2,g3 (hex4 default)")
    g.add_argument("--traps-o", help="dark's trap fields, e.g. a3,a6,b8,c8 (hex4 default)")
    p.add_argument("--db", help="database folder (default: rotary-db/<rules>)")


def register(sub, commands: dict[str, Callable[[argparse.Namespace], int]]) -> None:
    """Add the database commands to the ``rotary`` parser."""
    p = sub.add_parser("solve", help="solve every position of a configuration into a database")
    _db_options(p, solve=True)
    p.add_argument("-j", "--jobs", type=int, default=1, help="workers (default 1)")
    p.add_argument(
        "--executor",
        choices=("process", "thread"),
        default="process",
        help="spawned worker processes (default) or threads in this process (the kernels release the GIL)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    commands["solve"] = cmd_solve

    p = sub.add_parser("query", help="value of positions and of every move from them")
    p.add_argument("positions", nargs="*", metavar="POS", help="position texts, or - to read one per line")
    _db_options(p)
    p.add_argument("--json", action="store_true", help="one JSON line per position")
    p.add_argument("--line", type=int, default=0, metavar="N", help="also show the principal line, up to N plies")
    commands["query"] = cmd_query

    p = sub.add_parser("stats", help="per tier: positions, wins / losses / draws, distances")
    _db_options(p)
    p.add_argument("--json", action="store_true")
    commands["stats"] = cmd_stats

    p = sub.add_parser("verify", help="re-derive values from children and check checksums")
    _db_options(p)
    p.add_argument("--sample", type=int, help="check this many random positions instead of all")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-q", "--quiet", action="store_true")
    commands["verify"] = cmd_verify
