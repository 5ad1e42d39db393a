"""The header a database records about itself: format, rules, material, tier list.

Written once when a solve starts; checked by every reader and by every resumed solve, so
that a database of other rules or another format is refused with one line.
"""

from __future__ import annotations

import os

from solver.db.store import FORMAT, Store
from solver.errors import StoreError
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


def open_for_solve(path: str | os.PathLike, layout: Layout) -> Store:
    """Open (or create) the database and check that it was built for these rules."""
    store = Store(path, create=True)
    header = db_header(layout)
    found = store.get_meta("config")
    if found is not None and found.get("format") == 1:
        header = dict(header, format=1)  # a database of before keyed checksums is extended as it is
    if found is None:
        store.put_meta("config", header)
    elif found != header:
        store.close()
        raise StoreError(
            f"database at {path} was built for {found.get('description', 'other rules')}, "
            f"not {header['description']}"
        )
    return store
