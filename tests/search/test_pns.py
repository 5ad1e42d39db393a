"""df-pn against the retrograde databases, the GHI position, persistence and the CLI."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import numpy as np
import pytest

from solver.game.config import make_config
from solver.db.database import open_db
from solver.search.prover import Prover
from solver.game.position import Position
from solver.game.values import Value
from tests.helpers import run

CASES = [
    ("hex2", 3, {}),
    ("hex2", 4, {}),
    ("hex2", 3, {"edge": True}),
    ("hex2", 4, {"edge": True}),
    ("hex2", 3, {"capture": True, "traps_x": "a1", "traps_o": "c3"}),
    ("hex2", 4, {"edge": True, "capture": True, "traps_x": "a1", "traps_o": "c3"}),
]


@pytest.mark.parametrize("board,balls,variants", CASES)
def test_dfpn_equals_database(solved_db, board, balls, variants):
    """Every position: win / loss / draw equal to the database's, claimed-exact distances
    equal, bounds never below; every proof and disproof left in the table true."""
    from solver.search.check import check_all

    cfg = make_config(board, balls, **variants)
    path = solved_db(cfg, (balls, balls))
    with open_db(path) as db:
        rep = check_all(cfg, db, tt_bits=18)
        assert rep.positions == int(np.count_nonzero(db.values() != 0x4000))
    assert not rep.wrong, rep.wrong[:5]
    assert rep.unresolved == 0, rep.open_positions[:5]
    assert rep.exact > 0 and rep.table_checked > 0 and rep.table_wrong == 0


HEX3 = [
    ({}, 8192),
    # edge: its first draws are the costly ones (they prove most of the rest), so even 512
    # positions take about 3 minutes on one core; CI checks edge df-pn on hex(2) above
    pytest.param({"edge": True}, 4096, marks=pytest.mark.slow),
    ({"capture": True, "traps_x": "a1,e3", "traps_o": "c5,a3"}, 8192),
    pytest.param({}, None, marks=pytest.mark.slow),
    pytest.param({"edge": True}, None, marks=pytest.mark.slow),
    pytest.param({"capture": True, "traps_x": "a1,e3", "traps_o": "c5,a3"}, None, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("variants,limit", HEX3)
def test_dfpn_every_position(solved_db, variants, limit):
    """hex3 3v3: df-pn with one shared table, as a forward solver is used, on the first
    ``limit`` positions of a fixed random order in CI, on every position with -m slow
    (987,120 base / 1,302,035 edge / 4,956,010 capture positions: about 1, 4 and 7
    minutes on one core). Nothing may be
    wrong or left open, and every proof and disproof left in the table must be true."""
    from solver.search.check import check_all

    cfg = make_config("hex3", 3, **variants)
    path = solved_db(cfg, (3, 3))
    with open_db(path) as db:
        rep = check_all(cfg, db, tt_bits=22 if limit else 23, limit=limit)
    assert rep.positions == (limit or rep.positions) and rep.positions > 0
    assert not rep.wrong, rep.wrong[:5]
    assert rep.unresolved == 0, rep.open_positions[:5]
    assert rep.table_checked > rep.positions and rep.table_wrong == 0


def test_audit_catches_a_false_entry(solved_db):
    """The table audit is not vacuous: a disproof planted on a won position is reported."""
    from solver.kernels.answers import audit_table
    from solver.kernels.leaves import DbInfo
    from solver.kernels.table import tt_store

    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        vals = db.values()
        prover = Prover(cfg, tt_bits=16)
        pos = Position("../.o./.o../x.x x")  # a win in 5
        assert prover.prove(pos, nodes=50_000).result == "win"
        args = (prover.geo, db.layout.lay, DbInfo(True, cfg.variable_material, 3, 3), vals, np.zeros(4, dtype=np.int64))
        checked, wrong = audit_table(prover.tt, *args)
        assert checked > 0 and wrong == 0
        k1, k2 = prover.key(pos.mover, pos.opponent, pos.turn, 0)
        i = tt_store(prover.tt, np.uint64(k1), np.uint64(k2), 1, 1, 0xFFFF, 0, -1, 0)
        sw = prover.tt.kw[i] ^ prover.tt.dw[i]
        prover.tt.dw[i] = np.uint64(2)  # a disproof: "the mover does not win", false
        prover.tt.kw[i] = sw ^ np.uint64(2)
        assert audit_table(prover.tt, *args)[1] == 1


def test_check_refuses_other_rules_and_bad_budgets(solved_db):
    from solver.search.check import check_all

    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        with pytest.raises(ValueError, match="other rules"):
            check_all(make_config("hex2", 3), db)
        with pytest.raises(ValueError, match="--limit"):
            check_all(cfg, db, limit=0)
        with pytest.raises(ValueError, match="--tt-bits"):
            check_all(cfg, db, tt_bits=40)


def test_draw_closure_proves_what_dfpn_alone_cannot():
    """A hex3 3v3 edge draw: plain df-pn re-searches its repetition-based disproofs from
    every path and is still open after 300k nodes; with the draw closure (the greatest
    fixpoint over the explored graph) it is proven within 50k."""
    cfg = make_config("hex3", 3, edge=True)
    pos = Position(".../..../...../....../...../xoox x")
    plain = Prover(cfg, tt_bits=18)
    plain.use_closure = False
    assert plain.prove(pos, nodes=300_000).result in ("unknown", "not-win", "not-loss")
    prover = Prover(cfg, tt_bits=18)
    assert prover.prove(pos, nodes=50_000).result == "draw"
    assert prover.closure_stats[3] > 0


@pytest.mark.parametrize("pos, nodes", [(".../..../...../....../...../xoox x", 50_000),
                                        (".../..../..o../x....x/o..../..ox x", 300_000)])
def test_one_thread_search_does_not_follow_the_closures_speed(monkeypatch, pos, nodes):
    """The closure's share of a one-thread search is counted in work, not seconds: the same
    search on a machine where the closure runs slow (another load, a cold cache) expands the
    same nodes and proves the same (counted in seconds, it ran fewer closures there)."""
    from solver.search import prover as prover_mod

    cfg = make_config("hex3", 3, edge=True)
    fast = Prover(cfg, tt_bits=18)
    a = fast.prove(Position(pos), nodes=nodes, refine_nodes=0)
    real = prover_mod.closure

    class Slow:
        signatures = ["compiled"]

        def __call__(self, *args):
            time.sleep(0.05)
            return real.close(*args)

    monkeypatch.setattr(prover_mod, "closure", SimpleNamespace(close=Slow(), new_closure=real.new_closure))
    slow = Prover(cfg, tt_bits=18)
    b = slow.prove(Position(pos), nodes=nodes, refine_nodes=0)
    assert slow.closure_seconds > fast.closure_seconds
    assert (b.result, b.nodes) == (a.result, a.nodes)
    assert list(slow.closure_stats) == list(fast.closure_stats)


def test_draw_closure_leaves_when_told_to_stop():
    """The closure, run beside other threads, leaves at once when ``stop[0]`` is set (the
    root settled elsewhere): it proves and stores nothing, and a later run proves the same
    region as if it had never started."""
    import numpy as np

    cfg = make_config("hex3", 3, edge=True)
    pos = Position(".../..../...../....../...../xoox x")
    twins = [Prover(cfg, tt_bits=18), Prover(cfg, tt_bits=18)]
    for prover in twins:
        prover.use_closure = False
        prover.prove(pos, nodes=20_000, refine_nodes=0)  # an explored, unproven region
    prover, twin = twins
    k1, k2 = prover.key(pos.mover, pos.opponent, pos.turn, 0)
    before = prover.lookup(pos.mover, pos.opponent, pos.turn, 0)
    assert before is not None and before[0] != 0 and before[1] != 0
    assert not prover.close(k1, k2, 1_000_000, np.array([1, 0], dtype=np.int64))
    assert prover.closure_stats[3] == 0
    assert prover.lookup(pos.mover, pos.opponent, pos.turn, 0)[:2] == before[:2]
    # not told to stop: it proves, exactly what the twin's closure proves
    prover.close(k1, k2, 1_000_000)
    twin.close(k1, k2, 1_000_000)
    assert prover.closure_stats[3] == twin.closure_stats[3] > 0


def test_ghi_naive_table_is_wrong():
    """Proving A first leaves, in a naive table, a disproof of a position below B that
    rested on a repetition of A's line; B then reads it and is wrongly called a draw."""
    cfg = make_config("hex2", 3, edge=True)
    a = Position("../o../..o./x.x x")
    b = Position("../.o./.o../x.x x")
    naive = Prover(cfg, tt_bits=16, naive=True)
    assert naive.prove(a, nodes=100_000).result == "win"
    assert naive.prove(b, nodes=100_000).result == "draw"  # wrong
    safe = Prover(cfg, tt_bits=16)
    assert safe.prove(a, nodes=100_000).result == "win"
    r = safe.prove(b, nodes=100_000)
    assert r.result == "win" and r.plies >= 5  # the database: win in 5


