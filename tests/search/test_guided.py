"""Guided df-pn (df-pn+, :mod:`solver.search.guide`): initial numbers from the evaluation
change the search order, never an answer — checked against the retrograde databases and
against plain df-pn position by position."""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.db.database import open_db
from solver.game.config import make_config
from solver.game.position import Position
from solver.kernels.code import INVALID
from solver.kernels.dfpn import initial_numbers
from solver.search.guide import make_guide
from solver.search.prover import Prover
from tests.helpers import run


@pytest.mark.parametrize("step,cap", [(50, 8), (1, 0), (7, 3), (100, 1000)])
def test_initial_numbers_against_a_plain_reference(step, cap):
    """Positive integers, 1/1 at an even score, the side the score favours cheaper, capped."""
    for a in range(-3000, 3001, 37):
        pn, dn = initial_numbers(a, step, cap)
        ref_pn = 1 + (min(cap, (-a) // step) if a < 0 else 0)
        ref_dn = 1 + (min(cap, a // step) if a > 0 else 0)
        assert (pn, dn) == (ref_pn, ref_dn)
        assert pn >= 1 and dn >= 1 and min(pn, dn) == 1 and max(pn, dn) <= 1 + cap


def test_a_guide_with_the_network_scores_as_the_engine():
    """The guide's scratch holds the network's float sums (an integer one would cut them)."""
    from solver.engine.tuning import random_opening
    from solver.engine.weights import default_weights
    from solver.game.config import standard_config
    from solver.index import build_geo
    from solver.kernels.evaluate import EBUF, NF, evaluate

    cfg = standard_config()
    w = default_weights(cfg)
    assert len(w) > NF  # base rules on hex(4) play with a network
    guide = make_guide(cfg, True, weights=w)
    geo = build_geo(cfg)
    rng = np.random.default_rng(2)
    for _ in range(30):
        pos, _ = random_opening(cfg, rng, int(rng.integers(0, 8)))
        want = evaluate(pos.mover, pos.opponent, geo, guide.zones, w, np.zeros(EBUF))
        assert evaluate(pos.mover, pos.opponent, geo, guide.zones, guide.w, guide.buf) == want


def test_make_guide_refuses_bad_parameters():
    cfg = make_config("hex3", 3)
    assert make_guide(cfg, False).on == 0
    with pytest.raises(ValueError, match="step"):
        make_guide(cfg, True, step=0)


def _every_position(cfg, db):
    """Every valid position of ``db`` with its database code, in a fixed-seed order."""
    vals = db.values()
    order = np.random.default_rng(7).permutation(vals.shape[0])
    for g in order:
        if vals[g] == INVALID:
            continue
        m, p, s = db.layout.position(int(g))
        yield Position.make(cfg.board, m if s == 0 else p, p if s == 0 else m, s), int(vals[g])


@pytest.mark.parametrize("variants", [{}, {"edge": True}, {"capture": True, "traps_x": "a1", "traps_o": "c3"}])
def test_guided_equals_unguided_on_every_hex2_position(solved_db, variants):
    """hex2 3v3, every position: guided and plain df-pn (one table each, shared across
    positions as a forward solver uses it) give the same win / loss / draw, and both
    equal the database's; where both call a distance exact they agree."""
    from solver.search.check import check_all

    cfg = make_config("hex2", 3, **variants)
    with open_db(solved_db(cfg, (3, 3))) as db:
        rep = check_all(cfg, db, tt_bits=18, guided=True)
        assert rep.ok and rep.positions > 0 and rep.table_checked > 0, rep.wrong[:5]
        plain, guided = Prover(cfg, tt_bits=18), Prover(cfg, tt_bits=18, guided=True)
        n = 0
        for pos, _ in _every_position(cfg, db):
            a = plain.prove(pos, nodes=200_000, refine_nodes=0)
            b = guided.prove(pos, nodes=200_000, refine_nodes=0)
            assert (a.lo, a.hi) == (b.lo, b.hi) and a.resolved, pos.text()
            if a.exact and b.exact:
                assert a.plies == b.plies, pos.text()
            n += 1
        assert n == rep.positions


def test_the_guide_changes_the_search():
    """Not a no-op: on a hex3 3v3 draw the guided search takes another number of nodes to
    the same answer."""
    cfg = make_config("hex3", 3)
    pos = Position("..x/.o../x...o/....../.x..o/.... x")
    a = Prover(cfg, tt_bits=18).prove(pos, nodes=5_000_000)
    b = Prover(cfg, tt_bits=18, guided=True).prove(pos, nodes=5_000_000)
    assert a.result == b.result == "draw" and a.nodes != b.nodes


def test_guided_equals_the_database_on_a_hex3_sample(solved_db):
    """hex3 3v3 base, the first 4,096 positions of the fixed-seed order: every guided
    answer equals the database's, every proof and disproof left in the table is true."""
    from solver.search.check import check_all

    cfg = make_config("hex3", 3)
    with open_db(solved_db(cfg, (3, 3))) as db:
        rep = check_all(cfg, db, tt_bits=20, limit=4096, guided=True)
    assert rep.ok and rep.positions == 4096 and rep.table_checked > rep.positions, rep.wrong[:5]


def test_guided_and_plain_agree_one_by_one_on_hex3(solved_db):
    """hex3 3v3 base, 20 positions of a fixed sample, each with a fresh table: the two
    searches never contradict the database, and where both settle they agree."""
    from solver.kernels.code import result_of

    cfg = make_config("hex3", 3)
    with open_db(solved_db(cfg, (3, 3))) as db:
        sample = [pc for _, pc in zip(range(20), _every_position(cfg, db))]
    both = 0
    for pos, code in sample:
        a = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000, refine_nodes=0)
        b = Prover(cfg, tt_bits=16, guided=True).prove(pos, nodes=100_000, refine_nodes=0)
        want = int(result_of(code)[0])
        for r in (a, b):
            assert r.lo <= want <= r.hi, (pos.text(), want, r.result)
        if a.resolved and b.resolved:
            both += 1
            assert a.result == b.result
    assert both >= 14


def test_cli_prove_guided(capsys, tmp_path):
    pos = "../.o./.o../x.x x"  # hex2 edge: a win in 5
    rc, out, err = run(capsys, "prove", pos, "--edge", "--guided", "--json", "--store", tmp_path / "s")
    assert rc == 0, err
    guided = json.loads(out)
    rc, out, err = run(capsys, "prove", pos, "--edge", "--json", "--no-store")
    assert rc == 0, err
    plain = json.loads(out)
    assert (guided["value"], guided["plies"], guided["exact"]) == (plain["value"], plain["plies"], plain["exact"]) == (
        "win", 5, True)
