"""Proof trees: built from proofs, checked by the plain-Python rules alone, the standard
start's published tree among them; a damaged tree fails the check."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

from solver.db.database import open_db
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import apply, parse_move
from solver.game.start import standard_start
from solver.game.values import Value
from solver.kernels.code import INVALID
from solver.search.prover import Prover
from solver.search.tree import TreeError, proof_line, proof_tree, write_tree
from solver.search.tree_check import TreeFileError, check_tree, check_tree_file, read_tree
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "data" / "proofs" / "standard-start.jsonl"
WIN5 = "../.o./.o../x.x x"  # hex2 edge: a win in 5
LOSS4 = "../.../..o./x.o x"  # hex2 edge: a loss in 4


def small_tree(text: str = WIN5) -> dict:
    cfg = make_config("hex2", edge=True)
    prover = Prover(cfg, tt_bits=16)
    pos = Position(text)
    return proof_tree(prover, pos, prover.prove(pos, nodes=200_000))


def faults(tree: dict) -> list[str]:
    return check_tree(tree["header"], tree["nodes"]).faults


# ---------------------------------------------------------------------------- the published tree


def test_published_standard_start_tree():
    """data/proofs/standard-start.jsonl: light's win in 11 from the standard start, every
    node checked by the rules (a few hundred milliseconds)."""
    rep = check_tree_file(PUBLISHED)
    assert rep.ok, rep.faults
    header, nodes = read_tree(PUBLISHED)
    assert header["position"] == standard_start().text() and header["result"] == "win" and header["winner"] == "x"
    assert rep.plies == 11 and rep.nodes == len(nodes) == header["nodes"] and rep.finished > 0
    assert nodes[0]["move"] == "e4+3" and nodes[nodes[0]["child"]]["plies"] == 10


def test_published_tree_after_e4_5():
    """data/proofs/standard-start-after-e4+5.jsonl.gz: after light's e4+5, dark wins in 15
    (the slow test of tests/search/test_limits.py checks that he does not within 13)."""
    path = PUBLISHED.with_name("standard-start-after-e4+5.jsonl.gz")
    rep = check_tree_file(path)
    assert rep.ok, rep.faults
    header, nodes = read_tree(path)
    cfg = standard_config()
    start = standard_start()
    after = apply(cfg, start, parse_move(cfg, start, "e4+5"))
    assert header["position"] == after.text() and header["result"] == "win" and header["winner"] == "o"
    assert rep.plies == 15 and rep.nodes == len(nodes) == header["nodes"] and rep.finished > 0


# ---------------------------------------------------------------------------- small positions


@pytest.mark.parametrize("text,result,plies", [(WIN5, "win", 5), (LOSS4, "loss", 4)])
def test_small_trees_check(tmp_path, text, result, plies):
    tree = small_tree(text)
    assert tree["header"]["result"] == result and tree["header"]["plies"] == plies
    for name in ("t.jsonl", "t.jsonl.gz"):
        write_tree(tree, tmp_path / name)
        rep = check_tree_file(tmp_path / name)
        assert rep.ok and rep.plies == plies and rep.nodes == len(tree["nodes"]), rep.faults


@pytest.mark.parametrize("board,balls,variants,least", [("hex2", 3, {"edge": True}, 1), ("hex3", 2, {}, 7)])
def test_tree_distances_equal_the_database(solved_db, board, balls, variants, least):
    """Trees of a fixed sample of won and lost positions (hex2 3v3 edge; hex3 2v2 base, at
    least 7 plies): they check, and every node's distance is the retrograde database's, for
    the side to move at that node."""
    cfg = make_config(board, balls, **variants)
    with open_db(solved_db(cfg, (balls, balls))) as db:
        vals, lay = db.values(), db.layout
        prover = Prover(cfg, tt_bits=18)
        order = np.random.default_rng(5).permutation(vals.shape[0])
        built = 0
        for g in order[vals[order] != INVALID]:
            v = Value.from_code(vals[g])
            if v.result == "draw" or v.plies < least:
                continue
            m, p, s = lay.position(int(g))
            pos = Position.make(cfg.board, m if s == 0 else p, p if s == 0 else m, s)
            tree = proof_tree(prover, pos, prover.prove(pos, nodes=200_000))
            assert not faults(tree), faults(tree)[:3]
            winner = "xo".index(tree["header"]["winner"])
            for node in tree["nodes"]:
                n = Position(node["position"])
                want = db.probe(n)
                assert want.result == ("win" if n.turn == winner else "loss"), node
                assert want.plies == node["plies"], node
            built += 1
            if built == 20:
                break
    assert built == 20


def test_principal_line_follows_the_tree():
    cfg = make_config("hex2", edge=True)
    prover = Prover(cfg, tt_bits=16)
    pos = Position(WIN5)
    res = prover.prove(pos, nodes=200_000)
    line = proof_line(prover, pos, res, 20)
    assert len(line) == 5
    assert proof_line(prover, pos, res, 2) == line[:2]


def test_no_tree_without_an_exact_proof():
    cfg = make_config("hex2", edge=True)
    prover = Prover(cfg, tt_bits=16)
    pos = Position(WIN5)
    with pytest.raises(TreeError, match="exact distance.*stopped: node budget"):
        proof_tree(prover, pos, prover.prove(pos, nodes=20))


# ---------------------------------------------------------------------------- damage is found


def loser_node(tree: dict) -> dict:
    return next(n for n in tree["nodes"] if "replies" in n and len(n["replies"]) > 1)


def test_damaged_trees_fail():
    tree = small_tree()
    assert not faults(tree)

    t = copy.deepcopy(tree)  # a reply of the loser dropped
    node = loser_node(t)
    gone = node["replies"].pop()
    assert any("missing" in f and gone["moves"][0] in f for f in faults(t))

    t = copy.deepcopy(tree)  # one move of a group dropped
    node = next(n for n in t["nodes"] if "replies" in n and any(len(r["moves"]) > 1 for r in n["replies"]))
    next(r for r in node["replies"] if len(r["moves"]) > 1)["moves"].pop()
    assert any("missing" in f for f in faults(t))

    t = copy.deepcopy(tree)  # a wrong distance
    t["nodes"][0]["plies"] += 2
    t["header"]["plies"] += 2
    assert any("1 + its child's" in f for f in faults(t))

    t = copy.deepcopy(tree)  # a loser's distance too short
    node = loser_node(t)
    node["plies"] -= 2
    assert any("longest reply" in f for f in faults(t))

    t = copy.deepcopy(tree)  # an illegal move
    t["nodes"][0]["move"] = "a1+1"
    assert any("move 'a1+1'" in f for f in faults(t))

    t = copy.deepcopy(tree)  # a legal move that leads elsewhere than its child
    root = Position(t["nodes"][0]["position"])
    from solver.game.rules import moves

    other = next(m.text(root.board) for m in moves(make_config("hex2", edge=True), root)
                 if m.text(root.board) != t["nodes"][0]["move"] and m.k != 0)
    t["nodes"][0]["move"] = other
    assert any("leads to" in f for f in faults(t))

    t = copy.deepcopy(tree)  # a leaf that is not a finished game
    leaf = next(n for n in t["nodes"] if "move" not in n and "replies" not in n)
    leaf["position"] = t["nodes"][0]["position"]
    assert faults(t)

    t = copy.deepcopy(tree)  # a node nobody reaches
    t["nodes"].append(dict(t["nodes"][-1], id=len(t["nodes"])))
    t["header"]["nodes"] += 1
    assert any("not reachable" in f for f in faults(t))


def test_unreadable_files_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "rotary-proof-tree", "version": 1}\n{not json\n')
    with pytest.raises(TreeFileError, match="line 2 is not JSON"):
        read_tree(bad)
    bad.write_text('{"hello": 1}\n')
    with pytest.raises(TreeFileError, match="not a proof tree"):
        read_tree(bad)


# ---------------------------------------------------------------------------- command line


def test_cli_prove_tree_and_check_tree(capsys, tmp_path):
    out_file = tmp_path / "t.jsonl.gz"
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--no-store", "--tree", out_file)
    assert rc == 0, err
    assert "value: win in 5 for x" in out and "proof tree:" in out
    rc, out, err = run(capsys, "check-tree", out_file)
    assert rc == 0 and out.startswith("OK ") and "x wins within 5 plies" in out
    rc, out, err = run(capsys, "check-tree", out_file, "--json")
    rec = json.loads(out)
    assert rc == 0 and rec["ok"] and rec["plies"] == 5 and rec["faults"] == []
    # damaged: exit status 1 and the fault named
    header, nodes = read_tree(out_file)
    loser_node({"nodes": nodes})["replies"].pop()
    damaged = tmp_path / "d.jsonl"
    write_tree({"header": header, "nodes": nodes}, damaged)
    rc, out, err = run(capsys, "check-tree", damaged)
    assert rc == 1 and out.startswith("FAILED ") and "missing" in out
    # not a tree / not proven: one line, exit status 2
    (tmp_path / "x.jsonl").write_text("hello\n")
    rc, out, err = run(capsys, "check-tree", tmp_path / "x.jsonl")
    assert rc == 2 and err.startswith("rotary: error:") and err.count("\n") == 1
    rc, out, err = run(capsys, "prove", WIN5, "--edge", "--no-store", "--nodes", 20, "--tree", tmp_path / "n.jsonl")
    assert rc == 2 and "exact distance" in err and err.count("\n") == 1
