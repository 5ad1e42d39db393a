"""The opening book grown best first (:mod:`solver.search.bookgrow`) and read back: every
value it claims proven agrees with the solved database, resuming extends, ``query``
answers from it with the engine's scores, the export and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from solver.db.database import open_db
from solver.game.config import make_config
from solver.game.position import Position
from solver.search import bookgraph
from solver.search.bookgrow import grow_book
from tests.helpers import run

START = "..x/.o../x...o/....../.x..o/.... x"  # hex3 3v3 base: a draw, open at these budgets
SMALL = dict(nodes=300, engine_nodes=2000, tt_bits=16)
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "answer.schema.json").read_text())


def _agree(node: dict, truth) -> None:
    """A node's backed-up value never contradicts the database's ``truth`` (a Value)."""
    v = node["value"]
    allowed = {"win": {"win"}, "loss": {"loss"}, "draw": {"draw"}, "not-win": {"draw", "loss"},
               "not-loss": {"draw", "win"}, "unknown": {"win", "loss", "draw"}}[v["result"]]
    assert truth.result in allowed, (node["position"], v, truth)
    if v["result"] in ("win", "loss"):
        if v["exact"]:
            assert v["plies"] == truth.plies, (node["position"], v, truth)
        else:
            assert v["plies"] >= truth.plies, (node["position"], v, truth)


@pytest.mark.parametrize("mode", ["grow", "depth"])
def test_book_agrees_with_the_database_wherever_it_claims_a_proof(solved_db, tmp_path, mode):
    """hex3 3v3 base, no database leaves: a book grown best first (and one full width),
    then every node's value against the database; scores of proven nodes are proven."""
    from solver.search.book import build_book

    cfg = make_config("hex3", 3)
    if mode == "grow":
        out = grow_book(cfg, Position(START), tmp_path / "s", expansions=25, **SMALL)
        assert out["stopped"] == "expansions" and out["expanded"] == 25
    else:
        out = build_book(cfg, Position(START), 2, tmp_path / "s", **SMALL)
    book, root = out["book"], out["root"]
    nodes = bookgraph.reachable(book, root)
    proven = 0
    with open_db(solved_db(make_config("hex3", 3), (3, 3))) as db:
        for k in nodes:
            node = book[k]
            _agree(node, db.probe(Position(node["position"])))
            assert node["engine"] is not None and node["score"] is not None
            if node["value"]["lo"] == node["value"]["hi"]:
                proven += 1
                want = {"win": "win", "loss": "loss", "draw": "cp"}[node["value"]["result"]]
                assert node["score"]["kind"] == want
    assert proven > 20 and len(nodes) > proven  # something proven, something still open


