"""``rotary solve`` says what it needs before it starts, and refuses in one line what does
not fit (:mod:`solver.retro.budget`): too little memory, ``/dev/shm`` or disk."""

from __future__ import annotations

import shutil
import time

import pytest

from solver.cli.main import main
from solver.game.config import make_config
from solver.index import Layout
from solver.retro import budget

ARGS = ["solve", "--board", "hex3", "--balls", "3", "--edge"]
CFG = make_config("hex3", 3, edge=True)


def _refused(capsys, db, *extra) -> str:
    rc = main([*ARGS, "--db", str(db), *extra])
    out, err = capsys.readouterr()
    assert rc == 2, err
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rotary: error: hex3 3v3 edge needs "), err
    assert not db.exists()  # nothing written: no folder, no lock, no database
    return lines[0]


@pytest.mark.parametrize("quiet", [[], ["-q"]])
def test_too_little_memory_is_refused_in_one_line(monkeypatch, capsys, tmp_path, quiet):
    monkeypatch.setattr(budget, "mem_available", lambda: 50_000_000)
    line = _refused(capsys, tmp_path / "db", "-j", "2", *quiet)
    assert "of memory" in line and "50 MB are available" in line, line
    assert "--executor ray" in line and "rather than swap" in line


def test_too_little_dev_shm_is_refused(monkeypatch, capsys, tmp_path):
    from solver.retro.pool import values_folder

    real = budget.free_space
    folder = values_folder()
    monkeypatch.setattr(budget, "free_space", lambda p: 1_000_000 if str(p) == folder else real(p))
    line = _refused(capsys, tmp_path / "db", "--executor", "process")
    assert f"2.6 MB in {folder} for its value array and 1.0 MB are free there" in line
    assert "--executor ray" in line
    # threads keep the value array in the solving process's memory: the folder is not asked
    assert main([*ARGS, "--db", str(tmp_path / "threads"), "-q"]) == 0


def test_too_little_disk_is_refused(monkeypatch, capsys, tmp_path):
    real = budget.free_space
    monkeypatch.setattr(budget, "free_space", lambda p: 500_000 if str(p) == str(tmp_path / "db") else real(p))
    line = _refused(capsys, tmp_path / "db")
    assert "of disk" in line and f"in {tmp_path / 'db'} and 0.5 MB are free" in line, line
    assert "--checkpoint off" in line  # the checkpoints are part of it

    # without checkpoints, the database alone: about 0.7 bytes a position, 1.3 M positions
    line = _refused(capsys, tmp_path / "db", "--checkpoint", "off")
    assert "needs about 1.0 MB of disk (up to 2.9 MB)" in line and "checkpoint" not in line, line


def test_what_a_solve_needs_is_said_first(capsys, tmp_path):
    assert main([*ARGS, "--db", str(tmp_path / "process"), "-j", "2", "--executor", "process"]) == 0
    err = capsys.readouterr().err
    first = err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: needs about "), first
    assert "value array in" in first and "2 workers of" in first and "available" in first
    assert "disk up to 2.9 MB (typically 1.0 MB), checkpoints up to 3.9 MB" in first and "free" in first

    # threads (the default) share this process: no workers of their own to count
    assert main([*ARGS, "--db", str(tmp_path / "db"), "-j", "2"]) == 0
    first = capsys.readouterr().err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: needs about ") and "workers" not in first, first

    # solved: nothing more is needed, nothing is checked, nothing said
    assert main([*ARGS, "--db", str(tmp_path / "db"), "-j", "2"]) == 0
    out, err = capsys.readouterr()
    assert "already solved" in out and "needs" not in err


def test_a_solved_database_needs_nothing(monkeypatch, capsys, tmp_path, solved_db):
    db = tmp_path / "db"
    shutil.copytree(solved_db(CFG, (3, 3)), db)
    monkeypatch.setattr(budget, "mem_available", lambda: 1)
    monkeypatch.setattr(budget, "free_space", lambda p: 1)
    assert main([*ARGS, "--db", str(db), "-q"]) == 0
    assert "already solved" in capsys.readouterr().out


def test_figures(tmp_path):
    layout = Layout(CFG)
    everything = budget.needs(layout, tmp_path / "db", 2, "process", True, set())
    assert everything.values == 2 * layout.total
    assert everything.workers == 2 and everything.per_worker > budget.WORKER_BYTES
    assert everything.disk_max >= 2 * layout.total > everything.disk_typical >= budget.TYPICAL_BYTES * layout.total
    largest = max(hi - lo for _, lo, hi in layout.groups)
    assert everything.checkpoint == 4 * largest
    assert budget.needs(layout, tmp_path / "db", 2, "thread", False, set()).workers == 0
    assert budget.needs(layout, tmp_path / "db", 1, "process", False, set()).checkpoint == 0
    # tiers in the database already: only the rest is written, the array is whole
    done = {t.key for t in layout.tiers[:-1]}
    rest = budget.needs(layout, tmp_path / "db", 1, "process", True, done)
    last = layout.tiers[-1]
    assert rest.values == everything.values and 2 * last.size <= rest.disk_max < 2 * last.size + 100_000
    assert budget.needs(layout, tmp_path / "db", 1, "process", True, {t.key for t in layout.tiers}) is None
    assert budget.mem_available() > 0 and budget.free_space(tmp_path / "no" / "such" / "folder") > 0
    assert budget.gb(2_600_000) == "2.6 MB" and budget.gb(52_000_000) == "52 MB" and budget.gb(5.4e9) == "5.4 GB" and budget.gb(2.5e11) == "250 GB"


