"""A tiny program speaking the engine protocol, for the match runner's tests.

    python tests/play/fake_engine.py [MODE] [--capture]

MODE ``first`` (default) plays the first legal move of the position it was sent (history
replayed with solver.game.rules); ``crash`` exits with status 3 on ``go``; ``garbage``
reports an error and answers ``bestmove zz9``; ``hang`` never answers ``go``; ``noready``
never answers ``isready``; ``norules`` does not know the ``rules`` command, ``badrules``
refuses the rules it names; ``log`` plays like
``first`` and writes every line it reads to the file named by the environment variable
FAKE_ENGINE_LOG. ``rules --capture`` (or the flag on the command line) plays capture rules.
"""

from __future__ import annotations

import os
import sys
import time

from solver.game.config import make_config
from solver.game.position import Position
from solver.game.rules import moves, parse_move, play


def main(argv: list[str]) -> int:
    mode = next((a for a in argv if not a.startswith("-")), "first")
    capture = "--capture" in argv
    log = open(os.environ["FAKE_ENGINE_LOG"], "a", encoding="utf-8") if mode == "log" else None
    pos = cfg = None
    for line in sys.stdin:
        line = line.strip()
        if log:
            log.write(line + "\n")
            log.flush()
        word, _, rest = line.partition(" ")
        if word == "isready":
            if mode != "noready":
                print("readyok", flush=True)
        elif word == "rules" and mode == "badrules":
            print(f"info string error: these rules are not supported: {rest}", flush=True)
        elif word == "rules" and mode != "norules":
            capture = "--capture" in rest.split()
        elif word == "newgame":
            pos = None
        elif word == "position":
            text, _, history = rest.partition(" moves ")
            pos = Position(text)
            cfg = make_config(pos.board, None, capture=capture)
            for m in history.split():
                pos = play(cfg, pos, parse_move(cfg, pos, m))
        elif word == "go":
            if mode == "crash":
                print("fake engine: crashing on purpose", file=sys.stderr, flush=True)
                return 3
            if mode == "hang":
                time.sleep(3600)
            print("info depth 1 string thinking", flush=True)
            if mode == "garbage":
                print("info string error: confused on purpose", flush=True)
                print("bestmove zz9", flush=True)
            else:
                print(f"bestmove {moves(cfg, pos)[0].text(pos.board)}", flush=True)
        elif word == "quit":
            return 0
        else:
            print(f"info string error: unknown command {word!r}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