def test_database_leaves(solved_db):
    cfg = make_config("hex2", 3, edge=True)
    with open_db(solved_db(cfg, (3, 3))) as db:
        pos = Position("../.o./.o../x.x x")
        prover = Prover(cfg, tt_bits=16, db=db)
        r = prover.prove(pos, nodes=10_000)
        assert (r.result, r.plies) == ("win", 5) and r.exact
        assert prover.stats[4] > 0  # the children were looked up


def test_pass_argument_standard_start():
    from solver.game.config import standard_config
    from solver.game.start import standard_start

    prover = Prover(standard_config(), tt_bits=16)
    assert prover.self_mirror(standard_start())
    r = prover.prove(standard_start(), nodes=2_000)
    assert r.result in ("not-loss", "win", "draw")


def test_persistence_and_resume(tmp_path):
    from solver.search.proofs import ProofStore

    cfg = make_config("hex3", 3)
    pos = Position("..x/.o../x...o/....../.x..o/.... x")
    fresh = Prover(cfg, tt_bits=18).prove(pos, nodes=5_000_000)
    assert fresh.resolved
    # interrupted after a fifth of the work, stored, resumed by a new prover
    first = Prover(cfg, tt_bits=18)
    first.attach(ProofStore(tmp_path / "p", cfg))
    part = first.prove(pos, nodes=max(1, fresh.nodes // 5))
    first.save_result(pos, part)
    first.store.close()
    second = Prover(cfg, tt_bits=18)
    assert second.attach(ProofStore(tmp_path / "p", cfg)) > 0
    rest = second.prove(pos, nodes=5_000_000)
    assert rest.result == fresh.result
    if not part.resolved:
        assert rest.nodes < fresh.nodes
    # a finished proof is answered from the store at once
    second.save_result(pos, rest)
    second.store.close()
    third = Prover(cfg, tt_bits=18)
    third.attach(ProofStore(tmp_path / "p", cfg))
    again = third.prove(pos, nodes=5_000_000)
    assert again.result == fresh.result and again.nodes < 200


def _table_entries(tt) -> set:
    """The entries a checkpoint keeps of a df-pn table, each a tuple of its fields."""
    from solver.kernels.table import tt_export, tt_select

    idx = np.zeros(len(tt.dw), dtype=np.int64)
    idx = idx[: tt_select(tt, 1, 1000, idx)]
    f = [np.zeros(len(idx), np.uint64), np.zeros(len(idx), np.uint64)] + [np.zeros(len(idx), np.int64) for _ in range(6)]
    tt_export(tt, idx, *f)
    return set(zip(*(a.tolist() for a in f)))


def test_table_checkpoint_round_trip_in_chunks(tmp_path, monkeypatch):
    """A checkpoint writes the table's worthwhile entries as a few large records (here
    chunks of 1,000 entries), a new prover reads every one back, a second checkpoint
    replaces the first; a store of one record an entry (as older versions wrote) is read
    and emptied by the next checkpoint; a damaged chunk is refused in one line."""
    from solver.errors import StoreError
    from solver.search import proofs
    from solver.search.proofs import ProofStore

    monkeypatch.setattr(proofs, "CHUNK", 1000)
    cfg = make_config("hex3", 3)
    pos = Position("..x/.o../x...o/....../.x..o/.... x")
    first = Prover(cfg, tt_bits=16)
    first.attach(ProofStore(tmp_path / "p", cfg))
    first.prove(pos, nodes=20_000)
    n = first.checkpoint()
    assert n > 2000  # several chunks
    with first.store.env.begin() as txn:
        assert txn.stat(first.store.ttc)["entries"] == -(-n // 1000)
        assert txn.stat(first.store.tt)["entries"] == 0
    saved = first.store
    kept = _table_entries(first.tt)
    second = Prover(cfg, tt_bits=16)
    second.store = saved
    assert saved.load_table(second.tt) == n
    got = _table_entries(second.tt)
    assert len(got) == n and got == kept  # the worthwhile entries, unchanged
    assert first.checkpoint() == n  # replaced, not added to
    assert saved.load_table(Prover(cfg, tt_bits=16).tt) == n

    # one record an entry: the format before the chunks
    rec = list(got)[:50]
    with saved.env.begin(write=True) as txn:
        txn.drop(saved.ttc, delete=False)
        for k1, k2, pn, dn, dist, lb, best, effort in rec:
            v = proofs.REC.pack(pn, dn, dist, lb, best, effort)
            k = proofs.kbytes(k1, k2)
            txn.put(k, v + proofs.CRC.pack(zlib_crc(v, k)), db=saved.tt)
    old = Prover(cfg, tt_bits=16)
    assert saved.load_table(old.tt) == 50
    assert set(rec) <= _table_entries(old.tt)
    old.store = saved
    old.checkpoint()
    with saved.env.begin() as txn:
        assert txn.stat(saved.tt)["entries"] == 0 and txn.stat(saved.ttc)["entries"] == 1

    # a damaged chunk
    with saved.env.begin(write=True) as txn:
        key, raw = next(iter(txn.cursor(db=saved.ttc)))
        raw = bytearray(raw)
        raw[40] ^= 0x10
        txn.put(key, bytes(raw), db=saved.ttc)
    with pytest.raises(StoreError, match=f"table chunk {key.hex()} fails its checksum"):
        saved.load_table(Prover(cfg, tt_bits=16).tt)
    saved.close()


def test_provers_sharing_a_store_keep_each_others_tables(tmp_path):
    """Two provers checkpointing into one store at once (as ``prove -j``'s worker
    processes do; here one process, so the store is reopened between them, keeping each
    writer's tag) keep their own records; a third that loads both holds the union, and its
    checkpoint takes their place."""
    from solver.search.proofs import ProofStore

    cfg = make_config("hex3", 3)
    path = tmp_path / "p"
    a, b = Prover(cfg, tt_bits=16), Prover(cfg, tt_bits=16)
    a.attach(ProofStore(path, cfg))
    tag_a = a.store.writer
    b.store = None  # b started before a wrote anything: it loaded nothing
    a.prove(Position("..x/.o../x...o/....../.x..o/.... x"), nodes=5_000)
    b.prove(Position("..x/.o../x.o../....../.x..o/.... x"), nodes=5_000)
    a.checkpoint()
    a.store.close()

    def writers(store) -> set:
        with store.env.begin() as txn:
            return {bytes(k[:8]) for k in txn.cursor(db=store.ttc).iternext(values=False)}

    b.store = ProofStore(path, cfg)
    b.checkpoint()
    tag_b = b.store.writer
    assert writers(b.store) == {tag_a, tag_b}
    b.store.close()
    a.store = ProofStore(path, cfg)
    a.store.writer = tag_a
    a.checkpoint()  # again: its own records replaced, b's kept
    assert writers(a.store) == {tag_a, tag_b}
    a.store.close()
    keys = lambda tt: {e[:2] for e in _table_entries(tt)}  # noqa: E731 (a position both hold: one of its two records)
    c = Prover(cfg, tt_bits=18)
    assert c.attach(ProofStore(path, cfg)) == len(_table_entries(a.tt)) + len(_table_entries(b.tt))
    assert keys(c.tt) == keys(a.tt) | keys(b.tt)
    c.checkpoint()
    assert writers(c.store) == {c.store.writer}
    c.store.close()


def zlib_crc(v: bytes, k: bytes) -> int:
    import zlib

    return zlib.crc32(v, zlib.crc32(k))


def test_a_checkpoint_waits_twenty_times_its_own_time(tmp_path, monkeypatch):
    """A checkpoint is due a minute after the last one, or CHECKPOINT_SHARE times as long
    as the last one took where that is longer: a long proof's growing table never takes
    more than a twentieth of its time to save."""
    from solver.search import prover as prover_mod
    from solver.search.proofs import ProofStore

    cfg = make_config("hex3", 3)
    p = Prover(cfg, tt_bits=12)
    assert not p.checkpoint_due()  # no store
    p.attach(ProofStore(tmp_path / "p", cfg))
    now = [1000.0]
    monkeypatch.setattr(prover_mod.time, "monotonic", lambda: now[0])
    p._last_checkpoint, p._checkpoint_took = 1000.0, 0.5
    now[0] = 1000.0 + p.checkpoint_s - 1
    assert not p.checkpoint_due()
    now[0] = 1000.0 + p.checkpoint_s + 1
    assert p.checkpoint_due()
    p._checkpoint_took = 10.0  # a checkpoint of 10 s: the next one 200 s later
    assert not p.checkpoint_due()
    now[0] = 1000.0 + prover_mod.CHECKPOINT_SHARE * 10.0 + 1
    assert p.checkpoint_due()
    p.store.close()


def test_store_rejects_other_rules(tmp_path):
    from solver.search.proofs import ProofStore

    ProofStore(tmp_path / "p", make_config("hex3", 3)).close()
    with pytest.raises(ValueError, match="other rules"):
        ProofStore(tmp_path / "p", make_config("hex3", 3, edge=True))


# ---------------------------------------------------------------------------- CLI


def test_cli_prove_json(capsys, tmp_path):
    rc, out, err = run(capsys, "prove", "../.o./.o../x.x x", "--edge", "--json", "--store", str(tmp_path / "s"))
    assert rc == 0, err
    rec = json.loads(out)
    assert set(rec) == {"position", "value", "plies", "exact", "source", "moves", "best_move", "nodes", "seconds",
                        "stopped"}
    assert rec["stopped"] is None  # proven, distance exact: nothing stopped it
    assert rec["value"] == "win" and rec["plies"] >= 5 and rec["source"] == "proof"


def test_cli_prove_parallel(capsys, tmp_path):
    rc, out, err = run(capsys, "prove", "../.o./.o../x.x x", "--edge", "-j", "2", "--store", str(tmp_path / "s"))
    assert rc == 0, err
    assert "value: win" in out and "nodes/s" in out


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["prove", "xx x"], "row"),
        (["prove", "../.o./.o../x.x x", "--nodes", "0"], "--nodes"),
        (["prove", "../.o./.o../x.x x", "-j", "0"], "-j"),
        (["prove", "../.o./.o../x.x x", "--nodes", "5", "--time", "1"], "not allowed"),
        (["book", "--depth", "-1", "--board", "hex2", "--start", "../.o./.o../x.x x"], "--depth"),
        (["book", "--depth", "1", "--minutes", "-1", "--start", "../.o./.o../x.x x"], "--minutes"),
        (["prove", "../.o./.o../x.x x", "--tt-bits", "99"], "--tt-bits"),
    ],
)
def test_cli_errors_one_line(capsys, tmp_path, argv, msg):
    rc, out, err = run(capsys, *argv, "--store", str(tmp_path / "s"))
    assert rc == 2
    assert err.startswith("rotary: error:") and err.count("\n") == 1 and msg in err


