"""A game in the terminal between people and built-in players (``rotary play``)."""

from __future__ import annotations

import argparse
import sys

from .config import Config
from .position import COLOUR_CHARS, Position
from .render import draw
from .rules import LOSS, ONGOING, WIN, IllegalMoveError, centre_owner, moves, parse_move, play, status

SIDE_NAMES = ("light (x)", "dark (o)")
HELP = "type a move (e4+2, e4-1, c2, 'offer d3 f3', 'pick f3'), 'moves' to list them, 'quit' to stop"


def make_player(kind: str, seed: int | None, args: argparse.Namespace):
    from .players import greedy_player, random_player

    if kind == "human":
        return None
    if kind == "random":
        return random_player(seed)
    if kind == "greedy":
        return greedy_player(seed)
    if kind == "perfect":
        from .perfect import perfect_player

        return perfect_player(args)
    raise ValueError(f"unknown player {kind!r}: expected human, random, greedy or perfect")


def why_over(cfg: Config, pos: Position) -> str:
    """One sentence saying who won and why."""
    st = status(cfg, pos)
    mover, other = SIDE_NAMES[pos.turn], SIDE_NAMES[1 - pos.turn]
    owner = centre_owner(cfg, pos.x, pos.o) if pos.phase == "play" else None
    if owner is not None:
        return f"{SIDE_NAMES[owner]} wins: all three centre points are {COLOUR_CHARS[owner]}"
    assert st == LOSS
    return f"{other} wins: {mover} has no legal rotation point"


def _ask(cfg: Config, pos: Position, out) -> object:
    while True:
        out.write(f"{SIDE_NAMES[pos.turn]}> ")
        out.flush()
        line = sys.stdin.readline()
        if not line:
            return None
        text = line.strip()
        if text in ("quit", "q", "exit"):
            return None
        if text in ("moves", "?"):
            out.write(" ".join(sorted({m.text(cfg.board) for m in moves(cfg, pos)})) + "\n")
            continue
        if text in ("help", ""):
            out.write(HELP + "\n")
            continue
        try:
            return parse_move(cfg, pos, text)
        except IllegalMoveError as e:
            out.write(f"{e}\n")


def run_game(cfg: Config, pos: Position, args: argparse.Namespace) -> int:
    out = sys.stdout
    players = [make_player(args.x, args.seed, args), make_player(args.o, None if args.seed is None else args.seed + 1, args)]
    colour = out.isatty()
    out.write(f"rules: {cfg.describe()}\n")
    ply = 0
    while status(cfg, pos) == ONGOING:
        if ply >= args.max_plies:
            out.write(f"stopped after {ply} plies without a result\n")
            return 0
        out.write("\n" + draw(pos, colour=colour) + "\n")
        player = players[pos.turn]
        if player is None:
            move = _ask(cfg, pos, out)
            if move is None:
                out.write("game abandoned\n")
                return 0
        else:
            move = player(cfg, pos)
            out.write(f"{SIDE_NAMES[pos.turn]} plays {move.text(cfg.board)}\n")
        pos = play(cfg, pos, move)
        ply += 1
    out.write("\n" + draw(pos, colour=colour) + "\n")
    out.write(f"{why_over(cfg, pos)} after {ply} plies\n")
    out.write(f"final: {pos.text()}\n")
    return 0
