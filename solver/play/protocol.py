"""The client side of the engine protocol: a program on stdin/stdout as a player.

The conversation, one command a line (the engine side is ``rotary engine``)::

    isready                        -> readyok
    rules FLAGS                       (rules other than base: the command line's rule flags)
    newgame                           (a new game: forget the history)
    position POS [moves M1 M2 ...]    (POS in docs/rules.md §9 notation, side to move included)
    go movetime MS                 -> info ... lines, then exactly one: bestmove MOVE
    quit

:class:`ProtocolPlayer` is called like the in-process choosers, ``player(cfg, pos,
history=positions)``, and answers a :class:`~solver.game.move.Move`. The history lets it
send ``position START moves ...`` so that the engine sees repetitions. Offer and pick
moves contain spaces, so a ``moves`` list never holds one: the position sent is the one
after the game's last offer or pick (positions before it can never recur), followed by the
moves since, or the current position alone.

The rules of a match other than base rules are sent once a program has started
(``rules --setup offer --balls 13``), so ``rotary engine`` plays them without flags of its
own; a program that refuses them cannot play the match. A program older than the command
(it answers ``unknown command 'rules'``) plays on with the rules of its own command line,
and the match says so once on stderr.

A program that does not answer in time (``movetime`` plus a margin), exits, or answers a
move that is garbled or illegal raises :class:`PlayerFailure`; the match scores that game
as lost and restarts the program before its next game. The first ``go`` after a start may
take as long as ``isready`` may (the ready timeout): a program may compile or load its
search only when the first position shows it the board.
"""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Sequence

from solver.errors import IllegalMoveError, NotationError, UsageError
from solver.game.config import Config
from solver.game.move import Move
from solver.game.position import Position
from solver.game.rules import apply, moves, parse_move

READY_TIMEOUT_S = 60.0  # a program's start may compile its kernels (numba) first
MARGIN_MS = 1000
QUIT_GRACE_S = 2.0
REFUSED_GRACE_S = 1.0  # a bestmove may still follow an error (the search failed, not the command)


class PlayerFailure(Exception):
    """A player broke the rules of the conversation; ``str(e)`` says how, in a few words."""


