"""The ``rans`` codec (:mod:`solver.kernels.compact_rans`) and the exporter's rule cells a
row at a time (:mod:`solver.kernels.compact_rules`), against independent references:
the rule codes of :func:`rule_codes` on every cell of hex(2) and hex(3) up to 4v4 (base,
edge, capture), made-up blocks with every rare path (long distances, the unusual parity,
a context never counted) decoded back, exported sets decoding to the database's values
(batches equal to single probes), and damaged files refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from solver.db.compact import export_db
from solver.db.compact_format import TierFile, tier_file
from solver.db.database import open_db
from solver.errors import StoreError
from solver.game.config import make_config
from solver.index import Layout
from solver.kernels import compact_rans as ra
from solver.kernels.code import RESOLVED, WINBIT
from solver.kernels.compact import NO_RULE, rule_codes, win_needs
from solver.kernels.compact_rules import ENUM, ROW_MIN, fits, point_vectors, ring_tables, rule_codes_rows
from solver.retro.driver import solve

VARIANTS = {
    2: {"base": {}, "edge": dict(edge=True), "capture": dict(capture=True, traps_x="a1,c1", traps_o="a4,b4")},
    3: {"base": {}, "edge": dict(edge=True), "capture": dict(capture=True, traps_x="a1,e3", traps_o="c5,a3")},
}
CASES = [(b, k, v) for b in (2, 3) for k in (1, 2, 3, 4) for v in ("base", "edge", "capture")]
SPAN = 600_000  # cells compared in each of a few ranges of the larger layouts


def _rows(layout, lo: int, hi: int, listed: bool) -> np.ndarray:
    geo = layout.geo
    out = np.empty(hi - lo, dtype=np.int32)
    rt, ptv = np.zeros((4, 256), dtype=np.uint64), np.zeros(64, dtype=np.uint64)
    en = np.full((ENUM if listed else 4) + 2, -1, dtype=np.int64)  # 4: no row listed, every one stepped
    rule_codes_rows(lo, hi, geo, layout.lay, win_needs(geo), ring_tables(geo), point_vectors(geo), rt, ptv, en, out)
    return out


@pytest.mark.parametrize("board,balls,variant", CASES, ids=[f"hex{b}-{k}v{k}-{v}" for b, k, v in CASES])
def test_rule_codes_a_row_at_a_time(board, balls, variant):
    """The packed walk gives :func:`rule_codes` of every cell: whole small layouts, and
    ranges starting and ending inside rows of the larger ones."""
    layout = Layout(make_config(board=board, balls=balls, **VARIANTS[board][variant]), (balls, balls))
    if not fits(layout.geo):  # more pivots than the packing holds: the exporter takes rule_codes_known there
        assert board == 3 and variant == "edge"
        return
    total = layout.total
    rng = np.random.default_rng(balls)
    spans = [(0, total)] if total <= 3 * SPAN else [(int(lo), int(lo) + SPAN) for lo in rng.integers(0, total - SPAN, 3)]
    need = win_needs(layout.geo)
    for lo, hi in spans:
        want = np.empty(hi - lo, dtype=np.int32)
        rule_codes(lo, hi, layout.geo, layout.lay, need, want)
        assert np.array_equal(_rows(layout, lo, hi, True), want), (lo, hi)
        assert np.array_equal(_rows(layout, lo, hi, False), want), (lo, hi)
    if board == 3 and balls >= 3:
        assert any(t.size >= ROW_MIN for t in layout.tiers)  # the packed walk was taken


def _made_up(n: int, seed: int):
    """Codes with every kind of cell: draws, wins and losses of short and long distances
    and both parities, rule cells (not coded) among them."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 4, n)
    d = np.where(rng.random(n) < 0.1, rng.integers(0, 0x3FFF + 1, n), rng.integers(0, 24, n))
    codes = np.where(kind == 0, 0, np.where(kind == 1, RESOLVED | WINBIT | d, RESOLVED | d)).astype(np.uint16)
    rules = np.full(n, NO_RULE, dtype=np.int32)
    rule = rng.random(n) < 0.1
    rules[rule] = codes[rule]
    return codes, rules


def _tables(codes_rules, row: int):
    wcnt = np.zeros(ra.WCTX * 3, dtype=np.int64)
    dcnt = np.zeros(ra.DCTX * ra.DSYM, dtype=np.int64)
    for codes, rules in codes_rules:
        n = len(codes)
        ra.rans_count(codes, rules, row, *_scratch(n), np.zeros(4, dtype=np.int64), np.empty(n, dtype=np.int32),
                      np.empty(3 * n, dtype=np.int32), wcnt, dcnt)
    wf, df = ra.rans_freqs(wcnt, 3), ra.rans_freqs(dcnt, ra.DSYM)
    return wf, df


def _scratch(n: int):
    """sym, wdl, qb, wx, dx, rare of a block of ``n``."""
    return (*(np.empty(n, dtype=np.uint8) for _ in range(3)), np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32),
            np.empty(n, dtype=np.uint8))


