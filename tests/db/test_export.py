"""``rotary export`` and the compact readers, checked against the LMDB databases they come
from: every value of every hex(2) and hex(3) configuration up to 3v3 (base, edge,
capture), the cells the rules answer, damaged blocks, batches against single probes, the
commands (query, stats, verify) on an exported set, and refusals."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import lmdb
import numpy as np
import pytest

from solver.cli.main import main
from solver.db.compact import export_db
from solver.db.compact_format import MANIFEST, TierFile, tier_file
from solver.db.database import CompactDatabase, Database, open_db
from solver.errors import StoreError
from solver.game.config import make_config
from solver.game.position import Position
from solver.game.values import Value
from solver.kernels.compact import NO_RULE, rule_codes, win_needs
from solver.retro.driver import solve

CAPTURE = {2: dict(traps_x="a1,c1", traps_o="a4,b4"), 3: dict(traps_x="a1,e3", traps_o="c5,a3")}
CONFIGS = [(board, balls, variant) for board in (2, 3) for balls in (1, 2, 3) for variant in ("base", "edge", "capture")]
SMALL_BLOCK = 1 << 12  # several blocks even in small tiers


def _rules(board: int, balls: int, variant: str):
    extra = {"edge": dict(edge=True), "capture": dict(capture=True, **CAPTURE[board])}.get(variant, {})
    return make_config(board=board, balls=balls, **extra)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """``solved(board, balls, variant)``: the folder of that LMDB database, solved once."""
    root = tmp_path_factory.mktemp("lmdb")
    done: dict = {}

    def get(board: int, balls: int, variant: str) -> Path:
        key = (board, balls, variant)
        if key not in done:
            path = root / f"hex{board}-{balls}v{balls}-{variant}"
            solve(_rules(*key), path, material=(balls, balls), progress=False)
            done[key] = path
        return done[key]

    return get


def _position(db: Database, g: int) -> Position:
    m, p, s = db.layout.position(g)
    x, o = (m, p) if s == 0 else (p, m)
    return Position.make(db.cfg.board, x, o, s)


def _wdl(codes: np.ndarray) -> np.ndarray:
    """0 loss, 1 draw, 2 win, 3 no position: the reference, from the codes alone."""
    out = np.ones(len(codes), dtype=np.uint8)
    out[codes & 0xC000 == 0xC000] = 2
    out[codes & 0xC000 == 0x8000] = 0
    out[codes == 0x4000] = 3
    return out


@pytest.mark.parametrize("board,balls,variant", CONFIGS, ids=[f"hex{b}-{k}v{k}-{v}" for b, k, v in CONFIGS])
def test_every_value_read_back(solved, tmp_path, board, balls, variant):
    src = solved(board, balls, variant)
    export_db(src, tmp_path / "full", block=SMALL_BLOCK)
    export_db(src, tmp_path / "wdl", wdl_only=True, block=SMALL_BLOCK, wdl_codec="zlib")
    with open_db(src) as lm, open_db(tmp_path / "full") as full, open_db(tmp_path / "wdl") as wdl:
        assert isinstance(full, CompactDatabase) and not isinstance(lm, CompactDatabase)
        want = lm.values()
        assert np.array_equal(full.values(), want)
        assert np.array_equal(full.wdl_values(), _wdl(want))
        assert np.array_equal(wdl.wdl_values(), _wdl(want))
        assert (full.description, full.material, full.tier_keys()) == (lm.description, lm.material, lm.tier_keys())
        for key in lm.tier_keys():
            assert full.tier_sha256(key) == lm.tier_sha256(key) == wdl.tier_sha256(key)
            assert full.tier_meta[key]["win_hist"] == lm.tier_meta[key]["win_hist"]
        g = np.random.default_rng(board * 10 + balls).integers(0, len(want), 400)
        assert np.array_equal(full.probe_indices(g), want[g])
        assert np.array_equal(wdl.probe_wdl_indices(g), _wdl(want)[g])


def test_rule_cells_are_answered_not_stored(solved, tmp_path):
    """The cells the rules answer hold filler in the files (often another symbol than
    their value) and are still read right; the rules' values are the solver's."""
    src = solved(3, 3, "capture")
    export_db(src, tmp_path / "set", block=SMALL_BLOCK, wdl_codec="zstd")  # 2 bits a cell: filler to look at
    with open_db(src) as lm, open_db(tmp_path / "set") as db:
        want = lm.values()
        lay = lm.layout
        rules = np.empty(len(want), dtype=np.int32)
        rule_codes(0, len(want), lay.geo, lay.lay, win_needs(lay.geo), rules)
        cells = np.flatnonzero(rules != NO_RULE)
        assert np.array_equal(rules[cells], want[cells])  # the rules agree with retrograde analysis
        kinds = set(np.unique(want[cells]).tolist())
        assert {0x4000, 0x8000, 0xC001} <= kinds  # no position, lost in 0, won in 1 all occur
        stored = np.empty(len(want), dtype=np.uint8)  # the WDL symbols as stored, filler included
        f = db.files[0][0]
        for b in range(f.nblocks):
            raw = np.frombuffer(f.read(b), dtype=np.uint8)
            syms = np.stack([(raw >> (2 * k)) & 3 for k in range(4)], axis=1).ravel()[: f.raw_length(b)]
            stored[b * f.block : b * f.block + len(syms)] = syms
        assert np.count_nonzero(stored[cells] != _wdl(want)[cells]) > 0
        assert np.array_equal(db.probe_indices(cells), want[cells])
        live = [int(g) for g in cells if want[g] != 0x4000][:50]  # a cell that is no position has no Position
        assert [db.probe(_position(db, g)) for g in live] == [Value.from_code(want[g]) for g in live]


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x5A
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("kind,codec", [("wdl", "zlib"), ("dist", "zlib"), ("dist", "cm"), ("wdl", "rans"),
                                        ("dist", "rans")])
def test_flipped_bytes_never_give_a_wrong_value(solved, tmp_path, kind, codec):
    src = solved(3, 2, "edge")
    clean = tmp_path / "clean"
    export_db(src, clean, block=SMALL_BLOCK, codec=codec)
    with open_db(src) as lm:
        want = lm.values()
        key = lm.tier_keys()[-1]
    f = TierFile(tier_file(clean, key, kind))
    data_at, offsets, total = f.data_at, f.offsets, f.path.stat().st_size
    f.close()
    rng = np.random.default_rng(7)
    spots = list(rng.integers(0, total, 40)) + [int(data_at + offsets[1]) + 3]  # inside block 1
    refused = 0
    for at in spots:
        bad = tmp_path / f"bad{at}"
        shutil.copytree(clean, bad)
        _flip(tier_file(bad, key, kind), int(at))
        try:
            with open_db(bad) as db:
                got = db.values()
        except StoreError as e:
            refused += 1
            text = str(e)
            assert "\n" not in text and key in text
            if at >= data_at:
                assert "block" in text
            continue
        assert np.array_equal(got, want)  # a byte of no consequence (never: every byte is checked)
    assert refused == len(spots)


def test_damaged_block_named_in_one_line(solved, tmp_path):
    src = solved(3, 3, "base")
    export_db(src, tmp_path / "set", block=SMALL_BLOCK)
    f = TierFile(tier_file(tmp_path / "set", "x3v3", "wdl"))
    at = int(f.data_at + f.offsets[2]) + 1
    f.close()
    _flip(tier_file(tmp_path / "set", "x3v3", "wdl"), at)
    with open_db(tmp_path / "set") as db:
        g = db.layout.tiers[0].base + 2 * SMALL_BLOCK + 5
        with pytest.raises(StoreError, match=r"tier x3v3, block 2 fails its checksum"):
            db.probe(_position(db, g))
        with pytest.raises(StoreError, match=r"block 2"):
            db.probe_indices(np.array([g]))
        assert db.probe_index(0) == open_db(src).values()[0]  # other blocks still answer


def test_batch_equals_single_and_lmdb(solved, tmp_path):
    src = solved(3, 3, "edge")
    export_db(src, tmp_path / "set", block=SMALL_BLOCK)
    with open_db(src) as lm, CompactDatabase(tmp_path / "set", cache_bytes=8 * 2 * SMALL_BLOCK) as db:
        want = lm.values()
        g = np.random.default_rng(3).integers(0, len(want), 5000)  # more blocks than the small pool holds
        batch = db.probe_indices(g)
        assert np.array_equal(batch, want[g])
        assert [db.probe_index(int(i)) for i in g[:500]] == batch[:500].tolist()
        assert db.probe_indices(g.reshape(50, 100)).shape == (50, 100)
        live = [int(i) for i in g[:300] if want[i] != 0x4000]
        assert [db.probe(_position(db, i)) for i in live] == [lm.probe(_position(lm, i)) for i in live]
        with pytest.raises(IndexError):
            db.probe_indices(np.array([len(want)]))


def test_wdl_only_answers_without_distance(solved, tmp_path):
    src = solved(3, 3, "base")
    export_db(src, tmp_path / "wdl", wdl_only=True)
    with open_db(src) as lm, open_db(tmp_path / "wdl") as db:
        assert not db.distances
        for g in range(0, lm.layout.total, 997):
            pos = _position(lm, g)
            v = lm.probe(pos)
            assert db.probe(pos) == Value(v.result) == db.probe_wdl(pos)
        with pytest.raises(StoreError, match="win/draw/loss only"):
            db.values()
        with pytest.raises(StoreError, match="win/draw/loss only"):
            db.probe_indices(np.array([0]))


def _sample_positions(path: Path, n: int) -> list[str]:
    with open_db(path) as db:
        out = []
        for g in np.random.default_rng(5).integers(0, db.layout.total, 4 * n):
            m, p, s = db.layout.position(int(g))
            if db.cfg.traps_x and (m | p) & (db.cfg.traps_x | db.cfg.traps_o):
                continue
            out.append(_position(db, int(g)).text())
        return out[:n]


def test_query_and_stats_print_the_same(solved, tmp_path, capsys):
    src = solved(3, 3, "edge")
    out = tmp_path / "set"
    assert main(["export", "--db", str(src), "--out", str(out), "-q"]) == 0
    assert "bits a position" in capsys.readouterr().out
    for pos in _sample_positions(src, 6):
        assert main(["query", "--db", str(src), pos, "--line", "4"]) == 0
        want = capsys.readouterr().out
        assert main(["query", "--db", str(out), pos, "--line", "4"]) == 0
        assert capsys.readouterr().out == want
    main(["stats", "--db", str(src)])
    want = capsys.readouterr().out
    main(["stats", "--db", str(out)])
    assert capsys.readouterr().out == want


def test_query_on_a_wdl_only_set(solved, tmp_path, capsys):
    src = solved(3, 3, "base")
    out = tmp_path / "wdl"
    assert main(["export", "--db", str(src), "--out", str(out), "--wdl-only", "-q"]) == 0
    capsys.readouterr()
    with open_db(src) as lm:
        g = next(g for g in range(0, lm.layout.total, 101) if lm.values()[g] & 0xC000 == 0xC000 and lm.values()[g] & 0x3FFF > 3)
        pos = _position(lm, g).text()
    assert main(["query", "--db", str(out), pos, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["value"] == "win" and answer["plies"] is None
    assert main(["query", "--db", str(out), pos]) == 0
    assert "value: win for" in capsys.readouterr().out
    assert main(["query", "--db", str(out), pos, "--line", "5"]) == 2  # a line by WDL alone may go round a won position
    assert "a principal line needs distances" in capsys.readouterr().err


def test_verify_on_an_exported_set(solved, tmp_path, capsys):
    src = solved(3, 2, "edge")
    out = tmp_path / "set"
    export_db(src, out, block=SMALL_BLOCK)
    assert main(["verify", "--db", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("OK: hex3 2v2 edge") and "consistent with their children" in text


def test_unfinished_database_refused(solved, tmp_path, capsys):
    src = tmp_path / "partial"
    shutil.copytree(solved(3, 2, "edge"), src)
    with Database(src) as db:
        last = db.tier_keys()[-1]
    env = lmdb.open(str(src), max_dbs=4)
    with env.begin(write=True) as txn:
        assert txn.delete(f"tier:{last}".encode(), db=env.open_db(b"meta", txn=txn))
    env.close()
    assert main(["export", "--db", str(src), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "still being solved" in err and last in err
    assert not (tmp_path / "out" / MANIFEST).exists()


def test_export_refusals(solved, tmp_path, capsys):
    src = solved(2, 2, "base")
    assert main(["export", "--db", str(src), "--out", str(src)]) == 2
    assert "holds an LMDB database" in capsys.readouterr().err
    assert main(["export", "--db", str(src), "--out", str(tmp_path / "o"), "--block", "1000"]) == 2
    assert "--block 1000" in capsys.readouterr().err
    export_db(src, tmp_path / "o")
    assert main(["export", "--db", str(tmp_path / "o"), "--out", str(tmp_path / "p")]) == 2
    assert "already an exported set" in capsys.readouterr().err


def test_reexport_replaces_the_set(solved, tmp_path):
    """A WDL-only export over a full one leaves no stale distance file, and no temporary."""
    src = solved(2, 3, "edge")
    export_db(src, tmp_path / "o")
    export_db(src, tmp_path / "o", wdl_only=True, wdl_codec="lzma")
    names = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert names == sorted([MANIFEST] + [f"{k}.wdl" for k in open_db(src).tier_keys()])


@pytest.mark.slow
@pytest.mark.parametrize("board,variant", [(3, "base"), (3, "edge"), (3, "capture"), (2, "base"), (2, "edge"),
                                           (2, "capture")])
def test_4v4_read_back(solved, tmp_path, board, variant):
    src = solved(board, 4, variant)
    export_db(src, tmp_path / "set")
    with open_db(src) as lm, open_db(tmp_path / "set") as db:
        want = lm.values()
        assert np.array_equal(db.values(), want)
        g = np.random.default_rng(1).integers(0, len(want), 100_000)
        assert np.array_equal(db.probe_indices(g), want[g])


def test_verify_a_wdl_only_set(solved, tmp_path, capsys):
    src = solved(3, 2, "capture")
    out = tmp_path / "wdl"
    export_db(src, out, wdl_only=True, block=SMALL_BLOCK)
    assert main(["verify", "--db", str(out), "-q"]) == 0
    assert "win/draw/loss of all" in capsys.readouterr().out
    assert main(["verify", "--db", str(out), "-q", "--tier", "x2v2"]) == 2
    assert "win/draw/loss only" in capsys.readouterr().err


def test_wdl_check_finds_a_changed_value(solved):
    """The WDL re-derivation fails on a value changed to any other result."""
    from solver.kernels.compact import verify_wdl_range

    with open_db(solved(3, 2, "edge")) as lm:
        wdl = _wdl(lm.values())
        lay = lm.layout
    buf = np.empty(6 * lay.geo.npoints, dtype=np.int64)
    assert verify_wdl_range(wdl, 0, len(wdl), lay.geo, lay.lay, buf) == -1
    rng = np.random.default_rng(2)
    for g in rng.integers(0, len(wdl), 30):
        for other in {0, 1, 2} - {int(wdl[g])}:
            bad = wdl.copy()
            bad[g] = other
            found = verify_wdl_range(bad, 0, len(bad), lay.geo, lay.lay, buf)
            assert 0 <= found <= g  # g itself, or a parent of it before it


def test_serve_answers_from_a_set_as_from_the_database(solved, tmp_path):
    pytest.importorskip("flask")
    from solver.cli.serve import build_viewer

    src = solved(3, 3, "base")
    out = tmp_path / "set"
    export_db(src, out)
    answers = []
    for db in (src, out):
        args = build_parser_args(["serve", "--db", str(db)])
        app, sources = build_viewer(args)
        client = app.test_client()
        try:
            answers.append([client.get("/api/position", query_string={"p": p}).get_json()
                            for p in _sample_positions(src, 3)])
        finally:
            sources.close()
    assert answers[0] == answers[1] and answers[0][0]["value"] in ("win", "loss", "draw")


def build_parser_args(argv: list[str]):
    from solver.cli.main import build_parser

    return build_parser()[0].parse_args(argv)


@pytest.mark.parametrize("kind", ["random", "runs", "one"])
def test_cm_coder_round_trip(kind):
    """The WDL arithmetic coder decodes what it coded, on data it cannot predict too."""
    from solver.kernels.compact_cm import CONTEXTS, cm_decode, cm_encode

    rng = np.random.default_rng(11)
    n = 20_000
    if kind == "random":
        sym = rng.integers(0, 3, n).astype(np.uint8)
    elif kind == "runs":
        sym = np.repeat(rng.integers(0, 3, n // 50), 50).astype(np.uint8)
    else:
        sym = np.full(n, 2, dtype=np.uint8)
    coded = rng.random(n) < 0.9
    cnt = np.empty((CONTEXTS, 2, 2), dtype=np.int64)
    out = np.empty(3 * n + 16, dtype=np.uint8)
    size = cm_encode(sym, coded, 137, cnt, out)
    back = np.empty(n, dtype=np.uint8)
    cm_decode(out[:size], coded, sym, 137, cnt, back)
    assert np.array_equal(back, sym)
    assert size < {"random": 0.21 * n, "runs": 0.02 * n, "one": 0.01 * n}[kind]  # log2(3)/8 = 0.198 a symbol at best


@pytest.mark.parametrize("codec", ["rans", "cm", "zstd"])
def test_threads_write_the_same_files(solved, tmp_path, codec):
    """Blocks coded on two threads while the tier is read: the same bytes as on one (the
    byte codec's objects are not shared between threads)."""
    src = solved(3, 3, "edge")
    export_db(src, tmp_path / "one", block=SMALL_BLOCK, codec=codec, wdl_codec=codec)
    export_db(src, tmp_path / "two", block=SMALL_BLOCK, codec=codec, wdl_codec=codec, jobs=2)
    names = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert len(names) > 3 and names == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
