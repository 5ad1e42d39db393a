"""The terminal game with a database, through stdin scripts: hint, every move's value, the
warning when a move drops a win, undo, the last move marked, game records (save, --record,
--load), and line editing on a real terminal."""

from __future__ import annotations

import io
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.analysis import database_answer
from solver.cli.main import main
from solver.db.database import open_db
from solver.game.config import make_config
from solver.game.position import Position

W = "o../.o../o..../.x..../x...x/.... x"  # hex3 3v3: light wins in 7 with b2+5, b2+0 only draws


def run(capsys, monkeypatch, stdin: str, *argv) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    rc = main(["play", *[str(a) for a in argv]])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def db3(solved_db):
    return solved_db(make_config(3, 3), (3, 3))


@pytest.fixture(scope="module")
def answer(db3):
    with open_db(db3) as db:
        return database_answer(db, Position(W))


def test_hint_and_every_moves_value(capsys, monkeypatch, db3, answer):
    rc, out, err = run(capsys, monkeypatch, "hint\nvalues\nvalue\nquit\n", "--db", db3, "--position", W, "--o", "perfect")
    assert rc == 0 and err == ""
    assert "database: hex3 3v3 base ('hint', 'values', 'undo', 'save FILE')" in out
    best = answer["moves"][0]
    assert best["move"] == "b2+5" and answer["value"] == "win" and answer["plies"] == 7
    assert "hint: b2+5 (win in 7; light (x) win in 7 now)" in out
    block = out.split("every move, best first:\n")[1].split("light (x)>")[0]
    listed = [line.split() for line in block.splitlines()]
    expected = [[m["move"], m["value"], *([] if m["plies"] is None else ["in", str(m["plies"])])] for m in answer["moves"]]
    assert listed == expected
    assert "light (x): win in 7" in out


def test_a_move_that_drops_the_win_is_warned_once(capsys, monkeypatch, db3):
    rc, out, err = run(capsys, monkeypatch, "b2+0\nb2+0\nquit\n", "--db", db3, "--position", W, "--o", "perfect")
    assert rc == 0 and err == ""
    assert out.count("warning: b2+0 drops the win (win in 7 now, draw after it); type it again to play it, or 'hint'") == 1
    assert "last move: b2+0 by light (x), marked < >" in out
    board = out.split("last move: b2+0")[1].split("to move")[0]
    assert "<.>" in board  # the pivot b2 stays empty and is marked
    assert "dark (o) plays " in out and out.rstrip().endswith("game abandoned after 2 plies")


def test_the_winning_move_is_not_warned(capsys, monkeypatch, db3):
    rc, out, _ = run(capsys, monkeypatch, "b2+5\nquit\n", "--db", db3, "--position", W, "--o", "perfect")
    assert rc == 0 and "warning" not in out and "last move: b2+5 by light (x)" in out


def test_undo_takes_back_the_reply_and_the_move(capsys, monkeypatch, db3):
    rc, out, err = run(capsys, monkeypatch, "undo\nb2+5\nundo\nquit\n", "--db", db3, "--position", W, "--o", "perfect")
    assert rc == 0 and err == ""
    assert "nothing to undo" in out
    assert "took back 2 plies" in out
    assert out.rstrip().endswith("game abandoned after 0 plies")
    # after the undo the board is the start again, without a last move
    after = out.split("took back 2 plies")[1]
    assert "last move" not in after and "light (x) to move" in after


def test_hint_without_a_database_comes_from_the_engine(capsys, monkeypatch):
    rc, out, err = run(capsys, monkeypatch, "hint\nvalues\nquit\n", "--position", W)
    assert rc == 0 and err == ""
    assert "hint: " in out and "every move, best first:" in out
    assert out.count("engine estimate") + out.count("proven") >= 2
    assert "database:" not in out


