"""The exporter's fast paths write what the readers' kernels expect: the one-pass block
coder (:func:`solver.kernels.compact_enc.encode_block`) gives the bytes of the WDL and
distance coders called one after the other, the rule codes looked at only where a value
can be one (:func:`rule_codes_known`) are the rule codes of every cell, and the WDL tally
counts what ``np.bincount`` counts — on solved hex(3) databases and on made-up blocks
(long distances, both parities)."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from solver.db.database import Database
from solver.game.config import make_config
from solver.kernels.compact import NO_RULE, rule_codes, rule_codes_known, wdl_of_codes, wdl_symbols, wdl_tally, win_needs
from solver.kernels.compact_cm import CONTEXTS as CM_CONTEXTS
from solver.kernels.compact_cm import cm_encode
from solver.kernels.compact_dcm import CONTEXTS, dcm_count, dcm_encode, dcm_model, out_size
from solver.kernels.compact_enc import encode_block
from solver.retro.driver import solve

VARIANTS = {"base": {}, "edge": dict(edge=True), "capture": dict(capture=True, traps_x="a1,e3", traps_o="c5,a3")}


@pytest.fixture(scope="module", params=list(VARIANTS))
def solved(request, tmp_path_factory):
    """``(values, layout)`` of a solved hex(3) 2v2 database of each variant."""
    path = tmp_path_factory.mktemp("lmdb") / request.param
    solve(make_config(board=3, balls=2, **VARIANTS[request.param]), path, material=(2, 2), progress=False)
    with Database(path) as db:
        return db.values(), db.layout


def _separate(codes, rules, row, model):
    """The reference: the symbols, then each coder on its own."""
    n = len(codes)
    sym = np.empty(n, dtype=np.uint8)
    wdl_symbols(codes, rules, False, sym)
    out = np.empty(3 * n + 16, dtype=np.uint8)
    wdl = out[: cm_encode(sym, rules == NO_RULE, row, np.empty((CM_CONTEXTS, 2, 2), dtype=np.int64), out)].tobytes()
    if model is None:
        return sym, wdl, b""
    dout = np.empty(out_size(n), dtype=np.uint8)
    return sym, wdl, dout[: dcm_encode(codes, rules, sym, row, model, np.empty(CONTEXTS, dtype=np.int64), dout)].tobytes()


def _one_pass(codes, rules, row, model):
    n = len(codes)
    sym = np.empty(n, dtype=np.uint8)
    out = np.empty(3 * n + 16, dtype=np.uint8)
    dout = np.empty(out_size(n), dtype=np.uint8)
    m = np.empty(0, dtype=np.uint16) if model is None else model
    nw, nd = encode_block(codes, rules, row, sym, np.empty((CM_CONTEXTS, 2, 2), dtype=np.int64), out, m,
                          np.empty(CONTEXTS, dtype=np.int32), dout)
    return sym, out[:nw].tobytes(), dout[:nd].tobytes()


def _model(codes, rules, row):
    sym = np.empty(len(codes), dtype=np.uint8)
    wdl_symbols(codes, rules, False, sym)
    n1, n = np.zeros(CONTEXTS, dtype=np.int64), np.zeros(CONTEXTS, dtype=np.int64)
    dcm_count(codes, rules, sym, row, n1, n)
    return dcm_model(n1, n)


def test_rule_codes_known_and_tally(solved):
    values, lay = solved
    need = win_needs(lay.geo)
    every, known = (np.empty(len(values), dtype=np.int32) for _ in range(2))
    rule_codes(0, len(values), lay.geo, lay.lay, need, every)
    for t in lay.tiers:  # tier by tier, as the exporter calls it
        rule_codes_known(t.base, t.base + t.size, values[t.base : t.base + t.size], lay.geo, lay.lay, need,
                         known[t.base : t.base + t.size])
    assert np.array_equal(known, every)
    assert np.count_nonzero(every != NO_RULE) > 0
    wdl, ref = np.empty(len(values), dtype=np.uint8), np.empty(len(values), dtype=np.uint8)
    counts = np.full(4, 5, dtype=np.int64)
    wdl_tally(values, wdl, counts)
    wdl_of_codes(values, ref)
    assert np.array_equal(wdl, ref)
    assert np.array_equal(counts - 5, np.bincount(ref, minlength=4))


def test_one_pass_writes_the_coders_bytes(solved):
    values, lay = solved
    need = win_needs(lay.geo)
    blocks = 0
    for t in lay.tiers:
        codes = values[t.base : t.base + t.size]
        rules = np.empty(t.size, dtype=np.int32)
        rule_codes(t.base, t.base + t.size, lay.geo, lay.lay, need, rules)
        row = comb(lay.geo.npoints - t.a, t.b)
        model = _model(codes, rules, row)
        for lo in range(0, t.size, 1024):
            c, r = codes[lo : lo + 1024], rules[lo : lo + 1024]
            for m in (model, None):
                want, got = _separate(c, r, row, m), _one_pass(c, r, row, m)
                assert np.array_equal(want[0], got[0]) and want[1:] == got[1:]
            blocks += 1
    assert blocks > 10


@pytest.mark.parametrize("seed", [1, 2])
def test_one_pass_on_made_up_blocks(seed):
    """Distances of any length and parity (escapes), rule cells of every kind."""
    rng = np.random.default_rng(seed)
    n, row = 6000, 41
    res = rng.integers(0, 3, n)
    d = np.where(rng.random(n) < 0.2, rng.integers(0, 0x3FFF + 1, n), rng.geometric(0.2, n))
    codes = np.where(res == 2, 0xC000 | d, np.where(res == 0, 0x8000 | d, 0)).astype(np.uint16)
    rules = np.full(n, NO_RULE, dtype=np.int32)
    at = rng.random(n) < 0.1
    rules[at] = rng.choice([0x4000, 0x8000, 0xC000, 0xC001], int(at.sum()))
    codes[at] = rules[at]
    model = _model(codes[: n // 2], rules[: n // 2], row)
    for m in (model, np.full(CONTEXTS, 2048, dtype=np.uint16), None):
        want, got = _separate(codes, rules, row, m), _one_pass(codes, rules, row, m)
        assert np.array_equal(want[0], got[0]) and want[1:] == got[1:]
