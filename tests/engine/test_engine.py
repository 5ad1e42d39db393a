"""The engine against the rules and the databases: legal moves in every rule set, wins in 1
taken, losses in 1 avoided, proven values that agree with a solved database."""

from __future__ import annotations

import random

import numpy as np
import pytest

from solver.engine.engine import Engine
from solver.engine.score import Limit, Score
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import LOSS, ONGOING, WIN, apply, children, legal_points, moves, parse_move, status
from solver.game.start import initial_position, standard_start
from solver.index import build_geo
from solver.kernels.alphabeta import gen_children
from solver.kernels.evaluate import NF, features, zone_masks

RULE_SETS = [
    standard_config(),
    standard_config(capture=True),
    standard_config(edge=True),
    standard_config(edge=True, capture=True),
    make_config(4, 13, setup="offer"),
    make_config(4, 13, setup="last"),
    make_config(3, 4, setup="offer"),
    make_config(3, 3, edge=True, setup="last"),
]


def random_game_positions(cfg, seed: int, plies: int = 60) -> list[Position]:
    """The positions of a random game from the rules' start (every phase it passes)."""
    rng = random.Random(seed)
    pos = initial_position(cfg)
    seen = [pos]
    while status(cfg, pos) == ONGOING and len(seen) < plies:
        pos = apply(cfg, pos, rng.choice(moves(cfg, pos)))
        seen.append(pos)
    return seen


def random_play_position(cfg, rng: random.Random, a: int, b: int) -> Position:
    """A random rotation-phase position with ``a`` balls for the side to move and ``b`` for the other."""
    board = cfg.board
    points = rng.sample(range(board.size), a + b)
    mine = sum(1 << q for q in points[:a])
    theirs = sum(1 << q for q in points[a:])
    turn = rng.randrange(2)
    x, o = (mine, theirs) if turn == 0 else (theirs, mine)
    return Position.make(board, x, o, turn)


@pytest.mark.parametrize("cfg", RULE_SETS, ids=lambda c: f"{c.board.label}-{c.variants()}")
def test_never_an_illegal_move(cfg):
    engine = Engine(cfg, tt_bits=14)
    for seed in range(3):
        positions = random_game_positions(cfg, seed)
        for i, pos in enumerate(positions[::3]):
            r = engine.think(pos, Limit(nodes=300), history=positions[: 3 * i])
            if status(cfg, pos) != ONGOING:
                assert r.move is None and r.source == "rules"
            else:
                assert r.move in moves(cfg, pos), (pos.text(), r.move)


@pytest.mark.parametrize("cfg", [standard_config(), make_config(3, edge=True), standard_config(capture=True)],
                         ids=["hex4", "hex3-edge", "hex4-capture"])
def test_children_kernel_matches_the_rules(cfg):
    """The search's child generator gives the children of the rules, each through its move."""
    geo = build_geo(cfg)
    rng = random.Random(5)
    out_m, out_p, out_mv = (np.zeros(400, np.uint64), np.zeros(400, np.uint64), np.zeros(400, np.int32))
    checked = 0
    for _ in range(300):
        pos = random_play_position(cfg, rng, rng.randrange(3, 10), rng.randrange(3, 10))
        if cfg.capture and (pos.x & cfg.traps_o or pos.o & cfg.traps_x):
            continue
        if status(cfg, pos) != ONGOING:
            continue
        n = gen_children(np.uint64(pos.mover), np.uint64(pos.opponent), pos.turn, geo, out_m, out_p, out_mv)
        got = set()
        for j in range(n):
            kid = Position.make(cfg.board, *((int(out_m[j]), int(out_p[j])) if pos.turn == 1 else
                                             (int(out_p[j]), int(out_m[j]))), 1 - pos.turn)
            got.add(kid)
            assert apply(cfg, pos, _move(out_mv[j])) == kid
        # within a point no child repeats; two points may rarely give the same child
        assert got == set(children(cfg, pos)) and n >= len(got)
        checked += 1
    assert checked > 100


def _move(code):
    from solver.engine.searcher import move_of_code

    return move_of_code(int(code))


def test_features_match_a_plain_reading_of_the_rules():
    cfg = standard_config()
    geo = build_geo(cfg)
    zones = zone_masks(cfg.board.neighbours, cfg.board.centre_mask)
    rng = random.Random(2)
    buf = np.zeros(NF)
    centre = cfg.board.centre_mask
    for _ in range(200):
        pos = random_play_position(cfg, rng, 13, 13)
        m, p = pos.mover, pos.opponent
        if m & centre == centre or p & centre == centre:
            continue
        features(np.uint64(m), np.uint64(p), geo, zones, buf)
        lm, lp = legal_points(cfg, m, p), legal_points(cfg, p, m)
        assert buf[0] == (m & centre).bit_count() - (p & centre).bit_count()
        assert buf[4] == len(lm) - len(lp)
        assert buf[8] == m.bit_count() - p.bit_count()

        def wins_at(mine, theirs, points):
            side = Position.make(cfg.board, mine, theirs, 0)  # as light, so rotate's view is the mover's
            n = 0
            for q in points:
                if any(apply(cfg, side, mv).x & centre == centre for mv in moves(cfg, side) if mv.point == q):
                    n += 1
            return min(n, 3)

        assert buf[6] == wins_at(m, p, lm)
        assert buf[7] == wins_at(p, m, lp)


