"""The setup game (docs/rules.md §5 ``setup``) solved by solver.retro.setup, checked against the
plain-Python brute force of tests/oracles/brute_setup.py over the explicit game tree.

Every position the brute force visits — every placement-phase position from the empty
board on, every ``offer`` position, and every ``pick`` / ``at`` position — is probed in the
database, result and plies exactly. The one exception is the hex(3) 2v2 ``offer`` case,
whose 350,000 ``pick`` / ``at`` positions (not stored: the database derives them from the
rotation phase when asked) are probed for a fixed 1-in-25 sample of the offer positions;
``ROTARY_SETUP_FULL=1`` probes them all (a few minutes).

Also: the empty-board answer of ``rotary query --setup …`` (text, ``--json``, ``--line``,
and the database found without ``--db``), the moves of placement positions (best first,
consistent with the children), ``rotary verify`` on placement layers (and that it catches a
wrong stored placement value), and resume (after the rotation phase, after some placement
layers, and a second solve with nothing left to do).

The expensive part is the brute-force rotation table of hex(3) 2v2 (~25 s); it is built
once per module and shared by both readings.
"""

from __future__ import annotations

import json
import os
import shutil
from functools import cache
from pathlib import Path

import pytest

from solver.game import rules
from solver.analysis import database_answer as query_report
from solver.db.catalog import db_name
from solver.game.config import make_config
from solver.db.database import open_db
from solver.game.position import AT, OFFER, PICK, PLACE, PLAY, Position
from solver.retro.driver import solve
from solver.retro.setup import Placement, layer_key, solve_setup
from solver.game.start import empty_setup
from solver.db.store import Store
from solver.game.values import Value
from solver.db.verify import verify_db

from tests.helpers import run
from tests.oracles.brute import solve_all
from tests.oracles.brute_setup import rank, rotation_config, solve_setup_tree, through

# hex(2) points: a1 b1 c1 / a2 b2 c2 d2 / a3 b3 c3 / a4 b4; centre b2 c2 b3.
CASES = {
    "hex2-2v2": dict(board=2, balls=2),
    "hex2-3v3": dict(board=2, balls=3),
    "hex3-2v2": dict(board=3, balls=2),
    "hex2-2v2-edge": dict(board=2, balls=2, edge=True),
    "hex2-3v3-capture": dict(board=2, balls=3, capture=True, traps_x="a1,c1", traps_o="a4,b4"),
}
READINGS = ("offer", "last")

# The value of the empty board (light to place), as found by the brute force.
ROOTS = {
    ("hex2-2v2", "offer"): ("win", 5),
    ("hex2-2v2", "last"): ("loss", 5),
    ("hex2-3v3", "offer"): ("win", 9),
    ("hex2-3v3", "last"): ("loss", 7),
    ("hex3-2v2", "offer"): ("draw", None),
    ("hex3-2v2", "last"): ("loss", 13),
    ("hex2-2v2-edge", "offer"): ("draw", None),
    ("hex2-2v2-edge", "last"): ("draw", None),
    ("hex2-3v3-capture", "offer"): ("win", 9),
    ("hex2-3v3-capture", "last"): ("loss", 7),
}

FULL = os.environ.get("ROTARY_SETUP_FULL") == "1"
PICK_SAMPLE = 25  # hex(3) offer: pick/at positions of 1 in this many offer positions


def config(name: str, reading: str):
    return make_config(**CASES[name], setup=reading)


@cache
def rotation_table(name: str):
    """brute.solve_all of the rotation phase; the same for both readings."""
    return solve_all(rotation_config(config(name, "offer")))


@cache
def tree(name: str, reading: str):
    return solve_setup_tree(config(name, reading), rotation_table(name))


@pytest.fixture(scope="module")
def db_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("setup-db")


@pytest.fixture(scope="module")
def solved(db_root):
    """``solved(name, reading)`` -> database path under ``db_root`` (its default name)."""
    done: dict = {}

    def get(name: str, reading: str) -> Path:
        if (name, reading) not in done:
            cfg = config(name, reading)
            path = db_root / db_name(cfg, (cfg.balls, cfg.balls))
            solve_setup(cfg, path, progress=False)
            done[name, reading] = path
        return done[name, reading]

    return get


def as_pair(v: Value) -> tuple:
    return (v.result, v.plies)


def sampled(name: str, reading: str, pos: Position) -> bool:
    """Whether to probe ``pos``: all of them, except most pick/at positions of hex(3) offer."""
    if FULL or pos.phase not in (PICK, AT) or not name.startswith("hex3"):
        return True
    return (pos.x * 7 + pos.o) % PICK_SAMPLE == 0  # same choice for an offer's picks and ats


# ---------------------------------------------------------------------------- every position


