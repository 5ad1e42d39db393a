"""The lean solve (one byte a position, :mod:`solver.retro.lean`) writes the databases
of the two-byte solve bit for bit: per-tier SHA-256 against the published files
(``data/checksums``) where there is one, else against a two-byte solve here — every
hex(2) configuration, hex(3) up to 3v3 in base, edge and capture; 4v4 base and edge
with ``-m slow`` (4v4 with traps that leave no symmetry has 2.4·10^8 positions: too long
for a test).
Its pieces are exercised where the small configurations would not reach them: scans
instead of lists, far positions handed over a few at a time, short segments and
windows, resumed groups, values that do not fit in a byte."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solver.cli.main import main
from solver.db.checksums import parse_checksums, tier_checksums
from solver.db.database import open_db
from solver.game.config import make_config
from solver.kernels.lean import ESCAPE, FMAX, decode_final, encode_final, lower_value
from solver.retro import budget, lean, spill
from solver.retro.driver import solve
from solver.retro.shape import Shape

REPO = Path(__file__).resolve().parents[2]

H2_ASYM = dict(traps_x="a1,c1", traps_o="a3,b4")  # no symmetry: two side tables
H2_PLAIN = dict(traps_x="a1,c1", traps_o="a4,b4")  # one plain reflection
H2_SWAP = dict(traps_x="a1", traps_o="b4")  # a colour-swapping reflection
H3_TRAPS = dict(traps_x="a1,e3", traps_o="c5,a3")

VARIANTS = {
    "base": {}, "edge": {"edge": True}, "capture": dict(capture=True, **H2_ASYM),
    "capture-plain": dict(capture=True, **H2_PLAIN), "capture-swap": dict(capture=True, **H2_SWAP),
    "edge-capture": dict(edge=True, capture=True, **H2_SWAP),
}
HEX2 = [("hex2", k, v) for k in (2, 3, 4, 5) for v in VARIANTS]
HEX3 = [("hex3", k, v) for k in (2, 3) for v in ("base", "edge")] + [("hex3", 2, "h3-capture"), ("hex3", 3, "h3-capture")]


def _cfg(board: str, balls: int, variant: str):
    kw = dict(capture=True, **H3_TRAPS) if variant == "h3-capture" else VARIANTS[variant]
    return make_config(board, balls, **kw)


def _published(cfg, balls: int) -> dict[str, str] | None:
    name = f"{cfg.board.label}-{balls}v{balls}" + ("-edge" if cfg.edge else "")
    path = REPO / "data" / "checksums" / f"{name}.sha256"
    if cfg.capture or not path.exists():
        return None
    return parse_checksums(path.read_text(), str(path))


def _sums(path) -> dict[str, str]:
    with open_db(path) as db:
        return dict(tier_checksums(db))


def _reference(cfg, balls: int, solved_db) -> dict[str, str]:
    return _published(cfg, balls) or _sums(solved_db(cfg, (balls, balls)))


@pytest.mark.parametrize("board,balls,variant", HEX2 + HEX3, ids=lambda x: str(x))
def test_lean_equals_the_two_byte_solve(board, balls, variant, tmp_path, solved_db):
    cfg = _cfg(board, balls, variant)
    db = tmp_path / "lean"
    report = solve(cfg, db, jobs=1, progress=False, lean=True)
    assert report.solved_now and _sums(db) == _reference(cfg, balls, solved_db)
    assert not (db / spill.FOLDER).exists()  # the temporary files are gone


def test_threads_scans_and_small_pieces_give_the_same_bits(monkeypatch, tmp_path, solved_db):
    """No lists (every ply scans), far positions handed over a few at a time, segments
    of 7 positions, merge windows of 1000 cells that cut tiers anywhere, two threads."""
    cfg = _cfg("hex2", 4, "capture")
    want = _reference(cfg, 4, solved_db)
    monkeypatch.setattr(lean, "LIST_MAX", 0)
    monkeypatch.setattr(lean, "FAR_ROOM", 2 * 6 * 12 + 5)
    monkeypatch.setattr(lean, "WINDOW", 1000)
    monkeypatch.setattr(lean, "CHUNK", 5000)
    monkeypatch.setattr(spill, "SEGMENT", 7)
    monkeypatch.setattr(spill, "PIECE", 50)
    solve(cfg, tmp_path / "scan", jobs=2, progress=False, lean=True)
    assert _sums(tmp_path / "scan") == want


def test_lists_are_taken_and_far_positions_arrive(monkeypatch, tmp_path, solved_db):
    """Late plies take lists; positions decided ahead through lower tiers wait on disk."""
    cfg = _cfg("hex3", 3, "edge")
    plies, arrivals = [], []
    real_level, real_arrivals = lean.Group.level, lean._arrivals

    def level(self, lo, hi, lvl, idx):
        plies.append(idx is not None)
        return real_level(self, lo, hi, lvl, idx)

    def arrive(g, far, lvl, listed):
        arrivals.append(far.count)
        return real_arrivals(g, far, lvl, listed)

    monkeypatch.setattr(lean.Group, "level", level)
    monkeypatch.setattr(lean, "_arrivals", arrive)
    solve(cfg, tmp_path / "db", jobs=1, progress=False, lean=True)
    assert _sums(tmp_path / "db") == _reference(cfg, 3, solved_db)
    assert any(plies) and not all(plies) and max(arrivals) > 0


def test_a_killed_lean_solve_resumes_its_finished_groups(monkeypatch, tmp_path, solved_db):
    cfg = _cfg("hex2", 4, "edge-capture")
    real, calls = lean.solve_group, []

    def stop_at_the_fourth(*args, **kw):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(lean, "solve_group", stop_at_the_fourth)
    with pytest.raises(KeyboardInterrupt):
        solve(cfg, tmp_path / "db", jobs=1, progress=False, lean=True)
    assert not (tmp_path / "db" / spill.FOLDER).exists()
    monkeypatch.setattr(lean, "solve_group", real)
    report = solve(cfg, tmp_path / "db", jobs=1, progress=False, lean=True)
    assert 0 < len(report.solved_now) < len(report.tiers)
    assert _sums(tmp_path / "db") == _reference(cfg, 4, solved_db)


def test_values_that_do_not_fit_in_a_byte_escape():
    rng = np.random.default_rng(7)
    codes = np.concatenate([
        np.zeros(5, np.uint16), np.full(3, 0x4000, np.uint16),
        (0x8000 | rng.integers(0, 0x4000, 200)).astype(np.uint16),
        (0xC000 | rng.integers(0, 0x4000, 200)).astype(np.uint16),
        np.array([0x8000 | FMAX, 0xC000 | FMAX, 0x8000 | (FMAX + 1), 0xC000 | (FMAX + 1), 0xC000, 0x8000], np.uint16),
    ])
    rng.shuffle(codes)
    cells = np.zeros(1000, np.uint8)
    esc = lean.Escapes()
    esc.encode(codes[:150], cells, 10)
    esc.seal()
    esc.encode(codes[150:], cells, 10 + 150)
    esc.seal()
    big = ((codes & 0x8000) != 0) & ((codes & 0x3FFF) > FMAX)
    assert esc.count == int(big.sum()) and int((cells == ESCAPE).sum()) == esc.count
    out = np.empty(len(codes), np.uint16)
    decode_final(cells, 10, 10 + len(codes), esc.idx, esc.val, out)
    assert np.array_equal(out, codes)
    assert all(lower_value(cells, 10 + i, esc.idx, esc.val) == codes[i] for i in range(len(codes)))
    assert np.array_equal(lean.TierValues(cells, esc, 10, len(codes))[100:300], codes[100:300])
    assert encode_final(codes[:0], cells, 0, esc.idx, esc.val) == 0


def test_the_ply_log_reads_back_what_it_was_given(tmp_path, monkeypatch):
    monkeypatch.setattr(spill, "SEGMENT", 5)
    log = spill.PlyLog(tmp_path)
    rng = np.random.default_rng(3)
    runs = {3: np.sort(rng.choice(10_000, 400, replace=False)), 4: np.array([7, 1 << 33, (1 << 33) + 2], np.int64)}
    log.add(3, runs[3][:200])
    log.add(4, runs[4])
    log.add(3, runs[3][200:])
    for lo, hi in ((0, 10_000), (17, 4_321), (5_000, 5_001), (0, 1 << 40)):
        for level, want in runs.items():
            got = np.concatenate([np.empty(0, np.int64), *log.positions(level, lo, hi)])
            assert np.array_equal(np.sort(got), want[(want >= lo) & (want < hi)]), (level, lo, hi)
    assert log.levels == [3, 4] and list(log.positions(5, 0, 100)) == []
    log.close()


# ---------------------------------------------------------------------------- the command


ARGS = ["solve", "--board", "hex3", "--balls", "3", "--edge"]


def test_lean_on_the_command_line(capsys, tmp_path, solved_db):
    assert main([*ARGS, "--db", str(tmp_path / "db"), "--lean", "-j", "2"]) == 0
    out, err = capsys.readouterr()
    first = err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: lean solve, one byte a position: needs about "), first
    assert "1.3 MB byte array in memory" in first and "temporary files up to" in first, first
    assert "x3v3" in out
    assert _sums(tmp_path / "db") == _reference(make_config("hex3", 3, edge=True), 3, solved_db)


def test_lean_refuses_what_it_cannot_do_in_one_line(capsys, tmp_path):
    assert main([*ARGS, "--db", str(tmp_path / "db"), "--lean", "--executor", "process"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("rotary: error: ") and len(err.splitlines()) == 1, err
    assert "the lean solve runs with threads" in err, err
    assert not (tmp_path / "db").exists()
    assert main([*ARGS, "--db", str(tmp_path / "db"), "--lean", "--checkpoint", "60", "-q"]) == 0


def test_the_lean_solve_is_taken_where_two_bytes_do_not_fit(monkeypatch, capsys, tmp_path, solved_db):
    cfg = make_config("hex3", 3, edge=True)
    monkeypatch.setattr(budget, "LEAN_FIXED", 0)  # the lean solve's fixed buffers: a small solve would not save them
    monkeypatch.setattr(budget, "LEAN_PER_JOB", 0)
    two = budget.needs(Shape(cfg, (3, 3)), tmp_path / "db", 1, "thread", True, set())
    one = budget.needs(Shape(cfg, (3, 3)), tmp_path / "db", 1, "thread", False, set(), lean=True)
    assert one.memory < two.memory and one.values * 2 == two.values
    monkeypatch.setattr(budget, "mem_available", lambda: (one.memory + two.memory) // 2)
    assert main([*ARGS, "--db", str(tmp_path / "db")]) == 0
    first = capsys.readouterr().err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: lean solve, one byte a position (the two-byte solve needs "), first
    assert _sums(tmp_path / "db") == _reference(cfg, 3, solved_db)

    # checkpoints asked for: the lean solve keeps them too
    assert main([*ARGS, "--db", str(tmp_path / "ckpt"), "--checkpoint", "60"]) == 0
    first = capsys.readouterr().err.replace("\r", "\n").splitlines()[0]
    assert first.startswith("hex3 3v3 edge: lean solve, one byte a position (the two-byte solve needs "), first
    assert "checkpoints up to" in first, first

    # neither fits: refused, naming both
    monkeypatch.setattr(budget, "mem_available", lambda: one.memory // 2)
    assert main([*ARGS, "--db", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "in one byte a position, --lean" in err and len(err.splitlines()) == 1, err


def test_a_stale_temporary_folder_is_removed(tmp_path):
    db = tmp_path / "db"
    (db / spill.FOLDER).mkdir(parents=True)
    (db / spill.FOLDER / "far-7.i64").write_bytes(b"\0" * 80)
    solve(make_config("hex2", 3, edge=True), db, jobs=1, progress=False, lean=True)
    assert not (db / spill.FOLDER).exists()


# ---------------------------------------------------------------------------- slow


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["base", "edge"])
def test_hex3_4v4_lean_equals_the_two_byte_solve(variant, tmp_path, solved_db):
    """Against the published checksums (26 M and 39 M positions, a minute or two each)."""
    cfg = _cfg("hex3", 4, variant)
    solve(cfg, tmp_path / "db", jobs=2, progress=False, lean=True)
    assert _sums(tmp_path / "db") == _reference(cfg, 4, solved_db)