def _immediate(cfg, pos):
    """Moves of ``pos`` that win at once, and those after which the opponent wins at once."""
    wins, losing = [], []
    for mv in moves(cfg, pos):
        child = apply(cfg, pos, mv)
        if status(cfg, child) == LOSS:
            wins.append(mv)
        elif status(cfg, child) == WIN or any(status(cfg, apply(cfg, child, r)) == LOSS for r in moves(cfg, child)):
            losing.append(mv)
    return wins, losing


def test_a_win_in_one_is_taken_and_a_loss_in_one_avoided():
    cfg = make_config(3)
    engine = Engine(cfg, tt_bits=16)
    rng = random.Random(11)
    took = avoided = 0
    for _ in range(3000):
        if took >= 25 and avoided >= 25:
            break
        pos = random_play_position(cfg, rng, rng.randrange(3, 8), rng.randrange(3, 8))
        if status(cfg, pos) != ONGOING:
            continue
        wins, losing = _immediate(cfg, pos)
        all_moves = moves(cfg, pos)
        if not wins and not (0 < len(losing) < len(all_moves)):
            continue
        r = engine.think(pos, Limit(depth=2))
        if wins and took < 25:
            assert r.move in wins and r.score == Score(WIN, 1), pos.text()
            took += 1
        elif not wins:
            assert r.move not in losing, pos.text()
            avoided += 1
    assert took >= 20 and avoided >= 20


def test_a_forced_win_of_the_standard_start_is_proven_with_its_distance():
    """The standard start after e4+3 c5+2 is a win in 9 for light (data/proofs): the engine
    proves it and its distance, and after its move the loss in 8 for dark."""
    cfg = standard_config()
    pos = standard_start()
    for text in ("e4+3", "c5+2"):
        pos = apply(cfg, pos, parse_move(cfg, pos, text))
    r = Engine(cfg).think(pos, Limit(depth=10))
    assert r.score == Score(WIN, 9) and r.exact
    # late-move reductions and the null move hide the defender's proof at the nominal
    # depth: a few plies more find it, and the distance is then searched at full width
    r2 = Engine(cfg).think(apply(cfg, pos, r.move), Limit(depth=12))
    assert r2.score == Score(LOSS, 8) and r2.exact


def _agreement(path, cfg, samples: int, depth: int, seed: int):
    """Engine answers against the database on sampled positions: every proven score must be
    the database's value (an exact one its distance), and the move must keep a win."""
    from solver.db.database import open_db as _open

    rng = random.Random(seed)
    with _open(path) as db:
        vals = db.values()
        layout = db.layout
        engine = Engine(cfg, tt_bits=18)
        proven = kept = wins = 0
        for g in rng.sample(range(len(vals)), samples):
            m, p, side = layout.position(g)
            x, o = (m, p) if side == 0 else (p, m)
            pos = Position.make(cfg.board, x, o, side)
            if status(cfg, pos) != ONGOING:
                continue
            truth = db.probe(pos)
            engine.new_game()
            r = engine.think(pos, Limit(depth=depth))
            if r.score.proven:
                proven += 1
                assert r.score.kind == truth.result, (pos.text(), r.score, truth)
                if r.exact:
                    assert r.score.value == truth.plies, (pos.text(), r.score, truth)
                else:
                    # a distance found beyond full width is an upper bound, for wins and losses alike
                    assert truth.plies <= r.score.value
            if truth.result == WIN:
                wins += 1
                after = db.probe(apply(cfg, pos, r.move))
                kept += after.result == LOSS
        return proven, kept, wins


def test_agrees_with_the_database_on_hex3_3v3(solved_db):
    cfg = make_config(3, 3)
    proven, kept, wins = _agreement(solved_db(cfg, (3, 3)), cfg, 200, 6, 1)
    assert proven >= 30 and wins >= 20
    assert kept >= 0.9 * wins


@pytest.mark.slow
def test_agrees_with_the_database_on_hex3_4v4(solved_db):
    cfg = make_config(3, 4)
    proven, kept, wins = _agreement(solved_db(cfg, (4, 4)), cfg, 400, 8, 2)
    assert proven >= 50 and kept >= 0.9 * wins


def test_database_positions_inside_the_search_are_exact(solved_db):
    """hex(2) 4v4 edge searched with the 3v3 edge database as leaves: balls fall off, the
    search reaches the database's material, and every proven answer is the 4v4 database's."""
    cfg = make_config(2, 4, edge=True)
    from solver.db.database import open_db as _open

    rng = random.Random(4)
    with _open(solved_db(make_config(2, 3, edge=True), (3, 3))) as small, _open(solved_db(cfg, (4, 4))) as full:
        engine = Engine(cfg, db=small, tt_bits=14)
        lay, hits, proven = full.layout, 0, 0
        for _ in range(150):
            m, p, side = lay.position(rng.randrange(lay.total))
            x, o = (m, p) if side == 0 else (p, m)
            pos = Position.make(cfg.board, x, o, side)
            if status(cfg, pos) != ONGOING or (m.bit_count(), p.bit_count()) != (4, 4):
                continue
            engine.new_game()
            r = engine.think(pos, Limit(depth=4))
            hits += engine.searcher.db_hits
            truth = full.probe(pos)
            if r.score.proven:
                proven += 1
                assert r.score.kind == truth.result, (pos.text(), r.score, truth)
                assert r.score.value >= truth.plies  # an upper bound (exact within full width)
        assert hits > 0 and proven > 10


def test_a_database_of_other_rules_is_refused(solved_db):
    from solver.db.database import open_db as _open
    from solver.errors import StoreError

    with _open(solved_db(make_config(2, 3, edge=True), (3, 3))) as db:
        with pytest.raises(StoreError, match="other rules"):
            Engine(make_config(2, 3), db=db)
