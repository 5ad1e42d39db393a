"""One answer schema (docs/json.md, docs/answer.schema.json) for every answer about a position.

Every command's ``--json`` answer is validated against the schema file: ``query`` from a
database, from the rules, from the opening book and with ``--prove``, ``prove`` (one job
and several). Also: batch ``query -`` (a line that is not answered gets its own error,
exit status 1), the book's moves rated from the side to move's view, moves to one position
grouped in the human output, a drawn line that repeats, the missing setup database named,
and the README's Python example.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from solver.db.database import Database, open_db
from solver.game import rules
from solver.game.config import make_config
from solver.game.position import Position
from solver.game.values import Value, other_side
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "answer.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

WIN = ".../..o./.o.../x.x.../...../.... x"  # hex3 2v2 base: win in 11; b2 c2 b3 d3 +0 change nothing
DRAW = ".../..../...../....../...../xxoo x"  # a draw whose principal line passes back and forth
OVER = ".../..../...../....../o.o../x.x. x"  # x has no legal point: lost in 0
BOOK_ROOT = "../.o./.o../x.x x"  # hex2 edge: win in 5


def valid(obj: dict) -> dict:
    errors = sorted(VALIDATOR.iter_errors(obj), key=str)
    assert not errors, f"{obj}: {[e.message for e in errors][:3]}"
    return obj


def answers(out: str) -> list[dict]:
    return [valid(json.loads(line)) for line in out.splitlines()]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("answers") / "hex3-2v2"
    from solver.retro.driver import solve

    solve(make_config("hex3", 2), path, jobs=1, material=(2, 2), progress=False)
    return path


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    """A proof store whose opening book holds ``BOOK_ROOT`` and its children, all proven."""
    from solver.search.book import build_book

    store = tmp_path_factory.mktemp("answers") / "store"
    out = build_book(make_config("hex2", edge=True), Position(BOOK_ROOT), 1, store, nodes=20_000, tt_bits=16)
    assert out["partial"] is None
    return store


# ---------------------------------------------------------------------------- the schema


def test_schema_file_is_a_valid_schema_and_documented():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    doc = (ROOT / "docs" / "json.md").read_text()
    for word in ("position", "value", "plies", "exact", "source", "moves", "line", "best_move", "nodes", "seconds",
                 "not-win", "not-loss", "unknown", "database", "book", "proof", "rules", "error", "answer.schema.json"):
        assert f"`{word}`" in doc or word in doc.split("`"), word
    assert "answer.schema.json" in (ROOT / "README.md").read_text() or "docs/json.md" in (ROOT / "README.md").read_text()
    # the schema refuses what it should
    good = {"position": WIN, "value": "win", "plies": 3, "exact": True, "source": "database", "moves": []}
    valid(good)
    for bad in (dict(good, result="win"), dict(good, value="won"), dict(good, value="draw"), dict(good, source="table"),
                dict(good, value="unknown", plies=None), {k: v for k, v in good.items() if k != "exact"},
                dict(good, moves=[{"move": "a1+0", "position": WIN, "value": "draw", "plies": None}])):
        assert not VALIDATOR.is_valid(bad), bad


# ---------------------------------------------------------------------------- query


def test_query_database_answer(capsys, db):
    rc, out, err = run(capsys, "query", WIN, DRAW, OVER, "--db", db, "--json")
    assert rc == 0, err
    win, draw, over = answers(out)
    with open_db(db) as d:
        for a in (win, draw, over):
            assert a["source"] == "database" and a["exact"] is True
            v = d.probe(Position(a["position"]))
            assert (a["value"], a["plies"]) == (v.result, v.plies)
            for m in a["moves"]:  # the move's value for the side to move: the child's, turned
                assert Value(m["value"], m["plies"]) == d.probe(Position(m["position"])).after_move()
    assert (win["value"], win["plies"]) == ("win", 11) and win["moves"][0]["value"] == "win"
    assert over["moves"] == [] and (over["value"], over["plies"]) == ("loss", 0)
    rc, out, err = run(capsys, "query", WIN, "--db", db, "--json", "--line", 30)
    assert rc == 0 and len(valid(json.loads(out))["line"]) == 11


def test_query_finished_position_without_database_answers_from_the_rules(capsys):
    rc, out, err = run(capsys, "query", OVER, "--json")
    assert rc == 0, err
    (a,) = answers(out)
    assert a == {"position": OVER, "value": "loss", "plies": 0, "exact": True, "source": "rules", "moves": []}
    rc, out, err = run(capsys, "query", OVER)
    assert rc == 0 and "[rules" in out and "value: loss in 0 for x" in out


def test_query_book_answer_rates_moves_for_the_side_to_move(capsys, book):
    """The book stores each child's value from the child's mover; the answer turns them."""
    from solver.search.book import book_lookup

    cfg = make_config("hex2", edge=True)
    rc, out, err = run(capsys, "query", BOOK_ROOT, "--edge", "--store", book, "--json")
    assert rc == 0, err
    (a,) = answers(out)
    assert a["source"] == "book" and a["position"] == BOOK_ROOT
    assert (a["value"], a["plies"]) == ("win", 5)
    pos = Position(BOOK_ROOT)
    assert sorted(m["move"] for m in a["moves"]) == sorted(m.text(cfg.board) for m in rules.moves(cfg, pos))
    node = book_lookup(book, cfg, pos)
    child_view = {c["move"]: c["value"] for c in node["children"]}
    assert any(v["result"] == "win" for v in child_view.values())  # children the mover must avoid
    for m in a["moves"]:
        c = child_view[m["move"]]
        assert m["value"] == other_side(c["result"]), m
        assert m["plies"] == (None if c["plies"] is None else c["plies"] + 1), m
    keys = [Value(m["value"], m["plies"], m["exact"]).sort_key() for m in a["moves"]]
    assert keys == sorted(keys) and (a["moves"][0]["value"], a["moves"][0]["plies"]) == ("win", 5)
    rc, out, err = run(capsys, "query", BOOK_ROOT, "--edge", "--store", book)
    assert rc == 0 and "[opening book]" in out and "child view" not in out
    assert "value: win in 5 for x" in out


def test_query_prove_answer(capsys, tmp_path):
    rc, out, err = run(capsys, "query", BOOK_ROOT, "--edge", "--store", tmp_path / "s", "--prove", 20_000, "--json")
    assert rc == 0, err
    (a,) = answers(out)
    assert a["source"] == "proof" and a["value"] == "win" and a["best_move"]
    assert a["moves"][0]["move"] == a["best_move"] and a["moves"][0]["value"] == "win"


# ---------------------------------------------------------------------------- prove


@pytest.mark.parametrize("jobs", [1, 2])
def test_prove_json_is_an_answer(capsys, tmp_path, jobs):
    rc, out, err = run(capsys, "prove", BOOK_ROOT, "--edge", "--json", "--nodes", 20_000, "-j", jobs,
                       "--store", tmp_path / "s")
    assert rc == 0, err
    (a,) = answers(out)
    assert "result" not in a and a["source"] == "proof" and a["position"] == BOOK_ROOT
    assert a["value"] == "win" and a["plies"] >= 5 and {"best_move", "nodes", "seconds"} <= set(a)
    if jobs > 1:  # every root child proven on its own: every legal move listed
        cfg = make_config("hex2", edge=True)
        assert len(a["moves"]) == len(rules.moves(cfg, Position(BOOK_ROOT)))
    assert a["moves"][0]["value"] == "win"


# ---------------------------------------------------------------------------- batches


def test_batch_line_that_is_not_a_position_gets_its_own_error(capsys, monkeypatch, db):
    rc, out, err = run(capsys, "query", "-", "--db", db, "--json", stdin=f"{WIN}\nbad\n{DRAW}\n", monkeypatch=monkeypatch)
    assert rc == 1 and err == ""
    first, bad, last = answers(out)
    assert (first["position"], last["position"]) == (WIN, DRAW) and first["source"] == "database"
    assert set(bad) == {"position", "error"} and bad["position"] == "bad" and "\n" not in bad["error"]
    rc, out, err = run(capsys, "query", "-", "--db", db, stdin=f"{WIN}\nbad\n{DRAW}\n", monkeypatch=monkeypatch)
    assert rc == 1
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "bad" in errors[0]
    assert out.count("value: ") == 2
    rc, out, err = run(capsys, "query", "-", "--db", db, "--json", stdin=f"{WIN}\n{DRAW}\n", monkeypatch=monkeypatch)
    assert rc == 0 and len(answers(out)) == 2


def test_batch_without_database_answers_from_the_book_or_fails_per_line(capsys, monkeypatch, book):
    """``query -`` without a database: the stdin lines are the positions (``-`` is never
    read as one); each is answered from the book or gets its own error."""
    from solver.game.start import standard_start

    start = standard_start().text()
    rc, out, err = run(capsys, "query", "-", "--json", stdin=f"{start}\n", monkeypatch=monkeypatch)
    assert rc == 1, err
    (a,) = answers(out)
    assert a["position"] == start and "'-'" not in a["error"] and "no database" in a["error"]
    rc, out, err = run(capsys, "query", "-", "--edge", "--store", book, "--json", stdin=f"{BOOK_ROOT}\n../.o./.o../.xx x\n",
                       monkeypatch=monkeypatch)
    assert rc == 1, err
    answered, missing = answers(out)
    assert answered["source"] == "book" and missing["position"] == "../.o./.o../.xx x" and "error" in missing


# ---------------------------------------------------------------------------- human output


def test_moves_to_one_position_are_grouped(capsys, db):
    rc, out, err = run(capsys, "query", WIN, "--db", db)
    assert rc == 0, err
    lines = out.splitlines()
    (passes,) = [line for line in lines if "(= pass)" in line]
    assert passes.split("(= pass)")[0].split() == ["b2+0", "c2+0", "b3+0", "d3+0"]
    assert "loss in 6" in passes
    cfg = make_config("hex3", 2)
    pos = Position(WIN)
    children = {rules.apply(cfg, pos, m).text() for m in rules.moves(cfg, pos)}
    assert len(lines) == 2 + len(children)  # one line per position reached
    assert sorted(line.split()[-2] + " " + line.split()[-1] for line in lines[2:]) == sorted(children)


def test_move_group_labels():
    from solver.cli.query import _label

    assert _label(["f3+0", "f3+1", "f3+2", "f3+3", "f3+4", "f3+5"]) == "f3+0..5"
    assert _label(["f3+1", "f3+3", "f3+5"]) == "f3+1,3,5"
    assert _label(["f3+0", "f3+1", "f3+2", "f3+4", "e3+0"]) == "f3+0..2,4 e3+0"
    assert _label(["d4"]) == "d4"


def test_drawn_line_says_it_repeats(capsys, db):
    rc, out, err = run(capsys, "query", DRAW, "--db", db, "--line", 40)
    assert rc == 0, err
    (line,) = [x for x in out.splitlines() if x.startswith("line:")]
    assert line.endswith("(repeats: a draw)") and len(line.split()) < 10
    rc, out, err = run(capsys, "query", DRAW, "--db", db, "--line", 40, "--json")
    assert len(valid(json.loads(out))["line"]) == 2  # stops where the line comes round
    rc, out, err = run(capsys, "query", WIN, "--db", db, "--line", 40)
    assert "repeats" not in out


# ---------------------------------------------------------------------------- defects


def test_query_setup_without_database_names_it(capsys):
    rc, out, err = run(capsys, "query", "--setup", "offer", "--board", "hex3", "--balls", "4")
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("rotary: error:")
    assert "hex3-4v4-setup-offer" in err and "rotary solve --board hex3 --balls 4 --setup offer" in err


def test_query_setup_without_a_position_takes_the_board_solve_takes(capsys):
    """No position and no --board: the empty setup board of what ``solve --setup`` solves,
    as ``query --help`` says."""
    from solver.cli.options import DEFAULT_SOLVE_BOARD

    rc, out, err = run(capsys, "query", "--setup", "offer", "--balls", "4")
    assert rc == 2 and f"{DEFAULT_SOLVE_BOARD}-4v4-setup-offer" in err, (rc, out, err)
    with pytest.raises(SystemExit):
        run(capsys, "query", "--help")
    assert f"else {DEFAULT_SOLVE_BOARD})" in " ".join(capsys.readouterr().out.split())


def test_query_refuses_a_negative_line_or_prove(capsys, db):
    for argv in (["--line", "-1"], ["--prove", "0"]):
        rc, out, err = run(capsys, "query", WIN, "--db", db, *argv)
        assert rc == 2 and argv[0] in err and out == ""


def _readme_python() -> str:
    """The README's Python example: its one ```python block, written as doctest examples."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_readme_python_example_runs_against_a_stand_in(monkeypatch, capsys):
    """Every name the example imports comes from ``solver`` itself and every call is the
    reader API's (checked against :class:`Database` by autospec); the real run, with its
    printed output compared, is the slow test below."""
    import doctest
    from unittest import mock

    import solver

    stand_in = mock.create_autospec(Database, instance=True)
    stand_in.__enter__.return_value = stand_in
    stand_in.cfg = make_config("hex3", 4)
    stand_in.probe.return_value = Value("win", 21)
    stand_in.get.return_value = None
    stand_in.best_moves.return_value = []
    monkeypatch.setattr(solver, "open_db", mock.Mock(return_value=stand_in))
    namespace: dict = {}
    for example in doctest.DocTestParser().get_examples(_readme_python()):
        exec(compile(example.source, "README.md", "exec"), namespace)
    assert stand_in.probe.called and stand_in.get.called and stand_in.best_moves.called
    assert capsys.readouterr().out.splitlines() == ["win in 21 True True", "None", "NotationError"]


@pytest.mark.slow
def test_readme_python_example_runs(tmp_path, monkeypatch):
    """After ``rotary solve`` (hex(3) 4v4, a minute or so) the example prints what it shows."""
    import doctest

    from solver.cli.main import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROTARY_DB")
    assert main(["solve", "-q"]) == 0
    test = doctest.DocTestParser().get_doctest(_readme_python(), {}, "README.md", "README.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.tries >= 2 and runner.failures == 0
