"""``rotary solve / query / stats / verify`` on a small solved database.

In-process through ``solver.cli.main.main`` (fast), plus one subprocess run proving the exit
status of the installed script. Errors are one line on stderr, exit status 2, no
traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from solver.game import rules
from solver.cli.main import main
from solver.db.database import open_db
from solver.game.position import Position
from solver.game.values import Value
from tests.helpers import run

SOLVE = ["--board", "hex3", "--balls", "2", "--edge"]
DESCRIPTION = "hex3 2v2 edge"


def assert_one_line_error(rc, out, err, *words):
    assert rc == 2, (rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rotary: error:"), lines[0]
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "db"
    assert main(["solve", *SOLVE, "--db", str(path), "-q"]) == 0
    return path


@pytest.fixture(scope="module")
def samples(db_path):
    """Positions of the database by kind: mixed move values, a draw, finished, o to move."""
    found: dict[str, Position] = {}
    rng = np.random.default_rng(5)
    with open_db(db_path) as db:
        layout, cfg = db.layout, db.cfg
        for g in rng.permutation(layout.total)[:20000]:
            m, p, s = layout.position(int(g))
            for turn in (0, 1):
                x, o = (m, p) if turn == 0 else (p, m)  # same board, either side to move
                pos = Position.make(cfg.board, x, o, turn)
                if db.get_reason(pos) is not None:
                    continue
                value = db.probe(pos)
                if rules.status(cfg, pos) != rules.ONGOING:
                    found.setdefault("finished", pos)
                    continue
                kids = {db.probe(c).result for c in rules.children(cfg, pos)}
                if {"win", "loss", "draw"} <= kids:
                    found.setdefault("mixed", pos)
                if value.result == "draw":
                    found.setdefault("draw", pos)
                if value.result == "loss" and value.plies >= 3:
                    found.setdefault("long-loss", pos)
                if value.result == "win" and turn == 1:
                    found.setdefault("o-win", pos)
            if len(found) == 5:
                break
    assert set(found) == {"mixed", "draw", "finished", "long-loss", "o-win"}, set(found)
    return found


def sort_key(m: dict) -> tuple:
    return Value(m["value"], m["plies"]).sort_key()


def check_report(report: dict, pos: Position, db) -> None:
    cfg = db.cfg
    assert set(report) >= {"position", "value", "plies", "moves"}
    assert report["position"] == pos.text()
    value = db.probe(pos)
    assert (report["value"], report["plies"]) == (value.result, value.plies)
    legal = rules.moves(cfg, pos)
    assert sorted(m["move"] for m in report["moves"]) == sorted(mv.text(cfg.board) for mv in legal)
    keys = [sort_key(m) for m in report["moves"]]
    assert keys == sorted(keys), "moves not best first (fastest win, draws, slowest loss)"
    for m in report["moves"]:
        child = Position(m["position"])
        assert child == rules.play(cfg, pos, rules.parse_move(cfg, pos, m["move"]))
        assert Value(m["value"], m["plies"]) == db.probe(child).after_move(), m
    if report["moves"]:  # the value is the best move's
        best = report["moves"][0]
        assert (best["value"], best["plies"]) == (report["value"], report["plies"])
    else:
        assert rules.status(cfg, pos) != rules.ONGOING and report["plies"] == 0


# ------------------------------------------------------------------ query


def test_query_json(capsys, db_path, samples):
    reports = {}
    for kind, pos in samples.items():  # the CLI opens the database itself: no db open here
        rc, out, err = run(capsys, "query", pos.text(), "--db", db_path, "--json")
        assert rc == 0 and err == "", err
        lines = out.splitlines()
        assert len(lines) == 1
        reports[kind] = json.loads(lines[0])
    with open_db(db_path) as db:
        for kind, pos in samples.items():
            check_report(reports[kind], pos, db)
    results = [m["value"] for m in reports["mixed"]["moves"]]
    first_draw, last_draw = results.index("draw"), len(results) - 1 - results[::-1].index("draw")
    assert all(r == "win" for r in results[:first_draw])
    assert all(r == "draw" for r in results[first_draw : last_draw + 1])
    assert all(r == "loss" for r in results[last_draw + 1 :])


def test_query_text(capsys, db_path, samples):
    pos = samples["mixed"]
    rc, out, err = run(capsys, "query", pos.text(), "--db", db_path)
    assert rc == 0 and err == ""
    lines = out.splitlines()
    json_moves = json.loads(run(capsys, "query", pos.text(), "--db", db_path, "--json")[1])["moves"]
    assert lines[0] == f"{pos.text()}  [{DESCRIPTION}]"
    with open_db(db_path) as db:
        value = db.probe(pos)
        legal = rules.moves(db.cfg, pos)
    assert lines[1] == f"value: {value} for {'xo'[pos.turn]}"
    # moves to one position share a line (in the order of the first of them)
    groups: dict[str, list[dict]] = {}
    for m in json_moves:
        groups.setdefault(m["position"], []).append(m)
    assert len(lines) == 2 + len(groups) < 2 + len(legal)
    for line, (child, group) in zip(lines[2:], groups.items()):
        assert line.split()[0].startswith(group[0]["move"]) and line.endswith(" " + child)
        assert str(Value(group[0]["value"], group[0]["plies"])) in line
    rc, out, _ = run(capsys, "query", samples["finished"].text(), "--db", db_path)
    assert rc == 0 and len(out.splitlines()) == 2 and "in 0 for" in out.splitlines()[1]


def test_query_several_positions_in_order(capsys, monkeypatch, db_path, samples):
    texts = [samples[k].text() for k in ("draw", "mixed", "finished", "o-win", "mixed")]
    rc, out, err = run(capsys, "query", *texts, "--db", db_path, "--json")
    assert rc == 0 and err == ""
    reports = [json.loads(line) for line in out.splitlines()]
    assert [r["position"] for r in reports] == texts
    rc, out2, err = run(capsys, "query", "-", "--db", db_path, "--json", stdin="\n".join(texts) + "\n\n", monkeypatch=monkeypatch)
    assert rc == 0 and err == ""
    assert out2 == out


def test_query_finds_the_database_by_its_rules(capsys, monkeypatch, tmp_path, db_path, samples):
    root = tmp_path / "root"
    root.mkdir()
    shutil.copytree(db_path, root / "hex3-2v2-edge")
    monkeypatch.setenv("ROTARY_DB", str(root))
    pos = samples["draw"].text()
    rc, out, err = run(capsys, "query", pos, "--edge", "--json")
    assert rc == 0 and json.loads(out)["position"] == pos, err
    rc, out, err = run(capsys, "query", pos, "--json")  # base rules: no such database
    assert_one_line_error(rc, out, err, "no database")


# ------------------------------------------------------------------ stats, verify


def test_stats_json(capsys, db_path):
    rc, out, err = run(capsys, "stats", "--db", db_path, "--json")
    assert rc == 0 and err == ""
    stats = json.loads(out)
    assert stats["description"] == DESCRIPTION
    assert stats["rules"]["board"] == "hex3" and stats["rules"]["edge"] is True
    assert list(stats["material"]) == [2, 2]
    with open_db(db_path) as db:
        assert [t["key"] for t in stats["tiers"]] == [t.key for t in db.layout.tiers]
    for t in stats["tiers"]:
        assert t["wins"] + t["losses"] + t["draws"] == t["positions"] > 0
        assert sum(t["win_hist"]) == t["wins"] and sum(t["loss_hist"]) == t["losses"]
    rc, out, err = run(capsys, "stats", "--db", db_path)
    assert rc == 0 and out.splitlines()[0].startswith(DESCRIPTION)


def test_stats_checksums_are_the_values_and_equal_on_a_rebuild(capsys, db_path, tmp_path):
    """``stats --checksums``: each tier's SHA-256 over its values as little-endian uint16;
    a rebuild with ``-j 2`` (another order of writes) gives the same list, and a tier with
    one value changed another checksum."""
    import hashlib

    rc, out, err = run(capsys, "stats", "--db", db_path, "--json", "--checksums")
    assert rc == 0 and err == ""
    tiers = json.loads(out)["tiers"]
    with open_db(db_path) as db:
        for no, t in enumerate(tiers):
            vals = db.store.read_tier(no, db.layout.tiers[no].size)
            assert t["sha256"] == hashlib.sha256(vals.astype("<u2").tobytes()).hexdigest()
            changed = vals.copy()
            changed[len(changed) // 2] ^= 1
            assert hashlib.sha256(changed.astype("<u2").tobytes()).hexdigest() != t["sha256"]
    rc, out, err = run(capsys, "stats", "--db", db_path, "--checksums")
    assert rc == 0 and all(f"sha256 {t['sha256']}" in out for t in tiers)
    assert run(capsys, "solve", *SOLVE, "--db", tmp_path / "again", "-q", "-j", "2")[0] == 0
    rc, out, err = run(capsys, "stats", "--db", tmp_path / "again", "--json", "--checksums")
    assert [t["sha256"] for t in json.loads(out)["tiers"]] == [t["sha256"] for t in tiers]


def test_verify_exit_status(capsys, db_path):
    rc, out, err = run(capsys, "verify", "--db", db_path, "-q")
    assert rc == 0, out + err
    assert out.startswith("OK: ") and DESCRIPTION in out
    rc, out, err = run(capsys, "verify", "--db", db_path, "-q", "--sample", "500")
    assert rc == 0 and "500 sampled positions" in out
    rc, out, err = run(capsys, "verify", "--db", db_path, "-q", "--restart", "--json")
    assert rc == 0 and json.loads(out)["resumed"] == 0 and json.loads(out)["ok"] is True
    rc, out, err = run(capsys, "verify", "--db", db_path, "--restart", "--sample", "5")
    assert_one_line_error(rc, out, err, "--restart", "--sample")


def test_solve_again_says_already_solved(capsys, db_path):
    rc, out, err = run(capsys, "solve", *SOLVE, "--db", db_path, "-q")
    assert rc == 0 and err == ""
    assert "already solved" in out.splitlines()[0]


# ------------------------------------------------------------------ errors


def test_error_missing_database(capsys, tmp_path, samples):
    missing = tmp_path / "nothing-here"
    for argv in (["query", samples["draw"].text()], ["stats"], ["verify", "-q"]):
        rc, out, err = run(capsys, *argv, "--db", missing)
        assert_one_line_error(rc, out, err, "no database")
        assert out == ""
    assert not missing.exists()


def test_error_position_of_another_board(capsys, db_path):
    hex2 = "xo/o.x/.xo./o.. x"
    rc, out, err = run(capsys, "query", hex2, "--db", db_path)
    assert_one_line_error(rc, out, err, "hex2", "hex3")


def test_error_material_not_in_database(capsys, db_path):
    three = "..x/...o/...../....../...../.xox x"  # x 3, o 2: the database holds 2 v 2
    rc, out, err = run(capsys, "query", three, "--db", db_path)
    assert_one_line_error(rc, out, err, "material")
    assert out == ""


@pytest.mark.parametrize(
    "text, words",
    [
        ("xx/.. x", []),  # rows of no board
        (".../..../...../....../...../.... z", []),  # bad side
        (".../..../..q../....../...../.... x", ["q"]),  # foreign character
        ("", ["no position"]),
    ],
)
def test_error_malformed_position(capsys, db_path, text, words):
    rc, out, err = run(capsys, "query", *([text] if text else []), "--db", db_path)
    assert_one_line_error(rc, out, err, *words)
    assert out == ""


def test_errors_from_the_installed_script(db_path):
    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    proc = subprocess.run([exe, "query", "xx/.. x", "--db", str(db_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    proc = subprocess.run([exe, "query", "-", "--db", str(db_path), "--json"], input="", capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
