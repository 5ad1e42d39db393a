"""The compact exported format: file layout, codecs and checked block reads.

An exported set is a folder::

    manifest.json          rules, material, tiers, files (JSON + crc32 line)
    <tier>.wdl             win/draw/loss of every position of the tier
    <tier>.dist            distances of its wins and losses (absent with --wdl-only)

A tier file::

    magic  b"ROTARYCT"  u32 LE header length H
    header JSON (H bytes): format, version, kind, rules, material, description, tier,
           base, size, block, blocks, codec, counts, sha256, wdl_sha256, row, and the
           model: for ``rans`` files the frequencies of
           :mod:`solver.kernels.compact_rans`, for distances coded ``cm`` the
           probabilities of :mod:`solver.kernels.compact_dcm` (base64 of the
           zlib-compressed uint16 LE table; :func:`pack_model`)
    u32 LE crc32(header)
    index  (blocks + 1) u64 LE offsets of the blocks from the data start,
           blocks u32 LE crc32 per block, then u32 LE crc32(index)
    data   the blocks, each compressed by ``codec``

A block's crc32 covers the file kind, tier key and block number as well as its
compressed bytes: a block read from another place fails it. Every read checks it, and
the decompressed length, before a value is used (:func:`read_block`).

Block contents (``block`` positions, the last block shorter):

* ``wdl`` and ``dist``, codec ``rans`` (the default): two rANS streams of the positions
  the rules leave open, coded with the tier's model (:mod:`solver.kernels.compact_rans`):
  the WDL symbols, and the distances of the wins and losses; a stream is its two final
  states (u32 LE each) and then its 16-bit words (LE). Read together.

* ``wdl``, codec ``cm``: the symbols (0 loss, 1 draw, 2 win) of the
  positions the rules leave open, arithmetic-coded by :mod:`solver.kernels.compact_cm`
  (the header's ``row`` gives its context); positions the rules answer
  (:mod:`solver.kernels.compact`) are not coded. Other codecs: 2 bits a position, four to
  a byte, first in the low bits, compressed; positions the rules answer hold filler.
* ``dist``, codec ``cm``: the distance of each position the rules leave
  open whose WDL symbol is a win or a loss, in order, arithmetic-coded by
  :mod:`solver.kernels.compact_dcm` from the header's model. Other codecs: for each such
  win, in order, then for each such loss: ``q = d >> 1`` as a low byte plane then a
  high byte plane, then one bit each (packed, first in the high bit) saying whether
  ``d``'s parity is not the usual one (odd for a win, even for a loss), compressed.
  Either way read with the block's WDL symbols: a distance block is read with its WDL
  block.
"""

from __future__ import annotations

import base64
import json
import lzma
import os
import struct
import zlib
from pathlib import Path

import numpy as np

from solver.errors import StoreError

FORMAT_NAME = "rotary-compact"
VERSION = 1
MAGIC = b"ROTARYCT"
MANIFEST = "manifest.json"
KINDS = ("wdl", "dist")
DEFAULT_BLOCK = 1 << 16  # positions a block: measured in docs (bits a position against block size)
BLOCK_SIZES = (1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16)


def is_compact(path: str | os.PathLike) -> bool:
    """Does the folder ``path`` hold an exported set (a manifest, no LMDB data)?"""
    p = Path(path)
    return (p / MANIFEST).is_file() and not (p / "data.mdb").exists()


def tier_file(folder: Path, key: str, kind: str) -> Path:
    return folder / f"{key}.{kind}"


# ---------------------------------------------------------------------------- codecs


def _zstd():
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def codecs() -> tuple[str, ...]:
    """The byte codecs this installation can write and read (WDL blocks also take ``cm``)."""
    return ("zstd", "zlib", "lzma") if _zstd() is not None else ("zlib", "lzma")


WDL_CODECS = ("rans", "cm", "zstd", "zlib", "lzma")
DIST_CODECS = ("rans", "cm", "zstd", "zlib", "lzma")


def compressor(codec: str):
    """A function bytes -> compressed bytes (the strongest level of each codec)."""
    if codec == "zstd":
        zstd = _zstd()
        if zstd is None:
            raise StoreError("codec zstd needs the Python package zstandard (pip install zstandard)")
        return lambda raw: zstd.ZstdCompressor(level=19).compress(raw)  # a compressor a call: thread-safe
    if codec == "zlib":
        return lambda raw: zlib.compress(raw, 9)
    if codec == "lzma":
        return lambda raw: lzma.compress(raw, preset=6)
    raise StoreError(f"unknown codec {codec!r} (one of {', '.join(codecs())})")


