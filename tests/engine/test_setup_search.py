"""The setup game's search (solver/kernels/setup_search.py) against a plain minimax over the
placements written from the rules module and against the brute-force solved setup game, a
win in the setup taken, movetime honoured."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from solver.engine.engine import Engine
from solver.engine.score import Limit
from solver.engine.searcher import Searcher
from solver.game.config import make_config
from solver.game.position import OFFER, PLACE, PLAY, Move, Position
from solver.game.rules import apply, legal_points, moves
from solver.kernels.alphabeta import INF, MATE, MATE_BOUND, NODE_LIMIT, search
from solver.kernels.evaluate import NF, evaluate
from solver.kernels.setup_search import offer_score

from tests.oracles.brute import solve_all
from tests.oracles.brute_setup import rotation_config, solve_setup_tree, through


def _shift(raw: int, ply: int) -> int:
    """A rotation search's score, rooted ``ply`` plies below the setup root, in the root's frame."""
    if raw > MATE_BOUND:
        return raw - ply
    if raw < -MATE_BOUND:
        return raw + ply
    return raw


class Minimax:
    """The setup search's definition (solver/kernels/setup_search.py), plainly: every
    placement from the rules module, no pruning, no table. The rotation positions after
    the offer are scored by the rotation kernel at depth 0 (its evaluation and win-in-1
    test), as the setup search scores them within two placements of its horizon."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.rot = Searcher(cfg, tt_bits=12)
        self.buf = np.zeros(NF)

    def first_rotator_eval(self, pos: Position) -> int:
        """The evaluation of the board as if the first rotator were to move, for him."""
        r = self.rot
        first, second = (pos.x, pos.o) if self.cfg.setup == "offer" else (pos.o, pos.x)
        return int(evaluate(np.uint64(first), np.uint64(second), r.geo, r.zones, r.w, self.buf))

    def offer(self, pos: Position, ply: int) -> int:
        """Light's score of an offer position at ``ply``."""
        points = legal_points(self.cfg, pos.x, pos.o)
        if not points:
            return -(MATE - ply)
        handover = 1 if len(points) == 1 else 3
        base = pos.replace(phase=PLAY, points=())
        per_point = []
        for z in points:
            turns = [apply(self.cfg, base, Move.rotate(z, k)) for k in range(6)]
            per_point.append(max(-_shift(self.rot.static(t.mover, t.opponent, t.turn), ply + handover) for t in turns))
        per_point.sort(reverse=True)
        return per_point[0] if len(points) == 1 else per_point[1]

    def value(self, pos: Position, depth: int, ply: int = 0) -> int:
        """The score of a placement position for the side to place, ``depth`` placements deep."""
        assert pos.phase == PLACE
        if depth == 0:
            v = self.first_rotator_eval(pos)  # the first rotator's view: light under offer, dark under last
            first = 0 if self.cfg.setup == "offer" else 1
            return v if pos.turn == first else -v
        best = -INF
        for mv in moves(self.cfg, pos):
            child = apply(self.cfg, pos, mv)
            if child.phase == OFFER:
                v = self.offer(child, ply + 1)
                score = v if pos.turn == 0 else -v
            elif child.phase == PLAY:  # setup=last: the last placer rotates next
                score = _shift(self.rot.static(child.mover, child.opponent, child.turn), ply + 1)
            else:
                score = -self.value(child, depth - 1, ply + 1)
            best = max(best, score)
        return best


def random_placement(cfg, rng: random.Random, placed: int) -> Position:
    """A placement position after ``placed`` random placements from the empty board."""
    pos = Position.make(cfg.board, 0, 0, 0, PLACE)
    for _ in range(placed):
        pos = apply(cfg, pos, rng.choice(moves(cfg, pos)))
    return pos


# (board, balls, [(placements left, depth)], positions per case): on hex(2) light's points are
# worth the same whenever he has two, so hex(3) is what tests the offer (the second best point)
MINIMAX_CASES = [
    (2, 3, [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3)], 4),
    (2, 4, [(1, 1), (1, 2), (2, 1), (2, 2), (2, 3), (3, 1), (3, 2), (3, 3), (4, 1), (4, 2), (4, 3)], 4),
    (3, 4, [(1, 1), (1, 2), (2, 1), (2, 2)], 3),
    (3, 4, [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2)], 2, "last"),
]


