"""An exported set as the search's leaves: df-pn (``Prover``, ``rotary prove``) and the
engine (``Engine``, ``rotary analyse``, ``rotary engine``) answer hex(2) 4v4 edge
positions with a 3v3 edge set exactly as with the LMDB database it comes from (balls fall
off, the searches reach its material), and a WDL-only set is refused in one line."""

from __future__ import annotations

import json
import random

import pytest

from solver.cli.main import main
from solver.db.compact import export_db
from solver.db.database import open_db
from solver.engine.engine import Engine
from solver.engine.score import Limit
from solver.errors import StoreError
from solver.game.config import make_config
from solver.game.position import Position
from solver.game.rules import ONGOING, status
from solver.search.prover import Prover

SMALL = make_config(2, 3, edge=True)
BIG = make_config(2, 4, edge=True)


@pytest.fixture(scope="module")
def sets(solved_db, tmp_path_factory):
    """``(lmdb, full set, WDL-only set)`` of hex(2) 3v3 edge."""
    src = solved_db(SMALL, (3, 3))
    root = tmp_path_factory.mktemp("sets")
    export_db(src, root / "full")
    export_db(src, root / "wdl", wdl_only=True)
    return src, root / "full", root / "wdl"


def _positions(n: int, seed: int) -> list[Position]:
    """Random hex(2) 4v4 positions not over: the set holds none of them, but their lines do."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < n:
        pts = rng.sample(range(BIG.board.size), 8)
        pos = Position.make(BIG.board, sum(1 << p for p in pts[:4]), sum(1 << p for p in pts[4:]), rng.randrange(2))
        if status(BIG, pos) == ONGOING:
            out.append(pos)
    return out


def test_prover_answers_as_with_the_database(sets):
    lm_path, set_path, _ = sets
    lookups = 0
    with open_db(lm_path) as lm, open_db(set_path) as db:
        a, b = Prover(BIG, tt_bits=16, db=lm), Prover(BIG, tt_bits=16, db=db)
        for pos in _positions(12, seed=1):
            ra, rb = a.prove(pos, nodes=20_000), b.prove(pos, nodes=20_000)
            assert (rb.result, rb.plies, rb.exact, rb.nodes) == (ra.result, ra.plies, ra.exact, ra.nodes), pos.text()
            assert list(b.stats) == list(a.stats)
            lookups += int(b.stats[4])
    assert lookups > 0  # the database's positions were reached


def test_engine_answers_as_with_the_database(sets):
    lm_path, set_path, _ = sets
    hits = 0
    with open_db(lm_path) as lm, open_db(set_path) as db:
        a, b = Engine(BIG, db=lm, tt_bits=14), Engine(BIG, db=db, tt_bits=14)
        for pos in _positions(12, seed=2):
            a.new_game(), b.new_game()
            ra, rb = a.think(pos, Limit(depth=4)), b.think(pos, Limit(depth=4))
            assert (rb.score, rb.move, rb.pv, rb.nodes) == (ra.score, ra.move, ra.pv, ra.nodes), pos.text()
            assert b.searcher.db_hits == a.searcher.db_hits
            hits += b.searcher.db_hits
    assert hits > 0


def _json(capsys, args: list[str]) -> dict:
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds", None)
    return out


def test_prove_and_analyse_commands(sets, capsys):
    lm_path, set_path, _ = sets
    for pos in _positions(3, seed=3):
        for cmd in (["prove", "--no-store", "--nodes", "20000"], ["analyse", "--depth", "4"]):
            args = [*cmd, pos.text(), "--edge", "--json", "--db"]
            assert _json(capsys, args + [str(set_path)]) == _json(capsys, args + [str(lm_path)])


def test_a_wdl_only_set_is_refused_as_leaves(sets, capsys, monkeypatch):
    _, _, wdl_path = sets
    pos = _positions(1, seed=4)[0].text()
    with open_db(wdl_path) as db:
        for make in (lambda: Prover(BIG, tt_bits=14, db=db), lambda: Engine(BIG, db=db, tt_bits=14)):
            with pytest.raises(StoreError, match="win/draw/loss only .* leaves need distances"):
                make()
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("quit\n"))
    for args in (["prove", "--no-store", pos], ["analyse", pos], ["engine"]):
        assert main([*args, "--edge", "--db", str(wdl_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "exported with --wdl-only" in err and "need distances" in err
