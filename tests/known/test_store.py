"""The shipped store of known values (data/known/, :mod:`solver.known`): it is what its
sources say — every node of every proof tree (each tree checked by the rules, as ``rotary
check-tree`` checks it), rebuilt bit for bit by scripts/build_known.py — and, built the
same way from a small book and tree, it agrees with a solved database on every position
both hold. A damaged file is refused; symmetric images share one record."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from solver.db.database import open_db
from solver.errors import StoreError
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import apply, moves
from solver.game.start import standard_start
from solver.game.values import Value
from solver.known.build import build_store
from solver.known.canon import canonical
from solver.known.store import KnownStore
from solver.search.tree_check import check_tree_file, read_tree

ROOT = Path(__file__).resolve().parents[2]
KNOWN = ROOT / "data" / "known"


def test_store_holds_every_tree_node_with_its_proven_value():
    store = KnownStore(KNOWN)
    manifest = json.loads((KNOWN / "manifest.json").read_text())
    trees = [s["name"] for f in manifest["files"] for s in f["sources"] if s["kind"] == "proof tree"]
    assert sorted(trees) == sorted(p.name for p in (ROOT / "data" / "proofs").iterdir())
    for name in trees:
        path = ROOT / "data" / "proofs" / name
        report = check_tree_file(path)
        assert report.ok, report.faults
        header, nodes = read_tree(path)
        cfg = make_config(header["rules"]["board"])
        winner = "xo".index(header["winner"])
        for rec in nodes:
            pos = Position(rec["position"])
            k = store.get(cfg, pos)
            assert k is not None and k.source == "proof", rec
            assert k.value == Value("win" if pos.turn == winner else "loss", rec["plies"]), (rec, k)


def test_store_is_rebuilt_bit_for_bit_from_its_sources(tmp_path):
    """scripts/build_known.py --check: a fresh build from data/proofs and data/books is
    the store in data/known, file for file (the manifest holds every file's SHA-256)."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_known.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    manifest = json.loads((KNOWN / "manifest.json").read_text())
    assert sum(f["bytes"] for f in manifest["files"]) < 3_000_000  # a few MB at most
    assert {f["name"] for f in manifest["files"]} >= {"hex4-base.jsonl.gz", "hex4-capture.jsonl.gz", "hex4-edge.jsonl.gz"}


def test_first_ply_of_the_standard_start():
    """The three settled first-ply positions (docs/pns.md): after e4+3 dark loses in 10,
    after the pass (any of the eight rotations that change nothing) he wins in 11, after
    e4+5 he wins in 15; the start itself is light's win in 11."""
    store, cfg, start = KnownStore(KNOWN), standard_config(), standard_start()
    assert store.get(cfg, start).value == Value("win", 11)
    seen = {}
    for mv in moves(cfg, start):
        k = store.get(cfg, apply(cfg, start, mv))
        if k is not None and k.value.proven:
            seen[mv.text(cfg.board)] = str(k.value)
    passes = {m: "win in 11" for m in ["d3+0", "e4+0"] + [f"f3+{k}" for k in range(6)]}
    assert seen == {"e4+3": "loss in 10", "e4+5": "win in 15", **passes}


def test_symmetric_images_share_one_key():
    rng = random.Random(5)
    for cfg in (make_config("hex3"), standard_config(capture=True), standard_config(edge=True)):
        from solver.game.config import symmetry_classes

        plain, swapping = symmetry_classes(cfg)
        b = cfg.board
        for _ in range(30):
            pts = rng.sample(range(b.size), 8)
            x = sum(1 << p for p in pts[:4])
            o = sum(1 << p for p in pts[4:])
            pos = Position.make(b, x, o, rng.randrange(2))
            key = canonical(cfg, pos)
            for s in plain:
                assert canonical(cfg, Position.make(b, b.map_bits(s, x), b.map_bits(s, o), pos.turn)) == key
            for s in swapping:
                assert canonical(cfg, Position.make(b, b.map_bits(s, o), b.map_bits(s, x), 1 - pos.turn)) == key


def test_a_damaged_file_is_refused(tmp_path, monkeypatch, capsys):
    from tests.helpers import run

    copy = tmp_path / "known"
    shutil.copytree(KNOWN, copy)
    f = copy / "hex4-base.jsonl.gz"
    raw = bytearray(f.read_bytes())
    raw[len(raw) // 2] ^= 1
    f.write_bytes(bytes(raw))
    with pytest.raises(StoreError, match="fails its checksum"):
        KnownStore(copy).get(standard_config(), standard_start())
    monkeypatch.setenv("ROTARY_KNOWN", str(copy))
    rc, out, err = run(capsys, "query", standard_start().text())
    assert rc == 2 and "fails its checksum" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------------- against a database


@pytest.fixture(scope="module")
def small_store(tmp_path_factory, solved_db):
    """A store built as the shipped one is, from a hex(3) 2v2 opening book (full width, two
    plies) and a proof tree of a hex(3) 2v2 win; and the solved database."""
    from solver.search.book import build_book, export_json
    from solver.search.proofs import store_rules
    from solver.search.prover import Prover
    from solver.search.tree import proof_tree, write_tree

    cfg = make_config("hex3")
    db = solved_db(make_config("hex3", 2), (2, 2))
    tmp = tmp_path_factory.mktemp("known")
    start = Position(".../..o./.o.../x.x.../...../.... x")  # a win in 11 (docs/json.md)
    out = build_book(cfg, start, 2, tmp / "proofs", nodes=20_000, tt_bits=16, engine_nodes=500)
    export_json(out["book"], out["root"], tmp / "book.json", store_rules(cfg))
    prover = Prover(cfg, tt_bits=18)
    write_tree(proof_tree(prover, start, prover.prove(start, nodes=500_000)), tmp / "win.jsonl")
    build_store([tmp / "win.jsonl"], [tmp / "book.json"], tmp / "known")
    return KnownStore(tmp / "known"), db, cfg


def test_small_store_agrees_with_the_database(small_store):
    store, db_path, cfg = small_store
    with open_db(db_path) as db:
        table = store.table(cfg)
        assert len(table) > 50
        checked = 0
        for text, k in table.items():
            truth = db.probe(Position(text))
            v = k.value
            if v.result == "unknown":
                continue
            checked += 1
            if v.proven:
                assert v.result == truth.result, (text, v, truth)
                if v.plies is not None:
                    assert v.plies == truth.plies if v.exact else v.plies >= truth.plies, (text, v, truth)
            else:
                assert truth.result != {"not-win": "win", "not-loss": "loss"}[v.result], (text, v, truth)
        assert checked > 50
