"""Single probes of an exported set against the LMDB database it comes from: every
position of small configurations (values, WDL, and the errors of positions the set does
not hold, in the same words), a pool of a few blocks that must evict, and ``rotary
query`` printing the same answers for sampled positions."""

from __future__ import annotations

import numpy as np
import pytest

from solver.cli.main import main
from solver.db.compact import export_db
from solver.db.database import CompactDatabase, open_db
from solver.errors import RotaryError
from solver.game.board import hex_board
from solver.game.config import make_config
from solver.game.position import Position
from solver.game.values import Value

BLOCK = 1 << 12
CONFIGS = {
    "hex2-3v3-capture": (make_config(2, 3, capture=True, traps_x="a1,c1", traps_o="a4,b4"), (3, 3)),
    "hex3-2v2-edge": (make_config(3, 2, edge=True), (2, 2)),
    "hex3-2v1-base": (make_config(3, 2), (2, 1)),  # fixed material, A != B: check_position is not asked
}


def _answer(db, pos: Position, wdl: bool = False):
    """The value, or the class and words of the error, of a probe."""
    try:
        return db.probe_wdl(pos) if wdl else db.probe(pos)
    except RotaryError as e:
        return type(e).__name__, str(e)


def _positions(db, rng: np.random.Generator, n: int) -> list[Position]:
    """Positions of every index (or ``n`` of them), each also with the other side to
    move, and positions the database does not hold: one ball less or more, balls on the
    other colour's traps, another board, a setup phase."""
    lay, board = db.layout, db.cfg.board
    gs = range(lay.total) if lay.total <= n else rng.integers(0, lay.total, n)
    out = []
    for g in gs:
        m, p, s = lay.position(int(g))
        x, o = (m, p) if s == 0 else (p, m)
        out += [Position.make(board, x, o, s), Position.make(board, x, o, 1 - s)]
    for _ in range(300):
        x, o = rng.choice(board.size, 2, replace=False)
        base = out[int(rng.integers(len(out)))]
        out += [base.replace(x=base.x & ~(1 << int(x)) | (1 << int(o)) & ~base.o),  # move or drop a ball
                base.replace(o=base.o | (1 << int(x)) & ~base.x)]  # add one (or not)
    out.append(Position.make(hex_board(2 if board.n == 3 else 3), 1, 2, 0))
    out.append(out[0].replace(phase="place"))
    return out


@pytest.mark.parametrize("name", list(CONFIGS))
def test_single_probes_answer_as_the_database(solved_db, tmp_path, name):
    cfg, material = CONFIGS[name]
    src = solved_db(cfg, material)
    export_db(src, tmp_path / "full", block=BLOCK)
    export_db(src, tmp_path / "wdl", block=BLOCK, wdl_only=True)
    rng = np.random.default_rng(7)
    with open_db(src) as lm, CompactDatabase(tmp_path / "full", cache_bytes=1) as db, \
            CompactDatabase(tmp_path / "wdl", cache_bytes=1) as wd:
        positions = _positions(lm, rng, 6000)
        order = rng.permutation(len(positions))  # random blocks: the pool of 4 blocks evicts
        for i in list(order) + list(order[:500]):  # the second time: materials already seen
            pos = positions[i]
            want = _answer(lm, pos)
            assert _answer(db, pos) == want, pos.text()
            if isinstance(want, Value):
                assert _answer(wd, pos) == _answer(db, pos, wdl=True) == Value(want.result), pos.text()
            else:
                assert _answer(wd, pos) == want, pos.text()
        assert len(db._pool) == min(4, sum(f.nblocks for f, _ in db.files))  # the pool of a few blocks
        kinds = {type(_answer(lm, p)) for p in positions}
        assert kinds == {Value, tuple}  # both answers and refusals were asked


def test_the_pool_keeps_the_blocks_last_read(solved_db, tmp_path):
    cfg, material = CONFIGS["hex3-2v2-edge"]
    src = solved_db(cfg, material)
    export_db(src, tmp_path / "set", block=BLOCK)
    with open_db(src) as lm, CompactDatabase(tmp_path / "set", cache_bytes=3 * 2 * BLOCK) as db:
        want = lm.values()
        nblocks = sum(f.nblocks for f, _ in db.files)
        assert nblocks > 8
        seen = []
        decoded = []
        real = db._decode
        db._decode = lambda no, b, dest: (decoded.append((no, b)), real(no, b, dest))  # type: ignore[method-assign]
        for no, t in enumerate(db.layout.tiers):
            for b in range(db.files[no][0].nblocks):
                g = t.base + b * BLOCK
                assert db.probe_index(g) == want[g]
                seen.append((no, b))
        assert decoded == seen  # each block decoded once, in order
        decoded.clear()
        for no, b in seen[-3:]:  # the last three stay
            assert db.probe_index(db.layout.tiers[no].base + b * BLOCK) == want[db.layout.tiers[no].base + b * BLOCK]
        assert decoded == []
        no, b = seen[0]
        db.probe_index(db.layout.tiers[no].base + b * BLOCK)
        assert decoded == [seen[0]]  # the first was evicted


def _texts(path, n: int, seed: int) -> list[str]:
    with open_db(path) as db:
        return [p.text() for p in _positions(db, np.random.default_rng(seed), n)[:n]]


def _query(capsys, db, positions: list[str]) -> tuple[int, str, str]:
    rc = main(["query", "--db", str(db), *positions])
    out = capsys.readouterr()
    return rc, out.out, out.err.replace(str(db), "DB")


@pytest.mark.parametrize("n", [300, pytest.param(10_000, marks=pytest.mark.slow)])
def test_query_prints_the_same_answers(solved_db, tmp_path, capsys, n):
    """``rotary query --db DIR`` and ``--db LMDB``: the same text for every sampled
    position, the positions the database does not hold included (their errors)."""
    cfg, material = CONFIGS["hex3-2v2-edge"]
    src = solved_db(cfg, material)
    out = tmp_path / "set"
    export_db(src, out)
    positions = _texts(src, n, seed=n)
    assert len(positions) == n
    rc, text, err = _query(capsys, src, positions)
    assert text.count("value:") > n // 2  # most are answered
    assert _query(capsys, out, positions) == (rc, text, err)
