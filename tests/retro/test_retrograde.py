"""The retrograde solver (solver/retrograde.py) against the brute-force oracle.

For every position of each configuration (both sides to move, every reachable material)
the value *and* the number of plies stored by ``solve`` must equal those of
``tests/oracles/brute.py``, which uses only the plain-Python rules and no symmetry. Cheap
configurations are solved by brute force here; the expensive ones (hex3 3 v 2 takes many
minutes) come from ``data/golden/*.npz``, written by ``python -m tests.oracles.golden``
from the same oracle.

Coverage of the index paths: base and edge (one side table, identity colour swap), traps
with no symmetry (two side tables, trivial group), traps with a plain symmetry (two side
tables, symmetric-orbit lists) and traps with a colour-swapping symmetry (one side table,
positions of dark to move folded by a non-identity map), also with edge+capture; hex3 3 v
2 is solved with ``jobs=2`` (its groups pass the process-pool threshold).

Every database built here also passes ``verify_db``; and ``verify_db`` catches a block
with a bad checksum (naming the block) and a wrong value with a good checksum (naming the
position).
"""

from __future__ import annotations

import re
import struct
import zlib
from functools import cache

import numpy as np
import pytest
from numba import njit

from solver.game.config import make_config
from solver.db.database import open_db
from solver.index import Layout
from solver.kernels.encode import index_of
from solver.game.position import parse_position
from solver.game.position import Position
from solver.retro.driver import solve
from solver.db.store import BLOCK, Store, block_key, pack_block
from solver.game.values import Value
from solver.db.verify import verify_db

from tests.oracles import golden
from tests.oracles.brute import solve_all

INVALID = 0x4000  # an indexed cell that is no position (ball on the other colour's trap)

# hex(2) points: a1 b1 c1 / a2 b2 c2 d2 / a3 b3 c3 / a4 b4; centre b2 c2 b3.
H2_ASYM = dict(traps_x="a1,c1", traps_o="a3,b4")  # no symmetry: two side tables
H2_PLAIN = dict(traps_x="a1,c1", traps_o="a4,b4")  # one plain reflection, two side tables
H2_SWAP = dict(traps_x="a1", traps_o="b4")  # a colour-swapping reflection: folding

# name -> (make_config kwargs, material, brute-force processes); solved live here
LIVE = {
    "hex2-2v2-base": (dict(board=2, balls=2), (2, 2), 1),
    "hex2-3v3-base": (dict(board=2, balls=3), (3, 3), 1),
    "hex2-4v4-base": (dict(board=2, balls=4), (4, 4), 1),
    "hex2-2v2-edge": (dict(board=2, balls=2, edge=True), (2, 2), 1),
    "hex2-3v3-edge": (dict(board=2, balls=3, edge=True), (3, 3), 2),
    "hex2-2v2-capture": (dict(board=2, balls=2, capture=True, **H2_ASYM), (2, 2), 1),
    "hex2-3v3-capture": (dict(board=2, balls=3, capture=True, **H2_ASYM), (3, 3), 1),
    "hex2-4v4-capture": (dict(board=2, balls=4, capture=True, **H2_PLAIN), (4, 4), 1),
    "hex2-3v3-capture-swap": (dict(board=2, balls=3, capture=True, **H2_SWAP), (3, 3), 1),
    "hex2-3v3-edge-capture": (dict(board=2, balls=3, edge=True, capture=True, **H2_SWAP), (3, 3), 1),
    "hex2-3v2-edge-capture": (dict(board=2, balls=3, edge=True, capture=True, **H2_ASYM), (3, 2), 1),
}
GOLDEN = list(golden.GOLDEN)
JOBS = {"hex3-3v2-base": 2, "hex3-3v2-edge-capture": 2}


# ------------------------------------------------------------------ references


def decode(code: int) -> Value:
    return Value.from_code(int(code))


