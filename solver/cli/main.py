"""The ``rotary`` command line: parse arguments, call the library, print.

Every user mistake — a :class:`~solver.errors.RotaryError` or an OS error on a path the
user named — ends in one line on stderr (``rotary: error: …``) and exit status 2. Any
other exception is a bug in rotary and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

import solver
from solver.cli import book, checksums, db, engine, export, match, play, prove, query, serve
from solver.cli.options import Parser
from solver.db.store import os_reason
from solver.errors import RotaryError

EXIT_USAGE = 2


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = Parser(prog="rotary", description="ROTARY: rules, play, solving and position databases")
    parser.add_argument("--version", action="version", version=f"rotary {solver.__version__}")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=Parser, help="what to do; 'rotary COMMAND --help' lists its options"
    )
    commands: dict = {}
    for module in (play, db, checksums, export, query, prove, book, serve, engine, match):
        module.register(sub, commands)
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    try:
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return EXIT_USAGE
        return commands[args.command](args)
    except RotaryError as e:
        return _fail(str(e))
    except BrokenPipeError:  # the reader went away (rotary stats | head): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 1
    except OSError as e:  # a path the user named: missing, not writable, a file not a folder
        return _fail(os_message(e))
    except KeyboardInterrupt:
        print("rotary: interrupted", file=sys.stderr)
        return 130


def os_message(e: OSError) -> str:
    """``<path>: <what is wrong>`` in words, never Python's ``[Errno N]`` text."""
    path = e.filename
    reason = os_reason(e, None if path is None else Path(str(path)))
    if not path or reason.startswith(f"{path} "):  # "X is a file" names the path itself
        return reason
    return f"{path}: {reason}"


def _fail(message: str) -> int:
    print(f"rotary: error: {one_line(message)}", file=sys.stderr)
    return EXIT_USAGE


def one_line(text: str) -> str:
    """``text`` with every control or invisible character written as its escape (``\\n``,
    ``\\x1b``, ``\\u202e``): an error quoting what the user typed stays one line, and
    cannot move the cursor or recolour the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


if __name__ == "__main__":
    sys.exit(main())
