"""The value database and the proof store a command reads, found one way everywhere.

``--db PATH`` names the database; without it the catalog picks the smallest one of the
asked rules under ``$ROTARY_DB`` (default ``./rotary-db``) that answers for the position.
Either way, rule flags given on the command line must be the database's own rules:
a contradiction is refused in one line here, for every command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from solver.db import catalog
from solver.db.database import Database
from solver.errors import MissingValueError, UsageError
from solver.game.position import Position
from solver.cli.options import parse_material


def database_path(args: argparse.Namespace, pos: Position | None = None) -> Path:
    """The path of the database the command reads (checked against the rule flags)."""
    if getattr(args, "db", None):
        with Database(args.db) as db:
            check_flags(args, db)
        return Path(args.db)
    material = parse_material(getattr(args, "balls", None))
    board = getattr(args, "board", None)
    path = catalog.find_db(
        edge=args.edge,
        capture=args.capture,
        setup=getattr(args, "setup", None),
        board=board.lower() if board and pos is None else None,
        material=material,
        pos=pos,
    )
    if getattr(args, "traps_x", None) or getattr(args, "traps_o", None):
        with Database(path) as db:
            check_flags(args, db)
    return path


def leaf_database_path(args: argparse.Namespace, pos: Position) -> Path | None:
    """The database ``prove`` and ``book`` take leaves from, found as ``query`` finds it:
    ``--db`` (checked against the rule flags), else the one of these rules that answers
    for ``pos``; None when there is none (they then work without leaves)."""
    try:
        return database_path(args, pos)
    except MissingValueError:
        if getattr(args, "db", None):
            raise
        return None


def open_database(args: argparse.Namespace, pos: Position | None = None) -> Database:
    return Database(database_path(args, pos))


def check_flags(args: argparse.Namespace, db: Database) -> None:
    """Every rule flag given must be the database's own: board, balls, variants, setup."""
    rules = db.cfg
    where = getattr(args, "db", None) or db.path
    board = getattr(args, "board", None)
    if board and board.lower() != rules.board.label:
        raise UsageError(f"--board {board} asked, but {where} holds {db.description}")
    material = parse_material(getattr(args, "balls", None))
    if material is not None and material != tuple(db.material):
        raise UsageError(f"--balls {args.balls} asked, but {where} holds {db.description}")
    asked = [("--edge", args.edge, rules.edge), ("--capture", args.capture, rules.capture)]
    setup = getattr(args, "setup", None)
    if setup is not None:
        asked.append((f"--setup {setup}", setup, rules.setup))
    for flag, want, have in asked:
        if want and want != have:
            raise UsageError(f"{flag} asked, but {where} holds {db.description}")
    for side, flag in ((0, "--traps-x"), (1, "--traps-o")):
        text = getattr(args, flag[2:].replace("-", "_"), None)
        if text:
            board = rules.board
            asked_bits = sum(1 << board.point(name.strip()) for name in text.split(",") if name.strip())
            if asked_bits != rules.traps_of(side):
                raise UsageError(f"{flag} {text} asked, but {where} holds {db.description}")


def store_path(args: argparse.Namespace, cfg) -> Path:
    """The proof store: ``--store``, else the one of these rules under ``$ROTARY_PROOFS``."""
    store = getattr(args, "store", None)
    return Path(store) if store else catalog.store_path(cfg)
