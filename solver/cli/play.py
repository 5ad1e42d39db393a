"""``rotary show / moves / start / play``: positions, their moves, and games in the terminal."""

from __future__ import annotations

import argparse
import json
import sys

from solver.cli.find import open_database
from solver.cli.options import (
    RULES_HELP, add_db_option, add_json_option, add_rule_options, load_position, start_position,
)
from solver.errors import MissingValueError, UsageError
from solver.game.board import board_from_label
from solver.game.config import Config
from solver.game.position import COLOUR_CHARS, Position
from solver.game.render import draw, use_colour
from solver.game.rules import ONGOING, apply, legal_points, moves, status
from solver.game.start import has_preset_start, standard_start
from solver.play.players import PLAYER_KINDS, make_player


def cmd_show(args: argparse.Namespace) -> int:
    cfg, pos = load_position(args.position, args)
    print(draw(pos, colour=use_colour(sys.stdout) and not args.no_colour, traps=(cfg.traps_x, cfg.traps_o)))
    st = status(cfg, pos)
    if st != ONGOING:
        print(f"finished: {st} for {COLOUR_CHARS[pos.turn]}")
    if args.svg or args.png:
        from solver.view.picture import write_pictures

        for path in write_pictures(cfg, pos, svg_path=args.svg, png_path=args.png, size=args.size):
            print(f"wrote {path}")
    return 0


def moves_report(cfg: Config, pos: Position) -> dict:
    """What ``rotary moves --json`` prints: status, legal points, every move and its result."""
    st = status(cfg, pos)
    if pos.phase == "at":
        points = list(pos.points)
    elif pos.phase in ("play", "offer"):  # light is the mover at the offer
        points = legal_points(cfg, pos.mover, pos.opponent)
    else:
        points = []
    return {
        "position": pos.text(),
        "status": st,
        "points": [cfg.board.names[p] for p in points] if st == ONGOING else [],
        "moves": [{"move": m.text(cfg.board), "position": apply(cfg, pos, m).text()} for m in moves(cfg, pos)],
    }


def cmd_moves(args: argparse.Namespace) -> int:
    cfg, pos = load_position(args.position, args)
    report = moves_report(cfg, pos)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['position']}\nstatus: {report['status']} for {COLOUR_CHARS[pos.turn]}")
    if report["points"]:
        print("legal points: " + " ".join(report["points"]))
    for m in report["moves"]:
        print(f"  {m['move']:<14} {m['position']}")
    return 0


def cmd_start(args: argparse.Namespace) -> int:
    board = board_from_label(args.board or "hex4")
    if not has_preset_start(board):
        raise UsageError(
            f"{board.label} has no preset start: its games start from the empty board "
            f"(rotary play --board {board.label} --setup offer --balls K)"
        )
    pos = standard_start()
    print(pos.text())
    if args.draw:
        print(draw(pos, colour=use_colour(sys.stdout)))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from solver.play.game import run_game

    if args.max_plies < 1:
        raise UsageError(f"--max-plies must be at least 1, got {args.max_plies}")
    history, find_args = [], args
    if args.load:
        cfg, start, history, find_args = _load_game(args)
    elif args.position:
        cfg, start = load_position(args.position, args)
    else:
        cfg, start = start_position(args)
    # everything a player needs is opened before the game starts; a person gets hints
    # from the database of these rules where there is one
    kinds = (args.x, args.o)
    db = None
    if "perfect" in kinds:
        db = open_database(find_args, start)
    elif "human" in kinds:
        try:
            db = open_database(find_args, start)
        except MissingValueError:
            db = None
    seeds = (args.seed, None if args.seed is None else args.seed + 1)
    if args.movetime < 1:
        raise UsageError(f"--movetime must be at least 1, got {args.movetime}")
    players = [make_player(kind, seed, db, movetime_ms=args.movetime) for kind, seed in zip(kinds, seeds)]
    try:
        return run_game(cfg, start, players, max_plies=args.max_plies, db=db, history=history, record=args.record)
    finally:
        if db is not None:
            db.close()


def _load_game(args: argparse.Namespace):
    """``--load FILE``: the record's rules, start and moves; rule flags and ``--position``
    would contradict it and are refused."""
    from solver.play.record import read_record

    given = [f"--{name.replace('_', '-')}" for name in ("position", "board", "balls", "edge", "capture", "traps_x",
                                                       "traps_o", "setup") if getattr(args, name, None)]
    if given:
        raise UsageError(f"--load takes the rules and the start from the record; drop {given[0]}")
    cfg, start, history, _ = read_record(args.load)
    find_args = argparse.Namespace(**{**vars(args), "board": cfg.board.label, "edge": cfg.edge,
                                      "capture": cfg.capture, "setup": cfg.setup, "balls": None})
    return cfg, start, history, find_args


def register(sub, commands: dict) -> None:
    p = sub.add_parser("show", help="draw a position")
    p.add_argument("position", help=f"position text ({RULES_HELP} §9), quoted")
    p.add_argument("--no-colour", action="store_true", help="never use terminal colours (NO_COLOR is honoured too)")
    p.add_argument("--svg", metavar="FILE", help="also write the board as an SVG picture")
    p.add_argument("--png", metavar="FILE", help="also write it as PNG (needs the png extra: pip install 'rotary[png]')")
    p.add_argument("--size", type=int, default=480, metavar="PX", help="picture width in pixels (default %(default)s)")
    add_rule_options(p)
    commands["show"] = cmd_show

    p = sub.add_parser("moves", help="legal points and every move with its result")
    p.add_argument("position", help=f"position text ({RULES_HELP} §9), quoted")
    add_json_option(p)
    add_rule_options(p)
    commands["moves"] = cmd_moves

    p = sub.add_parser("start", help="print the standard start position")
    p.add_argument("--board", help="board (only hex4 has a preset start)")
    p.add_argument("--draw", action="store_true", help="also draw it")
    commands["start"] = cmd_start

    p = sub.add_parser("play", help="play a game in the terminal")
    p.add_argument("--position", help="start from this position instead")
    for side, name in (("x", "light"), ("o", "dark")):
        p.add_argument(
            f"--{side}",
            choices=PLAYER_KINDS,
            default="human" if side == "x" else "greedy",
            help=f"{name}: human, random, greedy, perfect or engine (default %(default)s)",
        )
    p.add_argument("--movetime", type=int, default=1000, metavar="MS",
                   help="the engine player's thinking time a move (default %(default)s)")
    p.add_argument("--seed", type=int, help="seed for the random and greedy players")
    p.add_argument("--max-plies", type=int, default=400, help="stop an endless game after this many plies (default 400)")
    p.add_argument("--record", metavar="FILE", help="write the game record (rules, start, moves) to FILE after every move")
    p.add_argument("--load", metavar="FILE", help="replay a game record and play on from there")
    add_db_option(p, "; the perfect player reads it, and a person's 'hint' and 'values'")
    add_rule_options(p)
    commands["play"] = cmd_play
