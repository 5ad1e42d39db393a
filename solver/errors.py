"""Every error rotary raises on purpose: one hierarchy under :class:`RotaryError`.

A ``RotaryError`` is a fault in what was asked — malformed text, an illegal move, rules
that do not fit, a damaged or missing database — and its message is one line that names
the fault. The command line prints exactly that line; any other exception is a bug in
rotary and is left to show its traceback.

The subclasses also derive from the builtin that fits (``ValueError``, ``KeyError``) so
that callers who catch those keep working, as python-chess does with its errors. Each
carries its message as its only argument: errors pickle, so one raised in a worker
process reaches the parent whole.

>>> from solver import Position, RotaryError
>>> try:
...     Position("..o/..../...../....../.x.../.ox. z")
... except RotaryError as e:
...     print(type(e).__name__, "-", e)
NotationError - bad side to move 'z' in '..o/..../...../....../.x.../.ox. z': expected 'x' or 'o'
"""

from __future__ import annotations


class RotaryError(Exception):
    """Base of every deliberate rotary error; ``str(e)`` is a one-line message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class NotationError(RotaryError, ValueError):
    """Malformed position or move text (docs/rules.md §3, §9): ``Position(text)``, a point
    name no board has."""


class IllegalMoveError(RotaryError, ValueError):
    """Move text that is malformed or that the rules do not allow in this position
    (:func:`solver.game.rules.parse_move`); the message says why."""


class PositionError(RotaryError, ValueError):
    """A position that cannot arise under the given rules (material, phase, board):
    :func:`solver.game.rules.check_position`."""


class ConfigError(RotaryError, ValueError):
    """Rules that do not exist or contradict each other (board, balls, variants, traps):
    :class:`~solver.game.config.Config`, :func:`~solver.game.config.make_config`."""


class StoreError(RotaryError, ValueError):
    """A database or proof store that is missing, damaged, locked or built for other rules,
    or a disk that is full: :func:`~solver.db.database.open_db` and every read or write of
    a store. The message names the folder (and the tier or block)."""


class MissingValueError(RotaryError, KeyError):
    """The database holds no value for this position (other rules, material or phase, a
    tier not solved yet): :meth:`~solver.db.database.Database.probe`; ``get`` returns its
    default instead."""


class UsageError(RotaryError, ValueError):
    """A command-line option or argument out of range."""


class ChecksumsError(RotaryError, ValueError):
    """A checksums file (``data/checksums/``) that does not read, or none published for a
    database's configuration: :mod:`solver.db.checksums`, ``rotary checksums``."""


class ClusterError(RotaryError):
    """A worker of a distributed solve failed or the cluster cannot be reached."""


class ResourceError(RotaryError):
    """The machine lacks the memory or disk space a task needs (said before it starts)."""
