"""A game in the terminal between people and built-in players (``rotary play``)."""

from __future__ import annotations

import sys
from typing import Callable, Optional, Sequence

from solver.game.config import Config
from solver.game.position import COLOUR_CHARS, OFFER, OFFER_MOVE, PLACE, ROTATE, Move, Position
from solver.game.render import draw, use_colour
from solver.game.rules import LOSS, ONGOING, IllegalMoveError, centre_owner, legal_points, moves, parse_move, play, status

SIDE_NAMES = ("light (x)", "dark (o)")
HELP = "type a move (e4+2, e4-1, c2, 'offer d3 f3', 'pick f3'), 'moves' or '?' to list them, 'quit' to stop"
QUIT, EOF = "quit", "eof"


def why_over(cfg: Config, pos: Position) -> str:
    """One sentence saying who won and why."""
    st = status(cfg, pos)
    mover, other = SIDE_NAMES[pos.turn], SIDE_NAMES[1 - pos.turn]
    owner = centre_owner(cfg, pos.x, pos.o) if pos.phase == "play" else None
    if owner is not None:
        return f"{SIDE_NAMES[owner]} wins: all three centre points are {COLOUR_CHARS[owner]}"
    assert st == LOSS
    return f"{other} wins: {mover} has no legal rotation point"


def describe_moves(cfg: Config, pos: Position, brief: bool = False) -> str:
    """The mover's legal moves in one line, the way a person types them.

    ``brief`` says where placements may go instead of listing every empty point.
    """
    board = cfg.board
    ms = moves(cfg, pos)
    if not ms:
        return "no moves: the game is over"
    if pos.phase == OFFER and ms[0].kind == OFFER_MOVE:
        points = [board.names[p] for p in legal_points(cfg, pos.x, pos.o)]
        return f"offer two of {' '.join(points)} (e.g. 'offer {points[0]} {points[1]}')"
    if ms[0].kind == ROTATE:
        points = list(dict.fromkeys(board.names[m.point] for m in ms))
        only = "only legal point, " if pos.phase == OFFER else ""
        return f"rotate at {' '.join(points)} ({only}by +0 .. +5, e.g. {points[0]}+1)"
    if pos.phase == PLACE and brief:
        traps = cfg.traps_of(1 - pos.turn)
        where = f", nor on {COLOUR_CHARS[1 - pos.turn]}'s trap fields {' '.join(cfg.names(traps))}" if traps else ""
        return f"place a ball on any empty point but the centre{where} (e.g. {ms[0].text(board)}; '?' lists them)"
    if pos.phase == PLACE:
        return "place a ball on " + " ".join(m.text(board) for m in ms)
    return " or ".join(repr(m.text(board)) for m in ms)


def _ask(cfg: Config, pos: Position, out, err) -> Move | str:
    """The human's move; ``QUIT`` when he stops, ``EOF`` when the input ends."""
    out.write(describe_moves(cfg, pos, brief=True) + "\n")
    while True:
        out.write(f"{SIDE_NAMES[pos.turn]}> ")
        out.flush()
        line = sys.stdin.readline()
        if not line:
            out.write("\n")
            return EOF
        text = line.strip()
        if text in ("quit", "q", "exit"):
            return QUIT
        if text in ("moves", "?"):
            out.write(describe_moves(cfg, pos) + "\n")
            continue
        if text in ("help", ""):
            out.write(HELP + "\n")
            continue
        try:
            return parse_move(cfg, pos, text)
        except IllegalMoveError as e:
            err.write(f"{e}\n")
            err.flush()


Player = Optional[Callable[[Config, Position], Move]]  # None: a human at the terminal


def run_game(cfg: Config, pos: Position, players: Sequence[Player], max_plies: int = 400) -> int:
    """Play ``pos`` out between ``players`` (light, dark); 0 when it ends, stops or a human quits.

    A human's illegal move is refused with one line on stderr and asked again; if the
    input ends before the game does, the game is abandoned with exit status 1.
    """
    out, err = sys.stdout, sys.stderr
    colour = use_colour(out)
    traps = (cfg.traps_x, cfg.traps_o)
    out.write(f"rules: {cfg.describe()}\n")
    ply = 0
    while status(cfg, pos) == ONGOING:
        if ply >= max_plies:
            out.write(f"stopped after {ply} plies without a result\n")
            return 0
        out.write("\n" + draw(pos, colour=colour, traps=traps) + "\n")
        player = players[pos.turn]
        if player is None:
            move = _ask(cfg, pos, out, err)
            if move == QUIT:
                out.write(f"game abandoned after {ply} plies\n")
                return 0
            if move == EOF:
                out.write(f"game abandoned: the input ended after {ply} plies\n")
                return 1
        else:
            move = player(cfg, pos)
            out.write(f"{SIDE_NAMES[pos.turn]} plays {move.text(cfg.board)}\n")
        pos = play(cfg, pos, move)
        ply += 1
    out.write("\n" + draw(pos, colour=colour, traps=traps) + "\n")
    out.write(f"{why_over(cfg, pos)} after {ply} plies\n")
    out.write(f"final: {pos.text()}\n")
    return 0
