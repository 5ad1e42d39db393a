"""Tiers and the dense canonical index of a configuration — Python face of the kernels.

A *tier* ``(s, a, b)``: mover of colour ``s`` with ``a`` balls, opponent with ``b``.
A *group* is the set of tiers with the same unordered material ``{a, b}``; moves stay in
their group or lead to groups of smaller total material (balls only ever leave the board),
so groups are solved in order of total material and each occupies one contiguous range of
the flat value array.

The compiled index (``index_of``, ``unrank``, the ``Lay`` arrays) is
:mod:`solver.kernels.encode`; here it is built (:class:`Layout`) and given a ``Config``
(:func:`build_geo`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from solver.game.config import Config, symmetry_classes
from solver.kernels.encode import Lay, binomials, build_orbits, index_of, symmetric_list, unrank
from solver.kernels.geometry import Geo, make_geo


def build_geo(cfg: Config) -> Geo:
    """The kernels' arrays (:class:`solver.kernels.geometry.Geo`) of a configuration's
    rotation phase: its board, variants and symmetry group."""
    board = cfg.board
    if board.size > 64:
        raise ValueError(f"{board.label} has {board.size} points; the kernels need at most 64")
    plain, swapping = symmetry_classes(cfg)
    pivots = board.full if cfg.edge else board.interior
    return make_geo(board.neighbours, pivots, board.centre_mask, cfg.traps_x, cfg.traps_o, plain, swapping)


@dataclass(frozen=True)
class Tier:
    side: int
    a: int  # mover's balls
    b: int  # opponent's balls
    base: int  # first global index
    size: int

    @property
    def key(self) -> str:
        return f"{'xo'[self.side]}{self.a}v{self.b}"


def tier_materials(cfg: Config, material: tuple[int, int]) -> list[tuple[int, int, int]]:
    """All tiers ``(s, a, b)`` reachable from light ``A`` and dark ``B`` balls."""
    A, B = material
    geo_sides = build_geo(cfg).sides
    found: set[tuple[int, int, int]] = set()
    for s, mine, theirs in ((0, A, B), (1, B, A)):
        if cfg.variable_material:
            pairs = [(a, b) for a in range(mine + 1) for b in range(theirs + 1)]
        else:
            pairs = [(mine, theirs)]
        for a, b in pairs:
            found.add((s if geo_sides == 2 else 0, a, b))
    return sorted(found, key=lambda t: (t[1] + t[2], min(t[1], t[2]), t[1], t[0]))


class Layout:
    """The index of every tier of a configuration and material (light A, dark B balls).

    ``geo`` and ``tiers`` default to the rotation phase of ``cfg``; the setup game passes
    its own (placement layers are indexed over the points outside the centre, with no
    colour folding). Orbit tables are built only for the mover ball counts of the tiers
    (the others are empty: no position of the layout has such a mover); ``progress(n)``
    is called after each, ``n`` the mover sets it enumerated.
    """

    def __init__(
        self,
        cfg: Config,
        material: tuple[int, int] | None = None,
        geo: Geo | None = None,
        tiers: list[tuple[int, int, int]] | None = None,
        progress: Callable[[int], None] | None = None,
    ):
        if material is None:
            if cfg.balls is None:
                raise ValueError("the configuration needs a number of balls per side")
            material = (cfg.balls, cfg.balls)
        self.cfg = cfg
        self.material = material
        self.geo: Geo = geo if geo is not None else build_geo(cfg)
        n = self.geo.npoints
        kmax = max(material)
        if 2 * kmax > n:
            raise ValueError(f"{kmax} balls per side do not fit on {cfg.board.label}")
        binom = binomials()
        orb_start = np.zeros(kmax + 2, dtype=np.int64)
        rep_start = np.zeros(kmax + 2, dtype=np.int64)
        orbit_of, map_of, reps, stabs = [], [], [], []
        if tiers is None:
            tiers = tier_materials(cfg, material)
        movers = {a for _, a, _ in tiers}  # only these mover sets are ever ranked
        for a in range(kmax + 1):
            if a in movers:
                oo, mo, rp, st = build_orbits(a, n, self.geo.permbits, binom)
                if progress is not None:
                    progress(len(oo))  # mover sets enumerated
            else:
                oo, mo, rp, st = np.zeros(0, np.int32), np.zeros(0, np.int8), np.zeros(0, np.uint64), np.zeros(0, np.int64)
            orbit_of.append(oo), map_of.append(mo), reps.append(rp), stabs.append(st)
            orb_start[a + 1] = orb_start[a] + len(oo)
            rep_start[a + 1] = rep_start[a] + len(rp)
        self.norb = [len(r) for r in reps]
        tier_base = np.full((2, kmax + 1, kmax + 1), -1, dtype=np.int64)
        blk_start = np.zeros((kmax + 1, kmax + 1), dtype=np.int64)
        sym_start = np.zeros((kmax + 1, kmax + 1), dtype=np.int64)
        blk_parts, symidx_parts, sym_parts = [], [], []
        blk_len = sym_len = symlist_len = 0
        sizes: dict[tuple[int, int], int] = {}
        for a, b in sorted({(a, b) for _, a, b in tiers}):
            free = n - a
            offs = np.zeros(self.norb[a] + 1, dtype=np.int64)
            sidx = np.full(self.norb[a], -1, dtype=np.int64)
            full = binom[free, b]
            for o in range(self.norb[a]):
                size = full
                if stabs[a][o] != 1:
                    lst = symmetric_list(reps[a][o], stabs[a][o], b, n, self.geo.permbits, binom)
                    sidx[o] = symlist_len
                    sym_parts.append(lst)
                    symlist_len += len(lst)
                    size = len(lst)
                offs[o + 1] = offs[o] + size
            blk_start[a, b] = blk_len
            sym_start[a, b] = sym_len
            blk_parts.append(offs)
            symidx_parts.append(sidx)
            blk_len += len(offs)
            sym_len += len(sidx)
            sizes[(a, b)] = int(offs[-1])
        self.tiers: list[Tier] = []
        base = 0
        for s, a, b in tiers:
            tier_base[s, a, b] = base
            self.tiers.append(Tier(s, a, b, base, sizes[(a, b)]))
            base += sizes[(a, b)]
        self.total = base
        swapbits = np.zeros(n, dtype=np.uint64)
        for p in range(n):
            swapbits[p] = np.uint64(1) << np.uint64(self.geo.swap[p])
        cat = lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt)  # noqa: E731
        self.lay = Lay(
            binom,
            orb_start,
            cat(orbit_of, np.int32),
            cat(map_of, np.int8),
            rep_start,
            cat(reps, np.uint64),
            cat(stabs, np.int64),
            tier_base,
            blk_start,
            cat(blk_parts, np.int64),
            sym_start,
            cat(symidx_parts, np.int64),
            cat(sym_parts, np.int64),
            np.array([t.base for t in self.tiers], dtype=np.int64),
            np.array([t.side for t in self.tiers], dtype=np.int64),
            np.array([t.a for t in self.tiers], dtype=np.int64),
            np.array([t.b for t in self.tiers], dtype=np.int64),
            swapbits,
        )

    # ------------------------------------------------------------------ groups

    @cached_property
    def groups(self) -> list[tuple[tuple[int, int], int, int]]:
        """``((u, v), lo, hi)`` for each group of tiers, in solving order."""
        out: list[tuple[tuple[int, int], int, int]] = []
        for t in self.tiers:
            key = (min(t.a, t.b), max(t.a, t.b))
            if out and out[-1][0] == key:
                out[-1] = (key, out[-1][1], t.base + t.size)
            else:
                out.append((key, t.base, t.base + t.size))
        return out

    def tier_of(self, gidx: int) -> Tier:
        i = int(np.searchsorted(self.lay.t_lo, gidx, side="right")) - 1
        return self.tiers[i]

    def raw_count(self, t: Tier) -> int:
        """Raw positions of the tier for both sides to move, before any reduction."""
        from math import comb

        n = self.geo.npoints
        per_side = comb(n, t.a) * comb(n - t.a, t.b)
        return per_side * (2 if self.geo.sides == 1 else 1)

    def group_order(self) -> int:
        """|G|: plain symmetries, times two where colours can be swapped."""
        return len(self.geo.perm) * (2 if self.geo.sides == 1 else 1)

    # ------------------------------------------------------------------ single positions

    def index(self, mover: int, opp: int, side: int) -> int:
        """Global canonical index of a position seen from its mover."""
        a, b = mover.bit_count(), opp.bit_count()
        s = 0 if self.geo.sides == 1 else side
        if not (0 <= a < self.lay.tier_base.shape[1] and 0 <= b < self.lay.tier_base.shape[2]) or self.lay.tier_base[s, a, b] < 0:
            raise KeyError(f"material {a} v {b} is not in this database")
        return int(index_of(np.uint64(mover), np.uint64(opp), side, self.geo, self.lay))

    def position(self, gidx: int) -> tuple[int, int, int]:
        """``(mover, opponent, side)`` of the canonical position at a global index."""
        if not 0 <= gidx < self.total:
            raise IndexError(gidx)
        m, p, s = unrank(gidx, self.geo, self.lay)
        return int(m), int(p), int(s)
