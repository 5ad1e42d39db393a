"""A configuration: the board, balls per side and the variants in force (docs/rules.md §5).

A position means nothing without its configuration, so every rules function takes one,
and every stored value names the configuration it belongs to (:meth:`Config.key`).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.errors import ConfigError
from solver.game.board import Bitboard, Board, hex_board, standard_board, STANDARD_N

SETUP_READINGS = ("offer", "last")
RULES_VERSION = 1  # bump when a rule change alters any value

# docs/rules.md §8: each player's edge start points, his trap fields in `capture`.
STANDARD_TRAPS_X = ("a2", "c1", "f2", "g3")
STANDARD_TRAPS_O = ("a3", "a6", "b8", "c8")
STANDARD_BALLS = 13


@dataclass(frozen=True)
class Config:
    """The rules in force: board, balls per side and variants (docs/rules.md §5).

    Build one with :func:`make_config` (user-level values, the standard defaults filled
    in) or :func:`standard_config`. Construction checks that the rules fit together and
    raises :class:`~solver.errors.ConfigError` (a ``ValueError``) in one line otherwise:
    an unknown setup reading, trap fields of both colours or on the centre, traps
    without ``capture``, more balls than the board holds. A frozen dataclass: hashable,
    safe to share between threads, and it pickles (the board comes back as the same
    shared instance). :meth:`key` is what a database stores to name its rules.

    ``balls`` may be None where it is not fixed (e.g. showing an arbitrary base-game
    position); material checks then only use what the rules imply without it.
    Trap masks are 0 unless ``capture`` is on.

    >>> cfg = make_config("hex3", 2, edge=True)
    >>> cfg.describe(), cfg.variable_material
    ('hex3 2v2 edge', True)
    >>> make_config("hex3", 20)
    Traceback (most recent call last):
    solver.errors.ConfigError: 20 balls per side do not fit on hex3 (27 points)
    """

    board: Board
    balls: int | None = None
    edge: bool = False
    capture: bool = False
    traps_x: Bitboard = 0
    traps_o: Bitboard = 0
    setup: str | None = None

    def __post_init__(self) -> None:
        if self.setup is not None and self.setup not in SETUP_READINGS:
            raise ConfigError(f"unknown setup reading {self.setup!r}: expected offer or last")
        if self.traps_x & self.traps_o:
            names = ", ".join(self.names(self.traps_x & self.traps_o))
            raise ConfigError(f"trap fields {names} belong to both colours")
        if not self.capture and (self.traps_x or self.traps_o):
            raise ConfigError("trap fields given without --capture")
        centre_traps = (self.traps_x | self.traps_o) & self.board.centre_mask
        if centre_traps:
            raise ConfigError(f"centre point {self.names(centre_traps)[0]} cannot be a trap field")
        if self.balls is not None:
            # placement never uses the centre (nor, with capture, the other colour's traps)
            if self.setup:
                free = self.board.size - 3 - max(self.traps_x.bit_count(), self.traps_o.bit_count())
                where = "points where a ball may be placed"
            else:
                free, where = self.board.size, "points"
            if self.balls < 0 or 2 * self.balls > free:
                raise ConfigError(f"{self.balls} balls per side do not fit on {self.board.label} ({free} {where})")

    @property
    def n(self) -> int:
        return self.board.n

    @property
    def variable_material(self) -> bool:
        """Whether balls can leave the board (and material therefore shrink)."""
        return self.edge or self.capture

    def names(self, bits: Bitboard) -> list[str]:
        return [self.board.names[p] for p in range(self.board.size) if bits >> p & 1]

    def traps_of(self, colour: int) -> Bitboard:
        return self.traps_o if colour else self.traps_x

    def variants(self) -> str:
        """Short text naming the variants, e.g. ``'edge+capture'`` or ``'base'``."""
        parts = [v for v, on in (("edge", self.edge), ("capture", self.capture)) if on]
        if self.setup:
            parts.append(f"setup={self.setup}")
        return "+".join(parts) or "base"

    def describe(self) -> str:
        balls = f" {self.balls}v{self.balls}" if self.balls is not None else ""
        traps = ""
        if self.capture:
            traps = f" traps x:{','.join(self.names(self.traps_x))} o:{','.join(self.names(self.traps_o))}"
        return f"{self.board.label}{balls} {self.variants()}{traps}"

    def key(self) -> dict:
        """What identifies these rules in a database's metadata."""
        return {
            "rules_version": RULES_VERSION,
            "board": self.board.label,
            "balls": self.balls,
            "edge": self.edge,
            "capture": self.capture,
            "traps_x": self.names(self.traps_x),
            "traps_o": self.names(self.traps_o),
            "setup": self.setup,
        }