def test_cli_book_and_rerun(capsys, tmp_path):
    args = ["book", "--start", "../.o./.o../x.x x", "--edge", "--depth", "1", "--nodes", "20000",
            "--store", str(tmp_path / "s"), "-q"]
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    data = json.loads((tmp_path / "s" / "book.json").read_text())
    root = data["nodes"][data["root"]]
    assert root["value"]["result"] == "win"
    n1 = len(data["nodes"])
    tree = (tmp_path / "s" / "book.txt").read_text()
    assert tree.splitlines()[0].startswith("win") and "\n  " in tree
    rc, out, err = run(capsys, *args[:5], "2", *args[6:])
    assert rc == 0, err
    data = json.loads((tmp_path / "s" / "book.json").read_text())
    assert len(data["nodes"]) > n1


def test_book_deadline_inside_a_level(tmp_path):
    """The deadline stops a book between positions of a level (and caps each proof), not
    only between levels; a re-run proves what was left."""
    import time

    from solver.search.book import build_book
    from solver.game.config import standard_config
    from solver.game.start import standard_start

    cfg = standard_config()
    t0 = time.monotonic()
    out = build_book(cfg, standard_start(), 2, tmp_path / "s", nodes=10**12, deadline=t0 + 1.0, tt_bits=16)
    assert time.monotonic() - t0 < 15  # without the cap the root alone would search for hours
    assert out["depth"] == 0 and out["partial"][:2] == (1, 0) and out["partial"][2] >= 10
    out = build_book(cfg, standard_start(), 1, tmp_path / "s", nodes=2_000, tt_bits=16)
    assert out["depth"] == 1 and out["partial"] is None
    assert all(n["proof"] is not None for n in out["book"].values())


