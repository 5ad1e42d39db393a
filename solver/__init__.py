"""rotary: rules, solver and position databases for the board game ROTARY (1982)."""

from solver.game.board import Board, hex_board
from solver.game.config import Config, make_config, standard_config
from solver.game.position import Move, Position
from solver.game.start import standard_start

__all__ = ["Board", "Config", "Move", "Position", "hex_board", "make_config", "standard_config", "standard_start"]
