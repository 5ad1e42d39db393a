"""Reading an exported set (:mod:`solver.db.compact`) as a :class:`~solver.db.database.Database`.

``open_db(folder)`` and ``Database(folder)`` give a
:class:`~solver.db.database.CompactDatabase` — :class:`CompactReader` over the common
probing code — when the folder holds an exported set, so every command that reads
databases reads these too.
On top of the common API it answers batches of global indices in one compiled pass::

    db.probe_indices(gidx)       # uint16 codes (a set with distances)
    db.probe_wdl_indices(gidx)   # uint8: 0 loss, 1 draw, 2 win, 3 no position
    db.probe_wdl(pos)            # Value without distance (any set)

A WDL-only set (``export --wdl-only``) answers :meth:`~CompactDatabase.probe` with the
result alone (``Value('win')``: ``plies`` None, ``exact`` False), so ``query`` and the
viewer print win/draw/loss; :meth:`~CompactDatabase.values` and ``probe_indices``, which
promise distances, raise :class:`StoreError` saying the set has none.

Decoded blocks are kept in a pool of fixed size (least recently used goes first): a
block is read, its checksum checked and decompressed once while it stays there. Like a
:class:`Database`, one thread's at a time.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from solver.db.compact_decode import Scratch, decode_block, read_blocks
from solver.db.compact_format import FORMAT_NAME, MANIFEST, VERSION, TierFile
from solver.db.guard import unpack_json
from solver.errors import StoreError
from solver.game.config import config_from_key
from solver.game.position import AT, PICK, PLAY, Position
from solver.game.values import DRAW_VALUE, LOSS, WIN, Value
from solver.kernels.compact import gather, wdl_of_codes, win_needs
from solver.kernels.compact_probe import MISSING, code_at, probe_code

CACHE_BYTES = 64 << 20  # decoded blocks kept (uint16 a position)


def require_distances(db, what: str) -> None:
    """:class:`StoreError` in one line when ``db`` is a WDL-only exported set: ``what``
    (e.g. ``"search leaves"``) needs every value with its distance."""
    if not getattr(db, "distances", True):
        raise StoreError(f"{db.path} holds win/draw/loss only (exported with --wdl-only): {what} need distances "
                         "(export the database again without --wdl-only)")


class CompactReader:
    """What an exported set does differently from an LMDB database: opening, decoding,
    batches. Mixed into :class:`~solver.db.database.CompactDatabase`, whose other
    methods (``check``, ``best_moves``, ``get``, ``layout``, ...) are the common ones."""

    compact = True

    def __init__(self, path: str | os.PathLike, cache_bytes: int = CACHE_BYTES):
        self.path = path
        folder = Path(path)
        what = f"exported set {folder}"
        try:
            raw = (folder / MANIFEST).read_bytes()
        except OSError as e:
            raise StoreError(f"cannot read {folder / MANIFEST}: {e.strerror or e}") from None
        m = unpack_json(raw, f"{what}: {MANIFEST}")
        if not isinstance(m, dict) or m.get("format") != FORMAT_NAME or m.get("version") != VERSION:
            raise StoreError(f"{what} is not a {FORMAT_NAME} {VERSION} set")
        self.files: list[tuple[TierFile, TierFile | None]] = []
        try:
            self.cfg = config_from_key(m["rules"])
            self.material = tuple(int(n) for n in m["material"])
            self.description = str(m["description"])
            self.header = {"format": FORMAT_NAME, "version": VERSION, "rules": m["rules"], "material": m["material"],
                           "description": self.description, "tiers": m["tiers"]}
            self._rotation_keys = [str(t[0]) for t in m["tiers"]]
            self.distances = not m["wdl_only"]
            self.block = int(m["block"])
            for key in self._rotation_keys:
                names = m["files"][key]
                self.files.append(tuple(self._open(folder / n, m, key) if n else None for n in (names + [None])[:2]))
        except (KeyError, TypeError, ValueError, IndexError) as e:
            self.close()
            raise StoreError(f"{what} is damaged: its manifest does not read ({type(e).__name__}: {e})") from None
        except BaseException:
            self.close()
            raise
        if self.distances and any(d is None for _, d in self.files):
            self.close()
            raise StoreError(f"{what} is damaged: a distance file is missing")
        self.tier_meta = {}
        for key, (w, d) in zip(self._rotation_keys, self.files):
            meta = dict(w.header.get("meta") or {}, key=key)
            meta["blocks"] = w.nblocks + (d.nblocks if d is not None else 0)
            self.tier_meta[key] = meta
        self.store = _Store(self)  # type: ignore[arg-type]
        self._capacity = max(4, cache_bytes // (2 * self.block))
        self._pool: np.ndarray | None = None
        self._t_lo: list[int] | None = None
        self._need: np.ndarray | None = None
        self._sc: Scratch | None = None
        self._fits: set[tuple[int, int]] = set()  # materials whose positions passed check()
        self._values: dict[int, Value] = {}  # code -> Value (frozen: shared)
        # balls on the other colour's traps: a position that is none with capture (check() says so)
        self._trap_o = self.cfg.traps_o if self.cfg.capture else 0
        self._trap_x = self.cfg.traps_x if self.cfg.capture else 0

    def _open(self, path: Path, m: dict, key: str) -> TierFile:
        f = TierFile(path)
        h = f.header
        if h.get("rules") != m["rules"] or h.get("tier") != key or int(h.get("block", -1)) != int(m["block"]):
            f.close()
            raise StoreError(f"{path} belongs to another set (rules, tier or block size differ from {MANIFEST})")
        return f

    def close(self) -> None:
        for pair in getattr(self, "files", []):
            for f in pair:
                if f is not None:
                    f.close()

    def finished(self, key: str) -> bool:
        return key in self._rotation_keys

    def drop_page_cache(self) -> None:
        """Forget the decoded blocks and ask the OS to drop the files from its page cache:
        the next probes read from the disk (cold-probe benchmarks)."""
        if self._pool is not None:
            self._forget()
        for pair in self.files:
            for f in pair:
                if f is not None:
                    f.drop_cache()

    # ------------------------------------------------------------------ decoding

    def _decode(self, no: int, b: int, dest: np.ndarray, sc: Scratch | None = None) -> None:
        """The codes of block ``b`` of tier ``no`` into ``dest`` (distance 0 in a WDL-only
        set): :func:`~solver.db.compact_decode.decode_block`. ``sc``: the buffers (a
        thread's own, where several decode at once)."""
        if sc is None:
            if self._sc is None:
                self._sc = Scratch(self.block)
            sc = self._sc
        if self._need is None:
            self._need = win_needs(self.layout.geo)
        lo = self._tier_lo()[no] + b * self.block
        decode_block(self.files[no], self.layout, lo, self._need, b, dest, sc)

    def _make_pool(self) -> None:
        """The pool of decoded blocks and its bookkeeping (:mod:`solver.kernels.compact_probe`)."""
        lo = self._tier_lo()
        nblocks = [f.nblocks for f, _ in self.files]
        self._blk0 = np.concatenate([[0], np.cumsum(nblocks)]).astype(np.int64)
        rows = max(1, min(self._capacity, int(self._blk0[-1])))
        self._pool = np.zeros((rows, self.block), dtype=np.uint16)
        self._slot_of = np.full(max(1, int(self._blk0[-1])), -1, dtype=np.int64)
        self._owner = np.full(rows, -1, dtype=np.int64)
        self._stamp = np.zeros(rows + 1, dtype=np.int64)  # the last: the clock
        self._used = 0
        lay = self.layout
        self._lookup = (np.array(lo, dtype=np.int64), self._blk0, self.block, self._slot_of, self._stamp, self._pool)
        self._kargs = (tuple(lay.geo), tuple(lay.lay)) + self._lookup

    def _forget(self) -> None:
        self._slot_of[:] = -1
        self._owner[:] = -1
        self._stamp[:] = 0
        self._used = 0

    def _slot(self, no: int, b: int) -> int:
        """The pool row holding block ``b`` of tier ``no``, decoding it if needed."""
        if self._pool is None:
            self._make_pool()
        return self._row(int(self._blk0[no]) + b, no, b)

    def _row(self, gb: int, no: int | None = None, b: int | None = None) -> int:
        """The pool row of global block ``gb`` (tier ``no``, block ``b``: found if not
        given), decoding it into the least recently used row if needed."""
        stamp = self._stamp
        row = int(self._slot_of[gb])
        if row < 0:
            if no is None:
                no = int(np.searchsorted(self._blk0, gb, side="right")) - 1
                b = gb - int(self._blk0[no])
            if self._used < len(self._pool):
                row = self._used
                self._used += 1
            else:
                row = int(np.argmin(stamp[:-1]))
                self._slot_of[self._owner[row]] = -1
                self._owner[row] = -1
            self._decode(no, b, self._pool[row])  # a damaged block raises: the row stays free
            self._slot_of[gb] = row
            self._owner[row] = gb
        stamp[-1] += 1
        stamp[row] = stamp[-1]
        return row

    def _tier_lo(self) -> list[int]:
        if self._t_lo is None:
            self._t_lo = [t.base for t in self.layout.tiers]
            if [t.size for t in self.layout.tiers] != [f.size for f, _ in self.files]:
                raise StoreError(f"exported set {self.path} is damaged: its tier sizes are not those of its rules")
        return self._t_lo

    def _code(self, g: int) -> int:
        """The uint16 code of global index ``g`` (distance 0 in a WDL-only set)."""
        if self._pool is None:
            self._make_pool()
        c = code_at(g, *self._lookup)
        while c < 0:
            self._row(-1 - c)
            c = code_at(g, *self._lookup)
        return c

    def _fast_code(self, pos: Position) -> int | None:
        """The code of a rotation-phase position in one kernel call, or None where the
        common checks must speak (another board or phase, a ball on a trap, a material
        not yet seen to pass :meth:`check`): they raise or answer as for a database."""
        x, o = pos.x, pos.o
        if pos.phase != PLAY or pos.board is not self.cfg.board or x & self._trap_o or o & self._trap_x:
            return None
        if (x.bit_count(), o.bit_count()) not in self._fits:
            return None
        t = pos.turn
        m, p = (x, o) if t == 0 else (o, x)
        c = probe_code(m, p, t, *self._kargs)
        while c < 0:
            if c == MISSING:
                return None
            self._row(-1 - c)
            c = probe_code(m, p, t, *self._kargs)
        return c

    def _checked_code(self, pos: Position) -> int:
        """The code of a rotation-phase position after the common checks (:meth:`check`),
        which pass for every position of the same material once they pass for one (a
        ball on a trap is looked at apart, in :meth:`_fast_code`)."""
        c = self._fast_code(pos)
        if c is not None:
            return c
        self.check(pos)
        c = self._code(self.layout.index(pos.mover, pos.opponent, pos.turn))
        if pos.phase == PLAY and not (pos.x & self._trap_o or pos.o & self._trap_x):
            self._fits.add((pos.x.bit_count(), pos.o.bit_count()))
        return c

    # ------------------------------------------------------------------ single positions

    def probe(self, pos: Position) -> Value:
        """As :meth:`Database.probe`; in a WDL-only set the result without its distance."""
        if not self.distances:
            return self.probe_wdl(pos)
        c = self._fast_code(pos)
        if c is None:
            if pos.phase in (PICK, AT):
                self.check(pos)
                return self._handover_value(pos)
            c = self._checked_code(pos)
        v = self._values.get(c)
        if v is None:
            v = self._values[c] = Value.from_code(c)
        return v

    def probe_wdl(self, pos: Position) -> Value:
        """Win, draw or loss for the side to move, without a distance."""
        c = self._fast_code(pos)
        if c is None:
            if pos.phase in (PICK, AT):
                self.check(pos)
                v = self.best_moves(pos)[0][1]
                return Value(v.result)
            c = self._checked_code(pos)
        return DRAW_VALUE if not c & 0x8000 else Value(WIN if c & 0x4000 else LOSS)

    def probe_index(self, g: int) -> int:
        """The uint16 code of one global index (see :meth:`probe_indices`)."""
        self._need_distances("probe_index")
        if not 0 <= g < self.layout.total:
            raise IndexError(g)
        return self._code(g)

    # ------------------------------------------------------------------ batches

    def probe_indices(self, gidx) -> np.ndarray:
        """The uint16 codes (:mod:`solver.kernels.code`) of the global indices ``gidx``
        (any shape of integers, :attr:`layout`'s index), decoded in one compiled pass over
        the blocks they fall in. ``IndexError`` for an index outside the layout."""
        self._need_distances("probe_indices")
        return self._batch(gidx)

    def probe_wdl_indices(self, gidx) -> np.ndarray:
        """0 loss, 1 draw, 2 win (3: no position) of the global indices ``gidx``, uint8."""
        codes = self._batch(gidx)
        out = np.empty(codes.shape, dtype=np.uint8)
        wdl_of_codes(codes.ravel(), out.ravel())
        return out

    def _batch(self, gidx) -> np.ndarray:
        g = np.ascontiguousarray(gidx, dtype=np.int64)
        flat = g.ravel()
        out = np.empty(flat.shape, dtype=np.uint16)
        if not len(flat):
            return out.reshape(g.shape)
        if flat.min() < 0 or flat.max() >= self.layout.total:
            raise IndexError(f"an index outside 0..{self.layout.total - 1}")
        lo = np.array(self._tier_lo(), dtype=np.int64)
        tno = np.searchsorted(lo, flat, side="right") - 1
        local = flat - lo[tno]
        keys = tno * (1 << 40) + local // self.block
        cells = local % self.block
        uniq, inv = np.unique(keys, return_inverse=True)
        step = self._capacity
        if len(uniq) <= step:
            rows = np.array([self._slot(int(k >> 40), int(k & ((1 << 40) - 1))) for k in uniq], dtype=np.int64)
            gather(self._pool, rows[inv], cells, out)
        else:  # more blocks than the pool holds: a pool's worth of blocks at a time
            order = np.argsort(inv, kind="stable")
            bounds = np.searchsorted(inv[order], np.arange(0, len(uniq) + step, step))
            for a, b, first in zip(bounds[:-1], bounds[1:], range(0, len(uniq), step)):
                part = order[a:b]
                ks = uniq[first : first + step]
                rows = np.array([self._slot(int(k >> 40), int(k & ((1 << 40) - 1))) for k in ks], dtype=np.int64)
                res = np.empty(len(part), dtype=np.uint16)
                gather(self._pool, rows[inv[part] - first], cells[part], res)
                out[part] = res
        return out.reshape(g.shape)

    # ------------------------------------------------------------------ loading

    def _need_distances(self, what: str) -> None:
        if not self.distances:
            raise StoreError(
                f"{self.path} holds win/draw/loss only (exported with --wdl-only): {what} needs distances "
                "(use the WDL answers: probe_wdl, probe_wdl_indices, wdl_values)"
            )

    def read_tier(self, no: int, out: np.ndarray) -> np.ndarray:
        """Every code of tier ``no`` into ``out`` (distance 0 in a WDL-only set), rule cells
        answered, block by block without the pool, on as many threads as the machine has
        cores (the decoders run without the GIL)."""
        if self._need is None:
            self._need = win_needs(self.layout.geo)
        self._tier_lo()
        wf, _ = self.files[no]
        read_blocks(self._decode, no, wf.nblocks, self.block, wf.size, out, lambda: Scratch(self.block))
        return out

    def values(self) -> np.ndarray:
        """Every value in index order, as :meth:`Database.values`."""
        self._need_distances("values()")
        out = np.empty(max(self.layout.total, 1), dtype=np.uint16)
        for no, t in enumerate(self.layout.tiers):
            self.read_tier(no, out[t.base : t.base + t.size])
        return out

    def wdl_values(self) -> np.ndarray:
        """0 loss, 1 draw, 2 win (3: no position) of every index, as one uint8 array."""
        out = np.empty(max(self.layout.total, 1), dtype=np.uint8)
        for no, t in enumerate(self.layout.tiers):
            codes = self.read_tier(no, np.empty(t.size, dtype=np.uint16))
            wdl_of_codes(codes, out[t.base : t.base + t.size])
        return out

    def tier_sha256(self, key: str) -> str:
        """SHA-256 of the tier's values (as :meth:`Database.tier_sha256`), after the
        decoded values are checked against the checksum the export recorded. A WDL-only
        set checks its WDL and gives the recorded checksum of the values it was cut from."""
        if key not in self._rotation_keys:
            raise StoreError(f"{self.description} has no tier {key}")
        no = self._rotation_keys.index(key)
        wf, _ = self.files[no]
        codes = self.read_tier(no, np.empty(wf.size, dtype=np.uint16))
        if self.distances:
            digest, want = hashlib.sha256(codes.astype("<u2", copy=False).tobytes()).hexdigest(), wf.header["sha256"]
        else:
            wdl = np.empty(wf.size, dtype=np.uint8)
            wdl_of_codes(codes, wdl)
            digest, want = hashlib.sha256(wdl.tobytes()).hexdigest(), wf.header["wdl_sha256"]
        if digest != want:
            raise StoreError(f"{wf.where}: tier {key} does not decode to the values it was exported from (checksum differs)")
        return wf.header["sha256"]


class _Store:
    """What commands reach through ``db.store`` of an LMDB database, for an exported set."""

    def __init__(self, db: CompactReader):
        self.db = db

    @contextmanager
    def reading(self):
        yield self

    def read_tier(self, tier_no: int, size: int, out: np.ndarray | None = None) -> np.ndarray:
        if not self.db.distances:
            raise StoreError(
                f"{self.db.path} holds win/draw/loss only (exported with --wdl-only): every value with its "
                "distance is needed here"
            )
        out = np.empty(size, dtype=np.uint16) if out is None else out
        return self.db.read_tier(tier_no, out)

    def tier_blocks(self, tier_no: int, size: int):
        """``(0, the whole tier)``: an exported set is decoded a tier at a time."""
        yield 0, self.read_tier(tier_no, size)

    def size_on_disk(self) -> int:
        folder = Path(self.db.path)
        return sum(f.stat().st_size for f in folder.iterdir() if f.is_file())
