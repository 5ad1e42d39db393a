"""The book's graph arithmetic (:mod:`solver.search.bookgraph`) on hand-made and random
graphs: negamax backup of scores against a plain recursive reference, proofs overriding
estimates, cycles cut, drop-out priorities against brute force over every path."""

from __future__ import annotations

import itertools
import random

import pytest

from solver.kernels.code import DRAW_V, LOSS_V, WIN_V
from solver.search import bookgraph

X, O = "../.../..../... x", "../.../..../... o"  # any positions will do: only the side to move is read


def key(i: int) -> bytes:
    return i.to_bytes(16, "big")


def node(turn: int, cp: int | None = None, proof: tuple[int, int, int | None] | None = None, depth: int = 3) -> dict:
    rec = None
    if proof is not None:
        lo, hi, plies = proof
        rec = {"position": "p", "result": "?", "plies": plies, "exact": plies is not None, "best_move": None,
               "nodes": 1, "seconds": 0.0, "stopped": None, "lo": lo, "hi": hi, "lower": plies}
    return {"position": (X, O)[turn], "depth": 0, "moves": None, "proof": rec,
            "engine": None if cp is None else {"kind": "cp", "value": cp, "depth": depth, "nodes": 1, "move": None}}


def link(book: dict, parent: int, *children: int) -> None:
    book[key(parent)]["moves"] = [
        {"move": f"m{c}", "key": key(c).hex(), "position": book[key(c)]["position"]} for c in children]


def random_tree(rng: random.Random, n: int) -> dict:
    """A random tree of ``n`` nodes, sides alternating, every node with an engine score."""
    book = {key(0): node(0, rng.randrange(-300, 300))}
    turns = {0: 0}
    kids: dict[int, list[int]] = {}
    for i in range(1, n):
        parent = rng.randrange(i)
        turns[i] = 1 - turns[parent]
        book[key(i)] = node(turns[i], rng.randrange(-300, 300), depth=rng.randrange(1, 9))
        kids.setdefault(parent, []).append(i)
    for p, cs in kids.items():
        link(book, p, *cs)
    return book


def negamax(book: dict, i: int) -> tuple[int, int]:
    """Reference: (score, depth behind it) by plain recursion over the tree."""
    nd = book[key(i)]
    if not nd["moves"]:
        return nd["engine"]["value"], nd["engine"]["depth"]
    best = None
    for m in nd["moves"]:
        c = int.from_bytes(bytes.fromhex(m["key"]), "big")
        s, d = negamax(book, c)
        if best is None or -s > best[0]:
            best = (-s, d + 1)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_backup_is_negamax_on_random_trees(seed):
    rng = random.Random(seed)
    book = random_tree(rng, 60)
    changed = bookgraph.backup(book, key(0))
    assert changed == set(book)  # every node got its backed-up fields
    for i in range(60):
        s, d = negamax(book, i)
        got = book[key(i)]["score"]
        assert (got["kind"], got["value"], got["depth"]) == ("cp", s, d), i
    assert bookgraph.backup(book, key(0)) == set()  # nothing changes a second time


def test_a_proof_overrides_the_estimate():
    book = {key(0): node(0, 50), key(1): node(1, -400), key(2): node(1, 300, proof=(LOSS_V, LOSS_V, 6)),
            key(3): node(1, 20)}
    link(book, 0, 1, 2, 3)
    bookgraph.backup(book, key(0))
    # child 2 is a proven loss for its mover: the root wins in 7 through it, whatever the estimates say
    assert book[key(2)]["score"] == {"kind": "loss", "value": 6, "depth": 3, "move": None}
    root = book[key(0)]
    assert (root["value"]["result"], root["value"]["plies"]) == ("win", 7)
    assert (root["score"]["kind"], root["score"]["value"], root["score"]["move"]) == ("win", 7, "m2")


