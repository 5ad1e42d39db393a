"""The LMDB database of a configuration: dense value blocks, metadata, checksums.

Layout of one environment (a folder)::

    meta   b"config"            JSON: rules (Config.key), material, format, tier list
           b"tier:<key>"        JSON per finished tier: counts, histograms, longest
                                win / loss, blocks, seconds
    blocks (tier no: u16 BE, block no: u32 BE) -> crc32(key + raw): u32 LE + zlib(raw)
                                raw = BLOCK uint16 values, little endian (format 1:
                                crc32(raw), without the key)

Metadata records end in a crc32 line (:mod:`solver.db.guard`). Every read of a block
checks its checksum, which covers the block's key too (format 2): a block that a damaged
page makes appear under another key, or a value pointer sent to another block, fails it.

A group of tiers is written in one transaction together with its tiers' metadata, so a
tier is either wholly present or absent: a killed ``solve`` never leaves a half tier
that could be served. Each process opens the environment itself (never across a fork).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from pathlib import Path

import lmdb
import numpy as np

from solver.db.guard import MapBounds, check_tree, lmdb_reason, map_limit, pack_json, read_txn, sync, unpack_json
from solver.db.guard import write_txn as _guarded_write_txn
from solver.errors import StoreError

FORMAT = 2  # 2: block checksums cover the block's key; 1 (read and extended still): they do not
FORMATS = (1, 2)
BLOCK = 1 << 16  # positions per block
# zlib level 4: 4.8x faster than 6 on hex(3) 4v4 (0.73 s against 3.47 s), 3 % larger; any
# level reads back the same
LEVEL = 4
PACKERS = min(8, os.cpu_count() or 1)
PACK_BATCH = 256
_MAP_START = 1 << 30


def block_key(tier_no: int, block_no: int) -> bytes:
    return struct.pack(">HI", tier_no, block_no)


def pack_block(values: np.ndarray, key: bytes = b"") -> bytes:
    """A stored block: crc32 of ``key`` + the raw values (format 2; format 1: no key),
    then the values compressed."""
    raw = np.ascontiguousarray(values, dtype="<u2").tobytes()
    return struct.pack("<I", zlib.crc32(raw, zlib.crc32(key))) + zlib.compress(raw, LEVEL)


def packed_blocks(tier_no: int, values, keyed: bool, batch: int = PACK_BATCH, first: int = 0):
    """``(key, stored block)`` for every block of a tier (from block ``first``), in key
    order, compressed by :data:`PACKERS` threads ``batch`` blocks at a time (zlib lets go
    of the GIL; a batch bounds the memory held to about 32 MB however large the tier). The
    blocks are cut from ``values`` here, in this thread: it may be a sequence that is not
    safe to read from several threads (the Ray driver's window over its actors' parts)."""
    starts = range(0, len(values), BLOCK)
    with ThreadPoolExecutor(PACKERS) as pool:
        for at in range(first, len(starts), batch):
            nos = range(at, min(at + batch, len(starts)))
            keys = [block_key(tier_no, b) for b in nos]
            cut = [np.array(values[starts[b] : starts[b] + BLOCK], dtype="<u2") for b in nos]
            blocks = pool.map(lambda v, k: pack_block(v, k if keyed else b""), cut, keys)
            yield from zip(keys, blocks)


def unpack_block(data: bytes, where: str, key: bytes = b"") -> np.ndarray:
    """Decompress a block and check its checksum; :class:`StoreError` naming it if bad."""
    try:
        (crc,) = struct.unpack_from("<I", data)
        raw = zlib.decompress(data[4:])
    except (struct.error, zlib.error) as e:
        reason = str(e).split("decompressing data: ")[-1]  # zlib's "Error -3 while decompressing data: ..."
        raise StoreError(f"{where} is damaged: it does not decompress ({reason})") from None
    if zlib.crc32(raw, zlib.crc32(key)) != crc or len(raw) % 2:
        raise StoreError(f"{where} fails its checksum")
    return np.frombuffer(raw, dtype="<u2")


def write_txn(env: lmdb.Environment, work, path: Path | None = None, need: int = 0, what: str = "the next step") -> None:
    """Run ``work(txn)`` in one write transaction, growing the map when it is full; a full
    map at ``ROTARY_MAP_MAX`` or a full disk is one :class:`StoreError` saying how much the
    step needs (``need`` bytes at most). See :func:`solver.db.guard.write_txn`."""
    _guarded_write_txn(env, work, path, need, what)


def make_folder(path: Path) -> None:
    """Create the folder ``path`` (and its parents); :class:`StoreError` saying in one line
    what is in the way: a file, a missing permission, a full or read-only disk."""
    if path.is_dir():
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreError(f"cannot create the folder {path}: {os_reason(e, path)}") from None


def remove_quietly(*paths: Path) -> None:
    """Delete these files where they exist; one that cannot be deleted is left (a leftover
    the next run ignores or replaces, never a reason to stop)."""
    for p in paths:
        try:
            p.unlink(missing_ok=True)
        except OSError:
            pass


def os_reason(e: OSError, path: Path | None = None) -> str:
    """What an OS error means, in words, without its errno number."""
    if isinstance(e, (FileExistsError, NotADirectoryError)) and path is not None:
        for above in [path, *path.parents]:
            if above.exists() and not above.is_dir():
                return f"{above} is a file"
    if isinstance(e, PermissionError):
        return "permission denied"
    return (e.strerror or str(e)).lower()


def _space(e: BaseException) -> bool:
    from solver.db.guard import is_space_error

    return is_space_error(e)


def _lmdb_reason(e: lmdb.Error) -> str:
    # lmdb messages read "<path>: <C library message>"; the path is named by the caller
    text = str(e)
    return text.split(": ", 1)[1].lower() if ": " in text else text


class SolveLock:
    """``with SolveLock(folder):`` — the one solve writing into ``folder``.

    An exclusive ``flock`` on ``folder/solve.lock``, held while the solve runs: a second
    solve into the same folder is refused at once (:class:`StoreError` naming the folder
    and the process that holds it). The OS drops the lock when the holder exits, however
    it ends (``kill -9`` included). Nested use in one process (the setup game solves its
    rotation phase first) shares the one lock.
    """

    _held: dict[Path, list] = {}
    NAME = "solve.lock"

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def __enter__(self) -> "SolveLock":
        import fcntl

        if self.folder.exists() and not self.folder.is_dir():
            raise StoreError(f"{self.folder} is a file, not a database folder")
        make_folder(self.folder)
        key = self.folder.resolve()
        held = self._held.get(key)
        if held is not None:
            held[1] += 1
            return self
        file = self.folder / self.NAME
        try:
            fd = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(f"cannot write into the database folder {self.folder}: {os_reason(e, file)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder.isdigit() else ""
            raise StoreError(
                f"{self.folder} is in use by another rotary solve{who}: wait for it to finish, or solve into another --db"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._held[key] = [fd, 1]
        return self

    def __exit__(self, *exc) -> None:
        key = self.folder.resolve()
        held = self._held[key]
        held[1] -= 1
        if held[1] == 0:
            del self._held[key]
            os.close(held[0])  # closing the descriptor releases the flock


# LMDB allows one open environment per file and process: Stores of the same folder in one
# process (two perfect players, a query that also scans for databases) share it.
_OPEN: dict[Path, list] = {}


class Store:
    """Low-level access to one environment; see :func:`solver.db.database.open_db` for reading."""

    def __init__(self, path: str | os.PathLike, create: bool = False, readonly: bool = False):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"{self.path} is a file, not a database folder")
        if not create and not (self.path / "data.mdb").exists():
            raise StoreError(f"no database at {self.path} (run 'rotary solve' first)")
        if not readonly:
            make_folder(self.path)
        self._key = self.path.resolve()
        shared = _OPEN.get(self._key)
        if shared is not None and shared[2] and not readonly:
            raise StoreError(f"{self.path} is open read-only in this process; close it before writing")
        if shared is None:
            data = self.path / "data.mdb"
            map_size = max(_MAP_START, 2 * data.stat().st_size) if data.exists() else _MAP_START
            limit = map_limit()  # ROTARY_MAP_MAX: the tests' small "disk"
            map_size = map_size if limit is None else min(map_size, limit)
            # a reader in a folder it may not write to cannot create LMDB's lock file:
            # without one, LMDB reads as the only process (safe: nobody can write there)
            lock = not readonly or os.access(self.path, os.W_OK)
            try:
                env = lmdb.open(
                    str(self.path), map_size=map_size, max_dbs=4, lock=lock, max_readers=256, readonly=readonly
                )
            except lmdb.Error as e:
                raise StoreError(f"cannot open the database {self.path}: {_lmdb_reason(e)}") from None
            try:
                check_tree(env, self.path)  # a damaged page must not make LMDB read past the file
            except StoreError:
                env.close()
                raise
            shared = _OPEN[self._key] = [env, 0, readonly, MapBounds(self.path)]
        shared[1] += 1
        self.env = shared[0]
        self._bounds: MapBounds = shared[3]
        try:
            self.meta = self.env.open_db(b"meta", create=not readonly)
            self.blocks = self.env.open_db(b"blocks", create=not readonly)
        except lmdb.NotFoundError:
            self.close_env()
            raise StoreError(f"{self.path} holds no rotary database") from None
        except lmdb.Error as e:  # a damaged main page
            self.close_env()
            if not readonly and _space(e):
                raise StoreError(f"cannot write into {self.path}: the disk is full") from None
            raise StoreError(f"database {self.path} is damaged: {lmdb_reason(e)}") from None
        self.tier_name = lambda no: f"number {no}"  # a Database names its tiers by key
        self.keyed = True  # block checksums cover the key (format 2); format 1: they do not
        self._closed = False
        try:
            self.get_meta("config")  # sets self.keyed from the header's format
        except StoreError:
            self.close_env()
            raise
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._txn = None  # the open read transaction of :meth:`reading`, if any
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self.close_env()

    def close_env(self) -> None:
        self._closed = True
        shared = _OPEN[self._key]
        shared[1] -= 1
        if shared[1] == 0:
            del _OPEN[self._key]
            self.env.close()

    # ------------------------------------------------------------------ metadata

    def _begin(self, db):
        """A read transaction (:func:`solver.db.guard.read_txn`)."""
        return read_txn(self.env, db)

    def get_meta(self, key: str) -> dict | None:
        what = f"database {self.path}: record {key!r}"
        try:
            with self._begin(self.meta) as txn:
                raw = txn.get(key.encode())
                raw = None if raw is None else self._bounds.copy(raw, what)
        except lmdb.Error as e:
            raise StoreError(f"{what} is damaged: {lmdb_reason(e)}") from None
        value = None if raw is None else unpack_json(raw, what)
        if key == "config" and isinstance(value, dict):
            self.keyed = value.get("format") != 1
        return value

    def meta_items(self, prefix: str) -> dict[str, dict]:
        out = {}
        what = f"database {self.path}: the {prefix!r} records"
        try:
            with self._begin(self.meta) if self._txn is None else nullcontext(self._txn) as txn:
                cur = txn.cursor(db=self.meta)  # inside reading(): the same snapshot as the blocks
                if cur.set_range(prefix.encode()):
                    for k, v in cur:
                        k = self._bounds.copy(k, what)
                        if not k.startswith(prefix.encode()):
                            break
                        name = k.decode(errors="replace")
                        out[name[len(prefix):]] = unpack_json(self._bounds.copy(v, f"database {self.path}: record {name!r}"), f"database {self.path}: record {name!r}")
        except lmdb.Error as e:
            raise StoreError(f"{what} are damaged: {lmdb_reason(e)}") from None
        return out

    def put_meta(self, key: str, value: dict) -> None:
        self._write(lambda txn: txn.put(key.encode(), pack_json(value), db=self.meta), 4096, f"the record {key!r}")

    # ------------------------------------------------------------------ blocks

    def write_tiers(self, tiers: list[tuple[int, np.ndarray, str, dict]], counted=None) -> None:
        """Write whole tiers ``(tier no, values, key, metadata)`` in one transaction;
        ``counted(n)``: called with the positions written so far, block by block (from 0
        again when the map grows and the transaction is redone)."""

        def work(txn):
            before = 0
            for tier_no, values, key, meta in tiers:
                for i, (k, block) in enumerate(packed_blocks(tier_no, values, self.keyed)):
                    txn.put(k, block, db=self.blocks)
                    if counted is not None:
                        counted(before + min((i + 1) * BLOCK, len(values)))
                before += len(values)
                meta = dict(meta, blocks=(len(values) + BLOCK - 1) // BLOCK)
                txn.put(f"tier:{key}".encode(), pack_json(meta), db=self.meta)

        # at most: 2 bytes a value (zlib rarely grows them), a page per block, the metadata
        need = sum(2 * len(v) + 4096 * (1 + len(v) // BLOCK) + 8192 for _, v, _, _ in tiers)
        what = ("tier " if len(tiers) == 1 else "tiers ") + ", ".join(key for _, _, key, _ in tiers)
        self._write(work, need, what)
        sync(self.env, self.path, need, what)

    def write_tiers_in_steps(self, tiers: list[tuple[int, np.ndarray, str, dict]], step: int, counted=None) -> None:
        """:meth:`write_tiers`, the blocks committed ``step`` blocks a transaction and the
        records last, in a transaction of their own: LMDB holds a transaction's pages in
        memory, so the memory of the write is bounded by ``step`` blocks however large the
        tiers (the disk mode's budget). A tier is in the database once its record is: the
        blocks of a write cut short are written over by the next one."""
        before = 0
        for tier_no, values, key, _ in tiers:
            for done in self.write_blocks(tier_no, values, key, step):
                if counted is not None:
                    counted(before + min(done * BLOCK, len(values)))
            before += len(values)
        self.write_records(tiers)

    def write_blocks(self, tier_no: int, values, key: str, step: int, first: int = 0):
        """Write a tier's blocks from block ``first`` on, ``step`` blocks a transaction;
        after each transaction, yield how many blocks of the tier are written (not yet
        synced: :meth:`sync_blocks`). The tier is not in the database before its record
        (:meth:`write_records`)."""
        batch: list[tuple[bytes, bytes]] = []
        what = f"tier {key}"
        done = first
        # compressed a step's blocks at a time at most: the memory bounded with the step's
        for k, block in packed_blocks(tier_no, values, self.keyed, min(PACK_BATCH, step), first):
            batch.append((k, block))
            if len(batch) >= step:
                self._put_blocks(batch, what)
                done += len(batch)
                batch = []
                yield done
        if batch:
            self._put_blocks(batch, what)
            yield done + len(batch)

    def sync_blocks(self, what: str) -> None:
        """What was written is on disk (a caller about to drop its own copy of it)."""
        sync(self.env, self.path, 0, what)

    def write_records(self, tiers: list[tuple[int, np.ndarray, str, dict]]) -> None:
        """The records of tiers whose blocks are written, in one transaction: from now on
        they are in the database, all of them or none."""

        def work(txn):
            for _, values, key, meta in tiers:
                meta = dict(meta, blocks=(len(values) + BLOCK - 1) // BLOCK)
                txn.put(f"tier:{key}".encode(), pack_json(meta), db=self.meta)

        self._write(work, 4096 * len(tiers), "the records of tiers " + ", ".join(key for _, _, key, _ in tiers))
        need = sum(2 * len(v) for _, v, _, _ in tiers)
        sync(self.env, self.path, need, "tiers " + ", ".join(key for _, _, key, _ in tiers))

    def _put_blocks(self, batch: list[tuple[bytes, bytes]], what: str) -> None:
        def work(txn):
            for k, block in batch:
                txn.put(k, block, db=self.blocks)

        if batch:
            self._write(work, sum(len(b) + 4096 for _, b in batch), what)

    def _write(self, work, need: int = 0, what: str = "the next step") -> None:
        write_txn(self.env, work, self.path, need, what)

    @contextmanager
    def reading(self):
        """One read transaction (one snapshot) for every block read inside, e.g. one per
        request of a server. A Store is one thread's: give each thread its own."""
        if self._txn is not None:
            yield self
            return
        with self._begin(self.blocks) as txn:
            self._txn = txn
            try:
                yield self
            finally:
                self._txn = None

    def read_block(self, tier_no: int, block_no: int) -> np.ndarray:
        key = block_key(tier_no, block_no)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        values = unpack_block(*self.raw_block(tier_no, block_no))
        self._cache[key] = values
        if len(self._cache) > 64:
            self._cache.popitem(last=False)
        return values

    def raw_block(self, tier_no: int, block_no: int) -> tuple[bytes, str, bytes]:
        """Block ``block_no`` of a tier as stored, not yet checked nor decompressed, with
        what :func:`unpack_block` takes besides: ``(data, where, key)`` — so that another
        thread can decompress it (the exporter's). :class:`StoreError` if it is missing."""
        key = block_key(tier_no, block_no)
        where = f"database {self.path}: tier {self.tier_name(tier_no)}, block {block_no} (block {tier_no}/{block_no})"
        try:
            if self._txn is not None:
                data = self._txn.get(key)
                data = None if data is None else self._bounds.copy(data, where)
            else:
                with self._begin(self.blocks) as txn:
                    data = txn.get(key)
                    data = None if data is None else self._bounds.copy(data, where)
        except lmdb.Error as e:
            raise StoreError(f"{where} is damaged: {lmdb_reason(e)}") from None
        if data is None:
            raise StoreError(f"{where} is missing")
        return data, where, key if self.keyed else b""

    def read_tier(self, tier_no: int, size: int, out: np.ndarray | None = None) -> np.ndarray:
        """A tier's ``size`` values, block by block; ``out``: the array to fill (``size``
        uint16 cells, e.g. the tier's slice of a value array — no second copy of a
        multi-GB tier), else a new one. :class:`StoreError` on a bad block."""
        if out is None:
            out = np.empty(size, dtype=np.uint16)
        for lo, block in self.tier_blocks(tier_no, size):
            out[lo : lo + len(block)] = block
        return out

    def tier_blocks(self, tier_no: int, size: int):
        """``(first value's index in the tier, block)`` for each block of a tier of ``size``
        values, in order, each checked (:class:`StoreError` on a bad or short one): a
        tier read without holding all of it."""
        for b, lo in enumerate(range(0, size, BLOCK)):
            block = self.read_block(tier_no, b)
            if len(block) != min(BLOCK, size - lo):
                raise StoreError(
                    f"database {self.path}: tier {self.tier_name(tier_no)}, block {b} (block {tier_no}/{b}) is damaged: "
                    f"{len(block)} values, expected {min(BLOCK, size - lo)}"
                )
            yield lo, block

    def read_tiers(self, tiers, first: int = 0) -> np.ndarray:
        """Loading: the tiers (objects with ``base`` and ``size``, stored from tier number
        ``first`` on) as one uint16 array in index order; :class:`StoreError` on a bad block."""
        total = sum(t.size for t in tiers)
        out = np.empty(max(total, 1), dtype=np.uint16)
        base = tiers[0].base if tiers else 0
        for i, t in enumerate(tiers):
            self.read_tier(first + i, t.size, out=out[t.base - base : t.base - base + t.size])
        return out

    def size_on_disk(self) -> int:
        return sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())
