"""``rotary query``: the value of positions and of every move from them.

Sources in order: the value database of the rules, then the opening book in the proof
store, then (with ``--prove N``) a df-pn proof of N nodes made now.
"""

from __future__ import annotations

import argparse
import json

from solver.analysis import database_answer
from solver.cli.find import database_path, store_path
from solver.cli.options import (
    add_db_option, add_json_option, add_rule_options, add_store_option, config_from_args, read_positions,
)
from solver.db.database import Database
from solver.errors import MissingValueError, UsageError
from solver.game.position import parse_position
from solver.game.values import Value


def cmd_query(args: argparse.Namespace) -> int:
    if not args.positions and args.setup:
        from solver.game.start import empty_setup

        cfg, _ = config_from_args(args, default_board="hex3")
        texts = [empty_setup(cfg).text()]
    else:
        texts = read_positions(args.positions or [])
    first = parse_position(texts[0])
    try:
        path = database_path(args, first)
    except MissingValueError as e:
        return _query_book(args, texts, str(e))
    with Database(path) as db:
        for text in texts:
            pos = parse_position(text)
            try:
                report = database_answer(db, pos, line_plies=args.line)
            except MissingValueError as e:
                return _query_book(args, [text], str(e))
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


def _query_book(args: argparse.Namespace, texts: list[str], why: str) -> int:
    from solver.search.book import book_lookup, value_text
    from solver.search.prover import Prover

    for text in texts:
        pos = parse_position(text)
        ns = argparse.Namespace(**{**vars(args), "board": None, "balls": None})
        cfg, _ = config_from_args(ns, pos)
        node = book_lookup(store_path(args, cfg), cfg, pos)
        if node is not None:
            v = node.get("value") or {}
            if args.json:
                print(json.dumps({"position": pos.text(), "source": "book", "value": v.get("result"), "plies": v.get("plies"),
                                  "exact": v.get("exact"), "moves": node["children"]}))
                continue
            proven = "proven" if v.get("lo") == v.get("hi") else "not proven"
            bound = "" if v.get("plies") is None or v.get("exact") else " (distance is a bound)"
            print(f"{node['position']}  [opening book]")
            print(f"value: {value_text(v)} for {'xo'[pos.turn]} ({proven}){bound}")
            for m in node["children"]:
                print(f"  {m['move']:<8} {value_text(m['value']) + ' (child view)':<26} {m['position']}")
            continue
        if not args.prove:
            raise MissingValueError(f"{why}; not in the opening book either (try --prove N to prove it with N nodes)")
        if args.prove < 1:
            raise UsageError(f"--prove must be at least 1, got {args.prove}")
        res = Prover(cfg).prove(pos, nodes=args.prove)
        print(json.dumps(res.to_json()) if args.json else f"{res.position}  [proved now]\nvalue: {res.text()} for {'xo'[pos.turn]}")
    return 0


def register(sub, commands: dict) -> None:
    p = sub.add_parser("query", help="value of positions and of every move from them")
    p.add_argument("positions", nargs="*", metavar="POS", help="position texts, or - to read one per line from stdin")
    add_rule_options(p)
    add_db_option(p)
    add_store_option(p)
    add_json_option(p, "one JSON line per position")
    p.add_argument("--line", type=int, default=0, metavar="N", help="also show the principal line, up to N plies")
    p.add_argument("--prove", type=int, metavar="N", help="not in a database or the book: prove with N df-pn nodes")
    commands["query"] = cmd_query
