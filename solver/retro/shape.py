"""What a configuration's index will be, told before it is built.

Building the index (:class:`solver.index.Layout`) enumerates every mover set of every
tier: for hex(4) with 13 balls a side that is C(48, 13) = 1.9·10^11 sets — hours, and
far more memory than there is. A solve must know what it needs before that, so the
figures are computed here from binomial coefficients and the symmetry group alone,
in milliseconds:

* a tier's size is the number of orbits of (mover set, opponent set) pairs under the
  plain symmetry group G — exactly what the index holds (one block per mover orbit:
  every opponent set beside a representative with a trivial stabiliser, the canonical
  ones beside a symmetric one). Burnside's lemma counts it:
  ``(1/|G|) · Σ_g fix(g)``, where ``fix(g)`` is the number of disjoint pairs (M, P) of
  sizes (a, b) that ``g`` maps onto themselves: each a union of cycles of ``g``, the
  coefficient of ``x^a y^b`` in ``Π_cycles (1 + x^len + y^len)``;
* the index tables are 5 bytes a mover set (orbit number, map), 24 bytes a mover
  orbit (representative, stabiliser, block start), 8 bytes an opponent block entry
  and the lists beside symmetric representatives, bounded from above
  (:func:`symmetric_entries`); building them peaks at :data:`BUILD_BYTES` a mover set
  of the largest ball count on top of twice the finished tables (they are joined at
  the end).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from math import comb

from solver.game.config import Config
from solver.index import Tier, build_geo, tier_materials

BUILD_BYTES = 26  # one mover set while its orbit is found: ranks, maps, ids, masks


def cycles(perm) -> list[int]:
    """The cycle lengths of a point permutation."""
    seen = [False] * len(perm)
    out = []
    for start in range(len(perm)):
        n, p = 0, start
        while not seen[p]:
            seen[p] = True
            p = int(perm[p])
            n += 1
        if n:
            out.append(n)
    return out


def fixed_pairs(lengths: list[int], a: int, b: int) -> int:
    """Disjoint pairs (M, P), ``|M| = a``, ``|P| = b``, each a union of the cycles ``lengths``."""
    poly = [[0] * (b + 1) for _ in range(a + 1)]
    poly[0][0] = 1
    for n in lengths:
        for i in range(a, -1, -1):
            for j in range(b, -1, -1):
                add = (poly[i - n][j] if i >= n else 0) + (poly[i][j - n] if j >= n else 0)
                poly[i][j] += add
    return poly[a][b]


def orbit_count(perms, a: int, b: int) -> int:
    """Orbits of disjoint pairs of sizes ``a``, ``b`` under the permutation group ``perms``."""
    return sum(fixed_pairs(cycles(g), a, b) for g in perms) // len(perms)


def symmetric_entries(perms, npoints: int, a: int, b: int) -> int:
    """An upper bound on the entries of the lists kept beside symmetric mover sets of
    ``a`` balls for ``b`` opponent balls: at most ``2 C(N-a, b) Σ_{g≠1} fix_a(g) / |G|``
    (the orbits of opponent sets beside a representative are at most ``C(N-a, b)``, and
    the symmetric orbits, counted with their stabilisers, at most twice the fixed sets of
    the other elements over ``|G|``)."""
    fixed = sum(fixed_pairs(cycles(g), a, 0) for g in perms[1:])
    return 2 * comb(npoints - a, b) * fixed // len(perms)


@dataclass(frozen=True)
class Shape:
    """Tiers, groups and table sizes of a configuration's index, without building it.

    Stands in for a :class:`~solver.index.Layout` where only those are asked (``cfg``,
    ``material``, ``tiers``, ``groups``, ``total``): the budget and the database header."""

    cfg: Config
    material: tuple[int, int]

    @cached_property
    def _geo(self):
        return build_geo(self.cfg)

    @cached_property
    def _perms(self) -> list:
        return [list(p) for p in self._geo.perm]

    @cached_property
    def tiers(self) -> list[Tier]:
        out, base = [], 0
        for s, a, b in tier_materials(self.cfg, self.material):
            size = orbit_count(self._perms, a, b)
            out.append(Tier(s, a, b, base, size))
            base += size
        return out

    @property
    def total(self) -> int:
        return sum(t.size for t in self.tiers)

    @cached_property
    def groups(self) -> list[tuple[tuple[int, int], int, int]]:
        """As :attr:`solver.index.Layout.groups`."""
        out: list[tuple[tuple[int, int], int, int]] = []
        for t in self.tiers:
            key = (min(t.a, t.b), max(t.a, t.b))
            if out and out[-1][0] == key:
                out[-1] = (key, out[-1][1], t.base + t.size)
            else:
                out.append((key, t.base, t.base + t.size))
        return out

    @cached_property
    def movers(self) -> list[int]:
        """The mover ball counts whose orbit tables the index builds."""
        return sorted({t.a for t in self.tiers})

    @cached_property
    def mover_sets(self) -> int:
        """Mover sets the index enumerates (the work of its build)."""
        return sum(comb(self._geo.npoints, a) for a in self.movers)

    @cached_property
    def table_bytes(self) -> int:
        """The finished index tables, bytes (an upper bound: the symmetric lists are bounded)."""
        n, perms = self._geo.npoints, self._perms
        orbits = {a: orbit_count(perms, a, 0) for a in self.movers}
        out = sum(5 * comb(n, a) + 24 * orbits[a] for a in self.movers)
        for a, b in {(t.a, t.b) for t in self.tiers}:
            out += 16 * (orbits[a] + 1) + 8 * symmetric_entries(perms, n, a, b)
        return out

    @property
    def build_bytes(self) -> int:
        """The peak of building the tables, bytes."""
        largest = max((comb(self._geo.npoints, a) for a in self.movers), default=0)
        return 2 * self.table_bytes + BUILD_BYTES * largest
