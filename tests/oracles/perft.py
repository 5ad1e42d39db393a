"""``data/perft.json``: perft counts that pin the move generator (docs/rules.md §3-§5).

For each position below it records the rules, the position text and the number of leaves
at depth 1, 2, 3 (and 4 where that is quick) of the tree whose children are the DISTINCT
successor positions; a finished position has none (``solver.game.rules.perft``).

Before writing anything the counts are recomputed with the independent re-implementation
in :mod:`tests.oracles.perft_reference` (to depth 3, or ``--check-depth``); a disagreement
stops the run. ``tests/game/test_perft.py`` then checks the file against the engine in CI.
From the repository root::

    python -m tests.oracles.perft            # writes data/perft.json
    python -m tests.oracles.perft --out -    # print instead
    python -m tests.oracles.perft --check    # compare with data/perft.json, write nothing
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from solver.game.config import make_config
from solver.game.position import parse_position
from solver.game.rules import check_position, children, perft
from solver.game.start import STANDARD_START_TEXT
from tests.oracles import perft_reference as ref

ROOT = Path(__file__).resolve().parents[2]
PERFT_FILE = ROOT / "data" / "perft.json"

# The file's "about", kept as it was written so that a remade file is byte for byte the
# stored one (the generator was then a script).
ABOUT = (
    "Leaves at each depth of the tree of distinct successor positions "
    "(docs/rules.md §3 rule 5); a finished position has no children. "
    "Made by python -m tests.oracles.perft, checked by tests/game/test_perft.py."
)


def rules(board="hex4", balls=13, edge=False, capture=False, traps_x=(), traps_o=(), setup=None) -> dict:
    if capture and not traps_x and board == "hex4":
        traps_x, traps_o = ("a2", "c1", "f2", "g3"), ("a3", "a6", "b8", "c8")
    return {
        "board": board,
        "balls": balls,
        "edge": edge,
        "capture": capture,
        "traps_x": list(traps_x),
        "traps_o": list(traps_o),
        "setup": setup,
    }


# (name, rules, position, deepest depth, why the position was chosen)
POSITIONS = [
    (
        "standard start",
        rules(),
        STANDARD_START_TEXT,
        4,
        "docs/rules.md §8; light has e4, d3, f3; the first finished nodes at depth 3",
    ),
    (
        "base midgame",
        rules(),
        ".oo./.ooo./o...o./.x.o.o./.xxxxxx./x.o...x/oxooxx/..x.. x",
        4,
        "x can complete the centre at once; within depth 2 o can complete his own centre "
        "or, by a bad turn, x's",
    ),
    (
        "finished",
        rules(),
        ".oo./.ooo./o.o.o./...x.o./.xxxxxx./x.o...x/oxooxx/..x.. o",
        4,
        "the centre is x's: finished, no children",
    ),
    (
        "edge hex3",
        rules("hex3", 5, edge=True),
        ".../..../..xoo/.ox..x/...xo/.o.x o",
        4,
        "balls fall off at depth 1; finished nodes at every depth",
    ),
    (
        "capture",
        rules(capture=True),
        ".oo./.o.o./ooox../.o.x.x./.ox.oxx./o.x.o.x/xxo.xx/..x.. o",
        4,
        "standard traps; captures and finished nodes at depth 1 and 2",
    ),
    (
        "edge+capture",
        rules(edge=True, capture=True),
        "oo.o/...../...o../.o.xx.x/.xxx..../o.xx.../.x...x/x.... x",
        3,
        "some turns only drop balls off the edge, some only capture, some do both",
    ),
    (
        "setup=offer, offer phase",
        rules(setup="offer"),
        "xxo./xoox./x.o.xo/x.o.x../oo...x../.o.o.o./xxox../x.o.. x offer",
        4,
        "x has three legal points: offer, pick, at, then o's first rotation",
    ),
    (
        "setup=offer, one legal point",
        rules("hex3", 4, setup="offer"),
        ".../..oo/.o.../....../xxo../xx.. x offer",
        4,
        "x has exactly one legal point: no offer, he rotates there at once",
    ),
    (
        "setup=offer, end of placement",
        rules(setup="offer"),
        ".x../oo.../xo..x./.ox..o./x.o...../.o..oox/xoxo.x/xox.x x place",
        4,
        "two balls left to place; at depth 2 x has no, one or several legal points "
        "(offer loss, immediate rotation, offer)",
    ),
    (
        "setup=offer+capture, end of placement",
        rules(capture=True, setup="offer"),
        "xo../xxo.o/.o..xx/.o...../ox...o.x/.o.xox./...xx./xo.o. o place",
        4,
        "no ball on the other colour's traps; offer losses at depth 3, captures at depth 4",
    ),
    (
        "setup=last, end of placement",
        rules("hex3", 4, setup="last"),
        "..o/..../.x.../.x..../o..../.x.o x place",
        4,
        "two balls left; o placed last and rotates first; o can be without a legal point",
    ),
]


def config_of(r: dict):
    """The configuration of a ``rules`` dict as stored in ``data/perft.json``."""
    return make_config(
        r["board"],
        r["balls"],
        edge=r["edge"],
        capture=r["capture"],
        traps_x=",".join(r["traps_x"]) if r["capture"] else None,
        traps_o=",".join(r["traps_o"]) if r["capture"] else None,
        setup=r["setup"],
    )


def document(check_depth: int = 3) -> str:
    """The text of ``data/perft.json``, every count recomputed (to ``check_depth`` also by the reference)."""
    entries = []
    for name, r, text, depth, why in POSITIONS:
        cfg = config_of(r)
        pos = parse_position(text)
        check_position(cfg, pos)
        assert pos.text() == text, f"{name}: position text is not in canonical form"
        assert ref.successors(r, text) == {c.text() for c in children(cfg, pos)}, name
        counts = {}
        for d in range(1, depth + 1):
            t = time.perf_counter()
            counts[str(d)] = perft(cfg, pos, d)
            took = time.perf_counter() - t
            print(f"{name:<40} depth {d}: {counts[str(d)]:>8}  ({took:.2f} s)", file=sys.stderr)
            if d <= check_depth:
                theirs = ref.perft(r, text, d)
                if theirs != counts[str(d)]:
                    raise SystemExit(f"{name}: depth {d}: engine {counts[str(d)]}, reference {theirs}")
        entries.append({"name": name, "rules": r, "position": text, "perft": counts, "why": why})
    doc = {"about": ABOUT, "positions": entries}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracles.perft", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(PERFT_FILE), help="output file, '-' for stdout")
    ap.add_argument("--check-depth", type=int, default=3, help="recompute with the reference to this depth")
    ap.add_argument("--check", action="store_true", help="compare with the file at --out instead of writing it")
    args = ap.parse_args(argv)
    text = document(args.check_depth)
    if args.check:
        if args.out == "-":
            ap.error("--check compares with a file: give --out FILE, not '-'")
        same = Path(args.out).read_text(encoding="utf-8") == text
        print(f"{args.out}: {'identical' if same else 'DIFFERS'}", file=sys.stderr)
        return 0 if same else 1
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
