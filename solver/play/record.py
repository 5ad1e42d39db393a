"""Game records: the rules, the start position and the moves of a game, as one JSON file.

    {"format": "rotary-game", "version": 1,
     "rules": {...Config.key()...},
     "start": ".../..o./.o.../x.x.../.o.xx/..o. x",
     "moves": ["e3+4", "b5+3", ...],
     "result": "light (x) wins: all three centre points are x"}      # or null

``rotary play --record FILE`` writes one after every move, ``save FILE`` in a game writes
one, and ``rotary play --load FILE`` replays it (every move checked) and plays on.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from solver.errors import IllegalMoveError, NotationError, RotaryError, UsageError
from solver.game.config import Config, config_from_key
from solver.game.move import Move
from solver.game.position import Position
from solver.game.rules import check_position, parse_move, play

FORMAT, VERSION = "rotary-game", 1


def record_dict(cfg: Config, start: Position, moves: list[Move], result: str | None = None) -> dict:
    return {
        "format": FORMAT,
        "version": VERSION,
        "rules": cfg.key(),
        "start": start.text(),
        "moves": [m.text(cfg.board) for m in moves],
        "result": result,
    }


def write_record(path: str | os.PathLike, cfg: Config, start: Position, moves: list[Move], result: str | None = None) -> None:
    """Write the record atomically (a temporary file renamed over ``path``)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record_dict(cfg, start, moves, result), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_record(path: str | os.PathLike) -> tuple[Config, Position, list[Move], list[Position]]:
    """``(rules, start, moves, positions)`` of a record, every move replayed and checked;
    ``positions[i]`` is the position after ``i`` moves. One-line errors name the file."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise UsageError(f"{where} is not a rotary game record: {e.msg} at line {e.lineno}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UsageError(f"{where} is not a rotary game record (no \"format\": \"{FORMAT}\")")
    if data.get("version") != VERSION:
        raise UsageError(f"{where} is a game record of version {data.get('version')}; this rotary reads {VERSION}")
    try:
        cfg = config_from_key(data["rules"])
        start = Position(data["start"])
        check_position(cfg, start)
        texts = data["moves"]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise UsageError("\"moves\" must be a list of move texts")
    except (KeyError, TypeError) as e:
        raise UsageError(f"{where}: the record lacks {e}") from None
    except RotaryError as e:
        raise UsageError(f"{where}: {e}") from None
    positions, moves = [start], []
    for i, text in enumerate(texts, 1):
        try:
            move = parse_move(cfg, positions[-1], text)
        except (IllegalMoveError, NotationError) as e:
            raise UsageError(f"{where}: move {i}: {e}") from None
        moves.append(move)
        positions.append(play(cfg, positions[-1], move))
    return cfg, start, moves, positions