@pytest.mark.parametrize("n, balls, cases, per_case, reading", [c + ("offer",) if len(c) == 4 else c
                                                                 for c in MINIMAX_CASES],
                         ids=["hex2-3", "hex2-4", "hex3-4", "hex3-4-last"])
def test_agrees_with_a_plain_minimax_over_the_placements(n, balls, cases, per_case, reading):
    """The engine's score of a placement position, searched ``depth`` placements deep (the
    rotations after the setup at depth 0), equals the plain minimax's."""
    cfg = make_config(n, balls, setup=reading)
    ref = Minimax(cfg)
    rng = random.Random(n * 10 + balls)
    proven = 0
    for left, depth in cases:
        for _ in range(per_case):
            pos = random_placement(cfg, rng, 2 * balls - left)
            engine = Engine(cfg, tt_bits=12)
            r = engine.think(pos, Limit(depth=depth))
            want = ref.value(pos, depth)
            assert r.score.raw() == want, (pos.text(), depth, r.score, want)
            assert r.move in moves(cfg, pos)
            proven += r.score.proven
    assert n > 2 or proven > 0  # some end of the setup is decided on hex(2)


def _offer_kernel(s: Searcher, x: int, o: int, depth: int, alpha: int, beta: int) -> int:
    """The kernel's light score of the offer position ``(x, o)`` at ply 1, on fresh tables."""
    s.clear()
    s.ctl[:] = 0
    s.ctl[NODE_LIMIT] = 1 << 60
    return int(offer_score(np.uint64(x), np.uint64(o), 1, depth, alpha, beta, s.geo, s.zones, s.w, s.tt, s.st, s.ctl,
                           s.killers, s.history, s.root_score, s.dbinfo, s.dbvals, s.lay, np.zeros(1, np.uint64)))


def _turn_score(s: Searcher, kid: Position, depth: int) -> int:
    """The rotation kernel's full-window score of ``kid`` at ``depth``, on fresh tables."""
    s.clear()
    s.ctl[:] = 0
    s.ctl[NODE_LIMIT] = 1 << 60
    return int(search(np.uint64(kid.mover), np.uint64(kid.opponent), kid.turn, depth, -INF, INF, s.geo, s.zones, s.w,
                      s.tt, s.st, np.zeros(1, np.uint64), 0, s.ctl, s.killers, s.history, False, s.root_score,
                      s.dbinfo, s.dbvals, s.lay))


def test_the_offer_is_the_second_best_point_and_exact_inside_its_window():
    """Light's offer is worth his second best point (each worth its best turn, searched a
    ply deep); searched within a window it is exact inside and a bound outside."""
    cfg = make_config(3, 4, setup="offer")
    s = Searcher(cfg, tt_bits=12)
    rng = random.Random(5)
    checked = 0
    for _ in range(30):
        pos = random_placement(cfg, rng, 8)
        points = legal_points(cfg, pos.x, pos.o)
        if len(points) < 2:
            continue
        base = pos.replace(phase=PLAY, points=())
        per_point = sorted((max(-_shift(_turn_score(s, apply(cfg, base, Move.rotate(z, k)), 1), 4) for k in range(6))
                            for z in points), reverse=True)
        v = _offer_kernel(s, pos.x, pos.o, 1, -INF, INF)
        assert v == per_point[1], pos.text()
        for a, b in ((v - 30, v + 30), (v + 1, v + 60), (v - 60, v - 1), (v - 1, v + 1)):
            r = _offer_kernel(s, pos.x, pos.o, 1, a, b)
            assert (r <= a) if v <= a else (r >= b) if v >= b else (r == v), (pos.text(), a, b, v, r)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("balls, reading", [(2, "offer"), (2, "last"), (3, "offer"), (3, "last")])
