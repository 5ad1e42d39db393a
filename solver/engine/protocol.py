"""The engine's line protocol on standard input and output (docs/engine.md), as UCI is for chess.

Commands, one a line: ``isready``, ``newgame``, ``position POS [moves M1 M2 …]``,
``go [movetime MS | nodes N | depth D | infinite | wtime W btime B [winc I binc J] [movestogo N]]``, ``stop``, ``quit`` (and ``rotary``,
which names the engine, and ``rules [FLAGS]``, which sets the rules of the positions that
follow with the command line's rule flags: ``rules --setup offer --balls 13``; no flag is
base rules). ``go`` answers with ``info`` lines and exactly one ``bestmove``
line; a search runs in a thread of its own, so ``isready`` and ``stop`` are answered
while it runs. ``quit`` (or the end of the input) lets a search with a limit finish and
answer first, and stops ``go infinite``. A command that cannot be carried out gets one
``info string error: …`` line and changes nothing.

The game: the engine keeps the positions sent since ``newgame`` (for repetitions). A
``position`` whose start is the game's first position replaces the game with that start
and the positions after each move; any other ``position`` continues the game (its start,
then its moves, appended).
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TextIO

from solver.engine.clock import allot_ms
from solver.engine.engine import Engine
from solver.engine.score import Info, Limit, SearchResult
from solver.errors import RotaryError
from solver.game.config import Config
from solver.game.position import Position
from solver.game.rules import check_position, parse_move, play

DEFAULT_MOVETIME_MS = 1000
NAME = "rotary"


class ProtocolError(Exception):
    """A command that cannot be carried out: its text becomes an ``info string error``."""


def split_moves(words: list[str]) -> list[str]:
    """Move texts from the words after ``moves``: ``offer P Q`` and ``pick P`` are one move each."""
    out, i = [], 0
    while i < len(words):
        w = words[i].lower()
        take = 3 if w == "offer" else 2 if w == "pick" else 1
        if i + take > len(words):
            raise ProtocolError(f"incomplete move {' '.join(words[i:])!r}")
        out.append(" ".join(words[i:i + take]))
        i += take
    return out


CLOCK_KEYS = ("wtime", "btime", "winc", "binc", "movestogo")


def parse_go(words: list[str], turn: int = 0) -> Limit:
    """``go``'s arguments as a :class:`Limit` (no argument: ``movetime`` 1000). A clock
    (``wtime``/``btime``, light's and dark's time left, ``winc``/``binc`` their increments,
    ``movestogo``) gives the side to move, ``turn`` (0 light, 1 dark), a ``movetime`` of
    :func:`solver.engine.clock.allot_ms`; an explicit ``movetime`` wins over it."""
    movetime = nodes = depth = None
    clock: dict[str, int] = {}
    infinite = False
    i = 0
    while i < len(words):
        key = words[i]
        if key == "infinite":
            infinite = True
            i += 1
            continue
        if key not in ("movetime", "nodes", "depth") + CLOCK_KEYS:
            raise ProtocolError(f"unknown go parameter {key!r} (movetime, nodes, depth, infinite, wtime, btime, winc, "
                                f"binc or movestogo)")
        if i + 1 >= len(words):
            raise ProtocolError(f"go {key} needs a number")
        try:
            n = int(words[i + 1])
        except ValueError:
            raise ProtocolError(f"go {key} needs a whole number, not {words[i + 1]!r}") from None
        if n < (0 if key in ("winc", "binc") else 1):
            raise ProtocolError(f"go {key} must be at least {0 if key in ('winc', 'binc') else 1}, got {n}")
        if key == "movetime":
            movetime = n
        elif key == "nodes":
            nodes = n
        elif key == "depth":
            depth = n
        else:
            clock[key] = n
        i += 2
    own = ("wtime", "winc") if turn == 0 else ("btime", "binc")
    if clock and own[0] not in clock:
        raise ProtocolError(f"go: the side to move's clock ({own[0]}) is missing")
    if clock and movetime is None:
        movetime = allot_ms(clock[own[0]], clock.get(own[1], 0), clock.get("movestogo"))
    return Limit(movetime, nodes, depth, infinite)


class Session:
    """One engine process's state: the rules, the game so far, the engines by board."""

    def __init__(self, rules: Callable[[Position], Config], db_for: Callable[[Config], object] | None = None,
                 out: TextIO = sys.stdout, read_rules: Callable[[list[str]], Callable[[Position], Config]] | None = None):
        """``rules``: the rules of a position; ``read_rules``: such a function from the
        words of a ``rules`` command (None: the command is refused)."""
        self.rules = rules
        self.read_rules = read_rules
        self.db_for = db_for
        self.out = out
        self._lock = threading.Lock()
        self.engines: dict[Config, Engine] = {}
        self.game: list[Position] = []
        self.cfg: Config | None = None
        self.thread: threading.Thread | None = None
        self.engine: Engine | None = None
        self.infinite = False
        self.answered = threading.Event()

    def say(self, line: str) -> None:
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def engine_for(self, cfg: Config) -> Engine:
        """The engine of these rules, made (and its kernels compiled) when first needed."""
        if cfg not in self.engines:
            db = self.db_for(cfg) if self.db_for is not None else None
            engine = Engine(cfg, db=db)
            engine.warm_up()
            self.engines[cfg] = engine
        return self.engines[cfg]

    # ----------------------------------------------------------------- commands

    def handle(self, line: str) -> bool:
        """Carry out one command line; False after ``quit``."""
        words = line.split()
        if not words:
            return True
        cmd, args = words[0], words[1:]
        try:
            if cmd == "quit":
                self.finish()
                return False
            if cmd == "isready":
                self.say("readyok")
            elif cmd == "rotary":
                self.say(f"id name {NAME}")
                self.say("rotaryok")
            elif cmd == "rules":
                self._idle(cmd)
                self.set_rules(args)
            elif cmd == "newgame":
                self._idle(cmd)
                self.game = []
                for engine in self.engines.values():
                    engine.new_game()
            elif cmd == "position":
                self._idle(cmd)
                self.position(args)
            elif cmd == "go":
                self._idle(cmd)
                self.go(args)
            elif cmd == "stop":
                self.stop()
            else:
                raise ProtocolError(f"unknown command {cmd!r}")
        except (ProtocolError, RotaryError) as e:
            self.say(f"info string error: {_one_line(str(e))}")
        return True

    def _idle(self, cmd: str) -> None:
        if self.thread is not None and self.answered.is_set():
            self.thread.join()  # it has said bestmove: only its last steps are left
        if self.thread is not None and self.thread.is_alive():
            raise ProtocolError(f"{cmd} while searching (send stop first)")

    def position(self, words: list[str]) -> None:
        if not words:
            raise ProtocolError("position needs a position")
        if "moves" in words:
            i = words.index("moves")
            text, move_words = " ".join(words[:i]), words[i + 1:]
        else:
            text, move_words = " ".join(words), []
        pos = Position(text)
        cfg = self.rules(pos)
        check_position(cfg, pos)
        line = [pos]
        for mtext in split_moves(move_words):
            line.append(play(cfg, line[-1], parse_move(cfg, line[-1], mtext)))
        if self.game and self.game[0] == pos and self.cfg == cfg:
            self.game = line
        elif self.game and self.cfg == cfg:
            self.game = self.game + (line if self.game[-1] != pos else line[1:])
        else:
            self.game = line
        self.cfg = cfg
        self.engine_for(cfg)  # the kernels load now, not on go's clock

    def set_rules(self, words: list[str]) -> None:
        """``rules [FLAGS]``: the rules of the positions that follow; the game starts anew."""
        if self.read_rules is None:
            raise ProtocolError("this engine takes its rules from its command line only")
        self.rules = self.read_rules(words)
        self.game, self.cfg = [], None

    def go(self, words: list[str]) -> None:
        limit = parse_go(words, self.game[-1].turn if self.game else 0)
        if not self.game or self.cfg is None:
            raise ProtocolError("go before position")
        engine = self.engine_for(self.cfg)
        self.engine = engine
        self.infinite = limit.infinite or (limit.movetime_ms is None and limit.nodes is None and limit.depth is None)
        pos, history, cfg = self.game[-1], list(self.game), self.cfg
        answered = self.answered = threading.Event()

        def run() -> None:
            try:
                result = self.known(cfg, pos)
                if result is None:
                    result = engine.think(pos, limit, history, on_info=lambda info: self.say(info.protocol()))
                line = bestmove_line(result, cfg)
            except Exception as e:  # noqa: BLE001 — the engine stays up and still answers
                self.say(f"info string error: {_one_line(repr(e))}")
                line = "bestmove (none)"
            answered.set()  # before the answer: a command sent right after it must not find us busy
            self.say(line)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def known(self, cfg: Config, pos: Position) -> SearchResult | None:
        """A value the shipped store proves here (at the position or at a move), played
        at once and reported as proven: one ``info`` line and ``info string`` naming it."""
        from solver.known.probe import known_result

        result = known_result(cfg, pos)
        if result is not None:
            self.say(Info(0, 0, result.score, 0, 0, result.pv).protocol())
            how = "exact" if result.exact else "a move proven to win; the distance an upper bound"
            self.say(f"info string proven ({how}): the shipped store of known values")
        return result

    def finish(self) -> None:
        """``quit`` (or the end of the input): a search with a limit ends by itself and
        still answers — so a piped script gets its ``bestmove`` —, ``go infinite`` is stopped."""
        if self.thread is not None and self.infinite:
            self.stop()
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def stop(self) -> None:
        if self.engine is not None:
            self.engine.stop()
        if self.thread is not None:
            self.thread.join()
            self.thread = None


def bestmove_line(result: SearchResult, cfg: Config | None) -> str:
    """``bestmove MOVE`` (``(none)`` in a finished position), after a summary ``info`` line."""
    if result.move is None:
        return "bestmove (none)"
    return f"bestmove {result.move.text(cfg.board)}"


def _one_line(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def serve(session: Session, inp: TextIO = sys.stdin) -> int:
    """Read commands until ``quit`` or the end of the input (which stops a search first)."""
    for line in inp:
        if not session.handle(line.strip()):
            return 0
    session.finish()
    return 0
