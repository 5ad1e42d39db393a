"""``rotary query``: the value of positions and of every move from them.

Sources in order: the value database of the rules, then — where no database answers —
the rules themselves for a finished position, the opening book in the proof store, and
(with ``--prove N``) a df-pn proof of N nodes made now. Every answer has the one shape of
:mod:`solver.analysis` (``docs/json.md``).

Several positions (more than one argument, or ``-``: one per line of standard input) are
answered one by one: a position that cannot be answered gets its own error (a JSON
``{"position", "error"}`` object, or an ``error:`` line) and the others are still
answered. Exit status: 0 when every position was answered, 1 when some were not, 2 for an
error in the command itself (and for the one position of a single query).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

from solver.analysis import book_answer, database_answer, error_answer, finished, proof_answer, rules_answer
from solver.cli.find import check_flags, database_path, store_path
from solver.cli.options import (
    DEFAULT_SOLVE_BOARD, add_db_option, add_json_option, add_rule_options, add_store_option, config_from_args, read_positions,
)
from solver.db import catalog
from solver.db.database import Database
from solver.errors import MissingValueError, RotaryError, UsageError
from solver.game.board import board_from_label
from solver.game.config import Config
from solver.game.position import PLAY, Position, parse_position
from solver.game.rules import parse_move, play
from solver.game.values import Value

EXIT_SOME_FAILED = 1


def cmd_query(args: argparse.Namespace) -> int:
    if args.line < 0:
        raise UsageError(f"--line must be at least 0, got {args.line}")
    if args.prove is not None and args.prove < 1:
        raise UsageError(f"--prove must be at least 1, got {args.prove}")
    batch = args.positions == ["-"] or len(args.positions) > 1
    if not args.positions and args.setup:
        from solver.game.start import empty_setup

        cfg, _ = config_from_args(args, default_board=DEFAULT_SOLVE_BOARD)  # the board `solve --setup` solves
        texts = [empty_setup(cfg).text()]
    else:
        texts = read_positions(args.positions or [])
    failed = 0
    with Answers(args) as sources:
        for text in texts:
            try:
                pos = parse_position(text)
                report, where, cfg = sources.answer(pos)
            except RotaryError as e:
                if not batch:
                    raise
                failed += 1
                if args.json:
                    print(json.dumps(error_answer(text, str(e))), flush=True)
                else:
                    print(f"error: {text}: {e}", flush=True)
                continue
            if args.json:
                print(json.dumps(report), flush=True)
            else:
                print(answer_text(report, cfg, pos, where), flush=True)
    return EXIT_SOME_FAILED if failed else 0


class Answers:
    """The sources a query reads, opened once: ``--db`` (checked against the rule flags),
    else every database found by the rules, kept open for the next position."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.named = Database(database_path(args)) if args.db else None
        self.found: dict[Path, Database] = {}
        self.knowledge: dict = {}  # rules -> solver.known.knowledge.Knowledge

    def __enter__(self) -> "Answers":
        return self

    def __exit__(self, *exc) -> None:
        for db in [self.named, *self.found.values()]:
            if db is not None:
                db.close()
        for k in self.knowledge.values():
            k.close()

    def database(self, pos: Position) -> tuple[Database | None, str]:
        """The database answering for ``pos``, or None and why there is none."""
        if self.named is not None:
            reason = self.named.get_reason(pos)
            return (None, reason) if reason else (self.named, "")
        try:
            path = database_path(self.args, pos)
        except MissingValueError as e:
            return None, _no_database(self.args, pos, str(e))
        if path not in self.found:
            self.found[path] = Database(path)
            check_flags(self.args, self.found[path])
        return self.found[path], ""

    def rules(self, pos: Position) -> Config:
        """The rules of ``pos`` where no database answers: those of ``--db`` if named, else
        of the flags; without material (a proof store serves every material of its rules),
        except in the setup game, whose rules include the balls per side."""
        if self.named is not None:
            cfg = self.named.cfg
            return cfg if cfg.setup else replace(cfg, balls=None)
        ns = argparse.Namespace(**{**vars(self.args), "balls": self.args.balls if self.args.setup else None})
        return config_from_args(ns, pos)[0]

    def known(self, cfg: Config, pos: Position) -> dict | None:
        """The answer of the shipped store (:mod:`solver.known`) where it knows ``pos``,
        a user's book adding to it and a short engine search estimating the moves neither
        knows; None where the store does not know ``pos`` (or ``--prove`` asks for a proof
        of a value it does not prove)."""
        from solver.known.answer import engine_estimates, known_answer
        from solver.known.knowledge import Knowledge
        from solver.known.store import shipped

        store = shipped()
        if store is None:
            return None
        hit = store.get(cfg, pos)
        if hit is None or (self.args.prove and pos.phase == PLAY and not (hit.value.proven and hit.value.exact)):
            return None
        if cfg not in self.knowledge:
            self.knowledge[cfg] = Knowledge(store, store_path(self.args, cfg))
        return known_answer(cfg, pos, self.knowledge[cfg], engine_estimates(cfg), line_plies=self.args.line)

    def answer(self, pos: Position) -> tuple[dict, str, Config]:
        """The answer for ``pos``, where it came from (in words) and the rules; a one-line
        :class:`RotaryError` when no source answers."""
        args = self.args
        if args.board and board_from_label(args.board) is not pos.board:
            raise UsageError(f"the position is on {pos.board.label}, not {args.board}")
        db, why = self.database(pos)
        if db is not None:
            try:
                return database_answer(db, pos, line_plies=args.line), db.description, db.cfg
            except MissingValueError as e:  # e.g. a tier of the database not solved yet
                why = str(e)
        elif self.named is not None and pos.board is not self.named.cfg.board:
            raise MissingValueError(why)  # --db names the configuration: its board is the board
        cfg = self.rules(pos)
        if finished(cfg, pos):
            return rules_answer(cfg, pos), "rules: the game is over", cfg
        known = self.known(cfg, pos)
        if known is not None:
            return known, f"{known['source']}: {known['from']}, shipped", cfg
        from solver.search.book import book_lookup

        node = book_lookup(store_path(args, cfg), cfg, pos)
        if node is not None and not (args.prove and pos.phase == PLAY and not _settled(node)):
            report = book_answer(cfg, pos, node)
            if args.line:
                from solver.search.book import book_line

                report["line"] = book_line(store_path(args, cfg), cfg, pos, args.line)
            return report, "opening book", cfg
        if pos.phase != PLAY:
            raise MissingValueError(f"{why}; not in the opening book either")
        if not args.prove:
            raise MissingValueError(f"{why}; not in the opening book either (try --prove N to prove it with N nodes)")
        from solver.search.prover import Prover

        prover = Prover(cfg)
        res = prover.prove(pos, nodes=args.prove)
        report = proof_answer(cfg, pos, res)
        if args.line:
            from solver.search.tree import proof_line

            report["line"] = proof_line(prover, pos, res, args.line, nodes=max(args.prove, 1_000_000))
        if res.result == "unknown":
            return report, f"df-pn, {res.nodes:,} nodes: nothing proven", cfg
        return report, "proved now", cfg


