"""``rotary`` commands that solve and read databases (filled in by the solver issues)."""

from __future__ import annotations

import argparse
from typing import Callable


def register(sub, commands: dict[str, Callable[[argparse.Namespace], int]]) -> None:
    """Add the database commands to the ``rotary`` parser."""
    return None