@pytest.mark.parametrize("proof,cp,want", [
    ((LOSS_V, DRAW_V, None), 250, ("cp", 0)),  # not-win: at most 0
    ((LOSS_V, DRAW_V, None), -250, ("cp", -250)),
    ((DRAW_V, WIN_V, None), -90, ("cp", 0)),  # not-loss: at least 0
    ((DRAW_V, DRAW_V, None), 400, ("cp", 0)),  # a draw
    ((LOSS_V, WIN_V, None), 400, ("cp", 400)),  # nothing proven
])
def test_half_proofs_bound_the_estimate(proof, cp, want):
    book = {key(0): node(0, cp, proof=proof)}
    bookgraph.backup(book, key(0))
    s = book[key(0)]["score"]
    assert (s["kind"], s["value"]) == want


def test_a_cycle_is_cut_with_the_child_s_own_search():
    """0 -> 1 -> 0 (a pass and a pass back) and 0 -> 2: the cycle child counts with its own
    engine score; no proof rests on a child on the line."""
    book = {key(0): node(0, 10), key(1): node(1, 500), key(2): node(1, -100)}
    link(book, 0, 1, 2)
    link(book, 1, 0)
    bookgraph.backup(book, key(0))
    # 1's only child is the root, on the line: through its own score 10 -> 1 scores -10
    assert book[key(1)]["score"]["value"] == -10
    assert book[key(0)]["score"]["value"] == 100 and book[key(0)]["score"]["move"] == "m2"
    assert book[key(0)]["value"]["result"] == "unknown"


def test_a_proven_child_wins_beside_a_cycle_and_a_missing_child():
    """0 -> 1 -> 0 (a pass and a pass back), 0 -> 2 lost for its mover in 10, 0 -> 3 not in
    the book: one move to a lost child is a win whatever the others are (the standard
    start's pass and e4+3), its distance a bound; without it the root stays its own."""
    book = {key(0): node(0, 10, proof=(DRAW_V, WIN_V, None)), key(1): node(1, -10, proof=(LOSS_V, DRAW_V, None)),
            key(2): node(1, -900, proof=(LOSS_V, LOSS_V, 10))}
    link(book, 0, 1, 2)
    book[key(0)]["moves"].append({"move": "m3", "key": key(3).hex(), "position": O})
    link(book, 1, 0)
    bookgraph.backup(book, key(0))
    v = book[key(0)]["value"]
    assert (v["result"], v["plies"], v["exact"], v["best_move"]) == ("win", 11, False, "m2")
    book[key(2)]["proof"].update(lo=DRAW_V, hi=DRAW_V, plies=None, exact=False)  # a drawn child instead
    bookgraph.backup(book, key(0))
    assert book[key(0)]["value"]["result"] == "not-loss"
    book[key(0)]["proof"].update(lo=LOSS_V, hi=WIN_V)  # its own proof knew nothing: the draw raises it
    bookgraph.backup(book, key(0))
    assert book[key(0)]["value"]["result"] == "not-loss"


def test_symmetric_image_with_the_other_side_to_move():
    """A child's node may hold an image with the other colour to move (a colour-swapping
    symmetry): the side to move of the move's own position decides the sign."""
    book = {key(0): node(0, 0), key(1): node(0, 80)}  # child 1 stored with x to move...
    book[key(0)]["moves"] = [{"move": "a", "key": key(1).hex(), "position": O}]  # ...reached with o to move
    bookgraph.backup(book, key(0))
    assert book[key(0)]["score"]["value"] == -80


