"""The database the verify tests check: hex(2) 3v3 edge (7,338 positions, 16 tiers in 10
groups), solved once, and a copy of it a test may damage, checked in ranges of
``VERIFY_STEP`` positions (``verify.STEP`` patched down from 2^20) so that it has dozens;
and the ranges the check is asked for (``calls``). The helpers that interrupt a check or
rewrite a block are in :mod:`tests.helpers`."""

from __future__ import annotations

import shutil

import pytest

from solver.db import verify
from solver.game.config import make_config
from solver.retro.driver import solve
from tests.helpers import VERIFY_STEP


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
