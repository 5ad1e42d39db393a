"""Write docs/cli.md — every ``rotary`` command and option, with an example each — from
the argparse parsers (:func:`solver.cli.main.build_parser`).

    python scripts/cli_doc.py            # (re)writes docs/cli.md
    python scripts/cli_doc.py --check    # exit 1 if docs/cli.md is not what it would write

The options come from the parsers themselves (their option strings, metavars, choices and
help texts), never from argparse's formatted help, whose layout changes between Python
versions. The one thing the parsers do not hold is an example: :data:`EXAMPLES` has one
per command. A command without one is still written (with a placeholder), and ``--check``
then fails naming it: add its example here and run the script again.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from solver.cli.main import build_parser
from solver.cli.options import add_rule_options

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"
NO_EXAMPLE = "_No example yet: add one to EXAMPLES in scripts/cli_doc.py._"

STANDARD_START = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"
HEX3_4V4 = ".../..o./.o.../x.x.../.o.xx/..o. x"  # hex(3) 4v4: light wins in 21

# one example per command: (what it does, the command line)
EXAMPLES: dict[str, tuple[str, str]] = {
    "show": ("Draw a hex(3) position in the terminal and as an SVG picture.",
             f"rotary show '{HEX3_4V4}' --svg board.svg"),
    "moves": ("Every legal move of a position and the position it leads to, as JSON.",
              f"rotary moves '{STANDARD_START}' --json"),
    "start": ("The standard start, as text and drawn.", "rotary start --draw"),
    "play": ("Play light against the perfect player of the hex(3) 4v4 database, keeping the game record.",
             f"rotary play --board hex3 --position '{HEX3_4V4}' --o perfect --record game.json"),
    "solve": ("Solve hex(3) with four balls a side into rotary-db/hex3-4v4, on two cores.",
              "rotary solve --board hex3 --balls 4 -j 2"),
    "stats": ("Per-tier counts and distance histograms of a database, with each tier's SHA-256.",
              "rotary stats --db rotary-db/hex3-4v4 --checksums"),
    "verify": ("Re-derive every value of a database from its children's, on two cores.",
               "rotary verify --db rotary-db/hex3-4v4 -j 2"),
    "checksums": ("Compare a database's tiers with the published SHA-256 (docs/checksums.md).",
                  "rotary checksums --db rotary-db/hex3-4v4"),
    "export": ("The hex(3) 4v4 database as a compact read-only set (then: rotary query --db hex3-4v4.compact POS).",
               "rotary export --db rotary-db/hex3-4v4 --out hex3-4v4.compact"),
    "query": ("A position's value, every move's value, and the principal line up to 21 plies.",
              f"rotary query '{HEX3_4V4}' --line 21"),
    "prove": ("Prove the standard start's value with df-pn, a million nodes at most.",
              f"rotary prove '{STANDARD_START}' --nodes 1000000"),
    "check-tree": ("Check the proof tree that 'rotary prove POS --tree proof.jsonl.gz' wrote.",
                   "rotary check-tree proof.jsonl.gz"),
    "book": ("An opening book three plies deep from the standard start, ten minutes at most.",
             "rotary book --depth 3 --nodes 200000 -j 2 --minutes 10"),
    "serve": ("The web viewer on the hex(3) 4v4 database, opened in the browser.",
              "rotary serve --db rotary-db/hex3-4v4 --open"),
    "engine": ("The engine on standard input and output, for a GUI or a match runner.", "rotary engine"),
    "analyse": ("The engine's view of the standard start after two seconds of thought.",
                f"rotary analyse '{STANDARD_START}' --movetime 2000"),
    "match": ("The engine against the greedy player over 20 games, 50 ms a move.",
              "rotary match --a engine --b greedy --games 20 --movetime 50"),
}

PREAMBLE = """\
# Command-line reference

Every command of `rotary` and every option, with an example each. This page is generated
from the parsers by `python scripts/cli_doc.py` (the examples are kept in that script);
`tests/docs/test_cli_doc.py` fails when it is stale. `rotary COMMAND --help` prints the
same options.