@cache
def reference(name: str):
    """``(cfg, material, x, o, turn, codes)`` of every position, from brute force."""
    if name in LIVE:
        kw, material, processes = LIVE[name]
        cfg = make_config(**kw)
        table = solve_all(cfg, material, processes=processes)
        n = len(table)
        x = np.fromiter((p.x for p in table), np.uint64, n)
        o = np.fromiter((p.o for p in table), np.uint64, n)
        turn = np.fromiter((p.turn for p in table), np.uint8, n)
        codes = np.fromiter((golden.value_code(*v) for v in table.values()), np.uint16, n)
        return cfg, material, x, o, turn, codes
    return golden.load_golden(name)


@njit(cache=True)
def _indices(ms, ps, ss, geo, lay, out):
    for i in range(len(ms)):
        out[i] = index_of(ms[i], ps[i], ss[i], geo, lay)


def canonical_indices(layout: Layout, x, o, turn) -> np.ndarray:
    mover = np.where(turn == 0, x, o).astype(np.uint64)
    opp = np.where(turn == 0, o, x).astype(np.uint64)
    out = np.empty(len(x), np.int64)
    _indices(mover, opp, turn.astype(np.int64), layout.geo, layout.lay, out)
    return out


def stored_values(path) -> tuple[Layout, np.ndarray]:
    with open_db(path) as db:
        layout = db.layout
        vals = np.empty(layout.total, np.uint16)
        for i, t in enumerate(layout.tiers):
            vals[t.base : t.base + t.size] = db.store.read_tier(i, t.size)
    return layout, vals


def describe_mismatch(cfg, x, o, turn, want, got, where) -> str:
    lines = []
    for i in where[:5]:
        pos = Position.make(cfg.board, int(x[i]), int(o[i]), int(turn[i]))
        lines.append(f"  {pos.text()}: brute force {decode(want[i])}, solver {decode(got[i])}")
    return f"{len(where)} positions differ, e.g.\n" + "\n".join(lines)


# ------------------------------------------------------------------ solver vs brute force


@pytest.mark.parametrize("name", list(LIVE) + GOLDEN)
def test_solver_equals_brute_force(name, tmp_path):
    cfg, material, x, o, turn, codes = reference(name)
    path = tmp_path / "db"
    report = solve(cfg, path, jobs=JOBS.get(name, 1), material=material, progress=False)
    layout, vals = stored_values(path)
    assert [t.key for t in report.tiers] == [t.key for t in layout.tiers]
    assert sorted(report.solved_now) == sorted(t.key for t in layout.tiers)

    idx = canonical_indices(layout, x, o, turn)
    got = vals[idx]
    bad = np.nonzero(got != codes)[0]
    assert len(bad) == 0, f"{name}: " + describe_mismatch(cfg, x, o, turn, codes, got, bad)

    # every indexed cell is a position of the game or marked as none; nothing else
    hit = np.zeros(layout.total, bool)
    hit[idx] = True
    assert np.array_equal(hit, vals != INVALID), f"{name}: cells hit by no position / invalid cells hit"
    # the tier summaries count canonical positions and their values
    for t, s in zip(layout.tiers, report.tiers):
        cells = vals[t.base : t.base + t.size]
        assert s.positions == int(np.count_nonzero(cells != INVALID)), (name, t.key)
        assert s.draws == int(np.count_nonzero(cells == 0)), (name, t.key)
        assert s.wins + s.losses + s.draws == s.positions, (name, t.key)

    # the reader gives the same values, for both sides to move
    rng = np.random.default_rng(len(name))
    with open_db(path) as db:
        for i in rng.integers(0, len(x), 300):
            pos = Position.make(cfg.board, int(x[i]), int(o[i]), int(turn[i]))
            assert db.probe(pos) == decode(codes[i]), (name, pos.text())

    result = verify_db(path, progress=False)
    assert result.ok, result.message
    assert result.checked == layout.total