# ---------------------------------------------------------------------------- distances (refine)

REFINE_CASES = [
    ("hex2", 3, {"edge": True}, 300, 200_000),
    ("hex2", 4, {"edge": True}, 400, 200_000),
    pytest.param("hex3", 3, {}, 300, 200_000, marks=pytest.mark.slow),
    pytest.param("hex3", 3, {"edge": True}, 60, 50_000, marks=pytest.mark.slow),
]


@pytest.mark.parametrize("board,balls,variants,sample,budget", REFINE_CASES)
def test_refine_distances_against_database(solved_db, board, balls, variants, sample, budget):
    """df-pn alone, then refine: lower <= true <= upper always, exact only when equal to
    the database's plies, and refine makes more distances exact."""
    cfg = make_config(board, balls, **variants)
    path = solved_db(cfg, (balls, balls))
    with open_db(path) as db:
        lay = db.layout
        vals = db.values()
        prover = Prover(cfg, tt_bits=18)
        rng = np.random.default_rng(7)
        idx = rng.choice(lay.total, min(sample, lay.total), replace=False)
        bad, decisive, exact_before, exact_after = [], 0, 0, 0
        for g in idx:
            m, p, s = lay.position(int(g))
            pos = Position.make(cfg.board, m if s == 0 else p, p if s == 0 else m, s)
            if db.get_reason(pos) is not None:
                continue
            v = Value.from_code(vals[g])
            res = prover.prove(pos, nodes=200_000, refine_nodes=0)
            if v.result == "draw" or res.result != v.result or res.plies == 0:
                continue  # df-pn's values are checked elsewhere; refine needs a proven win/loss
            decisive += 1
            exact_before += res.exact
            prover.refine(pos, res, budget)
            exact_after += res.exact
            lower = res.lower or 0
            ok = lower <= v.plies <= res.plies and (not res.exact or res.plies == v.plies == lower)
            if not ok:
                bad.append((pos.text(), str(v), res.text(), lower))
    print(f"{board} {balls}v{balls} {variants}: {decisive} decisive, exact {exact_before} -> {exact_after}")
    assert decisive > 0
    assert not bad, bad[:5]
    assert exact_after > exact_before