def test_resume_extends_rather_than_restarts(tmp_path):
    """Two runs of 5 expansions make a book of 10 expanded nodes; the first run's nodes keep
    their searches (the second searches only new ones). An interrupt (^C in the middle of a
    run) leaves a book the next run goes on from."""
    cfg = make_config("hex3", 3)
    first = grow_book(cfg, Position(START), tmp_path / "s", expansions=5, **SMALL)
    old = {k: (v["engine"], v["proof"]) for k, v in first["book"].items()}
    second = grow_book(cfg, Position(START), tmp_path / "s", expansions=5, **SMALL)
    book = second["book"]
    assert set(old) < set(book)
    assert sum(1 for v in book.values() if v["moves"] is not None) == 10
    assert all((book[k]["engine"], book[k]["proof"]) == rec for k, rec in old.items())
    assert second["searched"] == len(book) - len(old)  # nothing searched twice

    def stop_after_three(info: dict) -> None:
        if info["expanded"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        grow_book(cfg, Position(START), tmp_path / "s", expansions=50, progress=stop_after_three, **SMALL)
    third = grow_book(cfg, Position(START), tmp_path / "s", expansions=1, **SMALL)
    assert sum(1 for v in third["book"].values() if v["moves"] is not None) == 14
    assert all(v["engine"] is not None and v["proof"] is not None for v in third["book"].values())


def test_deadline_leaves_unsearched_nodes_for_the_next_run(tmp_path):
    """The standard start, a few seconds: the deadline stops the run (and caps each proof);
    nodes made but not searched are searched first by the next run."""
    import time

    from solver.game.config import standard_config
    from solver.game.start import standard_start

    cfg = standard_config()
    t0 = time.monotonic()
    out = grow_book(cfg, standard_start(), tmp_path / "s", deadline=t0 + 4, nodes=100_000, engine_nodes=2000,
                    tt_bits=18)
    assert out["stopped"] == "time" and time.monotonic() - t0 < 30
    again = grow_book(cfg, standard_start(), tmp_path / "s", expansions=0, nodes=2000, engine_nodes=2000, tt_bits=18)
    assert again["stopped"] == "expansions" and again["expanded"] == 0
    reached = bookgraph.reachable(again["book"], again["root"])
    assert all(again["book"][k]["proof"] is not None and again["book"][k]["engine"] is not None for k in reached)
    assert again["searched"] == sum(1 for k in reached if out["book"][k]["proof"] is None
                                    or out["book"][k]["engine"] is None)


def test_query_and_export_from_a_grown_book(capsys, tmp_path):
    store = tmp_path / "s"
    rc, out, err = run(capsys, "book", "--start", START, "--board", "hex3", "--expand", "6", "--nodes", "300",
                       "--engine-nodes", "2000", "--tt-bits", "16", "--store", store, "-q", "--json")
    assert rc == 0, err
    report = json.loads(out)
    st = report["statistics"]
    assert report["expanded"] == 6 and st["expanded"] == 6 and st["proven"] + st["open"] == st["nodes"]
    exported = json.loads((store / "book.json").read_text())
    assert exported["format"] == "rotary-book" and exported["version"] == 2 and len(exported["nodes"]) == st["nodes"]
    assert exported["rules"]["board"] == "hex3" and exported["statistics"] == st
    rc, out, err = run(capsys, "query", START, "--board", "hex3", "--store", store, "--json", "--line", "4")
    assert rc == 0, err
    a = json.loads(out)
    jsonschema.validate(a, SCHEMA)
    assert a["source"] == "book" and a["score"]["kind"] in ("cp", "win", "loss") and a["line"]
    scored = [m for m in a["moves"] if "score" in m]
    assert scored and all(m["exact"] is False or m["value"] in ("win", "loss", "draw") for m in a["moves"])
    # moves of one value come best score first
    unknown = [m["score"] for m in a["moves"] if m["value"] == "unknown" and m["score"]["kind"] == "cp"]
    assert [s["value"] for s in unknown] == sorted((s["value"] for s in unknown), reverse=True)
    # --show and --stats read the stored book without building
    rc, out, err = run(capsys, "book", "--start", START, "--board", "hex3", "--store", store, "--show", "1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split("  ")[-1] == START and all(ln.startswith("  ") for ln in lines[1:-3])
    rc, out, err = run(capsys, "book", "--start", START, "--board", "hex3", "--store", store, "--stats", "--json")
    assert rc == 0 and json.loads(out) == st


@pytest.mark.parametrize("argv,msg", [
    (["--expand", "0"], "--expand"),
    (["--expand", "2", "--depth", "1"], "exclude each other"),
    (["--expand", "2", "--ply-cost", "-1"], "--ply-cost"),
    (["--expand", "2", "--engine-nodes", "-5"], "--engine-nodes"),
    (["--minutes", "0"], "--minutes"),
    (["--show", "-2"], "--show"),
    ([], "book needs"),
    (["--stats"], "no book from"),
])
def test_bad_book_input_is_one_line(capsys, tmp_path, argv, msg):
    rc, out, err = run(capsys, "book", "--start", START, "--board", "hex3", "--store", tmp_path / "s", *argv)
    assert rc == 2 and err.startswith("rotary: error:") and err.count("\n") == 1 and msg in err, err
