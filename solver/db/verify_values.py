"""The values ``rotary verify`` checks, read into memory at one byte a position.

A database stores a 16-bit code a position (:mod:`solver.kernels.code`: resolved or not,
win or loss, a distance), but it holds few distinct codes: a draw, and a win and a loss
for each distance that occurs — at most a few hundred. Each code met is given a byte as
the blocks are read, and the kernels turn a byte back into its code through a table
(:func:`solver.kernels.verify.code_at`). So a database of n positions is verified in n
bytes, the memory the one-byte solve (:mod:`solver.retro.lean`) took to write it, not the
2n of its codes. Should a database hold more than 256 distinct codes, its tiers are read
again as 16-bit codes.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np

from solver.memory import huge_zeros

CODES = 1 << 16
MAX_BYTES = 256


class Values(NamedTuple):
    """What the verify kernels read: ``vals`` (uint8 or uint16 over the whole index) and
    ``dec`` (uint16: the code of each byte; empty when ``vals`` holds the codes)."""

    vals: np.ndarray
    dec: np.ndarray


class TooManyCodes(Exception):
    """More distinct codes than a byte tells apart."""


def read_values(store, read, total: int, progress=None, one_byte: bool = True) -> tuple[Values, dict[str, int]]:
    """The values of the tiers ``read`` (objects with ``key``, ``base``, ``size``; tier
    number i of ``store`` is ``read[i]``) in an array over ``total`` index positions, and
    per tier the CRC-32 of its 16-bit codes in index order (the same whichever width is
    kept). ``progress``: wraps the tier list (a tqdm). :class:`solver.db.store.StoreError`
    on a bad block. ``one_byte`` False: 16-bit codes (the placement check needs them)."""
    if one_byte:
        try:
            return _read(store, read, total, progress, True)
        except TooManyCodes:
            pass
    return _read(store, read, total, progress, False)


def _read(store, read, total: int, progress, one_byte: bool) -> tuple[Values, dict[str, int]]:
    vals = huge_zeros(total, np.uint8 if one_byte else np.uint16)  # children are read at random: huge pages
    byte_of = np.full(CODES, -1, dtype=np.int32)
    codes: list[int] = []
    crcs: dict[str, int] = {}
    tiers = read if progress is None else progress(read)
    for i, t in enumerate(tiers):
        crc = 0
        for lo, block in store.tier_blocks(i, t.size):
            crc = zlib.crc32(block, crc)
            out = vals[t.base + lo : t.base + lo + len(block)]
            if not one_byte:
                out[:] = block
                continue
            seen = np.flatnonzero(np.bincount(block, minlength=CODES))
            new = seen[byte_of[seen] < 0]
            if len(new):
                if len(codes) + len(new) > MAX_BYTES:
                    raise TooManyCodes
                byte_of[new] = np.arange(len(codes), len(codes) + len(new), dtype=np.int32)
                codes.extend(int(c) for c in new)
            out[:] = byte_of[block]
        crcs[t.key] = crc
    dec = np.array(codes, dtype=np.uint16) if one_byte else np.zeros(0, dtype=np.uint16)
    if one_byte and not len(dec):
        dec = np.zeros(1, dtype=np.uint16)  # no positions: byte 0 stands for code 0 (an empty dec means 16-bit)
    return Values(vals, dec), crcs
