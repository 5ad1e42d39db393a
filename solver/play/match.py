"""Games between two players, and matches that measure which is stronger (``rotary match``).

A *game* starts from an opening (a position and the rules) and ends when the rules end it,
when a player forfeits (a program that does not answer in time, exits, or answers an illegal
move), or in a draw:

* **repetition** — the same position (the same balls, side to move and phase) stands on the
  board for the third time, the start counted;
* **ply limit** — ``max_plies`` moves have been played without a result.

A *match* plays every opening twice, the colours swapped (a pair), so that what an opening
gives one colour cancels within the pair. Games ``2p`` and ``2p+1`` are pair ``p`` from
opening ``p mod len(openings)``: player A has light in the first, dark in the second. The
score is A's; its statistics are those of :mod:`solver.play.elo` from the pentanomial of the
pairs. With ``-j N`` the games run in N worker processes, each with its own players; the
results are taken in game order, so output and SPRT decisions do not depend on N (for
players whose moves do not depend on time: a seeded random or greedy player draws its seed
from the match seed, the game and the side).
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from solver.errors import UsageError
from solver.game.config import Config, config_from_key
from solver.game.move import COLOUR_CHARS
from solver.game.position import Move, Position
from solver.game.rules import ONGOING, WIN, apply, centre_owner, moves, status
from solver.play import elo
from solver.play.game import SIDE_NAMES
from solver.play.pool import reports_in_order
from solver.play.protocol import MARGIN_MS, READY_TIMEOUT_S, PlayerFailure, ProtocolPlayer, is_command, rule_flags
from solver.play.record import record_dict

BUILTIN_KINDS = ("random", "greedy", "engine")
LIGHT_WINS, DARK_WINS, DRAWN = "1-0", "0-1", "1/2-1/2"


# ---------------------------------------------------------------------------- one game


@dataclass
class GameOutcome:
    """How a game ended: ``outcome`` (``1-0`` light won), a short ``reason`` for the game
    line, the ``sentence`` a game record keeps, and the moves played."""

    outcome: str
    reason: str
    sentence: str
    moves: list[Move]


def _call(player, cfg: Config, pos: Position, history: list[Position]) -> Move:
    if getattr(player, "wants_history", False):
        return player(cfg, pos, history=history)
    return player(cfg, pos)


def _win(winner: int, reason: str, sentence: str, played: list[Move]) -> GameOutcome:
    return GameOutcome(DARK_WINS if winner else LIGHT_WINS, reason, sentence, played)


def play_game(cfg: Config, start: Position, light, dark, max_plies: int, stop=None) -> GameOutcome | None:
    """Play ``start`` out between two choosers; None if ``stop`` (an event) was set first."""
    players = (light, dark)
    for p in players:
        if hasattr(p, "new_game"):
            try:
                p.new_game()
            except PlayerFailure as e:  # a program that cannot start again loses at once
                side = players.index(p)
                return _forfeit(side, str(e), [])
    positions, played = [start], []
    seen = {start: 1}
    while True:
        pos = positions[-1]
        st = status(cfg, pos)
        if st != ONGOING:
            winner = pos.turn if st == WIN else 1 - pos.turn
            if pos.phase == "play" and centre_owner(cfg, pos.x, pos.o) is not None:
                char = COLOUR_CHARS[winner]
                return _win(winner, "centre complete", f"{SIDE_NAMES[winner]} wins: all three centre points are {char}",
                            played)
            loser = 1 - winner
            return _win(winner, "no legal point",
                        f"{SIDE_NAMES[winner]} wins: {SIDE_NAMES[loser]} has no legal rotation point", played)
        if seen[pos] >= 3:
            return GameOutcome(DRAWN, "repetition", "draw: the same position for the third time", played)
        if len(played) >= max_plies:
            return GameOutcome(DRAWN, "ply limit", f"draw: {max_plies} plies without a result", played)
        if stop is not None and stop.is_set():
            return None
        try:
            move = _call(players[pos.turn], cfg, pos, positions)
        except PlayerFailure as e:
            return _forfeit(pos.turn, str(e), played)
        if move not in moves(cfg, pos):
            return _forfeit(pos.turn, f"illegal move {move.text(cfg.board)}", played)
        nxt = apply(cfg, pos, move)
        played.append(move)
        positions.append(nxt)
        seen[nxt] = seen.get(nxt, 0) + 1


def _forfeit(side: int, why: str, played: list[Move]) -> GameOutcome:
    char = COLOUR_CHARS[side]
    sentence = f"{SIDE_NAMES[1 - side]} wins: {SIDE_NAMES[side]} forfeits: {why}"
    return _win(1 - side, f"{char} forfeits ({why})", sentence, played)


# ---------------------------------------------------------------------------- players


@dataclass(frozen=True)
class PlayerSpec:
    """A match player: a built-in ``kind`` or a ``command`` speaking the engine protocol."""

    name: str
    kind: str | None = None
    command: str | None = None
    movetime_ms: int | None = None  # a thinking time of its own (``engine@MS``), else the match's


def parse_player(text: str, option: str = "--a") -> PlayerSpec:
    """``random``, ``greedy``, ``engine`` (``engine@MS``: with its own thinking time a move),
    or a command line (it has a space or a path)."""
    text = text.strip()
    if text in BUILTIN_KINDS:
        return PlayerSpec(text, kind=text)
    kind, at, ms = text.partition("@")
    if at and kind in BUILTIN_KINDS:
        if not ms.isdigit() or int(ms) < 1:
            raise UsageError(f"bad player {option} {text!r}: the time after @ is whole milliseconds, at least 1")
        return PlayerSpec(text, kind=kind, movetime_ms=int(ms))
    if text and is_command(text):
        return PlayerSpec(text, command=text)
    raise UsageError(
        f"unknown player {option} {text!r}: expected {', '.join(BUILTIN_KINDS)}, or a program's command line "
        f"(with a space or a path, e.g. \"rotary engine\")"
    )


def seed_for(seed: int | None, game: int, which: int) -> int | None:
    """Player ``which``'s seed in game ``game``: fixed by the match seed, never by the order
    in which workers take the games."""
    return None if seed is None else random.Random(f"{seed}:{game}:{which}").getrandbits(48)


@dataclass(frozen=True)
class MatchSetup:
    """Everything a worker needs to play any game of the match (picklable)."""

    rules: dict  # Config.key()
    openings: tuple[str, ...]
    a: PlayerSpec
    b: PlayerSpec
    movetime_ms: int = 100
    max_plies: int = 400
    seed: int | None = None
    margin_ms: int = MARGIN_MS
    ready_timeout_s: float = READY_TIMEOUT_S

    def game_plan(self, game: int) -> tuple[int, bool]:
        """``(opening index, whether A has light)`` of game ``game`` (from 0)."""
        return (game // 2) % len(self.openings), game % 2 == 0


class Table:
    """A process's players: programs started once and kept, built-in players made per game."""

    def __init__(self, setup: MatchSetup):
        from solver.play.players import make_player

        self.setup = setup
        self.cfg = config_from_key(setup.rules)
        self.openings = [Position(t) for t in setup.openings]
        self._make = make_player
        self.programs: dict[int, ProtocolPlayer] = {}
        try:
            for which, spec in enumerate((setup.a, setup.b)):
                if spec.command is not None:
                    prog = ProtocolPlayer(spec.command, setup.movetime_ms, margin_ms=setup.margin_ms,
                                          ready_timeout_s=setup.ready_timeout_s, name=spec.name,
                                          rules=rule_flags(self.cfg))
                    self.programs[which] = prog
                    prog.open()
                else:
                    self._player(which, 0)  # an unknown kind fails now, not in the first game
        except BaseException:
            self.close()
            raise

    def _player(self, which: int, game: int):
        if which in self.programs:
            return self.programs[which]
        spec = (self.setup.a, self.setup.b)[which]
        return self._make(spec.kind, seed_for(self.setup.seed, game, which), None,
                          movetime_ms=spec.movetime_ms or self.setup.movetime_ms)

    def play(self, game: int, stop=None) -> dict | None:
        """Game ``game`` (from 0) as its record (:func:`game_report`); None if stopped."""
        opening, a_light = self.setup.game_plan(game)
        start = self.openings[opening]
        a, b = self._player(0, game), self._player(1, game)
        light, dark = (a, b) if a_light else (b, a)
        out = play_game(self.cfg, start, light, dark, self.setup.max_plies, stop)
        if out is None:
            return None
        return game_report(self.cfg, start, out, game, opening, a_light, self.setup)

    def close(self) -> None:
        for prog in self.programs.values():
            prog.close()