def test_force_goes_on_all_the_same(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(budget, "mem_available", lambda: 1)
    db = tmp_path / "db"
    argv = ["solve", "--board", "hex3", "--balls", "2", "--db", str(db)]
    assert main([*argv, "-q"]) == 2
    assert not db.exists()
    assert main([*argv, "--force"]) == 0
    out, err = capsys.readouterr()
    assert "x2v2" in out and "hex3 2v2 base: needs about" in err  # what it needs is said all the same


def test_fewer_workers_are_proposed_only_where_they_fit(tmp_path):
    layout = Layout(CFG)
    n = budget.needs(layout, tmp_path / "db", 4, "process", True, set())
    alone = n.values + n.driver
    for avail, hint in ((alone + 3 * n.per_worker, "-j 3"), (alone + n.per_worker // 2, "-j 1"), (alone - 1, None)):
        n.mem_available = avail
        with pytest.raises(budget.ResourceError) as e:
            n.check()
        if hint:
            assert str(e.value).endswith(f", or with {hint}"), e.value
        else:
            assert "or with -j" not in str(e.value), e.value


def _one_line_at_once(capsys, argv) -> tuple[str, float]:
    t0 = time.perf_counter()
    rc = main(argv)
    took = time.perf_counter() - t0
    out, err = capsys.readouterr()
    assert rc == 2 and out == "", err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rotary: error: "), err
    return lines[0], took


def test_a_configuration_far_too_large_is_refused_before_its_index(capsys, tmp_path):
    """hex(4) 13v13: 5·10^19 positions. The index would enumerate C(48, 13) mover sets
    (hours, 24 GB and more before anything is said); the figures come first."""
    db = tmp_path / "db"
    line, took = _one_line_at_once(capsys, ["solve", "--board", "hex4", "--balls", "13", "--db", str(db)])
    assert took < 2, took
    assert "hex4 13v13 base needs about" in line and "EB of memory" in line and "available" in line, line
    assert "in one byte a position, --lean" in line and "cannot be solved here" in line, line
    assert not db.exists()


def test_a_configuration_too_large_for_this_memory_is_refused_at_once(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(budget, "mem_available", lambda: 8_000_000_000)
    db = tmp_path / "db"
    line, took = _one_line_at_once(capsys, ["solve", "--board", "hex3", "--balls", "7", "--db", str(db), "-j", "1"])
    assert took < 2, took
    # 11.5·10^9 positions: two bytes each, or one in the lean solve; 8 GB are not enough for either
    assert "hex3 7v7 base needs about 2" in line and "8.0 GB are available" in line, line
    assert "GB in one byte a position, --lean" in line and "Ray cluster" in line, line
    assert not db.exists()


def test_a_ctrl_c_inside_a_kernel_is_told_as_one(monkeypatch):
    from solver.cli.db import interrupted

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("returned a result with an exception set") from e
    except SystemError as e:
        assert interrupted(e)
    assert not interrupted(SystemError("something else"))


def _interrupt(argv: list[str], after: float, limit: float) -> tuple[int, str, str]:
    import signal
    import subprocess

    from tests.helpers import rotary_exe

    # a shell's background job ignores SIGINT, and a child inherits that: give it the default back
    proc = subprocess.Popen([rotary_exe(), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=limit)
    return proc.returncode, out, err


def test_ctrl_c_during_a_solve_is_one_line(tmp_path):
    rc, out, err = _interrupt(["solve", "--board", "hex3", "--balls", "4", "--db", str(tmp_path / "db"), "-q"], 5, 120)
    assert rc == 130 and err == "rotary: interrupted\n" and out == "", err


@pytest.mark.slow
def test_ctrl_c_during_the_index_build_is_one_line(tmp_path):
    """hex(3) 13v13's index enumerates 20 M mover sets in one compiled call (about 20 s):
    the Ctrl-C is raised when it returns, and numba reports it as a SystemError."""
    rc, out, err = _interrupt(["solve", "--board", "hex3", "--balls", "13", "--db", str(tmp_path / "db")], 6, 300)
    assert rc == 130 and err.replace("\r", "\n").splitlines()[-1] == "rotary: interrupted", err
    assert "Traceback" not in err and out == "", err