def decompressor(codec: str, where: str):
    """A function (compressed bytes, expected length) -> bytes (``cm``: the bytes as they
    are; :mod:`solver.kernels.compact_cm` or :mod:`~solver.kernels.compact_rans` decodes them)."""
    if codec in ("cm", "rans"):
        return lambda data, n: data
    if codec == "zstd":
        zstd = _zstd()
        if zstd is None:
            raise StoreError(f"{where} is compressed with zstd: install the Python package zstandard to read it")
        # a decompressor a call: one object is not to be used by two threads at once
        return lambda data, n: zstd.ZstdDecompressor().decompress(data, max_output_size=n)
    if codec == "zlib":
        return lambda data, n: zlib.decompress(data, bufsize=max(n, 1))
    if codec == "lzma":
        return lambda data, n: lzma.decompress(data)
    raise StoreError(f"{where} uses codec {codec!r}, which this rotary does not read")


def pack_model(freqs: np.ndarray) -> str:
    """A frequency table as a header holds it: base64 of zlib of uint16 LE."""
    return base64.b64encode(zlib.compress(freqs.astype("<u2").tobytes(), 9)).decode()


def unpack_model(text, shape: tuple[int, int], total: int, where: str) -> np.ndarray:
    """The frequency table of a header (:func:`pack_model`), checked: every row sums to
    :data:`~solver.kernels.compact_rans.TOTAL` (``total``) with no frequency 0."""
    try:
        f = np.frombuffer(zlib.decompress(base64.b64decode(text, validate=True)), dtype="<u2")
    except (TypeError, ValueError, zlib.error):
        f = None
    if f is None or f.size != shape[0] * shape[1]:
        raise StoreError(f"{where} is damaged: its model does not read")
    f = f.reshape(shape).astype(np.int64)
    if f.min() < 1 or np.any(f.sum(axis=1) != total):
        raise StoreError(f"{where} is damaged: its model does not read")
    return f


# ---------------------------------------------------------------------------- layout


def block_crc(kind: str, key: str, block_no: int, data: bytes) -> int:
    """The checksum of a stored block: its place (kind, tier, number), then its bytes."""
    return zlib.crc32(data, zlib.crc32(f"{kind}:{key}:{block_no}".encode()))


def file_bytes(header: dict, blocks: list[bytes]) -> bytes:
    """A whole tier file (see the module docstring) from its header and compressed blocks."""
    head = json.dumps(header, sort_keys=True).encode()
    offsets = np.zeros(len(blocks) + 1, dtype="<u8")
    offsets[1:] = np.cumsum([len(b) for b in blocks], dtype=np.uint64) if blocks else []
    crcs = np.array([block_crc(header["kind"], header["tier"], i, b) for i, b in enumerate(blocks)], dtype="<u4")
    index = offsets.tobytes() + crcs.tobytes()
    return b"".join([
        MAGIC, struct.pack("<I", len(head)), head, struct.pack("<I", zlib.crc32(head)),
        index, struct.pack("<I", zlib.crc32(index)), *blocks,
    ])


