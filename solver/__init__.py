"""rotary: rules, solver and position databases for the board game ROTARY (1982)."""

from .board import Board, hex_board
from .config import Config, make_config, standard_config
from .position import Move, Position
from .start import standard_start

__all__ = ["Board", "Config", "Move", "Position", "hex_board", "make_config", "standard_config", "standard_start"]
