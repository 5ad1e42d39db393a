"""df-pn on several threads over one table (:mod:`solver.search.parallel`): the same answers
as one thread and as the retrograde databases, whatever the threads' schedule; the
lockless table never lets a torn record through; ``--threads`` on the command line."""

from __future__ import annotations

import json
import threading
from functools import partial

import numpy as np
import pytest
from numba import njit

from solver.db.database import open_db
from solver.game.config import make_config
from solver.game.position import Position
from solver.kernels.dfpn import dfpn_thread
from solver.kernels.table import new_tt, tt_count, tt_probe, tt_store
from solver.search import parallel
from solver.search.prover import Prover
from tests.helpers import run
from tests.search.test_guided import _every_position

# a few hex(3) 3v3 edge positions one thread settles in 0.2 to 1 M nodes (scripts/bench_guided.py)
HEX3_EDGE = [
    (".../o.xx/.o.../.....x/...o./.... o", "win"),
    (".../x.../..o../....ox/....x/..o. o", "win"),
    ("x../..../.o.../ox..../...x./o... x", "draw"),
]


def _schedule(monkeypatch, spin: int, seed: int) -> None:
    """Every prover made from here on runs its threads with these random busy-waits and
    tie-break seed (:class:`solver.search.parallel.Threads`)."""
    monkeypatch.setattr(parallel, "Threads", partial(parallel.Threads, spin=spin, seed=seed))


def _clean(prover: Prover) -> None:
    """After a search no thread is on any entry: the thread counts and the paths' counters are empty."""
    assert np.all(prover.tt.busy == 0)
    for par in prover.threads_state.pars:
        assert np.all(par.path == 0)


# ---------------------------------------------------------------------------- the table


@njit(nogil=True)
def _hammer(tt, seed, rounds, keys, bad):
    """Store and probe records whose fields are a function of their key, in a table far too
    small for them; count probes that accept a record whose fields are not its key's."""
    x = np.uint64(seed)
    for _ in range(rounds):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        k = np.int64(x % np.uint64(keys)) + 1
        k1 = np.uint64(k)  # a valid key: the mover's points 0..23, the opponent's 24..47
        k2 = np.uint64(k * 977 % 16_777_213) << np.uint64(24)
        if x & np.uint64(1):
            tt_store(tt, k1, k2, k % 1000 + 1, k % 777 + 1, 0xFFFF, k % 50, k % 300, 1)
        else:
            i, pn, dn, dist, lb = tt_probe(tt, k1, k2)
            if i >= 0 and (pn != k % 1000 + 1 or dn != k % 777 + 1 or dist != 0xFFFF or lb != k % 50):
                bad[0] += 1