class ProtocolPlayer:
    """A program speaking the engine protocol, started on :meth:`open` and kept between games."""

    wants_history = True

    def __init__(self, command: str, movetime_ms: int, *, margin_ms: int = MARGIN_MS,
                 ready_timeout_s: float = READY_TIMEOUT_S, first_go_s: float | None = None, name: str | None = None,
                 rules: Sequence[str] = ()):
        """``first_go_s``: how long the first ``go`` after a start may take (default the
        ready timeout; never less than ``movetime`` plus the margin). ``rules``: the words
        of a ``rules`` command sent after each start (:func:`rule_flags`; none for base rules)."""
        self.rules = list(rules)
        self.knows_rules = True  # False once the program answered 'rules' with an unknown command
        try:
            self.argv = shlex.split(command)
        except ValueError as e:
            raise UsageError(f"cannot split the command {command!r}: {e}") from None
        if not self.argv:
            raise UsageError("an empty engine command")
        self.command, self.name = command, name or command
        self.movetime_ms, self.margin_ms, self.ready_timeout_s = movetime_ms, margin_ms, ready_timeout_s
        self.first_go_s = ready_timeout_s if first_go_s is None else first_go_s
        self.proc: subprocess.Popen | None = None
        self._first_go = True
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=3)
        self.last_error: str | None = None  # the last 'info string error: ...' the program sent
        self._history: list[Position] = []  # positions whose moves are known, with the moves
        self._moves: list[Move] = []

    # ------------------------------------------------------------------ the process

    def open(self) -> None:
        """Start the program and wait for ``readyok``; a program that cannot be run or does
        not answer is a :class:`UsageError` (the match cannot start)."""
        try:
            self._start()
        except PlayerFailure as e:
            self.close()
            raise UsageError(f"engine {self.command!r}: {e}") from None

    def _start(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, bufsize=1, encoding="utf-8", errors="replace",
            )
        except OSError as e:  # not found, not executable
            raise UsageError(f"cannot run {self.command!r}: {e.strerror or e}") from None
        self._lines = queue.Queue()
        self._stderr.clear()
        self._first_go = True
        for target, stream in ((self._read_stdout, self.proc.stdout), (self._read_stderr, self.proc.stderr)):
            threading.Thread(target=target, args=(stream, self._lines), daemon=True).start()
        self._handshake()

    @staticmethod
    def _read_stdout(stream, lines: queue.Queue) -> None:
        try:
            for line in stream:
                lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):  # closed under us
            pass
        lines.put(None)

    def _read_stderr(self, stream, _lines) -> None:
        try:
            for line in stream:
                if line.strip():
                    self._stderr.append(line.strip())
        except (OSError, ValueError):
            pass

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        """``quit``, then kill the program if it is still there after a grace period."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                proc.stdin.write("quit\n")
                proc.stdin.flush()
            except (OSError, ValueError):
                pass
            try:
                proc.wait(QUIT_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> "ProtocolPlayer":
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ talking

    def _send(self, line: str) -> None:
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise self._died() from None

    def _died(self) -> PlayerFailure:
        try:
            code = self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            code = None
        time.sleep(0.05)  # let the stderr reader take the program's last words
        said = f": {self._stderr[-1]}" if self._stderr else ""
        how = "closed its output" if code is None else f"exited with status {code}"
        self._kill()
        return PlayerFailure(f"the program {how}{said}")

    def _kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _wait_for(self, word: str, timeout_s: float, what: str, refused: bool = False) -> str:
        """The first line starting with ``word``; other lines are read past (``info``).
        ``refused``: after an ``info string error`` the wait ends within
        :data:`REFUSED_GRACE_S` (a refused command was not carried out: no ``word`` comes)."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            try:
                line = self._lines.get(timeout=max(left, 0.0))
            except queue.Empty:
                self._kill()
                if refused and self.last_error:
                    raise PlayerFailure(f"no {word} after {what}; the program said {self.last_error!r}") from None
                raise PlayerFailure(f"no {word} within {timeout_s:g} s after {what}") from None
            if line is None:
                raise self._died()
            if line.startswith("info string error"):
                # the first error is the cause (a refused position, then go without one)
                self.last_error = self.last_error if refused and self.last_error else line[len("info string "):]
                if refused and deadline > time.monotonic() + REFUSED_GRACE_S:
                    deadline, timeout_s = time.monotonic() + REFUSED_GRACE_S, REFUSED_GRACE_S
            if line.split(None, 1)[:1] == [word]:
                return line

    def _drain(self) -> None:
        """Drop lines left unread (``info`` after ``bestmove``) before a new question."""
        try:
            while True:
                if self._lines.get_nowait() is None:
                    self._lines.put(None)  # keep the end of output for the next read
                    return
        except queue.Empty:
            return

    def _handshake(self) -> None:
        self._send("isready")
        self._wait_for("readyok", self.ready_timeout_s, "isready")
        if self.rules and self.knows_rules:
            self.last_error = None
            self._send("rules " + " ".join(self.rules))
            self._send("isready")
            self._wait_for("readyok", self.ready_timeout_s, "isready")
            if self.last_error and "unknown command 'rules'" in self.last_error:
                # a program older than the command: it plays the rules of its own command line
                self.knows_rules = False
                print(f"rotary match: {self.name} does not know 'rules'; it plays with the rules of its "
                      "command line", file=sys.stderr)
            elif self.last_error:
                raise PlayerFailure(f"refused 'rules {' '.join(self.rules)}': {self.last_error}")

    def new_game(self) -> None:
        """``newgame`` and ``isready``; a program that died or hung in the last game is
        started again first."""
        self._history, self._moves = [], []
        if not self.alive:
            self.close()
            self._start()
        self._drain()
        self._send("newgame")
        self._handshake()

    def position_command(self, cfg: Config, pos: Position, history: Sequence[Position] | None) -> str:
        """``position ...`` for ``pos`` with as much of ``history`` as a moves list can carry."""
        if not history:
            return f"position {pos.text()}"
        self._learn(cfg, history)
        base = 0
        for i, m in enumerate(self._moves):
            if " " in m.text(cfg.board):  # offer, pick: not writable in a moves list
                base = i + 1
        texts = [m.text(cfg.board) for m in self._moves[base:]]
        start = self._history[base].text()
        return f"position {start} moves {' '.join(texts)}" if texts else f"position {start}"

    def _learn(self, cfg: Config, history: Sequence[Position]) -> None:
        """The moves between the positions of ``history`` (only the new ones are looked for)."""
        known = len(self._history)
        if not known or known > len(history) or list(history[:known]) != self._history:
            self._history, self._moves, known = [history[0]], [], 1
        for before, after in zip(history[known - 1:], history[known:]):
            found = next((m for m in moves(cfg, before) if apply(cfg, before, m) == after), None)
            if found is None:
                raise ValueError(f"no move leads from {before.text()!r} to {after.text()!r}")
            self._moves.append(found)
            self._history.append(after)

    def __call__(self, cfg: Config, pos: Position, history: Sequence[Position] | None = None) -> Move:
        if not self.alive:
            raise PlayerFailure("the program is not running")
        if history:
            assert history[-1] == pos, "the history ends with the position to move in"
        self._drain()
        self.last_error = None
        self._send(self.position_command(cfg, pos, history))
        self._send(f"go movetime {self.movetime_ms}")
        timeout_s = (self.movetime_ms + self.margin_ms) / 1000
        if self._first_go:
            timeout_s, self._first_go = max(timeout_s, self.first_go_s), False
        line = self._wait_for("bestmove", timeout_s, f"go movetime {self.movetime_ms}", refused=True)
        text = line.split(None, 1)[1].strip() if len(line.split(None, 1)) > 1 else ""
        # an error the program reported on the way (a refused position) explains a wrong move
        said = f"; before it the program said {self.last_error!r}" if self.last_error else ""
        if not text:
            raise PlayerFailure(f"bestmove without a move{said}")
        try:
            return parse_move(cfg, pos, text)
        except (IllegalMoveError, NotationError) as e:
            raise PlayerFailure(f"bestmove {text!r}: {e}{said}") from None


def rule_flags(cfg: Config) -> list[str]:
    """The rules of ``cfg`` as the command line's rule flags, for the ``rules`` command:
    none for base rules; the balls only for the setup game (elsewhere the position shows them)."""
    words: list[str] = []
    if cfg.edge:
        words.append("--edge")
    if cfg.capture:
        words.append("--capture")
        for flag, mask in (("--traps-x", cfg.traps_x), ("--traps-o", cfg.traps_o)):
            words += [flag, ",".join(cfg.names(mask))] if mask else []
    if cfg.setup:
        words += ["--setup", cfg.setup, "--balls", str(cfg.balls)]
    return words


def is_command(text: str) -> bool:
    """Whether a player given on the command line is a program (a space or a path in it)."""
    return any(c.isspace() for c in text) or os.sep in text or os.path.exists(text)
