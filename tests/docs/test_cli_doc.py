"""docs/cli.md is what ``python scripts/cli_doc.py`` writes from the parsers, every command
has an example there, and every example is a command line the parser accepts. A command
added without an example still renders, and is named."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from solver.cli.main import build_parser
from tests.helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


cli_doc = load_script("cli_doc")


def test_every_command_has_an_example():
    missing = cli_doc.missing_examples()
    assert not missing, (
        f"no example for the command(s) {', '.join(missing)}: add one to EXAMPLES in scripts/cli_doc.py, "
        "then run python scripts/cli_doc.py"
    )


def test_docs_cli_md_is_generated_from_the_parsers():
    expected = cli_doc.render()
    current = (ROOT / "docs" / "cli.md").read_text() if (ROOT / "docs" / "cli.md").exists() else ""
    assert current == expected, "docs/cli.md is stale: run python scripts/cli_doc.py (and commit docs/cli.md)"


def test_every_option_of_every_command_is_in_the_page():
    """In its command's section, in a code span: in the tables, or among the rule options
    named as standard (whose table is then the rule options' own)."""
    text = cli_doc.render()
    rules = cli_doc.rule_defaults()
    for name, _, sub in cli_doc.subcommands(build_parser()[0]):
        section = text.split(f"\n## rotary {name}\n", 1)[1].split("\n## rotary ", 1)[0]
        spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", section, flags=re.S))
        for action in sub._actions:
            if action.dest == "help":
                continue
            words = action.option_strings or [cli_doc.option_text(action)]
            assert any(all(re.search(rf"(^|[ ,\[]){re.escape(w)}(?![\w-])", s) for w in words) for s in spans), (name, words)
            if action.option_strings and rules.get(action.option_strings[-1]) == cli_doc.help_text(action, sub.prog):
                assert f"`{action.option_strings[-1]}`" in section


@pytest.mark.parametrize("name", sorted(cli_doc.EXAMPLES))
def test_each_example_is_accepted_by_its_command(name):
    parser, commands = build_parser()
    assert name in commands, f"EXAMPLES in scripts/cli_doc.py has {name!r}, which is no command"
    _, line = cli_doc.EXAMPLES[name]
    argv = shlex.split(line)
    assert argv[:2] == ["rotary", name], line
    args = parser.parse_args(argv[1:])  # parse only: a usage error raises UsageError
    assert args.command == name


def test_a_command_without_an_example_is_rendered_and_named():
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    new = sub.add_parser("frobnicate", help="turn the board inside out")
    new.add_argument("--depth", type=int, help="how far")
    text = cli_doc.render(parser)
    assert "## rotary frobnicate" in text and "[frobnicate](#rotary-frobnicate)" in text
    section = text.split("## rotary frobnicate", 1)[1]
    assert "| `--depth DEPTH` | how far |" in section and cli_doc.NO_EXAMPLE in section
    assert cli_doc.missing_examples(parser) == ["frobnicate"]


def test_check_mode_fails_on_a_stale_page(tmp_path, monkeypatch, capsys):
    page = tmp_path / "cli.md"
    page.write_text(cli_doc.render().replace("## rotary solve", "## rotary solve-old"))
    monkeypatch.setattr(cli_doc, "DOC", page)
    assert cli_doc.main(["--check"]) == 1
    assert "docs/cli.md is stale" in capsys.readouterr().err
    assert cli_doc.main([]) == 0 and cli_doc.main(["--check"]) == 0
