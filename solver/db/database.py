"""Reading a solved configuration: as small as a tablebase prober.

    with open_db("rotary-db/hex3-4v4") as db:
        db.probe(position)          # Value, or MissingValueError (a KeyError)
        db.get(position, None)      # Value or the default
        db.best_moves(position)     # every move with its value, best first
        db.values()                 # loading: every rotation-phase value as one array

Three parts, as GamesmanOne's database names them: solving writes (``solver.retro``
through :class:`~solver.db.store.Store`), loading reads whole tiers, probing reads one
position. A database is opened read-only; it may lie in a folder the reader cannot write.

Sharing: a :class:`Database` is one thread's at a time (its block cache and its read
transaction are unguarded); threads that read at once each open their own, and serialise
opening and closing (LMDB keeps one environment per folder and process, shared by every
handle on it), as :class:`solver.view.sources.DbPool` does. Any number of processes may
read one database at once, also while a ``rotary solve`` writes into it (they see whole
groups of tiers, never half of one). An open database must not cross ``fork()``: open it
in each process, after the fork or in a spawned worker.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cached_property

import numpy as np

from solver.db.compact_format import is_compact
from solver.db.compact_reader import CompactReader
from solver.db.store import BLOCK, FORMAT, FORMATS, Store
from solver.errors import MissingValueError, PositionError, RotaryError, StoreError
from solver.game.config import Config, config_from_key
from solver.game.move import Move
from solver.game.position import AT, PICK, PLAY, Position
from solver.game.rules import apply, check_position, moves
from solver.game.values import Value
from solver.index import Layout
from solver.placement import Placement, layer_key


class Database:
    """A solved configuration opened for reading; a context manager (see :func:`open_db`).

    Attributes: ``cfg`` (the :class:`~solver.game.config.Config` it was solved under),
    ``material`` (light's and dark's balls, the most of a variable-material database),
    ``description`` (e.g. ``'hex3 2v2 base'``), ``path``, ``header`` (the stored record).
    """

    def __new__(cls, path: str | os.PathLike | None = None, *args, **kwargs):
        # a folder holding an exported set (``rotary export``) opens as its reader, so that
        # every caller of Database(path) reads both kinds
        if cls is Database and path is not None:
            if is_compact(path):
                return super().__new__(CompactDatabase)
        return super().__new__(cls)

    def __init__(self, path: str | os.PathLike):
        self.store = Store(path, readonly=True)
        header = self.store.get_meta("config")
        if header is None:
            self.store.close()
            raise StoreError(f"{path} holds no rotary database header")
        if header.get("format") not in FORMATS:
            self.store.close()
            raise StoreError(f"{path} has database format {header.get('format')}, this rotary reads {FORMAT}")
        self.header = header
        self.path = path
        try:
            self.cfg: Config = config_from_key(header["rules"])
            self.material: tuple[int, int] = tuple(int(n) for n in header["material"])  # type: ignore[assignment]
            self._rotation_keys = [str(t[0]) for t in header["tiers"]]
            self.description: str = str(header["description"])
            self.tier_meta = self.store.meta_items("tier:")
        except (KeyError, TypeError, ValueError, IndexError) as e:  # a header of before checksums, damaged
            self.store.close()
            if isinstance(e, StoreError):
                raise
            raise StoreError(f"database {path} is damaged: its header does not read ({type(e).__name__}: {e})") from None
        self.store.tier_name = self._tier_name

    def _tier_name(self, no: int) -> str:
        """The key of tier number ``no``, for messages."""
        if no < len(self._rotation_keys):
            return self._rotation_keys[no]
        try:
            return self.tier_keys()[no]
        except (IndexError, RotaryError):
            return f"number {no}"

    @cached_property
    def layout(self) -> Layout:
        return _layout(self.cfg, self.material)

    @cached_property
    def placement(self):
        """The placement layers of a setup database (None for a rotation-only one)."""
        if self.cfg.setup is None:
            return None
        return Placement(self.cfg)

    def tier_keys(self) -> list[str]:
        """Every tier of the database: rotation tiers, then placement layers (setup)."""
        keys = [t[0] for t in self.header["tiers"]]
        if self.placement is not None:
            keys += [layer_key(t) for t in self.placement.layout.tiers]
        return keys

    def values(self) -> np.ndarray:
        """Loading: every rotation-phase value in index order, as one new uint16 array.

        The codes are those of :meth:`Value.from_code <solver.game.values.Value.from_code>`
        (``0x4000``: a cell that is no position), indexed by :attr:`layout`; the array
        takes 2 bytes a position of memory. Raises :class:`StoreError` naming the first
        tier not solved yet, or a damaged block.

        >>> with open_db("rotary-db/hex3-2v2") as db:
        ...     vals = db.values()
        >>> vals.dtype.name, len(vals)
        ('uint16', 17652)
        """
        return self._load(self.layout.tiers, 0, lambda t: t.key)

    def placement_values(self) -> np.ndarray:
        """Loading: every placement-layer value of a setup database, as one uint16 array."""
        return self._load(self.placement.layout.tiers, len(self.layout.tiers), layer_key)

    def tier_sha256(self, key: str) -> str:
        """SHA-256 of a solved tier's values, as little-endian uint16 in index order (hex).

        It depends on the values alone — not on block size, compression or the order the
        tier was written in — so a rebuilt database can be compared tier by tier with the
        published ones in ``data/checksums/`` (:mod:`solver.db.checksums`).
        :class:`StoreError` if the tier is not solved or damaged.
        """
        keys = self.tier_keys()
        if key not in keys:
            raise StoreError(f"{self.description} has no tier {key}")
        if not self.finished(key):
            raise StoreError(f"{self.path} is incomplete: tier {key} is not solved yet")
        no = keys.index(key)
        tiers = self.layout.tiers if no < len(self.layout.tiers) else self.placement.layout.tiers
        size = tiers[no if no < len(self.layout.tiers) else no - len(self.layout.tiers)].size
        digest = hashlib.sha256()
        for _, block in self.store.tier_blocks(no, size):  # block by block: a multi-GB tier is never held whole
            digest.update(block.astype("<u2", copy=False).tobytes())
        return digest.hexdigest()

    def finished(self, key: str) -> bool:
        """Is tier ``key`` solved? A tier missing when the database was opened is looked up
        again: a solve writing the database meanwhile may have finished it since."""
        if key not in self.tier_meta:
            self.tier_meta = self.store.meta_items("tier:")
        return key in self.tier_meta

    def _load(self, tiers, first: int, key) -> np.ndarray:
        for t in tiers:
            if not self.finished(key(t)):
                raise StoreError(f"{self.path} is incomplete: tier {key(t)} is not solved yet")
        return self.store.read_tiers(tiers, first)

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    def check(self, pos: Position) -> None:
        """Raise :class:`MissingValueError` unless this database can answer for ``pos``."""
        if pos.board is not self.cfg.board:
            raise MissingValueError(f"position is on {pos.board.label}, the database on {self.cfg.board.label}")
        if pos.phase != PLAY and self.cfg.setup is None:
            raise MissingValueError(f"the database holds rotation-phase positions, not phase {pos.phase!r}")
        A, B = self.material
        try:
            # check_position knows only K v K without edge/capture; an A v B database of
            # fixed material is checked by the material test below instead
            if pos.phase != PLAY or self.cfg.variable_material or A == B:
                check_position(self.cfg, pos)
        except PositionError as e:
            raise MissingValueError(f"{e} (database rules: {self.description})") from None
        if pos.phase != PLAY:
            return  # check_position has checked the setup phase and its counts
        nx, no = pos.x.bit_count(), pos.o.bit_count()
        fits = (nx <= A and no <= B) if self.cfg.variable_material else (nx, no) == (A, B)
        if not fits:
            raise MissingValueError(f"material x {nx}, o {no} is not in the database ({self.description})")

    def get_reason(self, pos: Position) -> str | None:
        """None if the database answers for ``pos``, else why not."""
        try:
            self.check(pos)
        except MissingValueError as e:
            return str(e)
        return None

    def probe(self, pos: Position) -> Value:
        """The value of ``pos`` for the side to move: an exact win or loss with its distance
        in plies, or a draw.

        Raises :class:`~solver.errors.MissingValueError` (a ``KeyError``) when the database
        cannot answer: another board, rules or material, a position the rules do not allow,
        a phase it does not hold, or a tier not solved yet; :class:`StoreError` when a block
        it reads is damaged. Reads one block (cached: the last 64 blocks read).

        >>> with open_db("rotary-db/hex3-2v2") as db:
        ...     print(db.probe(Position("..o/..../...../....../.x.../.ox. x")))
        win in 7
        """
        self.check(pos)
        if pos.phase in (PICK, AT):
            return self._handover_value(pos)
        if pos.phase == PLAY:
            layout, gidx, first, key = self.layout, self.layout.index(pos.mover, pos.opponent, pos.turn), 0, ""
        else:
            layout, first, key = self.placement.layout, len(self.layout.tiers), "place:"
            gidx = self.placement.index(pos.x, pos.o, pos.turn)
        t = layout.tier_of(gidx)
        if not self.finished(key + t.key):
            raise MissingValueError(f"tier {key}{t.key} of {self.description} is not solved yet")
        tier_no = first + layout.tiers.index(t)
        local = gidx - t.base
        block = self.store.read_block(tier_no, local // BLOCK)
        return Value.from_code(block[local % BLOCK])

    def _handover_value(self, pos: Position) -> Value:
        """``pick P Q`` and ``at P`` are not stored: one or two plies above stored values."""
        return self.best_moves(pos)[0][1]

    def best_moves(self, pos: Position) -> list[tuple[Move, Value]]:
        """Every legal move of ``pos`` with its value for the side to move, best first:
        fastest win, draws, slowest loss (:meth:`Value.sort_key
        <solver.game.values.Value.sort_key>`); moves of equal value in move order. A
        finished game has no moves: ``[]``. Raises as :meth:`probe` does, for ``pos`` or
        any child.

        >>> with open_db("rotary-db/hex3-2v2") as db:
        ...     best = db.best_moves(Position("..o/..../...../....../.x.../.ox. x"))
        ...     [(move.text(db.cfg.board), str(value)) for move, value in best[:3]]
        [('d2+4', 'win in 7'), ('b3+1', 'win in 7'), ('d2+3', 'win in 9')]
        """
        cfg = self.cfg
        scored = []
        for m in moves(cfg, pos):
            child = apply(cfg, pos, m)
            v = self.probe(child)
            if child.turn == pos.turn:  # setup=last: the last placer also makes the first rotation
                v = v if v.plies is None else Value(v.result, v.plies + 1)
            else:
                v = v.after_move()
            scored.append((v, m))
        scored.sort(key=lambda vm: vm[0].sort_key())
        return [(m, v) for v, m in scored]

    def get(self, pos: Position, default=None):
        """:meth:`probe`, but ``default`` where it would raise
        :class:`~solver.errors.MissingValueError` (a damaged block still raises
        :class:`StoreError`).

        >>> with open_db("rotary-db/hex3-2v2") as db:
        ...     print(db.get(Position("..o/..../...../....../.x.../.ox. x")))
        ...     print(db.get(Position(".../..../...../....../.x.../.ox. x"), "absent"))
        win in 7
        absent
        """
        try:
            return self.probe(pos)
        except MissingValueError:
            return default


class CompactDatabase(CompactReader, Database):
    """An exported set (``rotary export``) opened for reading: the API of
    :class:`Database`, plus batches of indices (:mod:`solver.db.compact_reader`)."""


_LAYOUTS: dict = {}


def _layout(cfg: Config, material: tuple[int, int]) -> Layout:
    """The index of these rules and material, built once per process for the last few
    asked (a query or a server opens the same databases again and again)."""
    key = (json.dumps(cfg.key(), sort_keys=True), tuple(material))
    lay = _LAYOUTS.pop(key, None) or Layout(cfg, material)
    _LAYOUTS[key] = lay
    while len(_LAYOUTS) > 4:
        del _LAYOUTS[next(iter(_LAYOUTS))]
    return lay


def open_db(path: str | os.PathLike) -> Database:
    """Open the solved database in the folder ``path`` for reading.

    Returns a :class:`Database`, a context manager (``with`` closes it; or call
    :meth:`Database.close`). Raises :class:`~solver.errors.StoreError` when ``path`` holds
    no rotary database, one of a format this rotary does not read, or a damaged one, and
    when the folder is a file. Opening reads only the header: nothing is loaded until a
    value is asked for. Writes nothing (the folder may be read-only). A database may be
    opened while a solve writes into it; tiers it finishes later are found when asked
    for. Safe to open in several processes at once; not to carry across ``fork()``, nor to
    use from two threads at a time (module docstring).

    >>> from solver import Position, open_db
    >>> with open_db("rotary-db/hex3-2v2") as db:
    ...     print(db.description, db.material)
    ...     print(db.probe(Position("..o/..../...../....../.x.../.ox. x")))
    hex3 2v2 base (2, 2)
    win in 7
    >>> open_db("no/such/folder")
    Traceback (most recent call last):
    solver.errors.StoreError: no database at no/such/folder (run 'rotary solve' first)
    """
    return Database(path)
