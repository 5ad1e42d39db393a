"""Every ``rotary …`` command README.md and docs/*.md show is one the parser accepts
(parsed only, never run): in shell code blocks (``$``-prompted lines where a block has
prompts; each command of a ``|`` or ``&&`` chain; ``\\`` continuations joined) and in
inline code that starts with ``rotary ``. ``$(rotary start)`` stands for the standard
start, other ``$(…)`` and ``$VARIABLES`` for a placeholder; inline code may be a template
(``[--edge]``, ``offer|last``, ``PATH``, ``…``)."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from solver.cli.main import build_parser
from solver.errors import UsageError
from solver.game.start import standard_start
from tests.docs.mdtext import Command, argv_of, commands, doc_files, rel

PAGES = doc_files()
PARSER, _ = build_parser()
SUBS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices
START = standard_start().text()


def choices_of(command: str | None, option: str):
    action = SUBS[command]._option_string_actions.get(option) if command in SUBS else None
    return None if action is None else action.choices


def refused(cmd: Command) -> str | None:
    """Why the parser refuses the command line, or None. Inline code may name a command
    or an option in passing (`rotary prove --json`'s answer, `rotary play --record`): what
    it leaves out — a required argument, the value of its last option — is not held
    against it; anything it names must exist."""
    argv = argv_of(cmd, START, choices_of)
    if argv is None:
        return None
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            PARSER.parse_args(argv)
    except UsageError as e:
        why = str(e)
        if cmd.template and (why.startswith("the following arguments are required")
                             or (argv and why == f"argument {_names_of(argv)}: expected one argument")):
            return None
        return why
    except SystemExit as e:  # --help, --version
        return None if e.code == 0 else f"exit {e.code}"
    return None


def _names_of(argv: list[str]) -> str:
    """How argparse names the last option of ``argv`` in its errors (``-j/--jobs``)."""
    action = SUBS[argv[0]]._option_string_actions.get(argv[-1]) if argv[0] in SUBS else None
    return "/".join(action.option_strings) if action is not None else argv[-1]


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_rotary_command_shown_parses(page):
    bad = [f"line {c.line}: {c.text}\n    -> {why}" for c in commands(page.read_text()) if (why := refused(c))]
    assert not bad, f"{rel(page)} shows commands rotary refuses:\n" + "\n".join(bad)


def test_the_reading_of_command_lines():
    text = "\n".join([
        "Run `rotary solve --board B --balls K [--edge] -j N`, then `rotary query --setup R --line 20`",
        "or `rotary COMMAND --help`.",
        "```",
        'rotary moves "$(rotary start)" --json      # a comment',
        "pip install -e '.[test]' && rotary solve && rotary query '..o/..../...../....../.x.../.ox. x' \\",
        "    --line 21",
        "printf '%s\\n' \"$POS\" | rotary query --edge --json - > answers.jsonl 2>&1",
        "rotary solve --board hex3 --ballz 4",
        "rotary book [--start POS | --setup offer|last] --depth D [--nodes N] [rule options]",
        "```",
        "```",
        "$ rotary --version",
        "rotary 0.2.0",
        "```",
    ])
    cmds = commands(text)
    assert [c.line for c in cmds] == [4, 5, 5, 7, 8, 9, 12, 1, 1, 2]
    argvs = [argv_of(c, START, choices_of) for c in cmds]
    assert argvs[0] == ["moves", START, "--json"]
    assert argvs[2] == ["query", "..o/..../...../....../.x.../.ox. x", "--line", "21"]
    assert argvs[3] == ["query", "--edge", "--json", "-"]
    assert argvs[5] == ["book", "--start", "1", "--depth", "1", "--nodes", "1"]
    assert argvs[7] == ["solve", "--board", "1", "--balls", "1", "--edge", "-j", "1"]
    assert argvs[8] == ["query", "--setup", "offer", "--line", "20"]  # R: the first choice
    assert argvs[9] is None
    assert [bool(refused(c)) for c in cmds] == [False, False, False, False, True, False, False, False, False, False]
    assert "--ballz" in refused(cmds[4])