def test_concurrent_writers_never_show_a_torn_record():
    tt = new_tt(6, checked=True, npoints=39)  # 64 entries
    bads = [np.zeros(1, dtype=np.int64) for _ in range(3)]
    _hammer(tt, 1, 10, 500, bads[0])
    threads = [threading.Thread(target=_hammer, args=(tt, 7 + t, 3_000_000, 500, bads[t])) for t in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(int(b[0]) for b in bads) == 0
    assert tt_count(tt) > 0


# ---------------------------------------------------------------------------- the search


def test_the_stop_flag_ends_a_thread_at_once():
    """A thread whose stop flag is already set leaves after its first node."""
    cfg = make_config("hex3", 3, edge=True)
    prover = Prover(cfg, tt_bits=16, threads=2)
    th = prover.threads_state
    pos = Position(HEX3_EDGE[2][0])
    th.ctl[0] = 1
    rc = dfpn_thread(th.ctx[1], th.stacks[1], np.uint64(pos.mover), np.uint64(pos.opponent), pos.turn, 0, 10**6,
                     th.outs[1], th.guides[1], th.pars[1])
    assert rc == 0 and th.stats[1][0] == 1 and th.outs[1][0] != 0 and th.outs[1][1] != 0
    _clean(prover)


def test_threads_give_the_one_thread_values_on_hex3_edge(monkeypatch):
    """Two hex(3) 3v3 edge positions (a win, a draw), each from an empty table, on two
    threads with random busy-waits: the same values as one thread."""
    _schedule(monkeypatch, 40, 5)
    cfg = make_config("hex3", 3, edge=True)
    for text, value in HEX3_EDGE[::2]:
        one = Prover(cfg, tt_bits=21).prove(Position(text), nodes=3_000_000, refine_nodes=0)
        many = Prover(cfg, tt_bits=21, threads=2)
        r = many.prove(Position(text), nodes=3_000_000, refine_nodes=0)
        assert one.result == r.result == value, text
        _clean(many)


@pytest.mark.slow
@pytest.mark.parametrize("threads,spin,seed", [(2, 0, 0), (3, 40, 5), (2, 200, 11)])
def test_threads_give_the_one_thread_distances_on_hex3_edge(monkeypatch, threads, spin, seed):
    """The same, refined: distances made exact are equal too."""
    _schedule(monkeypatch, spin, seed)
    cfg = make_config("hex3", 3, edge=True)
    for text, value in HEX3_EDGE:
        one = Prover(cfg, tt_bits=20).prove(Position(text), nodes=3_000_000, refine_nodes=3_000_000)
        many = Prover(cfg, tt_bits=20, threads=threads)
        r = many.prove(Position(text), nodes=3_000_000, refine_nodes=3_000_000)
        assert one.result == r.result == value, text
        if value != "draw":
            assert one.exact and r.exact and one.plies == r.plies, text
        _clean(many)


@pytest.mark.parametrize("balls,variants,schedules", [
    (3, {}, [(2, 30, 1), (3, 60, 2)]),
    (3, {"edge": True}, [(2, 30, 1), (3, 60, 2)]),
    (4, {"edge": True}, [(3, 20, 3)]),
    pytest.param(4, {}, [(2, 0, 0), (3, 60, 4)], marks=pytest.mark.slow),
    pytest.param(4, {"edge": True}, [(2, 0, 0), (2, 200, 5)], marks=pytest.mark.slow),
])
def test_threads_equal_the_database_on_every_hex2_position(monkeypatch, solved_db, balls, variants, schedules):
    """hex2 3v3 (base, edge) and 4v4 (edge; base with -m slow), every position, one shared
    table as a forward solver uses it (solver.search.check), on two or three threads with
    random busy-waits: every answer equals the database's, every claimed-exact distance its
    plies, every proof and disproof left in the table is true."""
    from solver.search.check import check_all

    cfg = make_config("hex2", balls, **variants)
    with open_db(solved_db(cfg, (balls, balls))) as db:
        for threads, spin, seed in schedules:
            _schedule(monkeypatch, spin, seed)
            rep = check_all(cfg, db, tt_bits=18, threads=threads)
            assert rep.ok and rep.positions > 0 and rep.table_checked > 0, rep.wrong[:5]
            assert rep.exact > 0


def test_threads_equal_one_thread_position_by_position(monkeypatch, solved_db):
    """hex2 3v3 edge, 200 positions each with a table of its own: two threads and one give
    the same value and, where both are exact, the same distance (and both the database's)."""
    from solver.kernels.code import result_of

    _schedule(monkeypatch, 20, 3)
    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        n = 0
        for pos, code in _every_position(cfg, db):  # the first 200 of a fixed-seed order
            a = Prover(cfg, tt_bits=12).prove(pos, nodes=200_000)
            b = Prover(cfg, tt_bits=12, threads=2).prove(pos, nodes=200_000)
            assert (a.lo, a.hi) == (b.lo, b.hi) and a.resolved, pos.text()
            want, plies = (int(v) for v in result_of(code))
            assert a.lo == want
            if a.exact and b.exact:
                assert a.plies == b.plies == plies, pos.text()
            n += 1
            if n == 200:
                break
    assert n == 200


def test_threads_equal_the_database_on_a_hex3_sample(monkeypatch, solved_db):
    """hex3 3v3 base, the first 1,024 positions of the fixed-seed order, on two threads with
    random busy-waits: every answer the database's, every table entry true."""
    from solver.search.check import check_all

    _schedule(monkeypatch, 30, 4)
    cfg = make_config("hex3", 3)
    with open_db(solved_db(cfg, (3, 3))) as db:
        rep = check_all(cfg, db, tt_bits=20, limit=1024, threads=2)
    assert rep.ok and rep.positions == 1024 and rep.table_checked > rep.positions, rep.wrong[:5]


@pytest.mark.slow
@pytest.mark.parametrize("variants,threads", [({"edge": True}, 2), ({"capture": True, "traps_x": "a1,e3", "traps_o": "c5,a3"}, 3)])
def test_threads_equal_the_database_on_hex3_slow(monkeypatch, solved_db, variants, threads):
    """hex3 3v3 edge and capture, 4,096 positions each, on two and three threads."""
    from solver.search.check import check_all

    _schedule(monkeypatch, 10, 6)
    cfg = make_config("hex3", 3, **variants)
    with open_db(solved_db(cfg, (3, 3))) as db:
        rep = check_all(cfg, db, tt_bits=21, limit=4096, threads=threads)
    assert rep.ok and rep.positions == 4096, rep.wrong[:5]


def test_prover_refuses_bad_thread_counts():
    cfg = make_config("hex2", 3)
    for bad in (0, -1, parallel.MAX_THREADS + 1):
        with pytest.raises(ValueError, match="threads"):
            Prover(cfg, threads=bad)
    with pytest.raises(ValueError, match="naive"):
        Prover(cfg, threads=2, naive=True)


# ---------------------------------------------------------------------------- the CLI


def test_cli_prove_threads(capsys, tmp_path):
    pos = "../.o./.o../x.x x"  # hex2 edge: a win in 5
    rc, out, err = run(capsys, "prove", pos, "--edge", "--json", "--no-store")
    assert rc == 0, err
    rc, out2, err = run(capsys, "prove", pos, "--edge", "--json", "--no-store", "--threads", "3")
    assert rc == 0, err
    one, many = json.loads(out), json.loads(out2)
    assert (one["value"], one["plies"], one["exact"]) == (many["value"], many["plies"], many["exact"]) == ("win", 5, True)


@pytest.mark.parametrize("value", ["0", "-2", "65", "x", "1.5"])
def test_cli_bad_threads_one_line(capsys, tmp_path, value):
    rc, out, err = run(capsys, "prove", "../.o./.o../x.x x", "--edge", "--threads", value, "--store", tmp_path / "s")
    assert rc == 2
    assert err.startswith("rotary: error:") and err.count("\n") == 1 and "--threads" in err
