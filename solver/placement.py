"""The placement layers of the setup game as an index (docs/rules.md §5 ``setup``).

Placement layers are indexed like rotation tiers (same encoder, same plain symmetries)
but over the points outside the centre, and never colour-folded: light places first and
offers, so the setup game is not colour-symmetric. Layer ``n`` holds the positions with
``n`` balls placed; layer ``2K`` (all placed, light to move) exists for ``setup=offer``.
"""

from __future__ import annotations

import numpy as np

from solver.game.config import Config, symmetry_classes
from solver.index import Layout, build_geo
from solver.kernels.geometry import Geo

OFFER, LAST = 0, 1


def placement_geo(cfg: Config) -> tuple[Geo, np.ndarray, np.ndarray]:
    """Index geometry over the points outside the centre: ``(geo, keep, back)``."""
    board = cfg.board
    back = np.array([q for q in range(board.size) if q not in board.centre], dtype=np.int64)
    keep = np.full(board.size, -1, dtype=np.int64)
    keep[back] = np.arange(len(back))
    plain, _ = symmetry_classes(cfg)
    n = len(back)
    permbits = np.zeros((len(plain), n), dtype=np.uint64)
    for g, sym in enumerate(plain):
        for j, q in enumerate(back):
            permbits[g, j] = np.uint64(1) << np.uint64(keep[sym[q]])
    full = build_geo(cfg)
    geo = full._replace(
        npoints=n,
        perm=np.array([[keep[sym[q]] for q in back] for sym in plain], dtype=np.int64),
        permbits=permbits,
        swap=np.arange(n, dtype=np.int64),
        swap_identity=True,
        sides=2,
    )
    return geo, keep, back


def placement_tiers(K: int, reading: str) -> list[tuple[int, int, int]]:
    """Tiers ``(side to place, its balls, the other's)`` from the top layer down."""
    tiers = [(0, K, K)] if reading == "offer" else []
    for n in range(2 * K - 1, -1, -1):
        tiers.append((0, n // 2, n // 2) if n % 2 == 0 else (1, n // 2, n // 2 + 1))
    return tiers


def layer_key(t) -> str:
    return f"place:{t.key}"


class Placement:
    """The placement layers of a setup configuration: layout, geometry, kernel arguments."""

    def __init__(self, cfg: Config):
        if cfg.setup is None or cfg.balls is None:
            raise ValueError("the setup game needs --setup offer|last and a number of balls")
        self.cfg = cfg
        self.K = cfg.balls
        self.geo, self.keep, self.back = placement_geo(cfg)
        self.layout = Layout(cfg, (self.K, self.K), geo=self.geo, tiers=placement_tiers(self.K, cfg.setup))

    def solve_range(self, vals: np.ndarray, lo: int, hi: int, rot_vals: np.ndarray, rot: Layout) -> None:
        """Value placement indices ``lo..hi`` of ``vals`` from the layer above (already in
        ``vals``) and, for the last placement or the offer, from the rotation values."""
        from solver.kernels.setup import place_range

        board, n = self.cfg.board, self.cfg.board.size
        place_range(
            vals, lo, hi, self.K, OFFER if self.cfg.setup == "offer" else LAST,
            self.geo, self.layout.lay, self.keep, self.back, np.uint64(board.full), np.uint64(board.centre_mask),
            rot.geo.traps, rot_vals, rot.geo, rot.lay, np.empty(n, np.int64), np.empty(n, np.uint16),
        )

    def index(self, x: int, o: int, turn: int) -> int:
        from solver.kernels.setup import squeeze

        mover, opp = (x, o) if turn == 0 else (o, x)
        return self.layout.index(int(squeeze(np.uint64(mover), self.keep)), int(squeeze(np.uint64(opp), self.keep)), turn)
