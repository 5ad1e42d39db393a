"""One interface: every option with one meaning and a help text, ``--json`` and
``-q`` where they belong, flags that contradict a database refused, one-line errors for
the defects a new user met, the solve lock, honest progress bars, read-only databases,
and the board drawing (point letters, trap fields, ``NO_COLOR``).

In-process through ``solver.cli.main.main`` on tiny databases (hex(2) 3v3, hex(3) 2v2),
plus subprocesses where a second process is the point (the solve lock).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from solver.cli.main import build_parser, main
from solver.db import catalog
from solver.game.config import make_config
from tests.helpers import rotary_exe, run

ROOT = Path(__file__).resolve().parents[2]
START = ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x"
HEX3_POS = "..o/..../...../....../.x.../.ox. x"  # hex(3) 2v2: light wins in 7
HEX3_PICK = ".../..o./...../.o..../x..../..x. o pick c2 d2"  # setup offer, 2 balls each
HEX3_AT = ".../..o./...../.o..../x..../..x. x at c2"
SETUP = ["--setup", "offer", "--balls", "2"]


def one_line_error(rc, out, err, *words):
    assert rc == 2, (rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rotary: error: "), lines[0]
    assert "Traceback" not in err and "Errno" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


@pytest.fixture
def hex3_db(solved_db):
    return solved_db(make_config("hex3", 2), (2, 2))


@pytest.fixture
def hex2_db(solved_db):
    return solved_db(make_config("hex2", 3), (3, 3))


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser, _ = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


# ---------------------------------------------------------------------------- options


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("rotary ") and len(out.split()) == 2


def test_every_option_of_every_command_has_help():
    parser, _ = build_parser()
    missing = [a.dest for a in parser._actions if not a.help]
    for action in next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))._choices_actions:
        if not action.help:
            missing.append(f"command {action.dest}")
    for name, sub in subparsers().items():
        for action in sub._actions:
            if action.help in (None, "", argparse.SUPPRESS):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, f"options without help: {missing}"


def test_json_and_quiet_where_they_belong():
    subs = subparsers()
    for name in ("solve", "stats", "verify", "query", "moves", "prove", "book"):
        assert "--json" in subs[name]._option_string_actions, f"{name} has no --json"
    for name in ("solve", "verify", "prove", "book"):  # the commands that draw progress
        action = subs[name]._option_string_actions.get("-q")
        assert action is not None and action.help == "no progress bars", name


def test_balls_takes_k_or_avb_in_every_command():
    for name, sub in subparsers().items():
        action = sub._option_string_actions.get("--balls")
        if action is None:
            continue
        assert "AvB" in action.help, (name, action.help)


def test_db_and_store_mean_one_thing_everywhere():
    for name, sub in subparsers().items():
        db = sub._option_string_actions.get("--db")
        if db is not None:
            assert db.help.startswith("the value database"), (name, db.help)
        store = sub._option_string_actions.get("--store")
        if store is not None:
            assert store.help.startswith("the proof store"), (name, store.help)


@pytest.mark.parametrize("balls", ["0", "0v3", "3v0", "-1"])
def test_solve_refuses_material_below_one_ball(capsys, tmp_path, balls):
    rc, out, err = run(capsys, "solve", "--board", "hex2", "--balls", balls, "--db", tmp_path / "db", "-q")
    one_line_error(rc, out, err, "--balls", "at least one ball")
    assert not (tmp_path / "db").exists()


def test_gitignore_names_the_default_folders():
    lines = (ROOT / ".gitignore").read_text().split()
    assert "/rotary-db/" in lines and "/rotary-proofs/" in lines


# ---------------------------------------------------------------------------- flags against a database


@pytest.mark.parametrize(
    "argv, words",
    [
        (["query", HEX3_POS, "--board", "hex4"], ["--board hex4", "hex3 2v2"]),
        (["query", HEX3_POS, "--balls", "4"], ["--balls 4", "hex3 2v2"]),
        (["query", HEX3_POS, "--edge"], ["--edge", "hex3 2v2"]),
        (["verify", "--board", "hex4"], ["--board hex4", "hex3 2v2"]),
        (["verify", "--balls", "3v2"], ["--balls 3v2", "hex3 2v2"]),
        (["stats", "--board", "hex2"], ["--board hex2", "hex3 2v2"]),
        (["stats", "--capture", "--traps-x", "a1"], ["--capture", "hex3 2v2"]),
    ],
)
def test_flags_that_contradict_the_database_are_refused(capsys, hex3_db, argv, words):
    rc, out, err = run(capsys, *argv, "--db", hex3_db)
    one_line_error(rc, out, err, *words)
    assert out == ""


def test_flags_the_database_has_are_accepted_in_any_case(capsys, hex3_db):
    rc, out, err = run(capsys, "stats", "--db", hex3_db, "--board", "HEX3", "--balls", "2v2", "--json")
    assert rc == 0, err
    assert json.loads(out)["description"] == "hex3 2v2 base"


def test_trap_flags_are_checked_against_the_database(capsys, tmp_path):
    path = tmp_path / "cap"
    assert main(["solve", "--board", "hex2", "--balls", "1", "--capture", "--traps-x", "a1", "--traps-o", "d2",
                 "--db", str(path), "-q"]) == 0
    capsys.readouterr()
    rc, out, err = run(capsys, "stats", "--db", path, "--capture", "--traps-x", "A1", "--traps-o", "D2")
    assert rc == 0, err
    rc, out, err = run(capsys, "stats", "--db", path, "--capture", "--traps-x", "b1")
    one_line_error(rc, out, err, "--traps-x b1", "hex2 1v1 capture")


# ---------------------------------------------------------------------------- defects


@pytest.mark.parametrize("sample", ["-5", "0"])
def test_verify_sample_below_one_is_refused(capsys, hex2_db, sample):
    rc, out, err = run(capsys, "verify", "--db", hex2_db, "--sample", sample, "-q")
    one_line_error(rc, out, err, f"--sample must be at least 1, got {sample}")
    assert out == ""


def test_solve_into_a_file_names_the_file(capsys, tmp_path):
    afile = tmp_path / "README.md"
    afile.write_text("not a database\n")
    rc, out, err = run(capsys, "solve", "--board", "hex2", "--balls", "2", "--db", afile, "-q")
    line = one_line_error(rc, out, err, str(afile), "is a file")
    assert "exists" not in line
    rc, out, err = run(capsys, "solve", "--db", afile)  # refused before the memory and disk figures
    one_line_error(rc, out, err, str(afile), "is a file")
    assert out == "" and "memory" not in err
    rc, out, err = run(capsys, "solve", "--board", "hex2", "--balls", "2", "--db", afile / "db", "-q")
    one_line_error(rc, out, err, f"cannot create the folder {afile / 'db'}", f"{afile} is a file")
    rc, out, err = run(capsys, "stats", "--db", afile)
    one_line_error(rc, out, err, str(afile), "is a file")


def test_os_errors_say_what_is_wrong_without_errno_text():
    from solver.cli.main import os_message

    assert os_message(OSError(28, "No space left on device")) == "no space left on device"
    assert os_message(PermissionError(13, "Permission denied", "/x/y")) == "/x/y: permission denied"
    assert os_message(FileNotFoundError(2, "No such file or directory", "/x/y")) == "/x/y: no such file or directory"


def test_a_file_named_as_the_proof_store_is_named_once(capsys, tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    rc, out, err = run(capsys, "prove", HEX3_POS, "--store", afile, "--nodes", "10")
    line = one_line_error(rc, out, err, f"{afile} is a file")
    assert line.count(str(afile)) == 1, line


def test_play_with_a_perfect_player_and_no_database_fails_before_the_board(capsys, tmp_path):
    rc, out, err = run(capsys, "play", "--x", "random", "--o", "perfect", "--position", HEX3_POS)
    one_line_error(rc, out, err, "no database")
    assert out == ""  # nothing drawn, nothing played


@pytest.mark.parametrize("command", [["play", "--x", "random", "--o", "random"], ["book", "--depth", "0", "-q"]])
@pytest.mark.parametrize("balls", ["4", "3v2"])
def test_balls_that_contradict_the_standard_start_are_refused(capsys, tmp_path, command, balls):
    rc, out, err = run(capsys, *command, "--balls", balls, "--store", tmp_path / "st") if command[0] == "book" else \
        run(capsys, *command, "--balls", balls)
    one_line_error(rc, out, err, f"--balls {balls}", "standard start has 13 balls a side")
    assert out == ""


def test_the_standard_start_is_played_under_its_own_rules(capsys):
    rc, out, err = run(capsys, "play", "--x", "random", "--o", "random", "--max-plies", "1", "--balls", "13")
    assert rc == 0, err
    assert out.splitlines()[0] == "rules: hex4 13v13 base"


def test_point_names_in_any_case(capsys, monkeypatch):
    # phase words of positions
    rc, out, err = run(capsys, "moves", HEX3_PICK.replace("pick c2 d2", "pick D2 C2"), "--json", *SETUP)
    assert rc == 0, err
    assert sorted(m["move"] for m in json.loads(out)["moves"]) == ["pick c2", "pick d2"]
    rc, out, err = run(capsys, "moves", HEX3_AT.replace("at c2", "at C2"), "--json", *SETUP)
    assert rc == 0, err
    assert {m["move"] for m in json.loads(out)["moves"]} == {f"c2+{k}" for k in range(6)}
    # moves typed in a game: an unknown point or an illegal move would be refused on stderr
    rc, out, err = run(capsys, "play", "--position", HEX3_POS, "--x", "human", "--o", "random", "--seed", "1",
                       stdin="D2+4\nquit\n", monkeypatch=monkeypatch)
    assert rc == 0 and err == "", err
    assert "game abandoned after 2 plies" in out
    # trap options
    rc, out, err = run(capsys, "show", "--capture", "--traps-x", "A1,B1", "--traps-o", "D2", "../.../..../... x")
    assert rc == 0, err
    assert "light's trap fields a1 b1" in out and "dark's trap fields d2" in out


@pytest.mark.parametrize(
    "phase, article",
    [("x offer", "an offer-phase"), ("x at c2", "an at-phase"), ("o pick c2 d2", "a pick-phase"), ("x place", "a place-phase")],
)
def test_phase_errors_use_the_right_article(capsys, phase, article):
    # c4 is a centre point: occupied, whatever the phase, it is refused
    rc, out, err = run(capsys, "moves", f".../..o./..x../.o..../x..../..x. {phase}", *SETUP)
    one_line_error(rc, out, err, f"occupied in {article} position")


def test_book_reports_proven_and_open_as_they_are(capsys, tmp_path):
    argv = ["book", "--start", HEX3_POS, "--depth", "1", "--nodes", "30", "--store", tmp_path / "st", "-q"]
    rc, out, err = run(capsys, *argv, "--json")
    assert rc == 0, err
    report = json.loads(out)
    exported = json.loads((tmp_path / "st" / "book.json").read_text())
    nodes = exported["nodes"]
    kids = {m["key"] for m in nodes[exported["root"]]["moves"]}
    proven = sum(1 for k in kids if nodes[k]["value"]["lo"] == nodes[k]["value"]["hi"])
    levels = report["levels"]
    assert [lv["depth"] for lv in levels] == [0, 1]
    assert (levels[1]["positions"], levels[1]["proven"], levels[1]["open"]) == (len(kids), proven, len(kids) - proven)
    assert report["proven"] + report["open"] == report["positions"] == 1 + len(kids)
    assert report["open"] > 0  # 30 nodes a position cannot prove everything here
    rc, out, err = run(capsys, *argv, "--no-tree")
    assert rc == 0, err
    assert "every level" not in out and "proved" not in out
    assert f"{report['positions']} positions, {report['proven']} proven, {report['open']} open" in out


def test_book_finds_its_leaf_database_as_query_does(capsys, monkeypatch, tmp_path, hex3_db):
    root = tmp_path / "dbs"
    root.mkdir()
    shutil.copytree(hex3_db, root / catalog.db_name(make_config("hex3", 2), (2, 2)))
    monkeypatch.setenv("ROTARY_DB", str(root))
    rc, out, err = run(capsys, "book", "--start", HEX3_POS, "--depth", "1", "--nodes", "30", "--store", tmp_path / "st",
                       "--json", "-q")
    assert rc == 0, err
    report = json.loads(out)
    assert report["leaf_db"] and Path(report["leaf_db"]).parent == root
    assert report["open"] == 0 and report["root"]["value"] == "win"
    # none found: no leaves, no error
    monkeypatch.setenv("ROTARY_DB", str(tmp_path / "empty"))
    rc, out, err = run(capsys, "book", "--start", HEX3_POS, "--depth", "0", "--nodes", "30", "--store", tmp_path / "st2",
                       "--json", "-q")
    assert rc == 0, err
    assert json.loads(out)["leaf_db"] is None


# ---------------------------------------------------------------------------- --json


def test_solve_json_summary(capsys, tmp_path):
    rc, out, err = run(capsys, "solve", "--board", "hex2", "--balls", "3", "--db", tmp_path / "db", "-q", "--json")
    assert rc == 0, err
    report = json.loads(out)
    assert report["description"] == "hex2 3v3 base" and report["path"] == str(tmp_path / "db")
    assert report["total"] == {"positions": 3104, "wins": 1445, "losses": 1659, "draws": 0}
    assert [t["key"] for t in report["tiers"]] == ["x3v3"] and report["solved_now"] == ["x3v3"]
    rc, out, _ = run(capsys, "solve", "--board", "hex2", "--balls", "3", "--db", tmp_path / "db", "-q", "--json")
    again = json.loads(out)
    assert again["already_solved"] and again["solved_now"] == [] and again["total"] == report["total"]


def test_verify_json(capsys, hex2_db):
    rc, out, err = run(capsys, "verify", "--db", hex2_db, "--sample", "50", "-q", "--json")
    assert rc == 0, err
    report = json.loads(out)
    assert report["ok"] is True and report["checked"] == 50 and report["message"].startswith("OK")


def test_solve_summary_rows_line_up(capsys, tmp_path):
    rc, out, err = run(capsys, "solve", "--setup", "offer", "--board", "hex2", "--balls", "2", "--db", tmp_path / "s",
                       "-q")
    assert rc == 0, err
    lines = out.splitlines()
    head = next(line for line in lines if line.lstrip().startswith("tier"))
    rows = [line for line in lines if line.split() and (line.split()[0].startswith(("x", "o", "place:")))]
    assert any(r.split()[0].startswith("place:") for r in rows)
    col = head.index("positions") + len("positions")
    for r in rows:
        assert len(r) == len(head), r
        assert r[col - 1].isdigit(), (r, head)


# ---------------------------------------------------------------------------- the solve lock


def _locked(folder: Path) -> bool:
    """Whether some process holds the solve lock of ``folder`` (a shared try, let go at once)."""
    file = folder / "solve.lock"
    if not file.exists():
        return False
    fd = os.open(file, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _wait(condition, seconds: float = 60.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_a_second_solve_into_a_folder_in_use_is_refused(capsys, tmp_path):
    folder = tmp_path / "db"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\nfrom solver.db.store import SolveLock\n"
         "with SolveLock(sys.argv[1]):\n    print('locked', flush=True)\n    time.sleep(120)\n", str(folder)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        t0 = time.monotonic()
        rc, out, err = run(capsys, "solve", "--board", "hex2", "--balls", "2", "--db", folder, "-q")
        one_line_error(rc, out, err, str(folder), "in use", f"pid {holder.pid}")
        assert time.monotonic() - t0 < 5  # at once, not after solving
        assert not (folder / "data.mdb").exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # kill -9 released it
    assert main(["solve", "--board", "hex2", "--balls", "2", "--db", str(folder), "-q"]) == 0


def test_two_real_solves_into_one_folder(tmp_path):
    """Two ``rotary solve`` processes: the second, started while the first works (hex(3)
    4v4, a minute or more), is refused at once; ``kill -9`` of the first frees the folder."""
    folder = tmp_path / "db"
    argv = [rotary_exe(), "solve", "--board", "hex3", "--balls", "4", "--db", str(folder), "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the tree under test, whatever is installed
    first = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        started = _wait(lambda: _locked(folder) or (folder / "data.mdb").exists() or first.poll() is not None)
        assert started and first.poll() is None, "the first solve did not start"
        t0 = time.monotonic()
        second = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
        one_line_error(second.returncode, second.stdout, second.stderr, str(folder), "in use", f"pid {first.pid}")
        assert time.monotonic() - t0 < 30
        assert first.poll() is None  # the first goes on
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert not _locked(folder)


# ---------------------------------------------------------------------------- progress bars


class Recorder:
    """Stands in for :class:`solver.retro.report.ProgressBar` and remembers everything."""

    bars: list["Recorder"] = []
    events: list = []

    def __init__(self, desc, total, unit, enabled=True, eta=True):
        self.desc, self.total, self.unit, self.eta, self.n, self.adds = desc, total, unit, eta, 0, []
        Recorder.bars.append(self)

    def add(self, n):
        self.n += n
        self.adds.append(n)
        Recorder.events.append(("add", self.desc))

    def note(self, text):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


@pytest.fixture
def recorded(monkeypatch):
    from solver.retro import driver, setup

    Recorder.bars, Recorder.events = [], []
    monkeypatch.setattr(driver, "ProgressBar", Recorder)
    monkeypatch.setattr(setup, "ProgressBar", Recorder)
    real = driver._task

    def task(kind, *args):
        Recorder.events.append(("task", kind))
        return real(kind, *args)

    monkeypatch.setattr(driver, "_task", task)
    return Recorder


def test_bars_end_at_100_percent_and_count_their_label(recorded, tmp_path):
    from solver.db.database import open_db
    from solver.retro.driver import solve

    cfg = make_config("hex3", 2, capture=True, traps_x="a1,f3", traps_o="a3,c6")
    report = solve(cfg, tmp_path / "db", jobs=1, progress=True)
    positions = {t.key: t.positions for t in report.tiers}
    assert recorded.bars
    for bar in recorded.bars:
        assert bar.n == bar.total, (bar.desc, bar.n, bar.total)  # ends at 100 %
        keys = bar.desc.split()[0].split("+")
        if bar.desc.endswith(" values"):  # the positions of its tiers, draws included
            assert bar.total == sum(positions[k] for k in keys), bar.desc
            assert bar.eta is False  # no time left shown for a number of plies nobody knows
        else:
            assert bar.desc.endswith(" counters") and bar.unit == "cell"
    with open_db(tmp_path / "db") as db:
        cells = sum(t.size for t in db.layout.tiers)
    assert sum(b.total for b in recorded.bars if b.desc.endswith("counters")) == cells
    assert sum(b.total for b in recorded.bars if b.desc.endswith("values")) == sum(positions.values()) < cells


def test_inline_bars_move_between_small_tasks(recorded, monkeypatch, tmp_path):
    from solver.retro import driver

    monkeypatch.setattr(driver, "CHUNK", 4096)
    monkeypatch.setattr(driver, "SMALL_GROUP", 1024)
    driver.solve(make_config("hex3", 2), tmp_path / "db", jobs=1, progress=True)
    counters = [e for e in recorded.events if e == ("task", "init") or e[1] == "x2v2 counters"]
    assert len(counters) >= 2 * 5  # 17,652 cells in chunks of at most 4,096: 5 tasks or more
    # each task's count reaches the bar before the next task starts
    assert counters[:4] == [("task", "init"), ("add", "x2v2 counters")] * 2


def test_group_chunks_are_small_for_every_job_count():
    from solver.retro.driver import CHUNK, group_chunks

    for jobs in (1, 2, 8):
        chunks = group_chunks(0, 25_904_340, jobs)
        assert chunks[0][0] == 0 and chunks[-1][1] == 25_904_340
        assert all(b - a <= CHUNK for a, b in chunks)
        assert len(chunks) >= jobs * 8


def test_progress_bars_on_stderr_end_at_100(capsys, tmp_path):
    rc, out, err = run(capsys, "solve", "--board", "hex3", "--balls", "2", "--db", tmp_path / "db")
    assert rc == 0
    last: dict[str, str] = {}
    for part in err.replace("\r", "\n").split("\n"):
        if ":" in part and "%|" in part:
            last[part.split(":")[0].strip()] = part
    assert set(last) == {"x2v2 counters", "x2v2 values", "x2v2 write"}, last
    for line in last.values():
        assert "100%" in line, line
    assert "<" not in last["x2v2 values"].split("|")[-1]  # no time-left guess on the values bar


def test_the_values_bar_shows_rate_ply_and_positions_left(capsys, tmp_path, monkeypatch):
    """What README's solve section says the values bar shows: decided / total, elapsed, the
    rate, the ply running, what the ply before decided, the positions left. The bar is
    redrawn after every task here: hex(3) 3v3 solves in under a second, faster than the
    bar's own redraw interval, and the lines must not depend on the machine's speed."""
    from solver.retro.report import ProgressBar, ply_note

    monkeypatch.setattr(ProgressBar, "REFRESH", 0.0)

    assert ply_note(0, None, 987_120) == "ply 0, 987k left (draws among them)"
    assert ply_note(23, 1_360_773, 9_800_000) == "ply 23, ply 22: 1.36M, 9.80M left (draws among them)"
    assert ply_note(23, 1_360_773, 9_800_000, 754.0) == "ply 23, ply 22: 1.36M, 9.80M left (draws among them), about 12 min left if the fall goes on"
    assert ply_note(9, 5, 100, 4000.0).endswith(", about 1 h 06 min left if the fall goes on")
    rc, out, err = run(capsys, "solve", "--board", "hex3", "--balls", "3", "--db", tmp_path / "db")
    assert rc == 0
    lines = [p for p in err.replace("\r", "\n").split("\n") if p.startswith("x3v3 values:") and " ply " in p]
    assert lines, err[-2000:]
    for line in lines:
        tail = line.split("|")[-1]  # " 611k/987k pos [00:02, 307kpos/s, ply 10, ply 9: 38.4k, 376k left (...)]"
        assert "pos/s, ply " in tail, line
        assert re.search(r" left \(draws among them\)(, about \d+ (s|min) left if the fall goes on)?\]$", tail.rstrip()), line
        assert "<" not in tail, line
        decided, total = tail.split()[0].split("/")
        assert total == "987k"


def test_quiet_draws_no_bars(capsys, tmp_path):
    rc, out, err = run(capsys, "solve", "--board", "hex3", "--balls", "2", "--db", tmp_path / "db", "-q")
    assert rc == 0 and err == ""
    rc, out, err = run(capsys, "verify", "--db", tmp_path / "db", "-q")
    assert rc == 0 and err == ""


# ---------------------------------------------------------------------------- read-only databases


def _read_only_copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    (dst / "lock.mdb").unlink(missing_ok=True)
    (dst / "solve.lock").unlink(missing_ok=True)
    for f in dst.iterdir():
        f.chmod(0o444)
    dst.chmod(0o555)
    return dst


def test_a_database_in_a_read_only_folder_is_readable(capsys, tmp_path, hex3_db):
    if os.geteuid() == 0:
        pytest.skip("runs as root: chmod does not keep root from writing (see the next test)")
    path = _read_only_copy(hex3_db, tmp_path / "ro")
    try:
        rc, out, err = run(capsys, "query", HEX3_POS, "--db", path, "--json")
        assert rc == 0, err
        assert json.loads(out)["value"] == "win"
        assert sorted(f.name for f in path.iterdir()) == ["data.mdb"]
    finally:
        path.chmod(0o755)


def test_a_database_opens_read_only_without_writing(capsys, monkeypatch, tmp_path, hex3_db):
    """What a folder the reader cannot write looks like, even to root: ``os.access``
    says no. The database is read without a lock file and nothing is written."""
    path = _read_only_copy(hex3_db, tmp_path / "ro")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path and mode & os.W_OK else real_access(p, mode, **kw))
    before = {f.name: f.stat().st_mtime_ns for f in path.iterdir()}
    try:
        from solver.db.database import open_db
        from solver.game.position import Position

        with open_db(path) as db:
            assert db.probe(Position(HEX3_POS)).result == "win"
            assert db.store.env.flags()["readonly"] is True
        rc, out, err = run(capsys, "query", HEX3_POS, "--db", path, "--json")
        assert rc == 0, err
        assert {f.name: f.stat().st_mtime_ns for f in path.iterdir()} == before
    finally:
        path.chmod(0o755)


# ---------------------------------------------------------------------------- the board drawing


def test_the_board_names_its_points(capsys):
    from solver.game.board import board_from_label

    rc, out, err = run(capsys, "show", START)
    assert rc == 0
    lines = out.splitlines()
    board = board_from_label("hex4")
    for number in range(8, 0, -1):
        cells, letters = lines[2 * (8 - number)], lines[2 * (8 - number) + 1]
        assert cells.split()[0] == str(number)
        row = board.rows[number - 1]
        assert letters.split() == [chr(ord("a") + i) for i in range(len(row))]
        # each letter stands under its point
        marks = [i for i, ch in enumerate(cells) if ch in "xo.*" and i > 2]
        assert marks == [i for i, ch in enumerate(letters) if ch.isalpha()], (cells, letters)
    assert "a-d" not in out


def test_trap_fields_are_marked_under_capture(capsys):
    rc, out, err = run(capsys, "show", START, "--capture")
    assert rc == 0, err
    lines = out.splitlines()
    assert "[ ] light's trap fields c1 a2 f2 g3" in out and "( ) dark's trap fields a3 a6 b8 c8" in out
    row1 = lines[14]
    assert row1.split()[0] == "1" and "[x]" in row1  # c1 holds a light ball on light's trap
    assert "(o)" in lines[0]  # b8, c8
    rc, out, err = run(capsys, "show", START)
    assert "[" not in out and "trap" not in out


def test_no_color_is_honoured(capsys, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    rc, out, _ = run(capsys, "show", START)
    assert rc == 0 and "\033[" in out
    monkeypatch.setenv("NO_COLOR", "1")
    for argv in (["show", START], ["start", "--draw"]):
        rc, out, _ = run(capsys, *argv)
        assert rc == 0 and "\033[" not in out, argv
    rc, out, _ = run(capsys, "play", "--position", HEX3_POS, "--x", "random", "--o", "random", "--seed", "3",
                     "--max-plies", "3")
    assert rc == 0 and "\033[" not in out


# ---------------------------------------------------------------------------- the README


def test_readme_explains_point_names_moves_and_values():
    text = " ".join((ROOT / "README.md").read_text().split())  # lines joined
    assert "`a1` is the leftmost point of the bottom row" in text
    assert "`e3+4` places the rota" in text and "`+0` turns the rota back" in text
    assert '"loss in 12" beside `d3+5`' in text
    guide = " ".join((ROOT / "docs" / "guide.md").read_text().split())  # the options, in depth
    for option in ("--db PATH", "--store PATH", "`-q`", "`--json`", "NO_COLOR", "--version"):
        assert option in guide, option


def test_readme_draws_the_start_as_rotary_does(capsys):
    text = (ROOT / "README.md").read_text()
    block = text.split("as `rotary start --draw`\ndraws it:\n\n```\n", 1)[1].split("```", 1)[0]
    rc, out, _ = run(capsys, "start", "--draw")
    assert rc == 0
    assert block.rstrip("\n") == "\n".join(out.splitlines()[1:]).rstrip("\n")


def test_a_proof_logs_a_line_a_minute_where_stderr_is_a_file(capsys, monkeypatch):
    """A long proof run in the background (its stderr a file) shows it is alive: a new line
    of nodes and rate every LOG_EVERY_S seconds, no carriage returns; on a terminal the
    one line is rewritten in place instead."""
    from solver.cli import prove

    show = prove._progress(True)
    for seconds in (1.0, 30.0, prove.LOG_EVERY_S + 1, prove.LOG_EVERY_S + 2, 2 * prove.LOG_EVERY_S + 1):
        show(int(seconds * 400_000), seconds)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == ["  24,400,000 nodes  61.0 s  400,000 nodes/s", "  48,400,000 nodes  121.0 s  400,000 nodes/s"]
    assert prove._progress(False) is None

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    show = prove._progress(True)
    show(400_000, 1.0)
    assert capsys.readouterr().err.startswith("\r  400,000 nodes  1.0 s")
