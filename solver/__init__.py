"""rotary: rules, solver and position databases for the board game ROTARY (1982).

The public API, importable from here:

* :class:`Position`, :class:`Move` — positions (docs/rules.md §9 text) and moves;
* :class:`Config`, :func:`make_config`, :func:`standard_config` — the rules in force;
  :class:`Board`, :func:`hex_board`, :func:`standard_start`;
* :func:`open_db` — a solved database, probed position by position (:class:`Value`);
* :func:`known` — what the shipped store of proofs and books knows of a position (a
  :class:`~solver.known.store.Known`: its value, ``source`` and file), or None;
* :class:`RotaryError` — the base of every error rotary raises on purpose;
* ``__version__`` — the installed version.

>>> from solver import Position, open_db
>>> with open_db("rotary-db/hex3-2v2") as db:
...     print(db.probe(Position("..o/..../...../....../.x.../.ox. x")))
win in 7

``import solver`` stays light: :func:`open_db` and :class:`Value` bring numpy, numba and
LMDB with them, so they (and ``__version__``) are imported when first asked for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from solver.errors import RotaryError
from solver.game.board import Board, hex_board
from solver.game.config import Config, make_config, standard_config
from solver.game.position import Move, Position
from solver.game.start import standard_start

if TYPE_CHECKING:
    from solver.db.database import open_db
    from solver.known.store import known
    from solver.game.values import Value

__all__ = [
    "Board", "Config", "Move", "Position", "RotaryError", "Value", "__version__", "hex_board", "make_config",
    "known", "open_db", "standard_config", "standard_start",
]

# names whose modules import numpy, numba or LMDB: imported on first use (PEP 562)
_LAZY = {"open_db": "solver.db.database", "Value": "solver.game.values", "known": "solver.known.store"}


def __getattr__(name: str):
    if name == "__version__":
        value = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'solver' has no attribute {name!r}")
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, "__version__"})


def _version() -> str:
    """The installed distribution's version; from a source tree that is not installed, the
    version its pyproject.toml names; ``'unknown'`` where neither can be read."""
    from importlib.metadata import PackageNotFoundError, version  # here: tens of ms, only when asked

    try:
        return version("rotary")
    except PackageNotFoundError:
        return _pyproject_version()


def _pyproject_version() -> str:
    import tomllib  # here, like importlib.metadata: only when the version is asked for
    from pathlib import Path

    try:
        with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
            project = tomllib.load(f).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return "unknown"
    if not isinstance(project, dict) or project.get("name") != "rotary":
        return "unknown"  # a pyproject.toml above an unpacked copy belongs to something else
    return str(project.get("version") or "unknown")
