"""``rotary engine`` (the line protocol) and ``rotary analyse`` (one position, every move)."""

from __future__ import annotations

import argparse
import json
import sys

from solver.cli.find import open_database
from solver.db.compact_reader import require_distances
from solver.cli.options import (
    RULES_HELP, Parser, add_db_option, add_json_option, add_rule_options, config_from_args, load_position,
)
from solver.engine.answer import engine_answer
from solver.engine.engine import Engine
from solver.engine.protocol import Session, serve
from solver.engine.score import Limit
from solver.errors import MissingValueError, UsageError
from solver.game.config import Config
from solver.game.position import Position


def _db_opener(args: argparse.Namespace):
    """The database the engine probes: ``--db`` (an error there is the user's), else none."""
    if not args.db:
        return None

    def open_for(cfg: Config):
        try:
            return open_database(args)
        except MissingValueError:
            return None

    return open_for


def cmd_engine(args: argparse.Namespace) -> int:
    config_from_args(args)  # the rule flags are checked before the first command
    if args.db:
        with open_database(args) as db:
            require_distances(db, "the engine's leaves")  # refused before the first command, not at each

    return serve(Session(_rules_of(args), _db_opener(args), read_rules=_read_rules))


def _rules_of(args: argparse.Namespace):
    """The rules of a position under the rule flags of ``args``."""
    def rules(pos: Position) -> Config:
        cfg, _ = config_from_args(args, pos)
        return cfg

    return rules


def _read_rules(words: list[str]):
    """The protocol's ``rules FLAGS``: the command line's rule flags, checked at once."""
    p = Parser(prog="rules", add_help=False)
    add_rule_options(p)
    args = p.parse_args(words)
    config_from_args(args)
    return _rules_of(args)


def cmd_analyse(args: argparse.Namespace) -> int:
    cfg, pos = load_position(args.position, args)
    if args.movetime is not None and args.movetime < 1 or args.nodes is not None and args.nodes < 1:
        raise UsageError("--movetime and --nodes must be at least 1")
    if args.depth is not None and args.depth < 1:
        raise UsageError("--depth must be at least 1")
    limit = Limit(args.movetime if args.movetime or args.nodes or args.depth else 1000, args.nodes, args.depth)
    db = open_database(args, pos) if args.db else None
    try:
        engine = Engine(cfg, db=db)
        engine.warm_up()
        on_info = None if args.json or args.quiet else (lambda info: print(info.protocol(), file=sys.stderr))
        result = engine.think(pos, limit, on_info=on_info, rank_all=True)
    finally:
        if db is not None:
            db.close()
    report = engine_answer(cfg, pos, result)
    if result.source != "engine":
        report["source"] = result.source
    if result.source == "engine":
        from solver.known.answer import with_known
        from solver.known.knowledge import Knowledge

        report = with_known(cfg, pos, report, Knowledge.default())  # a proof beats an estimate
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['position']}  [{cfg.board.label} {cfg.variants()}]")
    print(f"score: {_analysed(report, result)}")
    if result.move is not None:
        print(f"best move: {report.get('best_move') or result.move.text(cfg.board)}   line: {' '.join(report['line'])}")
    from solver.cli.query import move_groups

    groups = move_groups(pos, report["moves"])
    width = max([14] + [len(label) for label, _ in groups])
    for label, m in groups:
        sc = m["score"]
        shown = f"{sc['kind']} {sc['value']}" if sc["kind"] != "cp" else f"{sc['value'] / 100:+.2f}"
        if sc["kind"] == "cp" and m.get("value") not in ("draw",):
            shown += " estimate"
        print(f"  {label:<{width}} {shown:<16} {m.get('source', ''):<7} {m['position']}")
    return 0


def _analysed(report: dict, result) -> str:
    """The position's score line: a proven value with its source, or the engine's estimate."""
    sc = report["score"]
    score = f"{sc['kind']} in {sc['value']}" if sc["kind"] != "cp" else f"{sc['value'] / 100:+.2f}"
    if report["source"] in ("proof", "book"):
        return f"{score} (proven: {report['source']}, {report['from']})   engine: depth {result.depth}, {result.nodes} nodes"
    exact = " (proven)" if result.exact else " (estimate)" if sc["kind"] == "cp" else ""
    return f"{score}{exact}   depth {result.depth}, {result.nodes} nodes, {report['seconds']} s"


def register(sub, commands: dict) -> None:
    p = sub.add_parser("engine", help="the engine on standard input/output, a line protocol (docs/engine.md)")
    add_db_option(p, "; positions it answers are played from it")
    add_rule_options(p)
    commands["engine"] = cmd_engine

    p = sub.add_parser("analyse", help="the engine's best move, score, line and every move ranked, for one position")
    p.add_argument("position", help=f"position text ({RULES_HELP} §9), quoted")
    p.add_argument("--movetime", type=int, metavar="MS", help="think this long (default 1000 ms when no limit is given)")
    p.add_argument("--nodes", type=int, metavar="N", help="search at most N nodes")
    p.add_argument("--depth", type=int, metavar="D", help="search to depth D")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    add_json_option(p, "one JSON answer (docs/json.md, source engine)")
    add_db_option(p, "; a position it answers is answered from it")
    add_rule_options(p)
    commands["analyse"] = cmd_analyse
