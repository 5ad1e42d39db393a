"""Brute-force reference solver of the whole setup game (docs/rules.md §5 ``setup``).

A test oracle for :mod:`solver.retro.setup`, written to be obviously correct rather than
fast: a memoised negamax over the explicit game tree, from the empty board through every
placement, offer, pick and rotation at the picked point, down to the first
rotation-phase position. It uses nothing from ``solver`` but the plain-Python rules
(:func:`solver.game.rules.moves`, :func:`solver.game.rules.apply`, :func:`solver.game.rules.status`),
:func:`solver.game.start.empty_setup` and, for the rotation-phase leaves, the brute-force
retrograde table of :func:`tests.oracles.brute.solve_all`: the value of a
rotation-phase position is simply looked up there. No symmetry of any kind.

Values follow docs/rules.md §4, from the side to move: ``("win", d)`` / ``("loss", d)`` with
the plies to the end under optimal play (winner fastest, loser slowest; every placement,
offer, pick and rotation is one ply; a finished position has distance 0) or
``("draw", None)``.

The pre-rotation part of the game is a DAG (each placement adds a ball; offer, pick and
``at`` each happen once), so plain recursion with memoisation is exact: a node's value is
the best of its children's values seen from the mover. A child with the *same* side to
move (``setup=last``: the last placer makes the first rotation) keeps its result; a child
with the other side to move flips it. Either way one ply is added.
"""

from __future__ import annotations

from solver.game import rules
from solver.game.config import Config, make_config
from solver.game.position import PLAY, Position
from solver.game.start import empty_setup

from tests.oracles.brute import DRAW, LOSS, WIN, Value, solve_all


def rotation_config(cfg: Config) -> Config:
    """The same rules without ``setup``: the rotation-phase game of the leaves."""
    return make_config(
        cfg.board.n,
        cfg.balls,
        edge=cfg.edge,
        capture=cfg.capture,
        traps_x=cfg.traps_x if cfg.capture else None,
        traps_o=cfg.traps_o if cfg.capture else None,
    )


def rank(v: Value) -> tuple:
    """Smaller is better for the side to move: fastest win, then draw, then slowest loss."""
    result, plies = v
    if result == WIN:
        return (0, plies)
    if result == DRAW:
        return (1, 0)
    return (2, -plies)


def through(parent: Position, child: Position, v: Value) -> Value:
    """The child's value seen from the parent's mover, one ply further from the end."""
    result, plies = v
    if result == DRAW:
        return (DRAW, None)
    if child.turn != parent.turn:
        result = LOSS if result == WIN else WIN
    return (result, plies + 1)


def solve_setup_tree(cfg: Config, rotation_table: dict[Position, Value] | None = None) -> dict[Position, Value]:
    """Every position of the setup game reachable from the empty board, with its value.

    The result holds every placement-phase, ``offer``, ``pick`` and ``at`` position that
    the game tree reaches (the root is :func:`solver.game.start.empty_setup`), and the
    rotation-phase positions reached by the first rotation or, under ``setup=last``, by the
    last placement. ``rotation_table``: ``brute.solve_all`` of :func:`rotation_config`
    (computed here when not given; it is the expensive part).
    """
    if cfg.setup not in ("offer", "last") or cfg.balls is None:
        raise ValueError("the setup game needs setup='offer' or 'last' and a number of balls")
    if rotation_table is None:
        rotation_table = solve_all(rotation_config(cfg))
    memo: dict[Position, Value] = {}

    def value(pos: Position) -> Value:
        v = memo.get(pos)
        if v is not None:
            return v
        if pos.phase == PLAY:
            v = rotation_table[pos]
        else:
            st = rules.status(cfg, pos)
            if st != rules.ONGOING:
                v = (WIN if st == rules.WIN else LOSS, 0)
            else:
                best = None
                for m in rules.moves(cfg, pos):
                    child = rules.apply(cfg, pos, m)
                    cand = through(pos, child, value(child))
                    if best is None or rank(cand) < rank(best):
                        best = cand
                if best is None:
                    raise AssertionError(f"ongoing setup position without moves: {pos!r}")
                v = best
        memo[pos] = v
        return v

    value(empty_setup(cfg))
    return memo


def root_value(table: dict[Position, Value], cfg: Config) -> Value:
    return table[empty_setup(cfg)]


if __name__ == "__main__":  # python -m tests.oracles.brute_setup 2 2 offer
    import sys
    import time

    n, k, reading = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    c = make_config(n, k, setup=reading)
    t0 = time.perf_counter()
    tab = solve_setup_tree(c)
    print(f"hex{n} {k}v{k} setup={reading}: {root_value(tab, c)}  ({len(tab)} positions, {time.perf_counter() - t0:.1f} s)")
