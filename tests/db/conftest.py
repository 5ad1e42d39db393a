"""The database the verify tests check: hex(2) 3v3 edge (7,338 positions, 16 tiers in 10
groups), solved once, and a copy of it a test may damage, checked in ranges of
``VERIFY_STEP`` positions (``verify.STEP`` patched down from 2^20) so that it has dozens;
the ranges the check is asked for (``calls``), and helpers that interrupt a check or
rewrite a block."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from solver.db import verify
from solver.db.database import open_db
from solver.db.store import BLOCK, Store, block_key, pack_block
from solver.game.config import make_config
from solver.retro.driver import solve

VERIFY_STEP = 64


@pytest.fixture(scope="session")
def edge_solved(tmp_path_factory):
    path = tmp_path_factory.mktemp("verify") / "db"
    solve(make_config(board=2, balls=3, edge=True), path, material=(3, 3), progress=False)
    return path


@pytest.fixture
def db(edge_solved, tmp_path, monkeypatch):
    """A copy of the solved database, checked in ranges of ``VERIFY_STEP``."""
    path = tmp_path / "db"
    shutil.copytree(edge_solved, path)
    monkeypatch.setattr(verify, "STEP", VERIFY_STEP)
    return path


@pytest.fixture
def calls(monkeypatch):
    """The ranges the value check is asked for."""
    seen: list[tuple[int, int]] = []
    real = verify._verify_range

    def wrapped(vals, lo, hi, layout, buf, buf2):
        seen.append((lo, hi))
        return real(vals, lo, hi, layout, buf, buf2)

    monkeypatch.setattr(verify, "_verify_range", wrapped)
    return seen


def _interrupt_at(monkeypatch, n: int) -> None:
    """A Ctrl-C at the ``n``-th range the value check is asked for."""
    real = verify._verify_range
    count = [0]

    def wrapped(vals, lo, hi, lay, buf, buf2):
        count[0] += 1
        if count[0] == n:
            raise KeyboardInterrupt
        return real(vals, lo, hi, lay, buf, buf2)

    monkeypatch.setattr(verify, "_verify_range", wrapped)


def _layout(path):
    with open_db(path) as d:
        return d.layout


def _rewrite(path, no: int, values: np.ndarray, local: int, checksum: bool = True) -> None:
    """Store tier ``no``'s block holding ``local`` from ``values`` (its checksum matching, or not)."""
    b = local // BLOCK
    data = pack_block(values[b * BLOCK : (b + 1) * BLOCK], block_key(no, b))
    if not checksum:
        data = data[:-1] + bytes([data[-1] ^ 0xFF])
    store = Store(path)
    try:
        store._write(lambda txn: txn.put(block_key(no, b), data, db=store.blocks))
    finally:
        store.close()


def _tier_values(path, no: int, size: int) -> np.ndarray:
    store = Store(path)
    try:
        return store.read_tier(no, size).copy()
    finally:
        store.close()