def _settled(node: dict) -> bool:
    """Whether a book node's value is exact (``--prove`` proves the others anew)."""
    v = node.get("value") or {}
    return v.get("lo") is not None and v.get("lo") == v.get("hi") and (v.get("plies") is None or bool(v.get("exact")))


def _no_database(args: argparse.Namespace, pos: Position, why: str) -> str:
    """With ``--balls`` the missing database has a name: say which, and how to make it."""
    if args.balls is None:
        return why
    cfg, material = config_from_args(args, pos)
    flags = ["--board", cfg.board.label, "--balls", args.balls]
    flags += [f for f, on in (("--edge", cfg.edge), ("--capture", cfg.capture)) if on]
    flags += [f"--traps-x {args.traps_x}"] * bool(args.traps_x) + [f"--traps-o {args.traps_o}"] * bool(args.traps_o)
    flags += [f"--setup {cfg.setup}"] * bool(cfg.setup)
    return (f"no database {catalog.db_name(cfg, material)} under {catalog.db_root()}/ "
            f"(solve it with 'rotary solve {' '.join(flags)}' or name one with --db)")


# ---------------------------------------------------------------------------- human output


def answer_text(report: dict, cfg: Config, pos: Position, where: str) -> str:
    """An answer for people: the value, the moves (those leading to one position on one
    line) and the principal line."""
    score = f", score {_score(report['score'])}" if report.get("score") else ""
    lines = [f"{report['position']}  [{where}]", f"value: {_value(report)} for {'xo'[pos.turn]}{score}"]
    groups = move_groups(pos, report["moves"])
    width = max((len(label) for label, _ in groups), default=0)
    scored = any("score" in m for m in report["moves"])  # the book's engine estimates
    labelled = any("source" in m for m in report["moves"])  # the shipped store's answers: each move's source
    for label, m in groups:
        if labelled:
            shown = f"{_source(m):<22} "
        else:
            shown = f"{_score(m.get('score')):<10} " if scored else ""
        lines.append(f"  {label:<{max(width, 14)}} {_value(m):<12} {shown}{m['position']}")
    if "line" in report:
        lines.append("line: " + ("  ".join(report["line"]) or "(none)") + _line_end(cfg, pos, report["line"]))
    if report.get("stopped"):
        lines.append(f"stopped: {report['stopped']}")
    return "\n".join(lines)


