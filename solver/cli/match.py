"""``rotary match``: two players over paired openings, with Elo and an optional SPRT."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import signal
import sys
from pathlib import Path

from solver.cli.options import add_json_option, add_rule_options, check_jobs, config_from_args, start_position
from solver.errors import UsageError
from solver.game.config import STANDARD_BALLS, Config
from solver.game.position import Position
from solver.game.start import has_preset_start
from solver.play.elo import Sprt
from solver.play.match import (
    BUILTIN_KINDS, MatchSetup, Tally, game_line, parse_player, run_match, score_line, sprt_line, write_report,
)
from solver.play.openings import check_openings, read_openings
from solver.play.protocol import MARGIN_MS, READY_TIMEOUT_S


def _rules_and_openings(args: argparse.Namespace) -> tuple[Config, list[Position]]:
    """The rules asked for and the openings: the file's, each line checked, or the start."""
    if not args.openings:
        cfg, start = start_position(args)
        return cfg, [start]
    found = read_openings(args.openings)
    first = found[0][1]
    cfg, _ = config_from_args(args, first)
    if cfg.balls is None and not cfg.setup:  # the material the openings show, as start_position fills it
        if not cfg.variable_material:
            balls = max(first.count(0), first.count(1))
        else:
            balls = STANDARD_BALLS if has_preset_start(cfg.board) else None
        if balls is not None:
            cfg = dataclasses.replace(cfg, balls=balls)
    check_openings(cfg, found, args.openings)
    return cfg, [pos for _, pos in found]


def _check(args: argparse.Namespace) -> None:
    for name, least in (("games", 1), ("movetime", 1), ("margin", 0), ("max_plies", 1), ("every", 1),
                        ("ready_timeout", 0.001)):
        value = getattr(args, name)
        if value is not None and value < least:
            raise UsageError(f"--{name.replace('_', '-')} must be at least {least}, got {value}")
    check_jobs(args.jobs)
    if args.sprt is not None:
        elo0, elo1 = args.sprt
        if not (math.isfinite(elo0) and math.isfinite(elo1)) or not elo0 < elo1:
            raise UsageError(f"bad --sprt {elo0:g} {elo1:g}: expected two Elo differences ELO0 < ELO1, "
                             "e.g. --sprt 0 10")


