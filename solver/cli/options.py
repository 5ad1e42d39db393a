"""Options every command shares, each with one meaning, and the rules they spell.

* ``--board`` — the position's board when a position is given (a different ``--board``
  is refused), else this board, else the command's default: ``hex4`` for ``play`` and
  ``book`` (the standard start), ``hex3`` for ``solve`` and for ``query --setup`` without
  a position (the empty setup board of what ``solve --setup`` solves); ``stats`` and ``verify`` read
  the board of the database they find (or ``--db``), and a different ``--board`` is
  refused there too.
* ``--balls K`` or ``--balls AvB`` — balls per side, or light's and dark's.
* ``--edge``, ``--capture``, ``--traps-x/--traps-o``, ``--setup offer|last`` — the variants.
* ``--db PATH`` — the value database of the configuration; without it, the database of
  these rules under ``$ROTARY_DB`` (default ``./rotary-db``), see :mod:`solver.db.catalog`.
* ``--store PATH`` — the proof store (df-pn results, opening books); default
  ``$ROTARY_PROOFS`` (``./rotary-proofs``) ``/<rules>``.
* ``-q`` — no progress bars; ``--json`` — machine-readable output.
"""

from __future__ import annotations

import argparse
import sys

from solver.errors import UsageError
from solver.game.board import board_from_label
from solver.game.config import Config, make_config
from solver.game.position import Position, parse_position
from solver.game.rules import check_position

DEFAULT_BOARD, DEFAULT_SOLVE_BOARD, DEFAULT_BALLS = "hex4", "hex3", 4
RULES_HELP = "docs/rules.md"


class Parser(argparse.ArgumentParser):
    """argparse's own usage errors become one-line :class:`UsageError` s too."""

    def error(self, message: str) -> None:
        raise UsageError(message)


def add_rule_options(
    p: argparse.ArgumentParser, *, board_default: str = DEFAULT_BOARD, balls_help: str | None = None,
    board_help: str | None = None,
) -> None:
    g = p.add_argument_group("rules")
    g.add_argument("--board", help=board_help or f"board hex2..hex5 (default: the position's board, else {board_default})")
    g.add_argument("--balls", help=balls_help or "balls per side K, or light's and dark's as AvB (e.g. 4 or 3v2)")
    g.add_argument("--edge", action="store_true", help="rotation at empty edge points; balls fall off the board")
    g.add_argument("--capture", action="store_true", help="trap fields capture the other colour's balls")
    g.add_argument("--traps-x", help="light's trap fields, e.g. a2,c1,f2,g3 (the hex4 default)")
    g.add_argument("--traps-o", help="dark's trap fields, e.g. a3,a6,b8,c8 (the hex4 default)")
    g.add_argument("--setup", choices=("offer", "last"), help="the setup game: a jointly formed opening, and who rotates first")


def add_db_option(p: argparse.ArgumentParser, use: str = "") -> None:
    p.add_argument(
        "--db", metavar="PATH",
        help=f"the value database (default: the one of these rules under $ROTARY_DB or ./rotary-db){use}",
    )


def add_store_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", metavar="PATH", help="the proof store (default: $ROTARY_PROOFS or ./rotary-proofs, /<rules>)")


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def add_json_option(p: argparse.ArgumentParser, what: str = "one JSON object") -> None:
    p.add_argument("--json", action="store_true", help=what)


def parse_material(text: str | None) -> tuple[int, int] | None:
    """``'4'`` -> (4, 4); ``'3v2'`` -> light 3, dark 2; None stays None."""
    if text is None:
        return None
    try:
        a, b = text.lower().split("v") if "v" in text.lower() else (text, text)
        material = int(a), int(b)
    except ValueError:
        raise UsageError(f"bad --balls {text!r}: expected K or AvB, e.g. 4 or 3v2") from None
    if min(material) < 1:
        raise UsageError(f"bad --balls {text!r}: each side needs at least one ball")
    return material


def config_from_args(
    args: argparse.Namespace, pos: Position | None = None, default_board: str = DEFAULT_BOARD
) -> tuple[Config, tuple[int, int] | None]:
    """The rules asked for and the material (None where not given); the board comes from
    the position when one is given, and a different ``--board`` is refused."""
    label = getattr(args, "board", None)
    if pos is not None:
        if label and board_from_label(label) is not pos.board:
            raise UsageError(f"the position is on {pos.board.label}, not {label}")
        board = pos.board
    else:
        board = board_from_label(label or default_board)
    material = parse_material(getattr(args, "balls", None))
    if args.setup and material is not None and material[0] != material[1]:
        raise UsageError("the setup game needs equal balls per side (--balls K)")
    cfg = make_config(
        board,
        None if material is None else max(material),
        edge=args.edge,
        capture=args.capture,
        traps_x=args.traps_x,
        traps_o=args.traps_o,
        setup=args.setup,
    )
    return cfg, material


def load_position(text: str, args: argparse.Namespace) -> tuple[Config, Position]:
    """Parse ``text`` and check it against the rules asked for."""
    pos = parse_position(text)
    cfg, _ = config_from_args(args, pos)
    check_position(cfg, pos)
    return cfg, pos


def start_position(args: argparse.Namespace, default_board: str = DEFAULT_BOARD) -> tuple[Config, Position]:
    """The rules asked for and where a game under them starts when no position is given:
    the empty board with ``--setup``, else the preset start — whose material a different
    ``--balls`` contradicts (refused in one line, not played with other rules' name)."""
    from solver.game.start import initial_position

    cfg, material = config_from_args(args, default_board=default_board)
    start = initial_position(cfg)
    have = (start.x.bit_count(), start.o.bit_count())
    if material is not None and not cfg.setup and material != have:
        raise UsageError(
            f"--balls {args.balls}: the standard start has {have[0]} balls a side "
            f"(start elsewhere with a position, or build the opening with --setup offer|last)"
        )
    if material is None and not cfg.setup and cfg.balls != have[0]:
        cfg, _ = config_from_args(argparse.Namespace(**{**vars(args), "balls": str(have[0])}), default_board=default_board)
    return cfg, start


def read_positions(texts: list[str]) -> list[str]:
    """Position texts from the command line, or one per line of stdin for ``-``."""
    if texts == ["-"]:
        texts = [line.strip() for line in sys.stdin if line.strip()]
    if not texts:
        raise UsageError("no position given (give one or more, or - to read them from standard input)")
    return texts


def check_jobs(jobs: int) -> None:
    if jobs < 1:
        raise UsageError(f"-j must be at least 1, got {jobs}")