def _source(m: dict) -> str:
    """Where a move's value comes from: ``proof``, ``book``, ``rules``, or an estimate
    marked as one (``+0.21 estimate (book)``); a proven value never shows an estimate."""
    source = m.get("source", "")
    if m["value"] in ("win", "loss", "draw") or "score" not in m:
        return source or "-"
    return f"{_score(m['score'])} estimate ({source})"


def _value(entry: dict) -> str:
    return str(Value(entry["value"], entry["plies"], entry["exact"]))


def _score(score: dict | None) -> str:
    """An engine score as analyse prints it (``+0.64``, ``win in 7``), ``-`` for none."""
    if not score:
        return "-"
    return f"{score['value'] / 100:+.2f}" if score["kind"] == "cp" else f"{score['kind']} in {score['value']}"


def _line_end(cfg: Config, pos: Position, line: list[str]) -> str:
    """`` (repeats: a draw)`` when the line comes back to a position it passed (a drawn
    line goes round; :func:`solver.analysis.principal_line` stops at the repetition)."""
    seen, cur = {pos.text()}, pos
    for text in line:
        cur = play(cfg, cur, parse_move(cfg, cur, text))
        if cur.text() in seen:
            return "  (repeats: a draw)"
        seen.add(cur.text())
    return ""


def move_groups(pos: Position, moves: list[dict]) -> list[tuple[str, dict]]:
    """Moves that lead to the same position, as one entry each: ``(label, first move)``,
    in the order of the moves. The label names them compactly — ``f3+1,3,5``,
    ``f3+0..5``, ``d3+0 e3+0 f3+0..5`` — and adds ``(= pass)`` when the position is the
    same board with the other side to move (a rotation that changes nothing)."""
    by_child: dict[str, list[dict]] = {}
    for m in moves:
        by_child.setdefault(m["position"], []).append(m)
    out = []
    for child, group in by_child.items():
        label = _label([m["move"] for m in group])
        if _is_pass(pos, child):
            label += " (= pass)"
        out.append((label, group[0]))
    return out


def _label(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    points: dict[str, list[int]] = {}
    others = []
    for t in texts:
        point, plus, k = t.partition("+")
        if plus and k.isdigit():
            points.setdefault(point, []).append(int(k))
        else:
            others.append(t)
    parts = [f"{p}+{_runs(sorted(ks))}" for p, ks in points.items()]
    return " ".join(parts + others)


def _runs(ks: list[int]) -> str:
    """``[0..5]`` -> ``0..5``; ``[1, 3, 5]`` -> ``1,3,5``; runs of three or more joined by ``..``."""
    out, i = [], 0
    while i < len(ks):
        j = i
        while j + 1 < len(ks) and ks[j + 1] == ks[j] + 1:
            j += 1
        if j - i >= 2:
            out.append(f"{ks[i]}..{ks[j]}")
        else:
            out.extend(str(k) for k in ks[i : j + 1])
        i = j + 1
    return ",".join(out)


def _is_pass(pos: Position, child_text: str) -> bool:
    child = Position(child_text)
    return pos.phase == PLAY and child.phase == PLAY and (child.x, child.o) == (pos.x, pos.o) and child.turn != pos.turn


def register(sub, commands: dict) -> None:
    p = sub.add_parser(
        "query",
        help="value of positions and of every move from them",
        description="The value of each position and of every move from it, best first, from the value "
        "database of the rules, else the rules (a finished game), the opening book or a df-pn proof (--prove). "
        "Exit status: 0 all answered, 1 some position of several not answered (each gets its own error), "
        "2 a usage error. JSON answers: docs/json.md.",
    )
    p.add_argument("positions", nargs="*", metavar="POS", help="position texts, or - to read one per line from stdin")
    add_rule_options(p, board_default=DEFAULT_SOLVE_BOARD)
    add_db_option(p)
    add_store_option(p)
    add_json_option(p, "one JSON answer per position, one per line (docs/json.md)")
    p.add_argument("--line", type=int, default=0, metavar="N", help="also show the principal line, up to N plies")
    p.add_argument("--prove", type=int, metavar="N", help="not in a database or the book: prove with N df-pn nodes")
    commands["query"] = cmd_query
