"""Guards around LMDB: checked reads, writes that say how much space they need, and
checksummed JSON records — so that a damaged file or a full disk ends in one line.

* **Reads.** Values are read as buffers into LMDB's memory map and checked to lie inside
  the file before a byte is copied: a length or page number damaged on disk would
  otherwise make the copy read past the end of the file (``SIGBUS``). On opening, the
  last page LMDB believes in must lie inside the file too.
* **JSON records** (metadata, proofs, book nodes) end in ``\\n#crc32:XXXXXXXX``; records
  written before this existed (no such tail) are read as they are.
* **Writes.** :func:`write_txn` grows the map when it is full, up to ``ROTARY_MAP_MAX``
  bytes when that is set (tests set it small to fill the "disk"), and turns a full map, a
  full disk (``ENOSPC``, ``EDQUOT``, ``EFBIG``, or LMDB's ``Input/output error`` for a
  short write) into one :class:`StoreError` saying how much the step being written
  needs. The transaction is aborted: what was committed before stays intact.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import struct
import zlib
from pathlib import Path

import lmdb
import numpy as np

from solver.errors import StoreError

MAP_MAX_ENV = "ROTARY_MAP_MAX"
_CRC_TAIL = re.compile(rb"\n#crc32:([0-9a-f]{8})\Z")
_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_SPACE_WORDS = ("no space left", "disk quota", "file too large", "input/output error")


# ---------------------------------------------------------------------------- JSON records


def pack_json(value) -> bytes:
    """JSON text with its crc32 as a last line."""
    raw = json.dumps(value).encode()
    return raw + b"\n#crc32:%08x" % zlib.crc32(raw)


def unpack_json(raw, what: str):
    """The value of a record written by :func:`pack_json` (or a plain JSON record of
    before); :class:`StoreError` naming ``what`` if it is damaged."""
    data = bytes(raw)
    m = _CRC_TAIL.search(data)
    if m is not None:
        data = data[: m.start()]
        if zlib.crc32(data) != int(m.group(1), 16):
            raise StoreError(f"{what} is damaged: it fails its checksum")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise StoreError(f"{what} is damaged: {e}") from None


# ---------------------------------------------------------------------------- reads


class MapBounds:
    """Where the memory map of ``data.mdb`` lies in this process, and how long the file is:
    :meth:`copy` copies a buffer only when it lies wholly inside the file."""

    def __init__(self, path: Path):
        self.file = (path / "data.mdb").resolve()
        self.bases: list[int] = []
        self.size = 0
        self._known = False

    def refresh(self) -> None:
        self.size = self.file.stat().st_size if self.file.exists() else 0
        self.bases = []
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    parts = line.split(None, 5)
                    if len(parts) == 6 and parts[5].strip() == str(self.file) and int(parts[2], 16) == 0:
                        self.bases.append(int(parts[0].split("-")[0], 16))
        except OSError:
            self.bases = []
        self._known = True

    def inside(self, addr: int, n: int) -> bool:
        return any(b <= addr and addr + n <= b + self.size for b in self.bases)

    def copy(self, buf, what: str) -> bytes:
        """``bytes(buf)`` after checking that ``buf`` lies inside the file (where the map
        can be found: on Linux); :class:`StoreError` naming ``what`` otherwise."""
        n = len(buf)
        if n:
            addr = np.frombuffer(buf, dtype=np.uint8).ctypes.data
            if not self._known or not self.inside(addr, n):
                self.refresh()  # the map may have moved (a writer grew it) or the file grown
                if self.bases and not self.inside(addr, n):
                    raise StoreError(f"{what} is damaged: its record points past the end of the file")
        return bytes(buf)


def check_pages(env: lmdb.Environment, path: Path) -> None:
    """:class:`StoreError` unless every page LMDB's current meta page counts lies inside
    ``data.mdb`` (a damaged meta page would have LMDB read past the end of the file)."""
    data = path / "data.mdb"
    try:
        last = env.info()["last_pgno"]
        psize = env.stat()["psize"]
        size = data.stat().st_size
    except (lmdb.Error, OSError):
        return
    if (last + 1) * psize > size:
        raise StoreError(f"database {path} is damaged: its header counts {last + 1} pages, the file holds {size // psize}")


def lmdb_reason(e: BaseException) -> str:
    """An LMDB error in words: ``mdb_get: MDB_CORRUPTED: Located page was wrong type``
    -> ``located page was wrong type``."""
    text = str(e).strip()
    return (text.rsplit(": ", 1)[-1] or type(e).__name__).lower()


# ---------------------------------------------------------------------------- writes


def map_limit() -> int | None:
    """The largest map LMDB may grow to: ``ROTARY_MAP_MAX`` bytes (e.g. ``64M``), else none."""
    text = os.environ.get(MAP_MAX_ENV, "").strip()
    if not text:
        return None
    m = re.fullmatch(r"(\d+)\s*([kKmMgG]?)[bB]?", text)
    if not m:
        raise StoreError(f"{MAP_MAX_ENV}={text!r}: expected a size in bytes, e.g. 67108864 or 64M")
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def megabytes(n: int) -> str:
    """``n`` bytes in words: ``12 kB``, ``3.4 MB``, ``1,234 MB``."""
    if n < 1e6:
        return f"{max(1, round(n / 1e3))} kB"
    mb = n / 1e6
    return f"{mb:.1f} MB" if mb < 10 else f"{mb:,.0f} MB"


def is_space_error(e: BaseException) -> bool:
    if isinstance(e, OSError) and e.errno in _SPACE_ERRNOS:
        return True
    text = str(e).lower()
    return isinstance(e, (lmdb.Error, OSError)) and any(w in text for w in _SPACE_WORDS)


def full_error(path: Path, need: int, what: str, cause: str, disk: bool = True) -> StoreError:
    """The one line for a write that did not fit: what, where, how much it needs."""
    free = ""
    if disk:
        try:
            free = f" ({megabytes(shutil.disk_usage(path).free)} free)"
        except OSError:
            pass
    advice = "free some space" if disk else f"raise {MAP_MAX_ENV}"
    return StoreError(
        f"cannot write {what} into {path}: {cause}{free}; this step needs up to {megabytes(need)}. "
        f"Everything written before is intact: {advice} and run the same command again"
    )


def _commit(txn) -> None:
    """Commit ``txn`` (a seam for the tests: a full disk is simulated here)."""
    txn.commit()


def write_txn(env: lmdb.Environment, work, path: Path | None = None, need: int = 0, what: str = "the next step") -> None:
    """Run ``work(txn)`` in one write transaction, growing the map when it is full.

    The map is grown with no transaction open, and the whole transaction redone; beyond
    ``ROTARY_MAP_MAX``, or when the disk is full, :class:`StoreError` (one line, with
    ``need``: the bytes this step writes at most). Nothing of the transaction is kept.
    """
    path = Path(env.path()) if path is None else path
    limit = map_limit()
    while True:
        txn = None
        try:
            txn = env.begin(write=True)
            work(txn)
            _commit(txn)
            return
        except lmdb.MapFullError:
            if txn is not None:
                txn.abort()
            size = env.info()["map_size"]
            if limit is not None and size >= limit:
                raise full_error(path, need, what, f"the map reached its largest size, {MAP_MAX_ENV}={megabytes(limit)}", disk=False) from None
            grow = size * 2 if limit is None else min(size * 2, limit)
            try:
                env.set_mapsize(grow)
            except lmdb.Error as e:
                raise full_error(path, need, what, f"its map cannot grow to {megabytes(grow)}: {lmdb_reason(e)}") from None
        except lmdb.MapResizedError:
            # a writer in another process (two proofs sharing a store) grew the map past
            # ours: adopt its size and redo the transaction
            _abort(txn)
            env.set_mapsize(0)
        except (lmdb.Error, OSError) as e:
            _abort(txn)
            if is_space_error(e):
                raise full_error(path, need, what, _space_cause(e)) from None
            raise StoreError(f"cannot write {what} into {path}: {lmdb_reason(e)}") from None


def read_txn(env: lmdb.Environment, db):
    """A read transaction on ``db`` (buffers into the map); when a writer in another process
    has grown the map past ours (``MDB_MAP_RESIZED``), ours is grown to match first."""
    try:
        return env.begin(db=db, buffers=True)
    except lmdb.MapResizedError:
        env.set_mapsize(0)  # 0: adopt the size the writer set
        return env.begin(db=db, buffers=True)


def _abort(txn) -> None:
    if txn is not None:
        try:
            txn.abort()
        except lmdb.Error:
            pass


def _space_cause(e: BaseException) -> str:
    if "input/output" in str(e).lower():  # LMDB's word for a short write
        return "the disk is full (or failing: input/output error)"
    return "the disk is full"


def sync(env: lmdb.Environment, path: Path, need: int = 0, what: str = "the next step") -> None:
    """``env.sync(True)``, its failure in one line."""
    try:
        env.sync(True)
    except (lmdb.Error, OSError) as e:
        if is_space_error(e):
            raise full_error(path, need, what, _space_cause(e)) from None
        raise StoreError(f"cannot write {what} into {path}: {lmdb_reason(e)}") from None


# ---------------------------------------------------------------------------- the page tree

_P_BRANCH, _P_LEAF, _P_OVERFLOW, _P_META, _P_LEAF2 = 0x01, 0x02, 0x04, 0x08, 0x20
_F_BIGDATA, _F_SUBDATA, _F_DUPDATA = 0x01, 0x02, 0x04
_MAGIC = 0xBEEFC0DE
_HDR = 16  # PAGEHDRSZ of a 64-bit LMDB
_DB = struct.Struct("<IHHQQQQQ")  # MDB_db: pad, flags, depth, branch, leaf, overflow pages, entries, root
_P_INVALID = (1 << 64) - 1


def check_tree(env: lmdb.Environment, path: Path) -> None:
    """Walk LMDB's page tree in ``data.mdb`` (branch and leaf pages of every database,
    the first page of every overflow value) and check that every page number, node and
    length lies where it must: :class:`StoreError` naming the database otherwise.

    LMDB trusts its pages; a byte flipped in one can make it read past the end of the
    file (``SIGBUS``) instead of failing. The walk reads the file with ``pread``, pinned
    to one snapshot by a read transaction. Only 64-bit LMDB files are walked."""
    if struct.calcsize("P") != 8:
        return
    file = path / "data.mdb"
    try:
        txn = env.begin()
    except lmdb.Error as e:
        raise StoreError(f"database {path} is damaged: {lmdb_reason(e)}") from None
    try:
        fd = os.open(file, os.O_RDONLY)
    except OSError:
        txn.abort()
        return
    try:
        _Walk(fd, path, txn.id()).run()
    finally:
        os.close(fd)
        txn.abort()


class _Walk:
    def __init__(self, fd: int, path: Path, txnid: int):
        self.fd, self.path, self.txnid = fd, path, txnid
        self.size = os.fstat(fd).st_size
        self.seen: set[int] = set()

    def bad(self, why: str) -> StoreError:
        return StoreError(f"database {self.path} is damaged: {why}")

    def page(self, pgno: int) -> bytes:
        data = os.pread(self.fd, self.psize, pgno * self.psize)
        if len(data) != self.psize:
            raise self.bad(f"page {pgno} lies past the end of the file")
        return data

    def run(self) -> None:
        head = os.pread(self.fd, 4096, 0)
        if len(head) < _HDR + 24 + 2 * _DB.size + 16:
            raise self.bad("the file is too short for its header")
        psize = _DB.unpack_from(head, _HDR + 24)[0]  # FREE_DBI's md_pad holds the page size
        if psize < 512 or psize > 65536 or psize & (psize - 1):
            raise self.bad(f"page size {psize}")
        self.psize = psize
        metas = []
        for i in range(2):
            p = os.pread(self.fd, psize, i * psize)
            if len(p) < psize:
                raise self.bad("the file is too short for its header")
            flags = struct.unpack_from("<H", p, 10)[0]
            magic, version = struct.unpack_from("<II", p, _HDR)
            if not flags & _P_META or magic != _MAGIC:
                raise self.bad(f"meta page {i} is not one")
            last, txnid = struct.unpack_from("<QQ", p, _HDR + 24 + 2 * _DB.size)
            metas.append((txnid, last, _DB.unpack_from(p, _HDR + 24), _DB.unpack_from(p, _HDR + 24 + _DB.size)))
        now = [m for m in metas if m[0] == self.txnid]
        if not now:
            return  # a writer committed twice since our snapshot began: its pages are its own
        _, last, free, main = now[0]
        self.npages = last + 1
        if self.npages * psize > self.size:
            raise self.bad(f"its header counts {self.npages} pages, the file holds {self.size // psize}")
        self.tree(free, "the free list", sub=False)
        self.tree(main, "the main table", sub=True)

    def tree(self, db: tuple, what: str, sub: bool) -> None:
        depth, root = db[2], db[7]
        if root == _P_INVALID:
            return
        if not 1 <= depth <= 64:
            raise self.bad(f"{what} has depth {depth}")
        self.walk(root, depth, what, sub)

    def walk(self, pgno: int, depth: int, what: str, sub: bool) -> None:
        if pgno < 2 or pgno >= self.npages:
            raise self.bad(f"{what} points to page {pgno} of {self.npages}")
        if pgno in self.seen:
            raise self.bad(f"{what} reaches page {pgno} twice")
        self.seen.add(pgno)
        p = self.page(pgno)
        own, _, flags, lower, upper = struct.unpack_from("<QHHHH", p)
        ps = self.psize
        if own != pgno:
            raise self.bad(f"page {pgno} calls itself page {own}")
        leaf = bool(flags & _P_LEAF)
        if flags & _P_LEAF2 or leaf == bool(flags & _P_BRANCH) or leaf != (depth == 1):
            raise self.bad(f"page {pgno} of {what} has flags {flags:#x} at depth {depth}")
        if not (_HDR <= lower <= upper <= ps) or (lower - _HDR) % 2:
            raise self.bad(f"page {pgno} of {what} has bounds {lower}..{upper}")
        n = (lower - _HDR) // 2
        for i in range(n):
            at = struct.unpack_from("<H", p, _HDR + 2 * i)[0]
            if at < upper or at + 8 > ps:
                raise self.bad(f"page {pgno} of {what}: node {i} at {at}")
            lo, hi, nflags, ksize = struct.unpack_from("<HHHH", p, at)
            if at + 8 + ksize > ps:
                raise self.bad(f"page {pgno} of {what}: node {i} has a key of {ksize} bytes")
            if not leaf:
                child = lo | hi << 16 | nflags << 32
                self.walk(child, depth - 1, what, sub)
                continue
            dsize = lo | hi << 16
            data_at = at + 8 + ksize
            if nflags & _F_DUPDATA:
                raise self.bad(f"page {pgno} of {what}: node {i} has flags {nflags:#x}")
            if nflags & _F_BIGDATA:
                if data_at + 8 > ps:
                    raise self.bad(f"page {pgno} of {what}: node {i} runs past its page")
                ov = struct.unpack_from("<Q", p, data_at)[0]
                if ov < 2 or ov >= self.npages:
                    raise self.bad(f"page {pgno} of {what}: node {i} points to page {ov} of {self.npages}")
                q = os.pread(self.fd, _HDR, ov * ps)
                oflags, pages = struct.unpack_from("<HI", q, 10) if len(q) == _HDR else (0, 0)
                if not oflags & _P_OVERFLOW or ov + pages > self.npages or dsize > pages * ps - _HDR:
                    raise self.bad(f"page {pgno} of {what}: node {i} points to a damaged value at page {ov}")
            elif data_at + dsize > ps:
                raise self.bad(f"page {pgno} of {what}: node {i} has a value of {dsize} bytes")
            if nflags & _F_SUBDATA:
                if not sub or dsize != _DB.size:
                    raise self.bad(f"page {pgno} of {what}: node {i} has flags {nflags:#x}")
                name = p[at + 8 : data_at].decode(errors="replace")
                self.tree(_DB.unpack_from(p, data_at), f"table {name!r}", sub=False)