def cmd_match(args: argparse.Namespace) -> int:
    _check(args)
    a, b = parse_player(args.a, "--a"), parse_player(args.b, "--b")
    if a.name == b.name:
        a, b = dataclasses.replace(a, name=f"{a.name}-A"), dataclasses.replace(b, name=f"{b.name}-B")
    cfg, openings = _rules_and_openings(args)
    games = args.games if args.games is not None else 2 * len(openings)
    games += games % 2  # whole pairs
    if args.records:
        Path(args.records).mkdir(parents=True, exist_ok=True)
    setup = MatchSetup(cfg.key(), tuple(p.text() for p in openings), a, b, args.movetime, args.max_plies, args.seed,
                       args.margin, args.ready_timeout)
    out = sys.stdout

    def on_ready() -> None:  # the programs have started and answered: the match begins
        if not args.json:
            print(f"match: A = {a.name}, B = {b.name}; {games} games ({games // 2} pair{'s' * (games != 2)}) from "
                  f"{len(openings)} opening{'s' * (len(openings) != 1)}; rules {cfg.describe()}; "
                  f"movetime {args.movetime} ms; ply limit {args.max_plies}", file=out, flush=True)

    def on_game(report: dict) -> None:
        if args.records:
            write_report(args.records, report)
        if not args.json:
            print(game_line(report), file=out, flush=True)

    def on_pair(tally: Tally, state: Sprt | None) -> None:
        if args.json or (tally.games // 2) % args.every:
            return
        print(score_line(a.name, tally), file=out, flush=True)
        if state is not None:
            print(sprt_line(state), file=out, flush=True)

    previous = _exit_on_sigterm()
    try:
        result = run_match(setup, games, args.jobs, tuple(args.sprt) if args.sprt else None, on_game, on_pair,
                           on_ready)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if args.json:
        print(json.dumps(_summary(a.name, b.name, cfg, len(openings), games, result)), file=out)
        return 0
    tally, state = result.tally, result.sprt
    stopped = ", stopped by the SPRT" if state is not None and state.decision else ""
    print(f"\nresult: {a.name} vs {b.name}, {tally.games} of {games} games{stopped}", file=out)
    print(score_line(a.name, tally), file=out)
    if state is not None:
        print(sprt_line(state), file=out)
    return 0


def _exit_on_sigterm():
    """SIGTERM ends the match like ^C does — workers stopped, programs quit — with exit
    status 143; the handler it replaces is returned (None where it cannot be set)."""

    def leave(signum, frame):
        raise SystemExit(128 + signum)

    try:
        return signal.signal(signal.SIGTERM, leave)
    except ValueError:  # not the main thread
        return None


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _summary(a: str, b: str, cfg: Config, n_openings: int, games: int, result) -> dict:
    tally, state = result.tally, result.sprt
    est = tally.estimate()
    keys = ("game", "opening", "light", "dark", "outcome", "reason", "plies")
    return {
        "a": a, "b": b, "rules": cfg.key(), "openings": n_openings, "games_planned": games,
        "games": tally.games, "wins": tally.wins, "draws": tally.draws, "losses": tally.losses,
        "points": tally.points, "pairs": tally.pairs,
        "elo": None if est is None else _finite(est.elo),
        "elo_lower": None if est is None else _finite(est.lower),
        "elo_upper": None if est is None else _finite(est.upper),
        "los": None if est is None else est.los,
        "sprt": None if state is None else {
            "elo0": state.elo0, "elo1": state.elo1, "alpha": state.alpha, "beta": state.beta, "llr": state.llr,
            "lower": state.lower, "upper": state.upper, "decision": state.decision,
        },
        "results": [{k: r[k] for k in keys} for r in result.reports],
    }


def register(sub, commands: dict) -> None:
    p = sub.add_parser("match", help="play two players against each other over paired openings: score, Elo, SPRT")
    kinds = ", ".join(BUILTIN_KINDS)
    p.add_argument("--a", required=True, metavar="PLAYER",
                   help=f"player A, whose score is reported: {kinds}, or a command line speaking the engine protocol "
                        "(with a space or a path, e.g. \"rotary engine\")")
    p.add_argument("--b", required=True, metavar="PLAYER", help="player B, as --a")
    p.add_argument("--openings", metavar="FILE",
                   help="start positions, one a line (# comments); default: the standard start of the rules")
    p.add_argument("--games", type=int, metavar="N",
                   help="games in all, rounded up to pairs; the openings are cycled "
                        "(default: each opening once, as a pair)")
    p.add_argument("--movetime", type=int, default=100, metavar="MS", help="thinking time per move (default %(default)s)")
    p.add_argument("--margin", type=int, default=MARGIN_MS, metavar="MS",
                   help="a program loses the game if its move takes longer than movetime plus this (default %(default)s)")
    p.add_argument("--ready-timeout", type=float, default=READY_TIMEOUT_S, metavar="S",
                   help="a program must answer isready within S seconds (default %(default)g)")
    p.add_argument("--max-plies", type=int, default=400, metavar="N",
                   help="a game still going after N plies is a draw (default %(default)s)")
    p.add_argument("--sprt", nargs=2, type=float, metavar=("ELO0", "ELO1"),
                   help="stop when the SPRT of H0: Elo = ELO0 against H1: Elo = ELO1 decides (alpha = beta = 0.05)")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N", help="games played at once (default 1)")
    p.add_argument("--seed", type=int, help="seed for the random and greedy players (each game's seed derives from it)")
    p.add_argument("--records", metavar="DIR", help="write every game's record to DIR/game-NNNN.json")
    p.add_argument("--every", type=int, default=1, metavar="N", help="print the score after every N pairs (default 1)")
    add_json_option(p, "one JSON object at the end instead of the game lines")
    add_rule_options(p)
    commands["match"] = cmd_match
