"""The distance coder of the exported sets (:mod:`solver.kernels.compact_dcm`) on blocks
made up here: it decodes what it coded — long and short distances, both parities, cells
the rules answer, draws, cells that are no position — from a model counted on other
blocks or on none, and codes predictable distances in little room."""

from __future__ import annotations

import numpy as np
import pytest

from solver.kernels.compact import NO_RULE, wdl_symbols
from solver.kernels.compact_dcm import CONTEXTS, dcm_count, dcm_decode, dcm_encode, dcm_model, out_size

ROW = 37


def _block(rng: np.random.Generator, n: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, rules)`` of a made-up block of ``n`` cells."""
    if kind == "random":  # any distance, any parity
        d = rng.integers(0, 0x3FFF + 1, n)
    elif kind == "short":
        d = rng.geometric(0.3, n) - 1
    else:  # "rows": a cell mostly as the one a row before
        d = np.tile(rng.integers(1, 24, ROW), n // ROW + 1)[:n]
        d = np.where(rng.random(n) < 0.1, d + 2, d)
    res = rng.integers(0, 3, n)  # 0 loss, 1 draw, 2 win
    if kind == "rows":
        res = np.tile(res[:ROW], n // ROW + 1)[:n]
    if kind != "random":  # the usual parity: odd for a win, even for a loss
        d = 2 * d + (res == 2)
    codes = np.where(res == 2, 0xC000 | d, np.where(res == 0, 0x8000 | d, 0)).astype(np.uint16)
    rules = np.full(n, NO_RULE, dtype=np.int32)
    at = rng.random(n) < 0.1
    rules[at] = rng.choice([0x4000, 0x8000, 0xC000, 0xC001], int(at.sum()))  # no position, lost/won in 0, won in 1
    codes[at] = rules[at]
    return codes, rules


def _round_trip(codes: np.ndarray, rules: np.ndarray, model: np.ndarray) -> int:
    sym = np.empty(len(codes), dtype=np.uint8)
    wdl_symbols(codes, rules, False, sym)
    st = np.empty(CONTEXTS, dtype=np.int64)
    out = np.empty(out_size(len(codes)), dtype=np.uint8)
    size = dcm_encode(codes, rules, sym, ROW, model, st, out)
    back = np.full(len(codes), 0x1234, dtype=np.uint16)
    assert dcm_decode(out[:size].copy(), rules, sym, ROW, model, st, back)
    assert np.array_equal(back, codes)
    return size


@pytest.mark.parametrize("kind", ["random", "short", "rows"])
def test_distances_decode_as_coded(kind):
    rng = np.random.default_rng(3)
    n1 = np.zeros(CONTEXTS, dtype=np.int64)
    n = np.zeros(CONTEXTS, dtype=np.int64)
    for _ in range(3):  # the model of other blocks of the kind
        codes, rules = _block(rng, 5000, kind)
        sym = np.empty(len(codes), dtype=np.uint8)
        wdl_symbols(codes, rules, False, sym)
        dcm_count(codes, rules, sym, ROW, n1, n)
    model = dcm_model(n1, n)
    assert model.min() >= 1 and model.max() <= 4095 and n.sum() > 0
    codes, rules = _block(rng, 20_000, kind)
    flat = np.full(CONTEXTS, 2048, dtype=np.uint16)  # no model: one half everywhere
    sizes = [_round_trip(codes, rules, model), _round_trip(codes, rules, flat)]
    decided = int(np.count_nonzero((codes & 0x8000) != 0) - np.count_nonzero(rules >= 0x8000))
    if kind == "short":  # 2.9 bits of entropy a distance
        assert sizes[0] < 3.3 / 8 * decided
    if kind == "rows":  # mostly the distance a row before: the context predicts it
        assert sizes[0] < 0.25 * decided  # 2 bits; log2(23) = 4.5 without the row before
    assert sizes[0] <= sizes[1] * 1.05  # a model of the same kind does not hurt


def test_a_damaged_stream_decodes_within_bounds():
    """Bytes not written by the coder decode to some codes (the block's checksum is what
    refuses them) without reading or writing out of bounds."""
    rng = np.random.default_rng(5)
    codes, rules = _block(rng, 4000, "short")
    sym = np.empty(len(codes), dtype=np.uint8)
    wdl_symbols(codes, rules, False, sym)
    st = np.empty(CONTEXTS, dtype=np.int64)
    model = np.full(CONTEXTS, 2048, dtype=np.uint16)
    for data in (np.zeros(0, dtype=np.uint8), rng.integers(0, 256, 300).astype(np.uint8)):
        back = np.empty(len(codes), dtype=np.uint16)
        if dcm_decode(data, rules, sym, ROW, model, st, back):  # False: a distance too long for a code
            assert np.array_equal(back[rules >= 0], rules[rules >= 0].astype(np.uint16))
