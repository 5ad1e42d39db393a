"""Fixtures shared by several test files (helpers they call are in :mod:`tests.helpers`,
the independent oracles in :mod:`tests.oracles`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from solver.game.config import Config


def pytest_configure(config) -> None:
    """Compile the kernels once before any test runs (in the controller under ``-n``,
    not in each worker): see :mod:`tests.warm`."""
    if hasattr(config, "workerinput") or config.option.collectonly:
        return
    from tests.warm import warm_all

    warm_all()


@pytest.fixture(autouse=True)
def _own_database_folder(monkeypatch, tmp_path_factory):
    """Every test starts with ``ROTARY_DB`` naming an empty folder of its own, so the
    databases of whoever runs the suite (``$ROTARY_DB``, or ``./rotary-db``) never answer a
    query here and nothing solved without ``--db`` lands among them. A test that wants a
    folder of databases found by their rules sets ``ROTARY_DB`` itself."""
    monkeypatch.setenv("ROTARY_DB", str(tmp_path_factory.mktemp("rotary-db")))


@pytest.fixture(autouse=True)
def _no_shipped_store(monkeypatch):
    """Tests answer from what they build: the shipped store of known values
    (``data/known/``, :mod:`solver.known`) is off (``ROTARY_KNOWN=off``), so a test of
    another source sees that source. The tests of the store itself turn it on with the
    ``shipped_store`` fixture."""
    monkeypatch.setenv("ROTARY_KNOWN", "off")


@pytest.fixture
def shipped_store(monkeypatch):
    """The checkout's shipped store on (``data/known/``), for this test and the processes it starts."""
    monkeypatch.delenv("ROTARY_KNOWN", raising=False)


@pytest.fixture(scope="session")
def solved_db(tmp_path_factory):
    """``solved_db(cfg, material)``: the path of a database of ``cfg`` with that material,
    solved (``jobs=1``) the first time any test asks for it and shared by every test that
    asks again, in any file. Open it to read; never write to it: a test that damages or
    extends a database solves its own."""
    from solver.retro.driver import solve

    root = tmp_path_factory.mktemp("solved")
    done: dict[tuple[str, tuple[int, int]], Path] = {}

    def get(cfg: Config, material: tuple[int, int]) -> Path:
        key = (json.dumps(cfg.key(), sort_keys=True), tuple(material))
        if key not in done:
            path = root / f"db{len(done)}"
            solve(cfg, path, jobs=1, material=tuple(material), progress=False)
            done[key] = path
        return done[key]

    return get
