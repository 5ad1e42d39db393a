"""MCTS-Solver (solver/kernels/mcts.py, solver/engine/mcts.py) against the plain-Python rules.

The references are independent of the kernels: :mod:`solver.game.rules` decides which
moves win or lose at once, and a small depth-limited minimax over it gives the exact
value of positions decided within three plies.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from solver.engine.mcts import DEPTH_ROUND, MctsSearcher
from solver.engine.score import Limit
from solver.engine.searcher import Searcher, move_of_code
from solver.engine.weights import linear_weights
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import LOSS, ONGOING, WIN, apply, children, moves, status
from solver.game.start import standard_start
from solver.game.values import LOSS as LOSS_R, WIN as WIN_R
from solver.kernels.mcts import LOSS_P, NODES, UNKNOWN_P, WIN_P

HEX3 = make_config(3)
HEX4 = standard_config()


def random_position(cfg, rng: random.Random, balls: int) -> Position:
    """A position of ``balls`` balls a side on random points, not over."""
    n = cfg.board.size
    while True:
        pts = rng.sample(range(n), 2 * balls)
        x = sum(1 << q for q in pts[:balls])
        o = sum(1 << q for q in pts[balls:])
        pos = Position.make(cfg.board, x, o, rng.randrange(2))
        if status(cfg, pos) == ONGOING:
            return pos


def played_positions(cfg, rng: random.Random):
    """Positions met in random games from the standard start, without end."""
    while True:
        pos = standard_start()
        for _ in range(rng.randrange(1, 40)):
            if status(cfg, pos) != ONGOING:
                break
            pos = apply(cfg, pos, rng.choice(moves(cfg, pos)))
        if status(cfg, pos) == ONGOING:
            yield pos


def minimax(cfg, pos: Position, depth: int) -> tuple[str, int] | None:
    """``(WIN, d)`` / ``(LOSS, d)`` for the side to move if decided within ``depth`` plies
    (the winner's fastest, the loser's slowest), else None. Repetitions are not looked at."""
    st = status(cfg, pos)
    if st != ONGOING:
        return (WIN, 0) if st == WIN else (LOSS, 0)
    if depth == 0:
        return None
    fastest, slowest, all_lose = None, 0, True
    for child in children(cfg, pos):
        r = minimax(cfg, child, depth - 1)
        if r is not None and r[0] == LOSS:
            fastest = r[1] + 1 if fastest is None else min(fastest, r[1] + 1)
            if fastest == 1:
                break
        elif r is not None and r[0] == WIN:
            slowest = max(slowest, r[1] + 1)
        else:
            all_lose = False
    if fastest is not None:
        return WIN, fastest
    if all_lose:
        return LOSS, slowest
    return None


def search(cfg, pos: Position, iters: int, **kw):
    eng = MctsSearcher(cfg, nodes_cap=1 << 18, **kw)
    return eng, eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=iters))


def test_win_in_one_is_taken():
    rng = random.Random(3)
    found = 0
    for pos in played_positions(HEX4, rng):
        if not any(status(HEX4, apply(HEX4, pos, m)) == LOSS for m in moves(HEX4, pos)):
            continue
        _, (code, score, *_rest) = search(HEX4, pos, 50)
        assert status(HEX4, apply(HEX4, pos, move_of_code(code))) == LOSS, pos.text()
        assert (score.kind, score.value) == (WIN_R, 1)
        found += 1
        if found == 8:
            break


def _hands_over(cfg, pos: Position, move) -> bool:
    """The move loses at once or lets the opponent win at once."""
    child = apply(cfg, pos, move)
    return status(cfg, child) == WIN or any(status(cfg, apply(cfg, child, r)) == LOSS for r in moves(cfg, child))


def test_loss_in_one_is_avoided():
    rng = random.Random(4)
    found = 0
    for pos in played_positions(HEX4, rng):
        ms = moves(HEX4, pos)
        if any(status(HEX4, apply(HEX4, pos, m)) == LOSS for m in ms):
            continue  # a win in 1 comes first
        bad = [_hands_over(HEX4, pos, m) for m in ms]
        if not any(bad) or all(bad):
            continue
        _, (code, *_rest) = search(HEX4, pos, 200)
        assert not _hands_over(HEX4, pos, move_of_code(code)), pos.text()
        found += 1
        if found == 8:
            break


def test_proven_values_agree_with_minimax_on_hex3():
    rng = random.Random(7)
    decided = undecided = deep = 0
    for _ in range(70):
        pos = random_position(HEX3, rng, rng.choice((4, 5)))
        exact = minimax(HEX3, pos, 3)
        eng, (code, score, *_rest) = search(HEX3, pos, 4000)
        if exact is None:
            undecided += 1
            # a proof MCTS finds beyond three plies must not contradict the three-ply
            # search, and alpha-beta searched as deep finds it too (as fast or faster)
            if score.proven:
                assert score.value > 3, pos.text()
                if score.value > 9:
                    continue  # too deep for a quick alpha-beta search
                ab = Searcher(HEX3, tt_bits=12, reduce=False).rotation(pos.mover, pos.opponent, pos.turn,
                                                        Limit(depth=score.value))[1]
                assert ab.kind == score.kind and ab.value <= score.value, (pos.text(), ab, score)
                deep += 1
            continue
        decided += 1
        assert score.proven and score.kind == exact[0], (pos.text(), exact, score)
        # distances: exact for a win in 1 and a loss in 2 (found at birth), else the
        # fastest win found, never faster than the truth, with the same parity
        assert score.value >= exact[1] and (score.value - exact[1]) % 2 == 0, (pos.text(), exact, score)
        if exact in ((WIN, 1), (LOSS, 2)):
            assert score.value == exact[1]
        child = apply(HEX3, pos, move_of_code(code))
        if exact[0] == WIN:  # the move played keeps the win
            after = minimax(HEX3, child, score.value - 1)
            assert after is not None and after[0] == LOSS, (pos.text(), code)
    assert decided >= 15 and undecided >= 10 and deep >= 5, (decided, undecided, deep)


def check_tree(eng: MctsSearcher) -> int:
    """Visits add up, and every proven node is proven by its children as MCTS-Solver says;
    returns the number of nodes reached from the root."""
    t = eng.tree
    stack, seen = [0], 0
    while stack:
        node = stack.pop()
        seen += 1
        f, n = int(t.first[node]), int(t.nch[node])
        if f < 0:
            continue
        kids = range(f, f + n)
        assert t.visits[node] == 1 + sum(int(t.visits[c]) for c in kids) or t.proven[node] != UNKNOWN_P
        states = [int(t.proven[c]) for c in kids]
        if t.proven[node] == WIN_P:
            assert int(t.dist[node]) == 1 + min(int(t.dist[c]) for c in kids if t.proven[c] == LOSS_P)
        elif t.proven[node] == LOSS_P:
            assert all(s == WIN_P for s in states)
            assert int(t.dist[node]) == 1 + max(int(t.dist[c]) for c in kids)
        else:
            assert LOSS_P not in states and UNKNOWN_P in states
        stack.extend(kids)
    return seen


def test_tree_invariants():
    rng = random.Random(11)
    for _, pos in zip(range(3), played_positions(HEX4, rng)):
        eng, _ = search(HEX4, pos, 3000)
        assert check_tree(eng) == int(eng.ctl[NODES])


def test_iteration_limit_and_legal_answer():
    pos = standard_start()
    eng, (code, score, depth, iters, ms, pv, ranked) = search(HEX4, pos, 777)
    assert iters == 777 and ranked is None
    assert move_of_code(code) in moves(HEX4, pos)
    assert pv[0] == code and depth == len(pv) >= 2
    p = pos
    for c in pv:  # the line is playable
        assert move_of_code(c) in moves(HEX4, p)
        p = apply(HEX4, p, move_of_code(c))


def test_stop_flag_stops_an_infinite_search():
    pos = standard_start()
    eng = MctsSearcher(HEX4, nodes_cap=1 << 16)  # fills up: the search goes on without growing
    eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=16))  # compiled before the clock
    out = []
    th = threading.Thread(target=lambda: out.append(
        eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(infinite=True))))
    th.start()
    time.sleep(0.3)
    assert th.is_alive()
    eng.stop()
    th.join(timeout=5)
    assert not th.is_alive() and out
    code, score, depth, iters, ms, pv, _ = out[0]
    assert iters > 0 and move_of_code(code) in moves(HEX4, pos) and not score.proven


@pytest.mark.parametrize("movetime", [30, 150])
def test_movetime(movetime):
    pos = standard_start()
    eng = MctsSearcher(HEX4, nodes_cap=1 << 20)
    eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=16))
    t0 = time.monotonic()
    code, score, depth, iters, ms, pv, _ = eng.rotation(pos.mover, pos.opponent, pos.turn,
                                                        Limit(movetime_ms=movetime))
    wall = (time.monotonic() - t0) * 1000
    assert movetime * 0.9 <= wall <= movetime + 250 and iters > 0


def test_repetitions_score_as_draws():
    """With every child of the root in the game's history, no child is expanded and each
    open one is worth exactly a draw."""
    pos = standard_start()
    kids = children(HEX4, pos)
    hist = [(k.mover, k.opponent, k.turn) for k in kids]
    # the linear weights: their priors leave no child of the start unvisited in 500 iterations
    eng = MctsSearcher(HEX4, nodes_cap=1 << 12, weights=linear_weights(HEX4))
    code, score, *_ = eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=500), hist)
    stats = eng.root_stats()
    assert len(stats) == len(kids)
    open_kids = [st for st in stats if st[3] == UNKNOWN_P]
    assert open_kids and all(st[2] == 0.5 and st[1] > 0 for st in open_kids)
    assert (score.kind, score.value) == ("cp", 0)
    t = eng.tree
    assert all(t.first[c] < 0 for c in range(int(t.first[0]), int(t.first[0]) + int(t.nch[0])))


def test_tree_kept_for_the_next_move():
    """After a move and a reply the searcher goes on from the subtree it had grown there."""
    pos = standard_start()
    eng = MctsSearcher(HEX4, nodes_cap=1 << 18)
    code = eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(nodes=3000))[0]
    mid = apply(HEX4, pos, move_of_code(code))
    reply = eng.principal_line()[1]
    after = apply(HEX4, mid, move_of_code(reply))
    before = [st for st in eng.root_stats() if st[0] == code][0][1]
    grown = eng.tree
    g = [c for c in range(int(grown.first[0]), int(grown.first[0]) + int(grown.nch[0])) if grown.move[c] == code][0]
    sub = [c for c in range(int(grown.first[g]), int(grown.first[g]) + int(grown.nch[g])) if grown.move[c] == reply][0]
    had = int(grown.visits[sub])
    assert 0 < had < before
    hist = [(pos.mover, pos.opponent, pos.turn), (mid.mover, mid.opponent, mid.turn)]
    code2, _, _, iters, *_ = eng.rotation(after.mover, after.opponent, after.turn, Limit(nodes=1000), hist)
    assert iters == 1000 and int(eng.tree.visits[0]) == had + 1000
    assert check_tree(eng) == int(eng.ctl[NODES])  # the copy holds the subtree and nothing else
    assert move_of_code(code2) in moves(HEX4, after)
    eng.clear()
    eng.rotation(after.mover, after.opponent, after.turn, Limit(nodes=1000), hist)
    assert int(eng.tree.visits[0]) == 1000


def test_depth_limit_grows_until_the_line_is_that_deep():
    pos = standard_start()
    eng = MctsSearcher(HEX4, nodes_cap=1 << 18)
    code, score, depth, iters, *_ = eng.rotation(pos.mover, pos.opponent, pos.turn, Limit(depth=6))
    assert depth >= 6 and len(eng.principal_line()) == depth
    assert iters % DEPTH_ROUND == 0 and move_of_code(code) in moves(HEX4, pos)