def game_report(cfg: Config, start: Position, out: GameOutcome, game: int, opening: int, a_light: bool,
                setup: MatchSetup) -> dict:
    """A game's record (:func:`solver.play.record.record_dict`: ``rotary play --load`` reads
    it) with the match's fields: the game and opening numbers (from 1), the players,
    ``outcome`` (``1-0``, ``0-1``, ``1/2-1/2``) and ``reason``."""
    names = (setup.a.name, setup.b.name) if a_light else (setup.b.name, setup.a.name)
    rec = record_dict(cfg, start, out.moves, out.sentence)
    rec.update(game=game + 1, opening=opening + 1, light=names[0], dark=names[1], a_is_light=a_light,
               outcome=out.outcome, reason=out.reason, plies=len(out.moves))
    return rec


def a_score(report: dict) -> float:
    """Player A's points in a game: 1, 1/2 or 0."""
    light = {LIGHT_WINS: 1.0, DRAWN: 0.5, DARK_WINS: 0.0}[report["outcome"]]
    return light if report["a_is_light"] else 1.0 - light


# ---------------------------------------------------------------------------- the match


@dataclass
class Tally:
    """A's wins, draws and losses, and the pentanomial of the completed pairs."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    pairs: list[int] = field(default_factory=lambda: [0] * 5)  # LL, LD, DD+WL, WD, WW
    _open: dict[int, float] = field(default_factory=dict)  # pair -> A's score of its first game

    def add(self, report: dict) -> bool:
        """Count a game; True when it completes its pair."""
        s = a_score(report)
        self.wins += s == 1.0
        self.draws += s == 0.5
        self.losses += s == 0.0
        pair = (report["game"] - 1) // 2
        if pair not in self._open:
            self._open[pair] = s
            return False
        self.pairs[int(2 * (self._open.pop(pair) + s))] += 1
        return True

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    def estimate(self) -> elo.EloEstimate | None:
        return elo.pentanomial(self.pairs) if sum(self.pairs) else None


@dataclass
class MatchResult:
    tally: Tally
    reports: list[dict]
    sprt: elo.Sprt | None = None


def run_match(setup: MatchSetup, games: int, jobs: int = 1, sprt: tuple[float, float] | None = None,
              on_game: Callable[[dict], None] | None = None,
              on_pair: Callable[[Tally, elo.Sprt | None], None] | None = None,
              on_ready: Callable[[], None] | None = None) -> MatchResult:
    """Play ``games`` games (a multiple of 2) in order; stop early when the SPRT decides.

    ``on_ready`` is called once the players are ready, ``on_game`` with each game's report,
    ``on_pair`` with the tally (and the SPRT's state) after each pair."""
    tally, reports, state = Tally(), [], None
    stream = reports_in_order(Table, setup, games, jobs, on_ready)
    try:
        for report in stream:
            reports.append(report)
            if on_game:
                on_game(report)
            if tally.add(report):
                if sprt is not None:
                    state = elo.sprt(tally.pairs, *sprt)
                if on_pair:
                    on_pair(tally, state)
                if state is not None and state.decision:
                    break
    finally:
        stream.close()
    return MatchResult(tally, reports, state)


def write_report(folder: str | os.PathLike, report: dict) -> Path:
    """``FOLDER/game-NNNN.json``, written atomically (a temporary file renamed)."""
    path = Path(folder) / f"game-{report['game']:04d}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


# ---------------------------------------------------------------------------- text


def game_line(report: dict) -> str:
    """``game 12: engine (x) vs greedy (o) from opening 6: 1-0, centre complete in 43 plies``."""
    return (f"game {report['game']}: {report['light']} (x) vs {report['dark']} (o) from opening {report['opening']}: "
            f"{report['outcome']}, {report['reason']} in {report['plies']} plies")


def _elo_text(value: float) -> str:
    if value in (float("inf"), float("-inf")):
        return "+inf" if value > 0 else "-inf"
    return f"{round(value) + 0:+d}"  # + 0: never "-0"


def score_line(name: str, tally: Tally) -> str:
    """``score: A 171.5 / 200 (85.8 %), W-D-L 165-13-22, Elo +310 ± 62 (95 %), pairs ..., LOS 100.0 %``."""
    n = tally.games
    text = (f"score: {name} {tally.points:g} / {n} ({100 * tally.points / n:.1f} %), "
            f"W-D-L {tally.wins}-{tally.draws}-{tally.losses}")
    est = tally.estimate()
    if est is None:
        return text
    if est.lower > float("-inf") and est.upper < float("inf"):
        text += f", Elo {_elo_text(est.elo)} ± {est.margin:.0f} (95 %)"
    else:
        text += f", Elo {_elo_text(est.elo)} (95 %: {_elo_text(est.lower)} .. {_elo_text(est.upper)})"
    pairs = "/".join(str(c) for c in tally.pairs)
    return text + f", pairs LL/LD/DD-WL/WD/WW {pairs}, LOS {100 * est.los:.1f} %"


def sprt_line(state: elo.Sprt) -> str:
    verdict = {"H1": "H1 accepted", "H0": "H0 accepted", None: "continue"}[state.decision]
    return (f"SPRT elo0 {state.elo0:g} elo1 {state.elo1:g} (logistic Elo, alpha {state.alpha:g}, beta {state.beta:g}): "
            f"LLR {state.llr:.2f} ({state.lower:.2f}, {state.upper:.2f}): {verdict}")