A position is given as text in the notation of [rules.md](rules.md) §9, quoted for the
shell. Exit status: 0 done; 2 a usage error — a mistake in what was asked, said in one
line on standard error (`rotary: error: …`); 130 interrupted (Ctrl-C); 1 where a command
says so (a check that failed). Environment: `ROTARY_DB` is the folder of value databases
(default `./rotary-db`), `ROTARY_PROOFS` the folder of proof stores (default
`./rotary-proofs`), `ROTARY_KNOWN` the shipped store of known values (default the
checkout's `data/known/`; `off` turns it off; [pns.md](pns.md#the-shipped-store-of-known-values)),
`NO_COLOR` turns terminal colours off.
"""


def subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """``(name, one-line help, parser)`` of every command, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]
    return []


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return " ".join(action.metavar) if isinstance(action.metavar, tuple) else str(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest if not action.option_strings else action.dest.upper()


def option_text(action: argparse.Action) -> str:
    """How the option is written: ``-j, --jobs JOBS``, ``--edge``, ``POS ...``."""
    meta = _metavar(action)
    if not action.option_strings:  # a positional argument
        return {"*": f"[{meta} ...]", "+": f"{meta} ...", "?": f"[{meta}]"}.get(action.nargs, meta)
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return names
    value = {"*": f"[{meta} ...]", "+": f"{meta} ...", "?": f"[{meta}]"}.get(action.nargs, meta)
    return f"{names} {value}"


def help_text(action: argparse.Action, prog: str) -> str:
    """The help string with argparse's ``%(default)s``-style fields filled in."""
    text = action.help or ""
    params = dict(vars(action), prog=prog)
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    try:
        text = text % params
    except (KeyError, TypeError, ValueError):
        pass  # a help text with a bare '%': shown as written
    return " ".join(text.split())


def _cell(text: str) -> str:
    """Text for a table cell: a ``|`` would end the cell, ``<word>`` would read as HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"``{text}``"


def rule_defaults() -> dict[str, str]:
    """The rule options' standard help texts (a command may word some its own way)."""
    p = argparse.ArgumentParser(prog="rotary")
    add_rule_options(p)
    return {a.option_strings[-1]: help_text(a, "rotary") for a in p._actions if a.option_strings and a.dest != "help"}


def _exclusive_notes(sub: argparse.ArgumentParser) -> dict[argparse.Action, str]:
    notes = {}
    for group in sub._mutually_exclusive_groups:
        for action in group._group_actions:
            others = [a.option_strings[-1] for a in group._group_actions if a is not action]
            notes[action] = "not with " + " or ".join(_code(o) for o in others)
    return notes


def command_section(name: str, summary: str, sub: argparse.ArgumentParser, examples: dict, rules: dict) -> str:
    out = [f"## rotary {name}", "", _sentence(summary), ""]
    if sub.description:
        out += [_cell(" ".join(sub.description.split())), ""]
    positionals = [a for a in sub._actions if not a.option_strings]
    synopsis = " ".join(["rotary", name, "[options]", *(option_text(a) for a in positionals)])
    out += ["```text", synopsis, "```", ""]
    notes = _exclusive_notes(sub)
    for group in sub._action_groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS and a.dest != "help"]
        if not actions:
            continue
        if group is sub._positionals:
            title = "Arguments"
        elif group is sub._optionals:
            title = "Options"
        else:
            title = (group.title or "").capitalize()
        same = [a for a in actions if a.option_strings and rules.get(a.option_strings[-1]) == help_text(a, sub.prog)]
        listed = [a for a in actions if a not in same] if title == "Rules" else actions
        out.append(f"{title}:")
        out.append("")
        if listed:
            out += ["| option | meaning |", "|---|---|"]
            for a in listed:
                meaning = help_text(a, sub.prog)
                extra = [n for n in (("required" if a.required and a.option_strings else ""), notes.get(a, "")) if n]
                if extra:
                    meaning += f" ({'; '.join(extra)})"
                out.append(f"| {_code(option_text(a)).replace('|', chr(92) + '|')} | {_cell(meaning)} |")
            out.append("")
        if title == "Rules" and same:
            names = ", ".join(_code(a.option_strings[-1]) for a in same)
            out += [f"{'Also ' if listed else ''}{names}: as in [rule options](#rule-options).", ""]
    example = examples.get(name)
    out.append("Example:")
    out.append("")
    if example is None:
        out += [NO_EXAMPLE, ""]
    else:
        what, line = example
        out += [_sentence(what), "", "```", line, "```", ""]
    return "\n".join(out)


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def render(parser: argparse.ArgumentParser | None = None, examples: dict | None = None) -> str:
    """docs/cli.md's text for ``parser`` (default: rotary's) and ``examples``."""
    parser = parser or build_parser()[0]
    examples = EXAMPLES if examples is None else examples
    commands = subcommands(parser)
    rules = rule_defaults()
    out = [PREAMBLE]
    out += ["| command | what it does |", "|---|---|"]
    for name, summary, _ in commands:
        out.append(f"| [{name}](#rotary-{name}) | {_cell(summary)} |")
    out += ["", "Global options: `rotary --version` prints the version, `rotary --help` lists the commands.", ""]
    out += ["## Rule options", "",
            "The rules a command works under, where it takes them (a database's commands read them from the "
            "database, and refuse flags that contradict it):", "",
            "| option | meaning |", "|---|---|"]
    p = argparse.ArgumentParser(prog="rotary")
    add_rule_options(p)
    for a in p._actions:
        if a.option_strings and a.dest != "help":
            out.append(f"| {_code(option_text(a)).replace('|', chr(92) + '|')} | {_cell(help_text(a, 'rotary'))} |")
    out.append("")
    for name, summary, sub in commands:
        out.append(command_section(name, summary, sub, examples, rules))
    return "\n".join(out).rstrip("\n") + "\n"


def missing_examples(parser: argparse.ArgumentParser | None = None, examples: dict | None = None) -> list[str]:
    """The commands that have no example."""
    parser = parser or build_parser()[0]
    examples = EXAMPLES if examples is None else examples
    return [name for name, _, _ in subcommands(parser) if name not in examples]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Write docs/cli.md from rotary's argument parsers.")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if docs/cli.md is stale")
    args = ap.parse_args(argv)
    text = render()
    missing = missing_examples()
    if missing:
        print(f"cli_doc: no example for {', '.join(missing)}: add one to EXAMPLES in scripts/cli_doc.py",
              file=sys.stderr)
    if not args.check:
        DOC.write_text(text)
        print(f"wrote {DOC}")
        return 1 if missing else 0
    old = DOC.read_text() if DOC.exists() else ""
    if old != text:
        diff = difflib.unified_diff(old.splitlines(), text.splitlines(), "docs/cli.md", "generated", lineterm="", n=1)
        print("\n".join(list(diff)[:40]), file=sys.stderr)
        print("cli_doc: docs/cli.md is stale: run python scripts/cli_doc.py", file=sys.stderr)
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