def test_cases_exercise_every_index_path():
    """The cases above include both side layouts, symmetric orbits and non-trivial folds."""
    kinds = set()
    for name in list(LIVE) + GOLDEN:
        if name in LIVE:
            kw, material, _ = LIVE[name]
            cfg = make_config(**kw)
        else:
            cfg, material = golden.config_of(name)
        geo = Layout(cfg, material).geo
        kinds.add((cfg.capture, geo.sides, len(geo.perm) > 1, bool(geo.swap_identity)))
    assert (True, 2, False, True) in kinds  # traps without symmetry: two side tables
    assert (True, 2, True, True) in kinds  # traps with a plain symmetry
    assert (True, 1, False, False) in kinds  # colour-swapping traps: folded by a real map
    assert (False, 1, True, True) in kinds  # base / edge: full group, identity swap


def test_golden_files_are_small():
    for name in GOLDEN:
        path = golden.golden_path(name)
        assert path.exists(), f"{path} missing: run python -m tests.oracles.golden"
        assert path.stat().st_size < 4_000_000


# ------------------------------------------------------------------ verify catches damage


@pytest.fixture
def small_db(tmp_path):
    kw, material, _ = LIVE["hex2-3v3-capture"]
    cfg = make_config(**kw)
    path = tmp_path / "db"
    solve(cfg, path, material=material, progress=False)
    assert verify_db(path, progress=False).ok
    return cfg, path


def _biggest_tier(path):
    with open_db(path) as db:
        layout = db.layout
        no, t = max(enumerate(layout.tiers), key=lambda it: it[1].size)
        return layout, no, t


def _put_block(path, tier_no: int, block_no: int, data: bytes) -> None:
    store = Store(path)
    try:
        store._write(lambda txn: txn.put(block_key(tier_no, block_no), data, db=store.blocks))
    finally:
        store.close()


def test_verify_names_a_block_with_a_bad_checksum(small_db):
    cfg, path = small_db
    layout, no, t = _biggest_tier(path)
    store = Store(path)
    raw = np.ascontiguousarray(store.read_tier(no, t.size)[:BLOCK], dtype="<u2").tobytes()
    store.close()
    bad = struct.pack("<I", (zlib.crc32(raw) + 1) & 0xFFFFFFFF) + zlib.compress(raw)
    _put_block(path, no, 0, bad)
    result = verify_db(path, progress=False)
    assert not result.ok
    assert f"block {no}/0" in result.message and t.key in result.message, result.message
    assert "checksum" in result.message

    _put_block(path, no, 0, b"\x00\x01\x02\x03 not zlib")
    result = verify_db(path, progress=False)
    assert not result.ok and f"block {no}/0" in result.message, result.message


def test_verify_names_a_position_with_a_wrong_value(small_db):
    cfg, path = small_db
    layout, no, t = _biggest_tier(path)
    store = Store(path)
    values = store.read_tier(no, t.size).copy()
    store.close()
    # a decided position whose value we falsify: win in d -> win in d + 2
    wins = np.nonzero((values & 0xC000) == 0xC000)[0]
    local = int(wins[len(wins) // 2])
    changed = t.base + local
    values[local] = values[local] + 2
    _put_block(
        path, no, local // BLOCK,
        pack_block(values[(local // BLOCK) * BLOCK : (local // BLOCK + 1) * BLOCK], block_key(no, local // BLOCK)),
    )
    result = verify_db(path, progress=False)
    assert not result.ok
    m = re.fullmatch(r"FAIL: (.+ [xo]) \(index (\d+)\) does not follow from its children", result.message)
    assert m, result.message
    named = parse_position(m.group(1))
    gidx = layout.index(named.mover, named.opponent, named.turn)
    assert gidx == int(m.group(2))
    # the named position is the falsified one, or one whose value depends on it
    from solver.game import rules

    kids = {layout.index(c.mover, c.opponent, c.turn) for c in rules.children(cfg, named)}
    assert gidx == changed or changed in kids, (result.message, changed)
