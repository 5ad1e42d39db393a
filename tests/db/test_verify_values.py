"""``verify`` keeps one byte a position: the bytes decode to the stored codes, the CRCs are
those of the 16-bit codes, and too many distinct codes fall back to 16 bits."""

from __future__ import annotations

import zlib
from types import SimpleNamespace

import numpy as np
import pytest

from solver.db.verify_values import read_values
from solver.errors import UsageError


class _Store:
    """Tiers of given codes, served in blocks of ``block`` values."""

    def __init__(self, tiers: list[np.ndarray], block: int = 1000):
        self.tiers = tiers
        self.block = block

    def tier_blocks(self, tier_no: int, size: int):
        codes = self.tiers[tier_no]
        assert len(codes) == size
        for lo in range(0, size, self.block):
            yield lo, codes[lo : lo + self.block]


def _layout(tiers: list[np.ndarray]):
    base, out = 0, []
    for i, t in enumerate(tiers):
        out.append(SimpleNamespace(key=f"t{i}", base=base, size=len(t)))
        base += len(t)
    return out, base


def _codes(rng, n: int, distinct: int) -> np.ndarray:
    pool = rng.choice(1 << 16, size=distinct, replace=False).astype(np.uint16)
    return pool[rng.integers(0, distinct, n)]


def test_bytes_decode_to_the_codes_and_the_crcs_are_the_codes():
    rng = np.random.default_rng(3)
    tiers = [_codes(rng, 5000, 40), _codes(rng, 7321, 200)]
    read, total = _layout(tiers)
    vals, crcs = read_values(_Store(tiers), read, total)
    assert vals.vals.dtype == np.uint8 and len(vals.vals) == total and len(vals.dec) <= 256
    assert np.array_equal(vals.dec[vals.vals], np.concatenate(tiers))
    assert crcs == {t.key: zlib.crc32(c) for t, c in zip(read, tiers)}


def test_more_codes_than_a_byte_holds_are_kept_in_16_bits():
    rng = np.random.default_rng(4)
    tiers = [_codes(rng, 3000, 200), _codes(rng, 3000, 200)]  # 300-odd distinct in all
    assert len(np.unique(np.concatenate(tiers))) > 256
    read, total = _layout(tiers)
    vals, crcs = read_values(_Store(tiers), read, total)
    assert vals.vals.dtype == np.uint16 and len(vals.dec) == 0
    assert np.array_equal(vals.vals, np.concatenate(tiers))
    assert crcs == {t.key: zlib.crc32(c) for t, c in zip(read, tiers)}


def test_sixteen_bits_when_asked():
    rng = np.random.default_rng(5)
    tiers = [_codes(rng, 2000, 10)]
    read, total = _layout(tiers)
    vals, _ = read_values(_Store(tiers), read, total, one_byte=False)
    assert vals.vals.dtype == np.uint16 and np.array_equal(vals.vals, tiers[0])


def test_verify_refuses_in_one_line_what_does_not_fit(solved_db, monkeypatch):
    """Too little memory for the values: a one-line refusal that names what is needed,
    before anything is read (the CLI prints it and exits 2)."""
    from solver.db import verify
    from solver.game.config import make_config

    path = solved_db(make_config("hex2", 3, edge=True), (3, 3))
    monkeypatch.setattr(verify, "mem_available", lambda: 1000)
    with pytest.raises(UsageError, match=r"^verify needs about 0\.6 GB of memory for the values of [\d,]+ positions "
                                         r"\(1 byte each\) and 0\.0 GB are available"):
        verify.verify_db(path, progress=False)
    monkeypatch.setattr(verify, "mem_available", lambda: None)  # unknown: no refusal
    assert verify.verify_db(path, progress=False).ok