def _paths(book: dict, root: int, ply_cost: int) -> dict[int, int]:
    """Brute force: the cheapest cost of every simple path from the root to each leaf."""
    best: dict[int, int] = {}

    def walk(i: int, cost: int, seen: frozenset) -> None:
        nd = book[key(i)]
        if bookgraph.proven(nd):
            return
        if nd["moves"] is None:
            best[i] = min(best.get(i, 1 << 62), cost)
            return
        mine = bookgraph.utility(bookgraph.score_of(nd["score"]))
        for m in nd["moves"]:
            c = int.from_bytes(bytes.fromhex(m["key"]), "big")
            if c in seen:
                continue
            s = bookgraph.score_of(book[key(c)]["score"])
            drop = max(0, mine - bookgraph.utility(bookgraph.through(nd["position"], m["position"], s)))
            walk(c, cost + ply_cost + drop, seen | {c})

    walk(root, 0, frozenset({root}))
    return best


@pytest.mark.parametrize("seed,ply_cost", list(itertools.product(range(4), (0, 30, 200))))
def test_drop_out_priorities_equal_brute_force(seed, ply_cost):
    """On random DAGs (transpositions: a node with several parents): each leaf's priority is
    the cheapest path to it, the order is by priority, a proven leaf is never offered."""
    rng = random.Random(seed)
    n = 40
    turns = [0] + [rng.randrange(2) for _ in range(n - 1)]
    book = {}
    # edges only from lower to higher ids, between opposite sides to move
    for i in range(n):
        proof = (WIN_V, WIN_V, 5) if rng.random() < 0.1 and i else None
        book[key(i)] = node(turns[i], rng.randrange(-500, 500), proof=proof)
    for i in range(n):
        cands = [j for j in range(i + 1, n) if turns[j] != turns[i]]
        if cands and rng.random() < 0.6:
            link(book, i, *rng.sample(cands, min(len(cands), rng.randrange(1, 4))))
    bookgraph.backup(book, key(0))
    order = bookgraph.expansion_order(book, key(0), ply_cost)
    want = _paths(book, 0, ply_cost)
    got = {int.from_bytes(k, "big"): c for c, k in order}
    assert got == want
    assert [c for c, _ in order] == sorted(c for c, _ in order)


def test_principal_line_first_then_side_lines():
    """A drop of 60 costs two plies at a ply cost of 30: the side line's leaf one ply deep
    ties with the main line's leaf three plies deep."""
    book = {key(0): node(0, 0), key(1): node(1, 0), key(2): node(1, 60), key(3): node(0, 0), key(4): node(1, 0)}
    link(book, 0, 1, 2)
    link(book, 1, 3)
    link(book, 3, 4)
    bookgraph.backup(book, key(0))
    order = bookgraph.expansion_order(book, key(0), 30)
    assert order == [(90, key(2)), (90, key(4))]
    order = bookgraph.expansion_order(book, key(0), 100)
    assert [k for _, k in order] == [key(2), key(4)]
    book[key(2)]["engine"]["value"] = 200  # a worse side line: it drops 200
    bookgraph.backup(book, key(0))
    assert [k for _, k in bookgraph.expansion_order(book, key(0), 30)] == [key(4), key(2)]


def test_statistics_and_tree():
    book = {key(0): node(0, 10), key(1): node(1, -10, proof=(WIN_V, WIN_V, 3)), key(2): node(1, 40)}
    link(book, 0, 1, 2)
    bookgraph.backup(book, key(0))
    st = bookgraph.statistics(book, key(0))
    assert (st["nodes"], st["expanded"], st["leaves"], st["proven"], st["open"], st["depth"]) == (3, 1, 2, 1, 2, 1)
    assert st["by_value"]["win"] == 1 and st["by_value"]["unknown"] == 2
    assert st["root"]["best_move"] == "m2" and st["root"]["score"] == {"kind": "cp", "value": -40}
    text = bookgraph.tree_text(book, key(0))
    lines = text.splitlines()
    # best first for the root's mover: m2 (-40 for him) before m1 (a loss in 4)
    assert lines[1].startswith("  m2  unknown  +0.40 d3") and lines[2].startswith("  m1  win in 3  win in 3")
    assert bookgraph.tree_text(book, key(0), 0).count("\n") == 1