def test_prove_spends_unused_budget_on_refine():
    cfg = make_config("hex2", 3, edge=True)
    pos = Position("../.o./.o../x.x x")
    bound = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000, refine_nodes=0)
    assert bound.result == "win" and not bound.exact and bound.plies >= 5
    r = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000)
    assert (r.result, r.plies, r.exact) == ("win", 5, True) and r.nodes <= 100_000
    # a loss (the database: loss in 4): df-pn alone bounds it by 6, refine shows 4
    pos = Position("../.../..o./x.o x")
    bound = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000, refine_nodes=0)
    assert bound.result == "loss" and not bound.exact and bound.plies >= 4
    r = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000)
    assert (r.result, r.plies, r.exact) == ("loss", 4, True)
    # no budget left: the bound stays a bound
    r = Prover(cfg, tt_bits=16).prove(pos, nodes=100_000, refine_nodes=1)
    assert r.result == "loss" and not r.exact and r.lower <= 4 <= r.plies


def _grow_store(path: str, n: int) -> None:
    """In another process: open the store with room and write past the first one's map."""
    import os

    from solver.search.proofs import ProofStore

    os.environ["ROTARY_MAP_MAX"] = "64M"
    with ProofStore(path, make_config("hex3", 3)) as store:
        store.put_many("results", [(i.to_bytes(16, "big"), {"pad": "x" * 2000}) for i in range(n)])


