"""Compile the numba kernels once, before the tests start.

On a fresh checkout no kernel is in numba's on-disk cache yet, and every process that
needs one compiles it: with ``pytest -n 2`` both test workers, and the worker pools and
Ray actors they start, would compile the same kernels side by side (about half a minute
for each family). :func:`warm_all` runs each family once on small boards, in two processes
(:func:`warm`, half each), so that every later process loads them from the cache; on a
warm cache it takes a few seconds. A failure here is left to the tests to report.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path


class _Inline:
    """Just enough of Ray's API to run the Ray executor's actors inside this process
    (its kernels then compile here, not in every actor at once)."""

    class exceptions:  # noqa: N801  (Ray's spelling)
        RayError = RuntimeError

    @staticmethod
    def cluster_resources() -> dict:
        return {"CPU": 64}

    @staticmethod
    def remote(**_options):
        return lambda cls: _Class(cls)

    @staticmethod
    def get(refs):
        return refs

    @staticmethod
    def wait(refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]


class _Class:
    def __init__(self, cls):
        self.cls = cls

    def remote(self, *args):
        return _Actor(self.cls(*args))


class _Actor:
    def __init__(self, obj):
        self.obj = obj

    def __getattr__(self, name: str):
        return _Method(getattr(self.obj, name))


class _Method:
    def __init__(self, fn):
        self.fn = fn

    def options(self, **_options):
        return self

    def remote(self, *args):
        return self.fn(*args)


CONFIGS = [("hex2", 3, {}), ("hex2", 3, {"edge": True, "capture": True, "traps_x": "a1", "traps_o": "c3"})]


def _solve_half(root: Path) -> None:
    """Solve, verify, check df-pn against the databases, the setup game (solved and searched)."""
    from solver.db.database import open_db
    from solver.db.verify import verify_db
    from solver.game.config import make_config
    from solver.retro.driver import solve
    from solver.retro.setup import solve_setup
    from solver.search.check import check_all

    for n, (board, balls, variants) in enumerate(CONFIGS):
        cfg = make_config(board, balls, **variants)
        solve(cfg, root / f"db{n}", jobs=1, progress=False)
        verify_db(root / f"db{n}", progress=False)
        with open_db(root / f"db{n}") as db:
            check_all(cfg, db, tt_bits=16, limit=64)
    solve_setup(make_config("hex2", 2, setup="offer"), root / "setup", progress=False)
    _setup_engine()


def _search_half(root: Path) -> None:
    """The Ray executor's kernels (its actors run in this process), the proof store and
    the book, the draw closure."""
    from solver.game.config import make_config
    from solver.game.position import Position
    from solver.retro.cluster import _solve as solve_parts
    from solver.search.book import build_book
    from solver.search.prover import Prover

    for n, (board, balls, variants) in enumerate(CONFIGS):
        solve_parts(_Inline, make_config(board, balls, **variants), root / f"parts{n}", 2, None, False)
        solve_parts(_Inline, make_config(board, balls, **variants), root / f"lean{n}", 2, None, False, True)  # one byte
    edge = make_config("hex2", edge=True)
    for _ in range(2):  # the second run reads the first's proof store back
        build_book(edge, Position("../.o./.o../x.x x"), 1, root / "proofs", nodes=20_000, tt_bits=16)
    draw = Position(".../..../...../....../...../xoox x")  # proven by the draw closure
    Prover(make_config("hex3", 3, edge=True), tt_bits=16).prove(draw, nodes=50_000)
    Prover(make_config("hex3", 3, edge=True), tt_bits=16, threads=2).prove(draw, nodes=50_000)  # df-pn on threads
    _engine()


def _engine() -> None:
    """The engine's search and evaluation kernels."""
    from solver.engine.engine import Engine
    from solver.engine.score import Limit
    from solver.game.config import standard_config
    from solver.game.start import standard_start

    Engine(standard_config(), tt_bits=12).think(standard_start(), Limit(depth=2), rank_all=True)
    from solver.engine.mcts import MctsSearcher

    pos = standard_start()
    MctsSearcher(standard_config(), nodes_cap=1 << 12).rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=50))


def _setup_engine() -> None:
    """The engine's search of the setup game's placements (it calls the rotation kernel)."""
    from solver.engine.engine import Engine
    from solver.engine.score import Limit
    from solver.game.config import make_config
    from solver.game.start import initial_position

    cfg = make_config("hex2", 2, setup="offer")
    Engine(cfg, tt_bits=12).think(initial_position(cfg), Limit(depth=4))


HALVES = (_solve_half, _search_half)


def warm(half: int) -> None:
    """Run half ``half`` of the warm-up; the two together compile every kernel family once."""
    with tempfile.TemporaryDirectory(prefix="rotary-warm-") as tmp:
        HALVES[half](Path(tmp))


def warm_all() -> float:
    """Both halves side by side in two processes; the seconds taken (a few on a warm cache)."""
    t0 = time.perf_counter()
    root = Path(__file__).resolve().parents[1]
    procs = [
        subprocess.Popen([sys.executable, "-m", "tests.warm", str(half)], cwd=root,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for half in range(len(HALVES))
    ]
    for proc in procs:
        proc.wait()
    return time.perf_counter() - t0


if __name__ == "__main__":
    warm(int(sys.argv[1]))