@pytest.mark.slow
@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("name", list(CASES))
def test_every_position_matches_brute_force(solved, name, reading):
    cfg = config(name, reading)
    table = tree(name, reading)
    assert table[empty_setup(cfg)] == ROOTS[name, reading]
    phases = {pos.phase for pos in table}
    expected = {PLACE, OFFER, PICK, AT, PLAY} if reading == "offer" else {PLACE, PLAY}
    assert phases == expected, phases
    bad, checked = [], 0
    with open_db(solved(name, reading)) as db:
        for pos, want in table.items():
            if not sampled(name, reading, pos):
                continue
            got = as_pair(db.probe(pos))
            checked += 1
            if got != want:
                bad.append(f"{pos.text()}: brute {want}, database {got}")
    assert not bad, f"{len(bad)} of {checked} positions differ, e.g.\n" + "\n".join(bad[:10])


def test_brute_force_counts_every_ply():
    """Hand-checkable facts of the tree: one ply per placement / offer / pick / rotation."""
    cfg = config("hex2-2v2", "offer")
    table = tree("hex2-2v2", "offer")
    for pos, (result, plies) in table.items():
        if pos.phase == PLAY:
            continue
        st = rules.status(cfg, pos)
        if st != rules.ONGOING:
            assert (result, plies) == (st, 0)
            continue
        kids = [rules.apply(cfg, pos, m) for m in rules.moves(cfg, pos)]
        best = min((through(pos, c, table[c]) for c in kids), key=rank)
        assert (result, plies) == best
    # setup=last: the last placer (dark) rotates first; the child keeps his point of view
    cfg = config("hex2-2v2", "last")
    last = [p for p in tree("hex2-2v2", "last") if p.phase == PLACE and p.o.bit_count() == 1 and p.x.bit_count() == 2]
    assert last
    for pos in last:
        for m in rules.moves(cfg, pos):
            child = rules.apply(cfg, pos, m)
            assert child.phase == PLAY and child.turn == pos.turn == 1


# ---------------------------------------------------------------------------- query


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("name", ["hex2-2v2", "hex2-3v3"])
def test_query_empty_board(solved, capsys, name, reading):
    cfg = config(name, reading)
    path = solved(name, reading)
    table = tree(name, reading)
    root = empty_setup(cfg)
    want = table[root]
    rules_args = ["--setup", reading, "--board", cfg.board.label, "--balls", cfg.balls]
    if cfg.edge:
        rules_args.append("--edge")

    rc, out, err = run(capsys, "query", *rules_args, "--db", path)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(root.text())
    assert lines[1] == f"value: {Value(*want)} for x"
    assert len(lines) == 2 + len(rules.moves(cfg, root))

    rc, out, err = run(capsys, "query", *rules_args, "--db", path, "--json", "--line", 100)
    assert rc == 0, err
    report = json.loads(out)
    assert report["position"] == root.text()
    assert (report["value"], report["plies"]) == want
    moves = {m.text(cfg.board): rules.apply(cfg, root, m) for m in rules.moves(cfg, root)}
    assert sorted(m["move"] for m in report["moves"]) == sorted(moves)
    for m in report["moves"]:
        child = moves[m["move"]]
        assert m["position"] == child.text()
        assert (m["value"], m["plies"]) == through(root, child, table[child])
    ranks = [rank((m["value"], m["plies"])) for m in report["moves"]]
    assert ranks == sorted(ranks)
    # the principal line: as many plies as the value says, ending the game that way
    line, pos = report["line"], root
    if want[0] != "draw":
        assert len(line) == want[1]
        for text in line:
            pos = rules.play(cfg, pos, rules.parse_move(cfg, pos, text))
        winner = pos.turn if rules.status(cfg, pos) == rules.WIN else 1 - pos.turn
        assert rules.status(cfg, pos) != rules.ONGOING
        assert winner == (0 if want[0] == "win" else 1)


def test_query_finds_the_setup_database_without_db(solved, db_root, capsys, monkeypatch):
    """Both readings' databases side by side under ROTARY_DB: each query gets its own."""
    for reading in READINGS:
        solved("hex2-2v2", reading)
    monkeypatch.setenv("ROTARY_DB", str(db_root))
    for reading in READINGS:
        rc, out, err = run(capsys, "query", "--setup", reading, "--board", "hex2", "--balls", 2, "--json")
        assert rc == 0, err
        report = json.loads(out)
        assert (report["value"], report["plies"]) == ROOTS["hex2-2v2", reading]


