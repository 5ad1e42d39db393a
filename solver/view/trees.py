"""Proof trees in the viewer: where the shown position is a node of a loaded tree
(``rotary prove --tree``, format in :mod:`solver.search.tree_check`), the answer gets a
``tree`` field: the winner's move and distance at his nodes, every reply of the loser with
the winner's answer at the loser's.

    trees = load_trees(["data/proofs"])
    trees.lookup(cfg, pos)        # the ``tree`` field, or None

A position matches a node when its text is the node's (positions are written in one
normal form, so this is exact equality) under the same rules (as proof stores compare
them: without the balls, outside the setup game). A symmetric image of a node is not
matched: the tree is followed move by move from its root, and every position it reaches
that way is a node.

Loading checks the file's shape (a header, unique ids, positions that parse, children
that exist, distances falling along every edge); ``rotary check-tree`` checks a tree by the
rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from solver.errors import RotaryError
from solver.game.config import Config, config_from_key
from solver.game.position import PLAY, Position
from solver.search.tree_check import TreeFileError, read_tree

SUFFIXES = (".jsonl", ".jsonl.gz")
SOURCE_FOLDER = Path(__file__).resolve().parents[2] / "data" / "proofs"  # a checkout's published trees


def rules_id(key: dict) -> str:
    """Rules as a tree and a viewer's position compare them: ``Config.key()`` without the
    balls except in the setup game, as one string."""
    key = dict(key)
    if not key.get("setup"):
        key["balls"] = None
    return json.dumps(key, sort_keys=True)


@dataclass
class LoadedTree:
    """One tree file: its name, rules, winner (0: light, 1: dark) and nodes by id."""

    name: str
    rules: str
    winner: int
    root: str
    plies: int
    nodes: dict[int, dict]

    def describe(self) -> str:
        return f"{self.name} ({'xo'[self.winner]} wins in {self.plies}, {len(self.nodes):,} nodes)"


def tree_files(path: str | Path) -> list[Path]:
    """The tree files ``path`` names: itself, or a folder's ``*.jsonl`` and ``*.jsonl.gz``
    (sorted); a :class:`TreeFileError` when there is none."""
    p = Path(path)
    if p.is_dir():
        found = sorted(f for f in p.iterdir() if f.is_file() and f.name.endswith(SUFFIXES))
        if not found:
            raise TreeFileError(f"--tree {path}: no proof trees (*.jsonl, *.jsonl.gz) in this folder")
        return found
    if not p.exists():
        raise TreeFileError(f"--tree {path}: no such file or folder")
    return [p]


def load_tree(path: str | Path) -> LoadedTree:
    """Read and shape-check one tree file; a :class:`TreeFileError` naming the fault in one line."""
    path = Path(path)
    try:
        header, records = read_tree(path)
    except OSError as e:
        raise TreeFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        cfg = config_from_key(header["rules"])
        root = Position(header["position"])
        winner = "xo".index(header["winner"])
        plies = header["plies"]
        if not isinstance(plies, int) or plies < 0:
            raise ValueError(f"plies {plies!r} is not a whole number >= 0")
    except (KeyError, TypeError, ValueError, RotaryError) as e:
        raise TreeFileError(f"{path}: a bad header ({e.__class__.__name__}: {e})") from None
    nodes: dict[int, dict] = {}
    for rec in records:
        i = rec.get("id")
        if not isinstance(i, int) or i in nodes:
            raise TreeFileError(f"{path}: a node with a missing or repeated id: {str(rec)[:60]}")
        nodes[i] = rec
    if nodes.get(0, {}).get("position") != root.text():
        raise TreeFileError(f"{path}: node 0 is not the header's position {root.text()}")
    for i, rec in nodes.items():
        fault = _shape_fault(rec, nodes)
        if fault:
            raise TreeFileError(f"{path}: node {i}: {fault}")
    return LoadedTree(path.name, rules_id(cfg.key()), winner, root.text(), plies, nodes)


def _shape_fault(rec: dict, nodes: dict[int, dict]) -> str | None:
    """What is wrong with a node record's shape (not its moves: the rules check those), or None."""
    d = rec.get("plies")
    if not isinstance(d, int) or d < 0:
        return f"distance {d!r} is not a whole number >= 0"
    try:
        pos = Position(str(rec.get("position")))
    except ValueError as e:
        return f"not a position ({e})"
    if pos.phase != PLAY or pos.text() != rec["position"]:
        return f"{rec['position']!r} is not a rotation-phase position in normal form"
    if "move" in rec:
        kids = [rec.get("child")]
        if not isinstance(rec["move"], str) or not rec["move"]:
            return "the winner's move is not move text"
    elif "replies" in rec:
        replies = rec["replies"]
        if not isinstance(replies, list) or not replies:
            return "the loser's replies are not a list of replies"
        kids = []
        for r in replies:
            if not isinstance(r, dict) or not isinstance(r.get("moves"), list) or not r["moves"] \
                    or not all(isinstance(m, str) for m in r["moves"]):
                return f"reply {str(r)[:40]} has no moves"
            kids.append(r.get("child"))
    else:
        return None if d == 0 else f"no move and no replies, yet distance {d} (a finished game has 0)"
    for j in kids:
        if not isinstance(j, int) or j not in nodes:
            return f"names child {j!r}, which is not in the tree"
        cd = nodes[j].get("plies")
        if not isinstance(cd, int) or cd >= d:
            return f"distance {d}, but child {j} has {cd!r} (distances fall along every edge)"
    return None