class TierWriter:
    """A tier file written a block at a time (the layout of :func:`file_bytes`): the
    blocks go to the file's temporary name as they come, after room for the header and
    the index; :meth:`close` writes those in front — the header padded with spaces to
    the room kept, ``room`` bytes, which must hold it — syncs and renames the file. So
    a file is written while its blocks are coded, not after; the data is pushed to the
    disk on the way (:meth:`sync`), and the last sync is short."""

    def __init__(self, path: Path, kind: str, key: str, nblocks: int, room: int):
        self.path, self.kind, self.key, self.room = path, kind, key, room
        self.tmp = path.with_name(path.name + ".tmp")
        self.sizes: list[int] = []
        self.crcs: list[int] = []
        self.data_at = len(MAGIC) + 4 + room + 4 + 12 * nblocks + 8 + 4
        self.nblocks = nblocks
        try:
            self.f = open(self.tmp, "wb")
            self.f.seek(self.data_at)
        except OSError as e:
            self._fail(e)

    def _fail(self, e: OSError):
        from solver.db.store import os_reason

        self.abort()
        raise StoreError(f"cannot write {self.path}: {os_reason(e, self.path)}") from None

    def add(self, block: bytes) -> None:
        self.crcs.append(block_crc(self.kind, self.key, len(self.sizes), block))
        self.sizes.append(len(block))
        try:
            self.f.write(block)
        except OSError as e:
            self._fail(e)

    def sync(self) -> None:
        """Push what is written so far to the disk (the final sync then has little left)."""
        try:
            self.f.flush()
            os.fdatasync(self.f.fileno())
        except OSError as e:
            self._fail(e)

    @property
    def data_bytes(self) -> int:
        return sum(self.sizes)

    def close(self, header: dict) -> None:
        head = json.dumps(header, sort_keys=True).encode()
        if len(head) > self.room or len(self.sizes) != self.nblocks:
            self.abort()
            raise StoreError(f"cannot write {self.path}: its header or block count is not the one reserved (a bug)")
        head += b" " * (self.room - len(head))
        offsets = np.zeros(len(self.sizes) + 1, dtype="<u8")
        offsets[1:] = np.cumsum(self.sizes, dtype=np.uint64)
        index = offsets.tobytes() + np.array(self.crcs, dtype="<u4").tobytes()
        try:
            self.f.seek(0)
            self.f.write(b"".join([MAGIC, struct.pack("<I", len(head)), head, struct.pack("<I", zlib.crc32(head)),
                                   index, struct.pack("<I", zlib.crc32(index))]))
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()
            os.replace(self.tmp, self.path)
        except OSError as e:
            self._fail(e)

    def abort(self) -> None:
        """Close and remove the temporary file (after an error)."""
        try:
            self.f.close()
        except (OSError, AttributeError):
            pass
        try:
            self.tmp.unlink(missing_ok=True)
        except OSError:
            pass


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` through a temporary name and a rename: never half a file."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        from solver.db.store import os_reason

        raise StoreError(f"cannot write {path}: {os_reason(e, path)}") from None


class TierFile:
    """One tier file opened for reading: its header and block index, checked; blocks read
    on demand with :meth:`read`. ``where``: how messages name it."""

    def __init__(self, path: Path):
        self.path = path
        self.where = str(path)
        try:
            self.fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            from solver.db.store import os_reason

            raise StoreError(f"cannot read {path}: {os_reason(e, path)}") from None
        try:
            self._open()
        except BaseException:
            os.close(self.fd)
            raise

    def _pread(self, n: int, at: int) -> bytes:
        data = os.pread(self.fd, n, at)
        if len(data) != n:
            raise StoreError(f"{self.where} is damaged: it ends early (truncated)")
        return data

    def _open(self) -> None:
        magic = self._pread(12, 0)
        if magic[:8] != MAGIC:
            raise StoreError(f"{self.where} is not a rotary compact tier file")
        (hlen,) = struct.unpack_from("<I", magic, 8)
        if hlen > 1 << 24:
            raise StoreError(f"{self.where} is damaged: its header length does not read")
        head = self._pread(hlen + 4, 12)
        if zlib.crc32(head[:hlen]) != struct.unpack_from("<I", head, hlen)[0]:
            raise StoreError(f"{self.where} is damaged: its header fails its checksum")
        self.header = h = json.loads(head[:hlen])
        if h.get("format") != FORMAT_NAME or h.get("version") != VERSION:
            raise StoreError(f"{self.where} has format {h.get('format')} {h.get('version')}, this rotary reads {FORMAT_NAME} {VERSION}")
        self.kind, self.key, self.block = h["kind"], h["tier"], int(h["block"])
        nb = int(h["blocks"])
        at = 16 + hlen
        index = self._pread(12 * nb + 8 + 4, at)
        if zlib.crc32(index[:-4]) != struct.unpack_from("<I", index, len(index) - 4)[0]:
            raise StoreError(f"{self.where} is damaged: its block index fails its checksum")
        self.offsets = np.frombuffer(index, dtype="<u8", count=nb + 1).astype(np.int64)
        self.crcs = np.frombuffer(index, dtype="<u4", count=nb, offset=8 * (nb + 1)).astype(np.int64)
        self.data_at = at + len(index)
        self.nblocks = nb
        self.size = int(h["size"])
        self.codec = h["codec"]
        self._decompress = decompressor(self.codec, self.where)

    def raw_length(self, block_no: int) -> int:
        """Positions in block ``block_no``."""
        return min(self.block, self.size - block_no * self.block)

    def read(self, block_no: int, expect: int | None = None) -> bytes:
        """Block ``block_no`` decompressed, after its checksum (and, given ``expect``,
        its length) is checked: :class:`StoreError` naming the tier and block if not."""
        where = f"{self.where}: tier {self.key}, block {block_no}"
        if not 0 <= block_no < self.nblocks:
            raise StoreError(f"{where} is missing")
        lo, hi = int(self.offsets[block_no]), int(self.offsets[block_no + 1])
        if hi < lo or hi - lo > 1 << 26:
            raise StoreError(f"{where} is damaged: its place in the file does not read")
        data = self._pread(hi - lo, self.data_at + lo)
        if block_crc(self.kind, self.key, block_no, data) != self.crcs[block_no]:
            raise StoreError(f"{where} fails its checksum")
        try:
            raw = self._decompress(data, expect if expect is not None else 1 << 26)
        except Exception as e:  # each codec has its own error class; the checksum passed, so it is a bug or a wrong codec
            raise StoreError(f"{where} is damaged: it does not decompress ({type(e).__name__})") from None
        if expect is not None and len(raw) != expect:
            raise StoreError(f"{where} is damaged: {len(raw)} bytes, expected {expect}")
        return raw

    def drop_cache(self) -> None:
        """Ask the OS to drop this file from the page cache (cold-read benchmarks)."""
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_DONTNEED)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
