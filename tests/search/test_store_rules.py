"""One proof store per rules, whatever the material (book and prove agree, so query's
fallback to the book works); a store of other rules refused in one sentence naming the
difference; query --prove N --line L."""

from __future__ import annotations

import json

import lmdb
import pytest

from solver.errors import StoreError
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import parse_move, play, status
from solver.search.proofs import ProofStore, store_rules
from tests.helpers import run

WIN5 = "../.o./.o../x.x x"  # hex2 edge: a win in 5
HARD = ".oo./.o.o./ooooo./.o...x./.oo.xxx./o...x.x/xxxxxx/..x.. o"  # the standard start after d3+1: open


def test_store_serves_every_material_of_its_rules(tmp_path):
    ProofStore(tmp_path / "p", make_config("hex4", 13)).close()
    ProofStore(tmp_path / "p", make_config("hex4")).close()  # prove's rules: no balls
    ProofStore(tmp_path / "p", make_config("hex4", 13)).close()
    assert store_rules(make_config("hex4", 13)) == store_rules(make_config("hex4"))
    # the setup game's rules include the balls placed
    assert store_rules(make_config("hex3", 3, setup="offer")) != store_rules(make_config("hex3", 4, setup="offer"))


def test_store_written_with_balls_opens(tmp_path):
    """A store whose rules record still holds the balls (as book wrote it) opens for the
    same rules without them."""
    path = tmp_path / "p"
    ProofStore(path, standard_config()).close()
    env = lmdb.open(str(path), max_dbs=4)
    from solver.db.guard import pack_json

    with env.begin(write=True) as txn:
        txn.put(b"rules", pack_json(standard_config().key()), db=env.open_db(b"meta", txn=txn))
    env.close()
    ProofStore(path, make_config("hex4")).close()


def test_other_rules_refused_in_one_sentence(tmp_path):
    ProofStore(tmp_path / "p", make_config("hex3", 3)).close()
    with pytest.raises(StoreError) as e:
        ProofStore(tmp_path / "p", make_config("hex3", 3, edge=True))
    msg = str(e.value)
    assert "\n" not in msg and "{" not in msg
    assert "holds proofs for other rules (edge is off there, on here)" in msg
    with pytest.raises(StoreError, match="board hex3 there, hex4 here"):
        ProofStore(tmp_path / "p", make_config("hex4"))


def test_query_falls_back_to_a_book_of_the_standard_start(capsys, tmp_path, monkeypatch):
    """rotary book (rules with 13 balls) then rotary query (rules without): the same store."""
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, "book", "--depth", "0", "--nodes", "2000", "-q", "--no-tree")
    assert rc == 0, err
    start = standard_config()
    from solver.game.start import standard_start

    rc, out, err = run(capsys, "query", standard_start().text())
    assert rc == 0, err
    assert "[opening book]" in out and "value: not-loss for x" in out
    assert start.key()["balls"] == 13


def test_query_prove_line(capsys, tmp_path):
    rc, out, err = run(capsys, "query", WIN5, "--edge", "--store", tmp_path / "s", "--prove", 200_000, "--line", 9)
    assert rc == 0, err
    assert "[proved now]" in out and "value: win in 5 for x" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("line: ")).split()[1:]
    assert len(line) == 5
    cfg, pos = make_config("hex2", edge=True), Position(WIN5)
    for mv in line:  # the line is legal and ends the game, won by x
        pos = play(cfg, pos, parse_move(cfg, pos, mv))
    assert status(cfg, pos) == ("loss" if pos.turn == 1 else "win")
    rc, out, err = run(capsys, "query", WIN5, "--edge", "--store", tmp_path / "s", "--prove", 200_000, "--line", 2,
                       "--json")
    assert rc == 0 and json.loads(out)["line"] == line[:2]


def test_query_prove_nothing_proven(capsys, tmp_path):
    rc, out, err = run(capsys, "query", HARD, "--store", tmp_path / "s", "--prove", 1000, "--line", 4)
    assert rc == 0, err
    assert "[proved now]" not in out and "nothing proven" in out and "value: unknown for o" in out
    assert "line: (none)" in out and "stopped: node budget of 1,000 nodes spent" in out


def test_query_book_line(capsys, tmp_path):
    store = tmp_path / "s"
    rc, out, err = run(capsys, "book", "--start", WIN5, "--edge", "--depth", "2", "--nodes", "20000", "--store", store,
                       "-q", "--no-tree")
    assert rc == 0, err
    rc, out, err = run(capsys, "query", WIN5, "--edge", "--store", store, "--line", 9)
    assert rc == 0 and "[opening book]" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("line: ")).split()[1:]
    assert 2 <= len(line) <= 5  # through the book's proven nodes, best moves of both sides
