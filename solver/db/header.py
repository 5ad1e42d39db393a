"""The header a database records about itself: format, rules, material, tier list.

Written once when a solve starts; checked by every reader and by every resumed solve, so
that a database of other rules or another format is refused with one line.
"""

from __future__ import annotations

from solver.db.store import FORMAT
from solver.index import Layout


def db_header(layout: Layout) -> dict:
    """What a database records about the rules and index it was built for."""
    return {
        "format": FORMAT,
        "rules": layout.cfg.key(),
        "material": list(layout.material),
        "description": describe(layout),
        "tiers": [[t.key, t.side, t.a, t.b, t.size] for t in layout.tiers],
    }


def describe(layout: Layout) -> str:
    cfg = layout.cfg
    A, B = layout.material
    text = cfg.describe()
    if (A, B) != (cfg.balls, cfg.balls):
        text = text.replace(f" {cfg.balls}v{cfg.balls}", f" {A}v{B}")
    return text