def parse_points(board: Board, text: str) -> Bitboard:
    """``'a2,c1,f2'`` -> a bitboard; ``ValueError`` naming an unknown point."""
    bits = 0
    for name in filter(None, (t.strip() for t in text.split(","))):
        bits |= 1 << board.point(name)
    return bits


def make_config(
    board: Board | str | int = STANDARD_N,
    balls: int | None = None,
    *,
    edge: bool = False,
    capture: bool = False,
    traps_x: str | Bitboard | None = None,
    traps_o: str | Bitboard | None = None,
    setup: str | None = None,
) -> Config:
    """Build a :class:`Config` from user-level values, filling the standard defaults.

    ``board``: a :class:`Board`, a label (``'hex3'``) or a size (3); ``traps_x`` /
    ``traps_o``: point names (``'a2,c1'``) or a bitboard. On hex(4) ``capture`` defaults
    to the standard trap fields and ``balls`` (where a setup game needs it) to 13; other
    boards must name their traps. Raises :class:`~solver.errors.ConfigError` for a board
    that does not exist or rules that do not fit together,
    :class:`~solver.errors.NotationError` for a point name the board does not have.
    """
    if isinstance(board, int):
        board = hex_board(board)
    elif isinstance(board, str):
        from solver.game.board import board_from_label

        board = board_from_label(board)
    tx = parse_points(board, traps_x) if isinstance(traps_x, str) else traps_x
    to = parse_points(board, traps_o) if isinstance(traps_o, str) else traps_o
    if (tx is not None or to is not None) and not capture:
        raise ConfigError("--traps-x / --traps-o need --capture")
    if capture and (tx is None or to is None):
        if board.n != STANDARD_N:
            raise ConfigError(f"--capture on {board.label} needs --traps-x and --traps-o (no standard traps there)")
        if tx is None:
            tx = parse_points(board, ",".join(STANDARD_TRAPS_X))
        if to is None:
            to = parse_points(board, ",".join(STANDARD_TRAPS_O))
    if setup is not None and balls is None:
        if board.n != STANDARD_N:
            raise ConfigError(f"--setup on {board.label} needs --balls")
        balls = STANDARD_BALLS
    return Config(board, balls, edge, capture, tx or 0, to or 0, setup)


def standard_config(**variants) -> Config:
    """The standard game: hex(4), 13 balls each, standard traps where ``capture`` is on."""
    return make_config(standard_board(), STANDARD_BALLS, **variants)


def symmetry_classes(cfg: Config) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    """The configuration's symmetries: (plain, colour-swapping), as point permutations.

    A board symmetry is *plain* if it keeps each colour's trap fields, *colour-swapping*
    if it exchanges them (docs/rules.md §1, §7). Without ``capture`` every board symmetry is
    both. The identity, when plain, comes first.
    """
    plain, swapping = [], []
    for sym in cfg.board.symmetries:
        tx = cfg.board.map_bits(sym, cfg.traps_x)
        to = cfg.board.map_bits(sym, cfg.traps_o)
        if tx == cfg.traps_x and to == cfg.traps_o:
            plain.append(sym)
        if tx == cfg.traps_o and to == cfg.traps_x:
            swapping.append(sym)
    return plain, swapping


def config_from_key(key: dict) -> Config:
    """Rebuild a :class:`Config` from :meth:`Config.key` (as stored in a database)."""
    return make_config(
        key["board"],
        key["balls"],
        edge=key["edge"],
        capture=key["capture"],
        traps_x=",".join(key["traps_x"]) if key["capture"] else None,
        traps_o=",".join(key["traps_o"]) if key["capture"] else None,
        setup=key.get("setup"),
    )