# ---------------------------------------------------------------------------- moves


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize(
    "name", ["hex2-3v3", "hex2-3v3-capture", pytest.param("hex3-2v2", marks=pytest.mark.slow)]  # its brute force: 2 min
)
def test_moves_best_first_and_consistent_with_children(solved, name, reading):
    cfg = config(name, reading)
    table = tree(name, reading)
    positions = [p for p in table if p.phase in (PLACE, OFFER) and rules.status(cfg, p) == rules.ONGOING]
    if name.startswith("hex3"):  # every placement position with < 4 balls, 1 in 50 of the others
        positions = [p for p in positions if (p.x | p.o).bit_count() < 3 or (p.x * 7 + p.o) % 50 == 0]
    assert positions
    with open_db(solved(name, reading)) as db:
        for pos in positions:
            report = query_report(db, pos)
            assert (report["value"], report["plies"]) == table[pos], pos.text()
            legal = {m.text(cfg.board): rules.apply(cfg, pos, m) for m in rules.moves(cfg, pos)}
            assert sorted(m["move"] for m in report["moves"]) == sorted(legal), pos.text()
            values = [(m["value"], m["plies"]) for m in report["moves"]]
            for m, v in zip(report["moves"], values):
                child = legal[m["move"]]
                assert v == through(pos, child, table[child]), (pos.text(), m)
            assert [rank(v) for v in values] == sorted(rank(v) for v in values), pos.text()
            assert values[0] == table[pos], pos.text()


# ---------------------------------------------------------------------------- verify


@pytest.mark.parametrize("reading", READINGS)
def test_verify_checks_placement_layers(solved, tmp_path, capsys, reading):
    cfg = config("hex2-3v3", reading)
    path = solved("hex2-3v3", reading)
    result = verify_db(path, progress=False)
    assert result.ok, result.message
    with open_db(path) as db:
        rotation = db.layout.total
        placement = db.placement.layout.total
        assert set(db.tier_meta) >= {layer_key(t) for t in db.placement.layout.tiers}
    assert result.checked == rotation + placement
    rc, out, err = run(capsys, "verify", "--db", path, "-q")
    assert rc == 0 and out.startswith("OK:"), out + err

    # a wrong stored placement value (valid checksum) is caught, and named
    bad = tmp_path / "bad"
    shutil.copytree(path, bad)
    place = Placement(cfg)
    with open_db(bad) as db:
        first = len(db.layout.tiers)
        meta = dict(db.tier_meta)
    i, t = next((i, t) for i, t in enumerate(place.layout.tiers) if t.key == "x1v1")
    store = Store(bad)
    try:
        vals = store.read_tier(first + i, t.size).copy()
        j = next(j for j in range(t.size) if vals[j] != 0x4000)  # not an invalid slot
        vals[j] = 0x8000 | 1 if vals[j] != 0x8000 | 1 else 0xC000 | 1  # loss in 1, or win in 1
        store.write_tiers([(first + i, vals, layer_key(t), meta[layer_key(t)])])
    finally:
        store.close()
    result = verify_db(bad, progress=False)
    assert not result.ok
    assert "placement" in result.message and " place" in result.message, result.message
    rc, out, err = run(capsys, "verify", "--db", bad, "-q")
    assert rc == 1 and out.startswith("FAIL"), out + err


# ---------------------------------------------------------------------------- resume


def test_resume_after_rotation_phase_and_mid_placement(tmp_path, capsys):
    cfg = config("hex2-3v3", "offer")
    keys = [layer_key(t) for t in Placement(cfg).layout.tiers]
    want = tree("hex2-3v3", "offer")[empty_setup(cfg)]
    path = tmp_path / "db"

    # killed right after the rotation phase: the placement layers are all still to do
    first = solve(cfg, path, progress=False)
    assert first.solved_now and not any(k.startswith("place:") for k in first.solved_now)
    report = solve_setup(cfg, path, progress=False)
    assert report.solved_now == keys
    with open_db(path) as db:
        assert as_pair(db.probe(empty_setup(cfg))) == want

    # killed after some placement layers: only the missing ones are solved again
    store = Store(path)
    try:
        with store.env.begin(write=True) as txn:
            for key in keys[-3:]:
                assert txn.delete(f"tier:{key}".encode(), db=store.meta)
    finally:
        store.close()
    report = solve_setup(cfg, path, progress=False)
    assert report.solved_now == keys[-3:]
    assert report.root_code == Value(*want).code

    # nothing left: the second run says so
    report = solve_setup(cfg, path, progress=False)
    assert report.solved_now == []
    assert report.root_code == Value(*want).code
    rc, out, err = run(capsys, "solve", "--setup", "offer", "--board", "hex2", "--balls", 3, "--db", path, "-q")
    assert rc == 0, err
    assert "already solved" in out.splitlines()[0]
    with open_db(path) as db:
        assert as_pair(db.probe(empty_setup(cfg))) == want
    assert verify_db(path, progress=False).ok