def test_a_store_grown_by_another_process_is_still_written_and_read(tmp_path, monkeypatch):
    """Two proofs sharing a store: when one grows the map past the other's
    (``MDB_MAP_RESIZED``), the other adopts the new size and goes on, reading and writing,
    instead of stopping with "database contents grew beyond environment mapsize"."""
    import multiprocessing

    from solver.search.proofs import ProofStore

    monkeypatch.setenv("ROTARY_MAP_MAX", "1M")
    cfg = make_config("hex3", 3)
    store = ProofStore(tmp_path / "p", cfg)
    store.put("results", b"k" * 16, {"a": 1})

    def grow(n: int) -> None:
        child = multiprocessing.get_context("spawn").Process(target=_grow_store, args=(str(tmp_path / "p"), n))
        child.start()
        child.join(120)
        assert child.exitcode == 0

    grow(2000)
    assert (tmp_path / "p" / "data.mdb").stat().st_size > 2 << 20  # beyond this process's map
    store.put("results", b"j" * 16, {"b": 2})  # a write first
    grow(8000)
    assert store.get("results", (5).to_bytes(16, "big")) == {"pad": "x" * 2000}  # a read first
    assert store.get("results", b"j" * 16) == {"b": 2} and len(store.items("results")) == 8002
    store.close()
