"""The ``rotary`` command line: parse arguments, call the library, print.

Every user mistake ends in one line on stderr (``rotary: error: …``) and exit status 2;
never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Callable, Sequence

from solver.game.board import board_from_label
from solver.game.config import Config, make_config
from solver.game.position import parse_position
from solver.game.position import COLOUR_CHARS, Position
from solver.game.render import draw
from solver.game.rules import ONGOING, check_position, legal_points, moves, play, parse_move, status
from solver.game.start import initial_position, standard_start, has_preset_start

EXIT_USAGE = 2


class UserError(Exception):
    """A mistake in what the user typed; printed as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own usage errors: one line too
        raise UserError(message)


# ---------------------------------------------------------------------------- rule options


def add_rule_options(p: argparse.ArgumentParser, board: bool = True, balls: bool = True) -> None:
    g = p.add_argument_group("rules")
    if board:
        g.add_argument("--board", help="board hex2..hex5 (default: the position's board, else hex4)")
    if balls:
        g.add_argument("--balls", type=int, help="balls per side (default: 13 on hex4 in setup games)")
    g.add_argument("--edge", action="store_true", help="rotation at empty edge points; balls fall off")
    g.add_argument("--capture", action="store_true", help="trap fields capture the other colour's balls")
    g.add_argument("--traps-x", help="light's trap fields, e.g. a2,c1,f2,g3 (hex4 default)")
    g.add_argument("--traps-o", help="dark's trap fields, e.g. a3,a6,b8,c8 (hex4 default)")
    g.add_argument("--setup", choices=("offer", "last"), help="jointly formed opening, and who rotates first")


def config_from_args(args: argparse.Namespace, pos: Position | None = None) -> Config:
    """The rules the user asked for; the board comes from the position when one is given."""
    board_label = getattr(args, "board", None)
    board = pos.board if pos is not None else board_from_label(board_label or "hex4")
    if pos is not None and board_label and board_from_label(board_label) is not board:
        raise UserError(f"the position is on {pos.board.label}, not {board_label}")
    return make_config(
        board,
        getattr(args, "balls", None),
        edge=args.edge,
        capture=args.capture,
        traps_x=args.traps_x,
        traps_o=args.traps_o,
        setup=args.setup,
    )


def load_position(text: str, args: argparse.Namespace) -> tuple[Config, Position]:
    pos = parse_position(text)
    cfg = config_from_args(args, pos)
    check_position(cfg, pos)
    return cfg, pos


# ---------------------------------------------------------------------------- commands


def cmd_show(args: argparse.Namespace) -> int:
    cfg, pos = load_position(args.position, args)
    colour = sys.stdout.isatty() and not args.no_colour
    print(draw(pos, colour=colour))
    st = status(cfg, pos)
    if st != ONGOING:
        print(f"finished: {st} for {COLOUR_CHARS[pos.turn]}")
    return 0


def moves_report(cfg: Config, pos: Position) -> dict:
    """What ``rotary moves --json`` prints: status, legal points, every move and its result."""
    from solver.game.rules import apply

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
        "moves": [
            {"move": m.text(cfg.board), "position": apply(cfg, pos, m).text()} for m in moves(cfg, pos)
        ],
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
        raise UserError(
            f"{board.label} has no preset start: its games start from the empty board "
            f"(rotary play --board {board.label} --setup offer --balls K)"
        )
    pos = standard_start()
    print(pos.text())
    if args.draw:
        print(draw(pos, colour=sys.stdout.isatty()))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from solver.play.game import run_game

    cfg = config_from_args(args)
    if args.position:
        cfg, start = load_position(args.position, args)
    else:
        try:
            start = initial_position(cfg)
        except ValueError as e:
            raise UserError(str(e)) from None
    return run_game(cfg, start, args)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "show": cmd_show,
    "moves": cmd_moves,
    "start": cmd_start,
    "play": cmd_play,
}


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rotary", description="ROTARY: rules, play, solving and position databases")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("show", help="draw a position")
    p.add_argument("position", help="position text (RULES.md §9), quoted")
    p.add_argument("--no-colour", action="store_true", help="never use terminal colours")
    add_rule_options(p)

    p = sub.add_parser("moves", help="legal points and every move with its result")
    p.add_argument("position")
    p.add_argument("--json", action="store_true", help="one JSON object")
    add_rule_options(p)

    p = sub.add_parser("start", help="print the standard start position")
    p.add_argument("--board", help="board (only hex4 has a preset start)")
    p.add_argument("--draw", action="store_true", help="also draw it")

    p = sub.add_parser("play", help="play a game in the terminal")
    p.add_argument("--position", help="start from this position instead")
    for side, name in (("x", "light"), ("o", "dark")):
        p.add_argument(
            f"--{side}",
            default="human" if side == "x" else "greedy",
            help=f"{name}: human, random, greedy or perfect (default %(default)s)",
        )
    p.add_argument("--seed", type=int, help="seed for the random and greedy players")
    p.add_argument("--max-plies", type=int, default=400, help="stop an endless game after this many plies")
    p.add_argument("--db", help="database for the perfect player")
    add_rule_options(p)

    from solver.cli import db as cli_solve

    cli_solve.register(sub, COMMANDS)
    from solver.cli import prove as cli_prove

    cli_prove.register(sub, COMMANDS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return EXIT_USAGE
        return COMMANDS[args.command](args)
    except (UserError, ValueError, KeyError, OSError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
        print(f"rotary: error: {msg}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("rotary: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
