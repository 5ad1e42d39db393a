"""Every error rotary raises on purpose: one hierarchy under :class:`RotaryError`.

A ``RotaryError`` is a fault in what was asked — malformed text, an illegal move, rules
that do not fit, a damaged or missing database — and its message is one line that names
the fault. The command line prints exactly that line; any other exception is a bug in
rotary and is left to show its traceback.

The subclasses also derive from the builtin that fits (``ValueError``, ``KeyError``) so
that callers who catch those keep working, as python-chess does with its errors.
"""

from __future__ import annotations


class RotaryError(Exception):
    """Base of every deliberate rotary error; ``str(e)`` is a one-line message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class NotationError(RotaryError, ValueError):
    """Malformed position or move text (docs/rules.md §3, §9)."""


class IllegalMoveError(RotaryError, ValueError):
    """A well-formed move that the rules do not allow in this position."""


class PositionError(RotaryError, ValueError):
    """A position that cannot arise under the given rules (material, phase, board)."""


class ConfigError(RotaryError, ValueError):
    """Rules that do not exist or contradict each other (board, balls, variants, traps)."""


class StoreError(RotaryError, ValueError):
    """A database or proof store that is missing, damaged, locked or built for other rules."""


class MissingValueError(RotaryError, KeyError):
    """The database holds no value for this position (other rules, material or phase)."""


class UsageError(RotaryError, ValueError):
    """A command-line option or argument out of range."""


class ClusterError(RotaryError):
    """A worker of a distributed solve failed or the cluster cannot be reached."""


class ResourceError(RotaryError):
    """The machine lacks the memory or disk space a task needs (said before it starts)."""
