"""The viewer's proof trees and book marks: the lookup of a tree's nodes (the published
standard-start tree, and a hex(2) tree made by ``rotary prove --tree`` walked against the
rules), ``/api/position`` and the page with ``--tree``, bad tree files, and the moves of an
opening-book answer that lead into the book."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("flask")

from solver.game.config import make_config, standard_config  # noqa: E402
from solver.game.config import symmetry_classes  # noqa: E402
from solver.game.position import Position  # noqa: E402
from solver.game.rules import ONGOING, WIN, apply, moves, parse_move, status  # noqa: E402
from solver.game.start import standard_start  # noqa: E402
from solver.search.tree_check import TreeFileError  # noqa: E402
from solver.view import trees as trees_mod  # noqa: E402
from solver.view.trees import load_tree, load_trees  # noqa: E402
from tests.helpers import run  # noqa: E402
from tests.view.test_web import viewer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "data" / "proofs" / "standard-start.jsonl"
SCHEMA = ROOT / "docs" / "answer.schema.json"
WIN5 = "../.o./.o../x.x x"  # hex2 edge: light wins in 5
START = standard_start().text()


class Marks(HTMLParser):
    """What a test reads off a page: the move links, the tree section's replies, the hint on the board."""

    def __init__(self, html: str):
        super().__init__()
        self.moves, self.replies, self.hints, self.tree, self.tags, self.titles = [], [], [], [], [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and "data-move" in a:
            self.moves.append(a)
        if tag == "li" and "data-reply" in a:
            self.replies.append(a)
        if "data-hint-move" in a:
            self.hints.append(a["data-hint-move"])
        if tag == "section" and a.get("id") == "tree":
            self.tree.append(a)
        if tag == "span" and "tag" in a.get("class", "").split():
            self.tags.append(a["class"])
            self.titles.append(a.get("title", ""))


def play(cfg, pos: Position, move: str) -> Position:
    return apply(cfg, pos, parse_move(cfg, pos, move))


def walk(trees, cfg, pos: Position, winner: int, budget: int) -> int:
    """Every line from ``pos``: the winner plays the tree's move, the loser every legal move
    (read from the rules); each line must end in a game the rules say the winner has won,
    within the tree's distance. The longest line's length."""
    if status(cfg, pos) != ONGOING:
        assert (status(cfg, pos) == WIN) == (pos.turn == winner), pos.text()
        return 0
    node = trees.lookup(cfg, pos)
    assert node is not None and node["plies"] <= budget, pos.text()
    if pos.turn == winner:
        child = play(cfg, pos, node["move"])
        assert child.text() == node["position"]
        return 1 + walk(trees, cfg, child, winner, node["plies"] - 1)
    legal = [m.text(cfg.board) for m in moves(cfg, pos)]
    listed = [mv for r in node["replies"] for mv in r["moves"]]
    assert sorted(listed) == sorted(legal), pos.text()  # every reply, each once
    longest = 0
    for r in node["replies"]:
        for mv in r["moves"]:
            assert play(cfg, pos, mv).text() == r["position"]
        longest = max(longest, 1 + walk(trees, cfg, Position(r["position"]), winner, node["plies"] - 1))
    return longest


# ---------------------------------------------------------------------------- the lookup


def test_the_published_tree_at_the_start_and_after_e4_3():
    trees = load_trees([PUBLISHED])
    cfg = standard_config()
    node = trees.lookup(cfg, standard_start())
    after = play(cfg, standard_start(), "e4+3")
    assert node == {"file": "standard-start.jsonl", "node": 0, "winner": "x", "plies": 11, "move": "e4+3",
                    "position": after.text()}
    reply_node = trees.lookup(cfg, after)
    assert reply_node["plies"] == 10 and "move" not in reply_node
    legal = sorted(m.text(cfg.board) for m in moves(cfg, after))
    assert sorted(mv for r in reply_node["replies"] for mv in r["moves"]) == legal
    for r in reply_node["replies"]:  # each answer is a legal move of light, read by the rules
        there = Position(r["position"])
        assert all(play(cfg, after, mv) == there for mv in r["moves"])
        assert r["answer"] and play(cfg, there, r["answer"]).text() == r["answer_position"]
        assert r["plies"] == trees.lookup(cfg, there)["plies"] < 10
    assert max(r["plies"] for r in reply_node["replies"]) == 9
    # a move off the tree, and the same position under other rules, are no nodes
    assert trees.lookup(cfg, play(cfg, standard_start(), "d3+0")) is None
    assert trees.lookup(standard_config(edge=True), standard_start()) is None


@pytest.fixture(scope="module")
def small_tree(tmp_path_factory) -> Path:
    """A hex(2) edge win in 5, written by ``rotary prove --tree``."""
    path = tmp_path_factory.mktemp("trees") / "win5.jsonl"
    from solver.cli.main import main

    assert main(["prove", WIN5, "--edge", "--tree", str(path), "-q"]) == 0
    return path


def test_a_small_tree_walked_against_the_rules(small_tree):
    """From the root, the tree's moves against every reply of the loser win every line,
    the longest in exactly the root's distance."""
    trees = load_trees([small_tree.parent])  # a folder
    cfg = make_config("hex2", edge=True)
    root = Position(WIN5)
    assert trees.lookup(cfg, root)["plies"] == 5
    assert walk(trees, cfg, root, 0, 5) == 5
    assert trees.lookup(make_config("hex2"), root) is None  # the base rules: another game


def test_bad_tree_files_are_one_line(tmp_path, small_tree, capsys):
    lines = small_tree.read_text().splitlines()
    header, node0, node1 = json.loads(lines[0]), json.loads(lines[1]), json.loads(lines[2])
    cases = {
        "not-json.jsonl": "{not json\n",
        "no-header.jsonl": "\n".join(lines[1:]) + "\n",
        "lost-child.jsonl": "\n".join([lines[0], json.dumps(dict(node0, child=999))] + lines[2:]) + "\n",
        "rising.jsonl": "\n".join([lines[0], lines[1], json.dumps(dict(node1, plies=0))] + lines[3:]) + "\n",
        "bad-rules.jsonl": "\n".join([json.dumps(dict(header, rules={"board": "hex9"}))] + lines[1:]) + "\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(TreeFileError) as e:
            load_tree(tmp_path / name)
        assert name in str(e.value) and "\n" not in str(e.value)
        rc, out, err = run(capsys, "serve", "--tree", tmp_path / name, "--port", 0)
        assert rc == 2 and err.count("\n") == 1 and name in err, (name, err)
    rc, out, err = run(capsys, "serve", "--tree", tmp_path / "missing.jsonl")
    assert rc == 2 and err == f"rotary: error: --tree {tmp_path / 'missing.jsonl'}: no such file or folder\n"
    (tmp_path / "empty").mkdir()
    rc, out, err = run(capsys, "serve", "--tree", tmp_path / "empty")
    assert rc == 2 and "no proof trees" in err and err.count("\n") == 1


def test_default_trees_leave_out_a_bad_file(tmp_path, monkeypatch, small_tree):
    (tmp_path / "good.jsonl").write_bytes(small_tree.read_bytes())
    (tmp_path / "bad.jsonl").write_text("nonsense\n")
    (tmp_path / "notes.txt").write_text("not a tree")
    monkeypatch.setattr(trees_mod, "SOURCE_FOLDER", tmp_path)
    found = trees_mod.default_trees()
    assert [t.name for t in found.trees] == ["good.jsonl"]
    assert len(found.skipped) == 1 and "bad.jsonl" in found.skipped[0]


# ---------------------------------------------------------------------------- the viewer


@pytest.fixture(scope="module")
def tree_client():
    client, sources = viewer(["--tree", str(PUBLISHED)])
    yield client
    sources.close()


def test_api_and_page_of_the_tree(tree_client):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    cfg = standard_config()
    after = play(cfg, standard_start(), "e4+3").text()

    answer = tree_client.get("/api/position", query_string={"p": START}).get_json()
    validator.validate(answer)
    assert answer["tree"]["move"] == "e4+3" and answer["tree"]["plies"] == 11 and answer["tree"]["position"] == after
    page = Marks(tree_client.get("/", query_string={"p": START}).get_data(as_text=True))
    marked = [m for m in page.moves if "tree" in m["class"].split()]
    assert [m["data-move"] for m in marked] == ["e4+3"] and marked[0]["data-tree"] == "11"
    assert page.hints == ["e4+3"] and page.tree[0]["data-tree-plies"] == "11"

    answer = tree_client.get("/api/position", query_string={"p": after}).get_json()
    validator.validate(answer)
    page = Marks(tree_client.get("/", query_string={"p": after}).get_data(as_text=True))
    legal = {m.text(cfg.board) for m in moves(cfg, Position(after))}
    assert {mv for r in page.replies for mv in r["data-reply"].split()} == legal
    assert all(r["data-answer"] for r in page.replies) and page.hints == []
    by_move = {mv: r["answer"] for r in answer["tree"]["replies"] for mv in r["moves"]}
    assert {m["data-move"]: m["data-tree-answer"] for m in page.moves} == by_move

    # off the tree: no field, no section, no marks
    off = play(cfg, standard_start(), "d3+0").text()
    assert "tree" not in tree_client.get("/api/position", query_string={"p": off}).get_json()
    page = Marks(tree_client.get("/", query_string={"p": off}).get_data(as_text=True))
    assert page.tree == [] and page.hints == [] and not any("tree" in c for c in page.tags)


def test_the_source_checkout_trees_are_loaded_by_default():
    client, sources = viewer([])
    try:
        assert [t.name for t in sources.trees.trees] == ["standard-start-after-e4+5.jsonl.gz", "standard-start.jsonl"]
        assert client.get("/api/position").get_json()["tree"]["move"] == "e4+3"
        after = ".oo./.o.o./ooooo./.o...x./.oo...x./o.xxx.x/xxxxxx/..x.. o"  # the start after e4+5
        node = client.get("/api/position", query_string={"p": after}).get_json()["tree"]
        assert (node["file"], node["winner"], node["plies"], node["move"]) == (
            "standard-start-after-e4+5.jsonl.gz", "o", 15, "d5+4")
    finally:
        sources.close()


# ---------------------------------------------------------------------------- book marks


def sym_key(cfg, pos: Position) -> tuple[int, int]:
    """``pos`` up to the board's symmetries, seen from its mover (as the book merges nodes)."""
    mover, other = (pos.x, pos.o) if pos.turn == 0 else (pos.o, pos.x)
    plain, _ = symmetry_classes(cfg)
    return min((cfg.board.map_bits(g, mover), cfg.board.map_bits(g, other)) for g in plain)


@pytest.fixture(scope="module")
def book_store(tmp_path_factory):
    """An opening book of hex(2) edge from ``WIN5`` to depth 1, and the positions it holds:
    df-pn has one node per position, so several are in the book with an unknown value
    (and the engine's score)."""
    from solver.search.book import build_book

    store = tmp_path_factory.mktemp("book") / "store"
    out = build_book(make_config("hex2", edge=True), Position(WIN5), 1, store, nodes=1, tt_bits=16,
                     engine_nodes=2_000)
    return store, [Position(n["position"]) for n in out["book"].values()]


def test_book_moves_are_marked(book_store):
    store, held = book_store
    cfg = make_config("hex2", edge=True)
    in_book = {sym_key(cfg, p) for p in held}
    client, sources = viewer(["--board", "hex2", "--edge", "--store", str(store)])
    try:
        root = client.get("/api/position", query_string={"p": WIN5}).get_json()
        assert root["source"] == "book" and root["moves"] and all(m.get("book") is True for m in root["moves"])
        assert any(m["value"] == "unknown" for m in root["moves"])  # in the book, yet not proven
        page = Marks(client.get("/", query_string={"p": WIN5}).get_data(as_text=True))
        assert all(m.get("data-book") == "1" for m in page.moves) and len(page.moves) == len(root["moves"])
        titles = [t for c, t in zip(page.tags, page.titles) if "book" in c.split()]
        assert len(titles) == len(root["moves"])
        assert [", score " in t for t in titles] == ["score" in m for m in root["moves"]]
        # the root's children: in the book, their own children partly (where they come round
        # to the root or a child of it, up to symmetry)
        partly = 0
        for text in dict.fromkeys(m["position"] for m in root["moves"]):
            child = Position(text)
            answer = client.get("/api/position", query_string={"p": text}).get_json()
            assert answer["source"] == "book"
            want = {m.text(cfg.board) for m in moves(cfg, child) if sym_key(cfg, apply(cfg, child, m)) in in_book}
            got = {m["move"] for m in answer["moves"] if m.get("book")}
            assert got == want, text
            assert all(m.get("book", True) is True for m in answer["moves"])
            page = Marks(client.get("/", query_string={"p": text}).get_data(as_text=True))
            assert {m["data-move"] for m in page.moves if m.get("data-book") == "1"} == want
            assert sum("book" in c.split() for c in page.tags) == len(want)
            partly += 0 < len(want) < len(answer["moves"])
        assert partly, "no child of the root has some moves into the book and some out"
    finally:
        sources.close()