def test_proven_results_agree_with_the_solved_setup_game(balls, reading):
    """On hex(2) the search proves the setup game's value from the empty board (result and
    distance), and at every placement position it proves, the brute-force solution agrees;
    its move keeps the position's result."""
    cfg = make_config(2, balls, setup=reading)
    exact = solve_setup_tree(cfg, solve_all(rotation_config(cfg)))
    engine = Engine(cfg, tt_bits=12)
    empty = Position.make(cfg.board, 0, 0, 0, PLACE)
    r = engine.think(empty, Limit(depth=2 * balls + 2))
    assert (r.score.kind, r.score.value) == exact[empty]
    placements = sorted((p for p in exact if p.phase == PLACE), key=lambda p: p.text())
    proven = 0
    for pos in random.Random(balls).sample(placements, min(40, len(placements))):
        engine.new_game()
        r = engine.think(pos, Limit(depth=2 * balls + 2))
        want = exact[pos]
        assert through(pos, apply(cfg, pos, r.move), exact[apply(cfg, pos, r.move)])[0] == want[0], pos.text()
        if r.score.proven:
            assert r.score.kind == want[0], pos.text()
            proven += 1
    assert proven >= 20


def _no_point_for_light(cfg, pos: Position) -> list[Move]:
    """Dark's last placements after which light has no legal point (light loses at the offer)."""
    children = ((mv, apply(cfg, pos, mv)) for mv in moves(cfg, pos))
    return [mv for mv, child in children if not legal_points(cfg, child.x, child.o)]


def test_a_win_in_the_setup_is_taken():
    """Dark's last ball can leave light without a legal point: the offer is then lost for
    light at once, and the engine takes that win (in one ply) whenever it exists."""
    cfg = make_config(2, 3, setup="offer")
    rng = random.Random(7)
    engine = Engine(cfg, tt_bits=12)
    found = 0
    for _ in range(60):
        pos = random_placement(cfg, rng, 5)  # dark places the sixth and last ball
        winning = _no_point_for_light(cfg, pos)
        if not winning or len(winning) == len(moves(cfg, pos)):
            continue
        r = engine.think(pos, Limit(movetime_ms=200))
        assert r.move in winning and (r.score.kind, r.score.value) == ("win", 1), pos.text()
        found += 1
    assert found >= 3


def test_light_avoids_a_placement_that_loses_in_the_setup():
    """Light, placing his last ball, keeps a legal point for himself whatever dark places
    last, where such a placement exists."""
    cfg = make_config(2, 3, setup="offer")
    rng = random.Random(11)
    engine = Engine(cfg, tt_bits=12)
    found = 0
    for _ in range(80):
        pos = random_placement(cfg, rng, 4)  # light places his third and last ball
        safe = [mv for mv in moves(cfg, pos) if not _no_point_for_light(cfg, apply(cfg, pos, mv))]
        if not safe or len(safe) == len(moves(cfg, pos)):
            continue
        r = engine.think(pos, Limit(depth=2))
        assert r.move in safe, pos.text()
        found += 1
    assert found >= 3


def test_movetime_is_honoured():
    """No placement of hex(4) 13 v 13 computes past movetime + 50 ms (after the kernels are
    compiled), early in the setup and where its end is within reach. The search runs in
    this thread, so its CPU time is what it spent; the wall time also counts the waits of
    a loaded machine and gets a looser bound."""
    cfg = make_config(4, 13, setup="offer")
    engine = Engine(cfg)
    engine.warm_up()
    rng = random.Random(3)
    for placed in (0, 6, 20, 23, 24, 25):
        pos = random_placement(cfg, rng, placed)
        t0, c0 = time.monotonic(), time.thread_time()
        r = engine.think(pos, Limit(movetime_ms=100))
        cpu, wall = (time.thread_time() - c0) * 1000, (time.monotonic() - t0) * 1000
        assert r.move in moves(cfg, pos) and r.depth >= 1
        assert cpu <= 150 and wall <= 350, (placed, cpu, wall)


def test_every_placement_ranked_with_its_own_score():
    """``rank_all``: every legal placement with the score of a full-window search, best
    first; the best is the move played, and each score is the plain minimax's."""
    cfg = make_config(3, 4, setup="offer")
    ref = Minimax(cfg)
    pos = random_placement(cfg, random.Random(9), 6)
    r = Engine(cfg, tt_bits=12).think(pos, Limit(depth=2), rank_all=True)
    assert sorted(m.point for m, _ in r.ranked) == sorted(m.point for m in moves(cfg, pos))
    raws = [sc.raw() for _, sc in r.ranked]
    assert raws == sorted(raws, reverse=True) and r.ranked[0][1] == r.score
    assert r.score.raw() == raws[0]
    for mv, sc in r.ranked:
        assert sc.raw() == -ref.value(apply(cfg, pos, mv), 1, 1), mv
