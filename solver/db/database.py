"""Reading a solved configuration: as small as a tablebase prober.

    with open_db("rotary-db/hex3-4v4") as db:
        db.probe(position)          # Value, or MissingValueError (a KeyError)
        db.get(position, None)      # Value or the default
"""

from __future__ import annotations

import os
from functools import cached_property

from solver.game.config import Config
from solver.index import Layout
from solver.game.position import AT, PICK, PLAY, Position
from solver.game.config import config_from_key
from solver.game.rules import PositionError, check_position
from solver.db.store import BLOCK, FORMAT, Store, StoreError
from solver.game.values import Value


class MissingValueError(KeyError):
    """The database holds no value for this position (other rules, material or phase)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "position not in the database"


class Database:
    """A solved configuration opened for reading; a context manager."""

    def __init__(self, path: str | os.PathLike):
        self.store = Store(path, readonly=False)
        header = self.store.get_meta("config")
        if header is None:
            self.store.close()
            raise StoreError(f"{path} holds no rotary database header")
        if header.get("format") != FORMAT:
            self.store.close()
            raise StoreError(f"{path} has database format {header.get('format')}, this rotary reads {FORMAT}")
        self.header = header
        self.path = path
        self.cfg: Config = config_from_key(header["rules"])
        self.material: tuple[int, int] = tuple(header["material"])  # type: ignore[assignment]
        self.tier_meta = self.store.meta_items("tier:")

    @cached_property
    def layout(self) -> Layout:
        return Layout(self.cfg, self.material)

    @cached_property
    def placement(self):
        """The placement layers of a setup database (None for a rotation-only one)."""
        if self.cfg.setup is None:
            return None
        from solver.retro.setup import Placement

        return Placement(self.cfg)

    @property
    def description(self) -> str:
        return self.header["description"]

    def tier_keys(self) -> list[str]:
        """Every tier of the database: rotation tiers, then placement layers (setup)."""
        keys = [t[0] for t in self.header["tiers"]]
        if self.placement is not None:
            from solver.retro.setup import layer_key

            keys += [layer_key(t) for t in self.placement.layout.tiers]
        return keys

    def complete(self) -> bool:
        return all(k in self.tier_meta for k in self.tier_keys())

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
        """The value of ``pos`` for the side to move; :class:`MissingValueError` if absent."""
        self.check(pos)
        if pos.phase in (PICK, AT):
            return self._handover_value(pos)
        if pos.phase == PLAY:
            layout, gidx, first, key = self.layout, self.layout.index(pos.mover, pos.opponent, pos.turn), 0, ""
        else:
            layout, first, key = self.placement.layout, len(self.layout.tiers), "place:"
            gidx = self.placement.index(pos.x, pos.o, pos.turn)
        t = layout.tier_of(gidx)
        if key + t.key not in self.tier_meta:
            raise MissingValueError(f"tier {key}{t.key} of {self.description} is not solved yet")
        tier_no = first + layout.tiers.index(t)
        local = gidx - t.base
        block = self.store.read_block(tier_no, local // BLOCK)
        return Value.from_code(block[local % BLOCK])

    def _handover_value(self, pos: Position) -> Value:
        """``pick P Q`` and ``at P`` are not stored: one or two plies above stored values."""
        from solver.play.perfect import best_moves

        return best_moves(self, self.cfg, pos)[0][1]

    def get(self, pos: Position, default=None):
        try:
            return self.probe(pos)
        except MissingValueError:
            return default


def open_db(path: str | os.PathLike) -> Database:
    """Open a solved database for reading (:class:`StoreError` if there is none)."""
    return Database(path)
