"""hex(n) boards: geometry, point names, neighbours and the symmetry group (docs/rules.md §1).

Points are plain ints ``0 .. N-1`` in *point order*: bottom row first, left to right
(the order docs/rules.md §9 uses for ``pick P Q``). A set of points is a bitboard: an int
whose bit ``i`` stands for point ``i``.

Axial coordinates ``(q, r)``; the six neighbours in counter-clockwise order are::

         NW(q-1,r+1)   NE(q,r+1)
    W(q-1,r)     (q,r)      E(q+1,r)
         SW(q,r-1)     SE(q+1,r-1)

    direction index:  0=E 1=NE 2=NW 3=W 4=SW 5=SE
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from solver.errors import ConfigError, NotationError

Point = int
Bitboard = int
Axial = tuple[int, int]

DIRECTIONS: tuple[Axial, ...] = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
CENTRE: tuple[Axial, ...] = ((0, 0), (1, 0), (0, 1))
MIN_N, MAX_N = 2, 5
STANDARD_N = 4


def in_hex(n: int, q: int, r: int) -> bool:
    """Whether axial ``(q, r)`` lies in hex(n): ``3·|p − c|² ≤ 3n² − 3n + 1``.

    With ``x = q + r/2``, ``y = r·√3/2`` and ``c = (1/2, √3/6)`` this is, times four and
    in integers, ``3(2q + r − 1)² + (3r − 1)² ≤ 4(3n² − 3n + 1)``.
    """
    return 3 * (2 * q + r - 1) ** 2 + (3 * r - 1) ** 2 <= 4 * (3 * n * n - 3 * n + 1)


def ring_norm(q: int, r: int) -> int:
    """``3·|p − c|²`` for axial ``(q, r)``, an integer (the rings of docs/rules.md §8)."""
    num = 3 * (2 * q + r - 1) ** 2 + (3 * r - 1) ** 2
    assert num % 4 == 0
    return num // 4


# The 12 linear lattice maps (rotations by 60°·m, and those followed by the reflection
# (q, r) -> (r, q)), as functions on axial coordinates.
def _rot60(p: Axial) -> Axial:
    q, r = p
    return (-r, q + r)


def _linear_maps() -> list[tuple[int, bool]]:
    return [(m, refl) for refl in (False, True) for m in range(6)]


def _apply_linear(m: int, refl: bool, p: Axial) -> Axial:
    if refl:
        p = (p[1], p[0])
    for _ in range(m):
        p = _rot60(p)
    return p


@dataclass(frozen=True, eq=False)
class Board:
    """The board hex(n). Build with :func:`hex_board`; instances are shared per ``n``."""

    n: int
    coords: tuple[Axial, ...]
    index: dict[Axial, Point] = field(repr=False)
    names: tuple[str, ...] = field(repr=False)
    rows: tuple[tuple[Point, ...], ...] = field(repr=False)  # bottom row first
    neighbours: tuple[tuple[int, ...], ...] = field(repr=False)  # -1 where off the board
    interior: Bitboard = field(repr=False)
    centre: tuple[Point, Point, Point] = field(repr=False)
    symmetries: tuple[tuple[Point, ...], ...] = field(repr=False)  # point permutations

    @property
    def size(self) -> int:
        return len(self.coords)

    @property
    def full(self) -> Bitboard:
        return (1 << self.size) - 1

    @property
    def centre_mask(self) -> Bitboard:
        return sum(1 << p for p in self.centre)

    @property
    def edge(self) -> Bitboard:
        return self.full & ~self.interior

    @property
    def row_lengths(self) -> tuple[int, ...]:
        """Row lengths from the top row down, as a position string lists them."""
        return tuple(len(row) for row in reversed(self.rows))

    @property
    def label(self) -> str:
        return f"hex{self.n}"

    def is_interior(self, p: Point) -> bool:
        return bool(self.interior >> p & 1)

    def point(self, name: str) -> Point:
        """The point called ``name`` (``'d4'``, any case); :class:`NotationError` naming it if none."""
        try:
            return self._by_name[name.lower()]
        except KeyError:
            raise NotationError(f"no point {name!r} on {self.label}") from None

    @property
    def _by_name(self) -> dict[str, Point]:
        return _names_index(self.n)

    def name(self, p: Point) -> str:
        return self.names[p]

    def map_bits(self, sym: tuple[Point, ...], bits: Bitboard) -> Bitboard:
        """Image of a bitboard under a point permutation."""
        out = 0
        while bits:
            low = bits & -bits
            out |= 1 << sym[low.bit_length() - 1]
            bits ^= low
        return out

    def __repr__(self) -> str:
        return f"hex_board({self.n})"

    def __reduce__(self):
        # one shared instance per n, also after pickling into a worker process
        return (hex_board, (self.n,))


@cache
def _names_index(n: int) -> dict[str, Point]:
    b = hex_board(n)
    return {name: i for i, name in enumerate(b.names)}


def _row_name(row: int) -> str:
    return str(row)


@cache
def hex_board(n: int) -> Board:
    """The board hex(n), ``2 <= n <= 5``, built from the formula of docs/rules.md §1."""
    if not MIN_N <= n <= MAX_N:
        raise ConfigError(f"no board hex{n}: boards are hex{MIN_N}..hex{MAX_N}")
    span = n + 2
    cells = [(q, r) for r in range(-span, span + 1) for q in range(-span, span + 1) if in_hex(n, q, r)]
    cells.sort(key=lambda p: (p[1], p[0]))  # bottom row first, then left to right
    coords = tuple(cells)
    index = {p: i for i, p in enumerate(coords)}
    r_min = coords[0][1]
    rows: dict[int, list[Point]] = {}
    names: list[str] = []
    for i, (q, r) in enumerate(coords):
        row = rows.setdefault(r, [])
        names.append(f"{chr(ord('a') + len(row))}{_row_name(r - r_min + 1)}")
        row.append(i)
    neighbours = tuple(
        tuple(index.get((q + dq, r + dr), -1) for dq, dr in DIRECTIONS) for (q, r) in coords
    )
    interior = sum(1 << i for i, nb in enumerate(neighbours) if min(nb) >= 0)
    centre = tuple(index[p] for p in CENTRE)
    symmetries = _symmetries(coords, index)
    return Board(
        n=n,
        coords=coords,
        index=index,
        names=tuple(names),
        rows=tuple(tuple(rows[r]) for r in sorted(rows)),
        neighbours=neighbours,
        interior=interior,
        centre=centre,  # type: ignore[arg-type]
        symmetries=symmetries,
    )


def _symmetries(coords: tuple[Axial, ...], index: dict[Axial, Point]) -> tuple[tuple[Point, ...], ...]:
    """Lattice maps (linear map + translation) keeping both the board and the centre.

    Found by search rather than listed, so that the group is whatever the geometry gives;
    identity first.
    """
    centre = set(CENTRE)
    found: list[tuple[Point, ...]] = []
    for m, refl in _linear_maps():
        images = [_apply_linear(m, refl, p) for p in CENTRE]
        for img in images:
            t = (CENTRE[0][0] - img[0], CENTRE[0][1] - img[1])
            if {(a + t[0], b + t[1]) for a, b in images} != centre:
                continue
            perm = []
            for p in coords:
                a, b = _apply_linear(m, refl, p)
                target = (a + t[0], b + t[1])
                if target not in index:
                    break
                perm.append(index[target])
            else:
                if tuple(perm) not in found:
                    found.append(tuple(perm))
    return tuple(found)


def standard_board() -> Board:
    return hex_board(STANDARD_N)


def board_from_label(label: str) -> Board:
    """``'hex4'`` (or ``'4'``) -> the board; ``ValueError`` with a one-line reason otherwise."""
    text = label.strip().lower()
    if text.startswith("hex"):
        text = text[3:]
    if not (text.isascii() and text.isdigit()):  # '²' and '٣' are digits to str.isdigit
        raise ConfigError(f"unknown board {label!r}: expected hex2..hex5")
    return hex_board(int(text))


def board_from_row_lengths(lengths: tuple[int, ...]) -> Board | None:
    """The board whose rows (top row first) have these lengths, or None."""
    for n in range(MIN_N, MAX_N + 1):
        if hex_board(n).row_lengths == lengths:
            return hex_board(n)
    return None