class ProofTrees:
    """Loaded trees, indexed by rules and position text (the first tree holding a position
    answers); ``skipped``: one line for each default file left out."""

    def __init__(self, trees: list[LoadedTree] | None = None):
        self.trees: list[LoadedTree] = []
        self.skipped: list[str] = []
        self._index: dict[tuple[str, str], tuple[LoadedTree, int]] = {}
        for t in trees or []:
            self.add(t)

    def add(self, tree: LoadedTree) -> None:
        self.trees.append(tree)
        for i, rec in tree.nodes.items():
            self._index.setdefault((tree.rules, rec["position"]), (tree, i))

    def __len__(self) -> int:
        return len(self.trees)

    def describe(self) -> str:
        return ", ".join(t.describe() for t in self.trees) or "none"

    def lookup(self, cfg: Config, pos: Position) -> dict | None:
        """The ``tree`` field of ``pos`` under ``cfg`` (docs/json.md), or None when no
        loaded tree holds it:

        * ``file``, ``node`` (its id), ``winner`` (``x`` or ``o``), ``plies`` (the winner's
          distance from here);
        * the winner to move: ``move`` (the tree's) and ``position`` (after it);
        * the loser to move: ``replies``, one per distinct position his moves lead to:
          ``moves``, ``position``, ``plies`` (the winner's distance after the reply),
          ``answer`` (the winner's move there; null where the reply ends the game) and
          ``answer_position`` (after it; null with no answer).
        """
        hit = self._index.get((rules_id(cfg.key()), pos.text()))
        if hit is None:
            return None
        tree, i = hit
        rec, nodes = tree.nodes[i], tree.nodes
        out = {"file": tree.name, "node": i, "winner": "xo"[tree.winner], "plies": rec["plies"]}
        if "move" in rec:
            out["move"] = rec["move"]
            out["position"] = nodes[rec["child"]]["position"]
        elif "replies" in rec:
            out["replies"] = []
            for r in rec["replies"]:
                child = nodes[r["child"]]
                answer = child.get("move")
                out["replies"].append({
                    "moves": list(r["moves"]),
                    "position": child["position"],
                    "plies": child["plies"],
                    "answer": answer,
                    "answer_position": nodes[child["child"]]["position"] if answer else None,
                })
        return out


def load_trees(paths: list[str | Path]) -> ProofTrees:
    """Every tree that ``paths`` name (files or folders), each shape-checked."""
    trees = ProofTrees()
    for path in paths:
        for f in tree_files(path):
            trees.add(load_tree(f))
    return trees


def default_trees() -> ProofTrees:
    """The trees of ``data/proofs/``: of the source checkout rotary runs from, else of the
    current folder; none where neither exists. A file there that does not load is left
    out and named in ``skipped``, not an error: nobody asked for it."""
    trees = ProofTrees()
    folder = next((f for f in (SOURCE_FOLDER, Path("data") / "proofs") if f.is_dir()), None)
    if folder is None:
        return trees
    for f in sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(SUFFIXES)):
        try:
            trees.add(load_tree(f))
        except TreeFileError as e:
            trees.skipped.append(str(e))
    return trees