def test_save_and_load(capsys, monkeypatch, db3, tmp_path):
    saved = tmp_path / "game.json"
    rc, out, err = run(capsys, monkeypatch, f"b2+5\nsave {saved}\nsave\nquit\n", "--db", db3, "--position", W, "--o", "perfect")
    assert rc == 0 and f"saved {saved} (2 plies)" in out
    assert err == "save needs a file name: save FILE\n"
    record = json.loads(saved.read_text())
    assert record["format"] == "rotary-game" and record["start"] == W and record["moves"][0] == "b2+5"
    assert len(record["moves"]) == 2 and record["rules"]["board"] == "hex3"
    rc, out, err = run(capsys, monkeypatch, "hint\nquit\n", "--load", saved, "--db", db3, "--o", "perfect")
    assert rc == 0 and err == "", err
    assert "replayed 2 plies" in out and f"last move: {record['moves'][1]} by dark (o)" in out
    assert "hint: " in out and out.rstrip().endswith("game abandoned after 2 plies")


def test_record_follows_the_game_and_replays_it(capsys, monkeypatch, tmp_path):
    rec = tmp_path / "rec.json"
    rc, out, _ = run(capsys, monkeypatch, "", "--position", W, "--x", "random", "--o", "greedy", "--seed", "4",
                     "--max-plies", "6", "--record", rec)
    assert rc == 0
    record = json.loads(rec.read_text())
    final = out.split("final: ")[1].split()[0] if "final: " in out else None
    assert 1 <= len(record["moves"]) <= 6
    if final:
        assert record["result"] and " wins: " in record["result"]
    # replay: the same moves, the same position reached, nothing asked of anyone
    rc, out2, err = run(capsys, monkeypatch, "", "--load", rec, "--x", "random", "--o", "random", "--max-plies", "1")
    assert rc == 0 and err == ""
    assert f"replayed {len(record['moves'])} plies" in out2


def test_load_errors_are_one_line(capsys, monkeypatch, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"format": "rotary-game", "version": 1, "rules": make_config(3, 3).key(), "start": W,
                                "moves": ["b2+5"], "result": None}))
    bad_move = tmp_path / "bad-move.json"
    bad_move.write_text(json.dumps({**json.loads(good.read_text()), "moves": ["b2+5", "b2+5"]}))
    not_json = tmp_path / "notes.txt"
    not_json.write_text("hello")
    cases = [
        ([not_json], f"{not_json} is not a rotary game record"),
        ([bad_move], f"{bad_move}: move 2: illegal move 'b2+5'"),
        ([tmp_path / "none.json"], "no such file"),
        ([good, "--board", "hex3"], "--load takes the rules and the start from the record; drop --board"),
        ([good, "--position", W], "drop --position"),
    ]
    for extra, words in cases:
        rc, out, err = run(capsys, monkeypatch, "", "--load", *extra)
        assert rc == 2 and out == "" and err.count("\n") == 1 and words in err, (extra, err)
    rc, out, err = run(capsys, monkeypatch, "", "--position", W, "--record", tmp_path / "no" / "such" / "dir.json")
    assert rc == 2 and err.count("\n") == 1 and "dir.json" in err


def _read_until(fd: int, marker: bytes, seconds: float = 60.0) -> bytes:
    got = b""
    deadline = time.monotonic() + seconds
    while marker not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"no {marker!r} in {got[-400:]!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    return got


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_line_editing_on_a_terminal():
    """On a terminal the prompt is readline's: the cursor keys edit the line (typed
    ``b25``, left arrow, ``+``: the move played is ``b2+5``)."""
    pytest.importorskip("readline")
    import pty

    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    assert exe, "the rotary script is not installed (pip install -e '.[test]')"
    master, slave = pty.openpty()
    env = dict(os.environ, NO_COLOR="1", TERM="xterm")
    proc = subprocess.Popen([exe, "play", "--position", W, "--o", "greedy", "--seed", "1"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    try:
        _read_until(master, b"light (x)> ")
        os.write(master, b"b25\x1b[D+\r")
        got = _read_until(master, b"light (x)> ")
        assert b"last move: b2+5 by light (x)" in got, got[-600:]
        os.write(master, b"quit\r")
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 0
