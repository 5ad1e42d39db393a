"""Where databases live and which one answers: naming and discovery, plain arguments.

A value database is a folder ``<root>/<name>``: the root is ``$ROTARY_DB`` if set, else
``rotary-db`` under the current directory; the name spells the rules and material, e.g.
``hex3-4v4``, ``hex3-3v3-edge``, ``hex4-3v3-capture``, ``hex3-4v4-setup-offer``. Proof
stores (df-pn results and opening books) live the same way under ``$ROTARY_PROOFS`` or
``rotary-proofs``, named by the rules without the material.
"""

from __future__ import annotations

import os
from pathlib import Path

from solver.errors import MissingValueError, StoreError
from solver.game.config import Config, make_config
from solver.game.position import Position

DB_ENV, PROOFS_ENV = "ROTARY_DB", "ROTARY_PROOFS"


def db_root() -> Path:
    """The folder that holds the value databases by name."""
    return Path(os.environ.get(DB_ENV, "rotary-db"))


def proofs_root() -> Path:
    """The folder that holds the proof stores by name."""
    return Path(os.environ.get(PROOFS_ENV, "rotary-proofs"))


def rules_name(cfg: Config) -> str:
    """The rules without material, e.g. ``hex4-capture`` or ``hex3-edge-setup-offer``."""
    parts = [cfg.board.label]
    if cfg.edge:
        parts.append("edge")
    if cfg.capture:
        std = make_config(cfg.board, capture=True) if cfg.board.n == 4 else None
        if std is not None and (cfg.traps_x, cfg.traps_o) == (std.traps_x, std.traps_o):
            parts.append("capture")
        else:
            parts.append("capture-" + "".join(cfg.names(cfg.traps_x)) + "-" + "".join(cfg.names(cfg.traps_o)))
    if cfg.setup:
        parts.append(f"setup-{cfg.setup}")
    return "-".join(parts)


def db_name(cfg: Config, material: tuple[int, int]) -> str:
    """Folder name of a configuration's database, e.g. ``hex3-4v4-edge``."""
    label, *rest = rules_name(cfg).split("-")
    return "-".join([label, f"{material[0]}v{material[1]}", *rest])


def db_path(cfg: Config, material: tuple[int, int]) -> Path:
    """Where ``rotary solve`` puts the database of these rules and material by default."""
    return db_root() / db_name(cfg, material)


def store_path(cfg: Config) -> Path:
    """Where the proof store of these rules lives by default."""
    return proofs_root() / rules_name(cfg)


def databases(root: Path | None = None) -> list[Path]:
    """Every database folder under ``root`` (default :func:`db_root`), sorted by name."""
    root = db_root() if root is None else root
    if not root.is_dir():
        return []
    from solver.db.compact_format import MANIFEST

    return sorted(p for p in root.iterdir() if (p / "data.mdb").exists() or (p / MANIFEST).is_file())


def find_db(
    *,
    edge: bool = False,
    capture: bool = False,
    setup: str | None = None,
    board: str | None = None,
    material: tuple[int, int] | None = None,
    pos: Position | None = None,
    root: Path | None = None,
) -> Path:
    """The smallest database under ``root`` with these rules that answers for ``pos``.

    Without ``pos`` the board (if given) and material (if given) must match. Raises
    :class:`MissingValueError` naming what was looked for when none fits.
    """
    from solver.db.database import Database

    root = db_root() if root is None else root
    fitting = []
    for path in databases(root):
        try:
            db = Database(path)
        except StoreError:
            continue  # a folder of other data, or of another format: not ours to answer from
        with db:
            rules = db.cfg
            if (rules.edge, rules.capture, rules.setup) != (edge, capture, setup):
                continue
            if material is not None and db.material != material:
                continue
            if board is not None and rules.board.label != board:
                continue
            if pos is not None and db.get_reason(pos) is not None:
                continue
            fitting.append((sum(db.material), path))
    if not fitting:
        what = pos.text() if pos is not None else "these rules"
        raise MissingValueError(
            f"no database under {root}/ answers for {what} (solve one with 'rotary solve' or name it with --db)"
        )
    return min(fitting)[1]