def _code(codes, rules, row, wf, df, wdl_only=False):
    n = len(codes)
    scratch = _scratch(n)
    wdl = scratch[1]
    tally = np.zeros(4, dtype=np.int64)
    wout, dout = np.empty(ra.out_words(n), dtype=np.uint16), np.empty(ra.out_words(n), dtype=np.uint16)
    dtok = np.empty(0 if wdl_only else 3 * n, dtype=np.int32)
    ws, ds, _ = ra.rans_encode(codes, rules, row, *scratch, tally, np.empty(n, dtype=np.int32), dtok,
                            ra.rans_tables(wf), ra.rans_tables(df, ra.FLAT), wout, dout)
    return wout[ws:].copy(), dout[ds:].copy(), wdl, tally


def _decode(wwords, dwords, rules, row, wf, df, n):
    out = np.empty(n, dtype=np.uint16)
    none = np.empty((0, ra.DSYM + 1), dtype=np.int32)
    dt = ra.rans_decode_tables(df) if df is not None else (none, none)
    ok = ra.rans_decode(wwords, dwords, rules, row, *ra.rans_decode_tables(wf), *dt, np.empty(n, dtype=np.uint8), out)
    return ok, out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_made_up_blocks_decode_back(seed):
    """Every path of the coder — long distances (the flat symbols), the parity escape,
    rule cells, a block shorter than a row and one of many rows — and a model counted on
    other blocks (contexts and symbols never counted are coded too)."""
    for n, row in ((5000, 7919), (65536, 331)):
        codes, rules = _made_up(n, seed)
        wf, df = _tables([_made_up(n, seed + 100)], row)
        ww, dw, wdl, tally = _code(codes, rules, row, wf, df)
        ok, back = _decode(ww, dw, rules, row, wf, df, n)
        assert ok and np.array_equal(back, codes)
        assert np.array_equal(np.bincount(wdl, minlength=4), tally)
        ww, _, _, _ = _code(codes, rules, row, wf, df, wdl_only=True)  # WDL alone: distance 0
        ok, back = _decode(ww, np.empty(0, dtype=np.uint16), rules, row, wf, None, n)
        zero = np.where(rules != NO_RULE, codes, codes & 0xC000)
        assert ok and np.array_equal(back, zero)


def test_frequencies_sum_to_the_total_and_none_is_zero():
    counts = np.zeros((5, ra.DSYM), dtype=np.int64)
    counts[1, 3] = 10**9  # one symbol only
    counts[2] = np.arange(ra.DSYM) ** 4
    counts[3, :2] = (1, 10**12)
    f = ra.rans_freqs(counts, ra.DSYM).astype(np.int64)
    assert np.all(f.sum(axis=1) == ra.TOTAL) and f.min() >= 1
    assert f[1, 3] == ra.TOTAL - (ra.DSYM - 1)
    assert f[0].max() - f[0].min() < ra.DSYM and f[4].max() - f[4].min() < ra.DSYM  # never counted: flat
    assert f[3, 0] == 1 and np.all(np.diff(f[2, 1:]) >= 0)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("rans")
    src = root / "lmdb"
    solve(make_config(board=3, balls=3, edge=True), src, material=(3, 3), progress=False)
    export_db(src, root / "set", block=1 << 12, codec="rans")
    return src, root / "set"


def test_batch_equals_single_probes_and_the_database(exported):
    src, out = exported
    with open_db(src) as lm:
        want = lm.values()
    with open_db(out) as db:
        assert db.files[0][0].codec == "rans" and db.files[0][1].codec == "rans"
        g = np.random.default_rng(5).integers(0, len(want), 3000)
        batch = db.probe_indices(g)
        assert np.array_equal(batch, want[g])
        assert [db.probe_index(int(i)) for i in g] == batch.tolist()
        assert np.array_equal(db.values(), want)


def _flip(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x24
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("kind", ["wdl", "dist"])
def test_flipped_bytes_are_refused(exported, tmp_path, kind):
    """A flipped byte anywhere — header (its model), index, a block — is refused in one
    line; a set never answers another value."""
    src, clean = exported
    with open_db(src) as lm:
        key = lm.tier_keys()[-1]
    f = TierFile(tier_file(clean, key, kind))
    data_at, offsets, total = f.data_at, f.offsets, f.path.stat().st_size
    f.close()
    rng = np.random.default_rng(11)
    spots = [int(a) for a in rng.integers(0, total, 25)] + [int(data_at + offsets[1]) + 1, int(data_at) + 2]
    for at in spots:
        bad = tmp_path / f"bad{at}"
        shutil.copytree(clean, bad)
        _flip(tier_file(bad, key, kind), at)
        with pytest.raises(StoreError) as e:  # no answer at all, so never a wrong one
            with open_db(bad) as db:
                db.values()
        assert "\n" not in str(e.value) and key in str(e.value)
