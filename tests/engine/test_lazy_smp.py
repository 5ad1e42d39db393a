"""Searches with helper threads: the shared table's torn entries, proven answers against a
solved database, the limits that keep one thread, and the engine's --threads."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from solver.engine.engine import Engine
from solver.engine.score import Limit
from solver.game.config import make_config, standard_config
from solver.game.position import Position, parse_position
from solver.game.rules import LOSS, ONGOING, WIN, apply, status
from solver.kernels.alphabeta import EXACT, _tt_holds, _tt_store, new_tables
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]


def test_a_torn_entry_reads_as_absent():
    tt = new_tables(8)
    h = np.uint64(0x123456789ABCDEF1)
    i = int(h & np.uint64(255))
    assert not _tt_holds(tt, i, h)  # an empty table holds no key
    _tt_store(tt, h, 7, 55, 6, EXACT, 0, False)
    assert _tt_holds(tt, i, h)
    assert (tt.move[i], tt.score[i], tt.depth[i]) == (7, 55, 6)
    # another thread's write got as far as the score: neither position's entry
    tt.score[i] = -300
    assert not _tt_holds(tt, i, h)


def test_two_threads_prove_only_what_the_database_says(solved_db):
    """hex(3) 3v3 at a time limit on two threads, a small table so that the threads overwrite
    each other's entries: every proven score is the database's value, an exact one its
    distance, and the move keeps a win."""
    cfg = make_config(3, 3)
    from solver.db.database import open_db

    rng = random.Random(11)
    with open_db(solved_db(cfg, (3, 3))) as db:
        vals, layout = db.values(), db.layout
        engine = Engine(cfg, tt_bits=12, threads=2)
        proven = helped = kept = wins = 0
        for g in rng.sample(range(len(vals)), 120):
            m, p, side = layout.position(g)
            x, o = (m, p) if side == 0 else (p, m)
            pos = Position.make(cfg.board, x, o, side)
            if status(cfg, pos) != ONGOING:
                continue
            truth = db.probe(pos)
            engine.new_game()
            r = engine.think(pos, Limit(movetime_ms=20))
            helped += engine.searcher.helpers.nodes > 0
            if r.score.proven:
                proven += 1
                assert r.score.kind == truth.result, (pos.text(), r.score, truth)
                if r.exact:
                    assert r.score.value == truth.plies, (pos.text(), r.score, truth)
                else:
                    assert truth.plies <= r.score.value
            if truth.result == WIN:
                wins += 1
                kept += db.probe(apply(cfg, pos, r.move)).result == LOSS
        assert proven >= 30 and helped >= 30
        assert kept >= 0.95 * wins


def test_node_and_depth_limits_search_on_one_thread():
    cfg = standard_config()
    pos = _an_opening(cfg)
    one = Engine(cfg, threads=1).think(pos, Limit(nodes=20000))
    two = Engine(cfg, threads=2).think(pos, Limit(nodes=20000))
    assert one.source == "engine" and one.nodes > 0
    assert (one.move, one.score, one.nodes) == (two.move, two.score, two.nodes)
    engine = Engine(cfg, threads=2)
    engine.think(pos, Limit(depth=5))
    assert engine.searcher.helpers.nodes == 0
    engine.think(pos, Limit(movetime_ms=50))
    assert engine.searcher.helpers.nodes > 0


def test_the_engine_refuses_no_threads(capsys):
    rc, _, err = run(capsys, "engine", "--threads", "0")
    assert rc == 2 and "--threads 0: at least 1" in err


def _an_opening(cfg) -> Position:
    """The first position of the base openings (no shipped answer settles it)."""
    text = next(line for line in (ROOT / "data" / "openings" / "standard-4ply.txt").read_text().splitlines()
                if line.strip() and not line.startswith("#"))
    return parse_position(text.strip())
