"""Check a proof tree against the rules alone (:mod:`solver.game.rules`, plain Python).

    report = check_tree_file("data/proofs/standard-start.jsonl.gz")
    report.ok, report.faults, report.line()

The file (JSON Lines, gzip when its name ends in ``.gz``; written by
:func:`solver.search.tree.write_tree`): a header line, then one node a line::

    {"format": "rotary-proof-tree", "version": 1, "rules": {Config.key()}, "position": root text,
     "result": "win" | "loss" (for the root's side to move), "plies": d, "winner": "x" | "o",
     "nodes": count}
    {"id": 0, "position": text, "plies": d, "move": "e4+3", "child": 1}        # the winner to move
    {"id": 1, "position": text, "plies": d, "replies": [{"moves": ["c5+0", "c5+1"], "child": 2}, ...]}
                                                                            # the loser to move
    {"id": 2, "position": text, "plies": 0}                                 # a finished game

What is checked, for every node reachable from the root (node 0): its position is one
the rules allow; a node of the winner names one legal move, and the move leads to its
child's position; a node of the loser lists every legal move of his (each exactly once),
each leading to its reply's child; a node without moves is a finished game — the centre
complete, or the side to move without a legal point — won by the winner; the distances:
0 at a finished game, 1 + the child's at the winner's nodes, 1 + the largest reply's at
the loser's; the root is the header's position with the header's result and distance.
The distances strictly fall along every edge, so the nodes form no cycle.

What a tree shows: the winner wins within the root's distance whatever the loser does.
That no faster win exists (the distance is exact) is the search's claim, which the tree
does not certify.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

from solver.errors import RotaryError
from solver.game.config import Config, config_from_key
from solver.game.position import PLAY, Position, parse_position
from solver.game.rules import ONGOING, WIN, apply, check_position, moves, parse_move, status

FORMAT = "rotary-proof-tree"
VERSION = 1
MAX_FAULTS = 20


class TreeFileError(RotaryError, ValueError):
    """A proof-tree file that cannot be read as one (not JSON Lines, no header, ...)."""


@dataclass
class TreeReport:
    path: str
    position: str = ""
    result: str = ""
    plies: int = -1
    winner: str = ""
    nodes: int = 0  # nodes reachable from the root, each checked
    finished: int = 0  # of them finished games
    faults: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.faults

    def line(self) -> str:
        if self.ok:
            return (f"OK {self.path}: {self.winner} wins within {self.plies} plies from {self.position} "
                    f"({self.result} for the side to move); {self.nodes:,} nodes checked by the rules, "
                    f"{self.finished:,} of them finished games")
        more = f" (first {MAX_FAULTS} shown)" if len(self.faults) >= MAX_FAULTS else ""
        return f"FAILED {self.path}: {len(self.faults)} faults{more}: " + "; ".join(self.faults[:3])


def read_tree(path: str | Path) -> tuple[dict, list[dict]]:
    """The header and the node records of a tree file; :class:`TreeFileError` in one line
    when the file is not one."""
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise TreeFileError(f"{path}: not a readable gzip file ({e})") from None
    records = []
    for no, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise TreeFileError(f"{path}: line {no} is not JSON ({e.msg})") from None
        if not isinstance(rec, dict):
            raise TreeFileError(f"{path}: line {no} is not a JSON object")
        records.append(rec)
    if not records or records[0].get("format") != FORMAT:
        raise TreeFileError(f"{path}: not a proof tree (its first line must be a header with \"format\": \"{FORMAT}\")")
    header = records[0]
    if header.get("version") != VERSION:
        raise TreeFileError(f"{path}: proof tree version {header.get('version')!r}; this rotary reads version {VERSION}")
    return header, records[1:]


def check_tree_file(path: str | Path) -> TreeReport:
    header, nodes = read_tree(path)
    return check_tree(header, nodes, str(path))


def check_tree(header: dict, nodes: list[dict], name: str = "tree") -> TreeReport:
    """Check a tree (header and node records, as :func:`read_tree` gives them)."""
    rep = TreeReport(name, str(header.get("position", "")), str(header.get("result", "")), -1, str(header.get("winner", "")))
    try:
        cfg = config_from_key(header["rules"])
        root = parse_position(header["position"])
        rep.plies = int(header["plies"])
        if header["result"] not in ("win", "loss") or header["winner"] not in ("x", "o"):
            raise ValueError("result must be win or loss and winner x or o")
    except (KeyError, TypeError, ValueError) as e:
        rep.faults.append(f"header: {e.__class__.__name__}: {e}")
        return rep
    winner = "xo".index(header["winner"])
    if (root.turn == winner) != (header["result"] == "win"):
        rep.faults.append(f"header: a {header['result']} for {'xo'[root.turn]} to move is not a win for {header['winner']}")
    by_id = {}
    for rec in nodes:
        i = rec.get("id")
        if not isinstance(i, int) or i in by_id:
            rep.faults.append(f"node record {str(rec)[:60]}: missing or repeated id")
            continue
        by_id[i] = rec
    if 0 not in by_id:
        rep.faults.append("no root node (id 0)")
        return rep
    if by_id[0].get("position") != root.text():
        rep.faults.append(f"node 0 is {by_id[0].get('position')!r}, not the header's position {root.text()!r}")
    if by_id[0].get("plies") != rep.plies:
        rep.faults.append(f"node 0 has distance {by_id[0].get('plies')}, the header says {rep.plies}")
    _Checker(cfg, winner, by_id, rep).run()
    if rep.nodes != len(by_id):
        rep.faults.append(f"{len(by_id) - rep.nodes} node records are not reachable from the root")
    if header.get("nodes") != len(by_id):
        rep.faults.append(f"the header counts {header.get('nodes')!r} nodes, the file holds {len(by_id)}")
    return rep


class _Checker:
    def __init__(self, cfg: Config, winner: int, by_id: dict[int, dict], rep: TreeReport):
        self.cfg, self.winner, self.by_id, self.rep = cfg, winner, by_id, rep
        self.pos: dict[int, Position] = {}

    def fault(self, i: int, text: str) -> None:
        if len(self.rep.faults) < MAX_FAULTS:
            pos = self.by_id.get(i, {}).get("position", "?")
            self.rep.faults.append(f"node {i} ({pos}): {text}")

    def position(self, i: int) -> Position | None:
        if i in self.pos:
            return self.pos[i]
        try:
            pos = parse_position(self.by_id[i]["position"])
            if pos.phase != PLAY:
                raise ValueError(f"phase {pos.phase}: proof trees hold rotation-phase positions")
            check_position(self.cfg, pos)
        except (KeyError, TypeError, ValueError) as e:  # the notation's and the rules' errors are ValueErrors
            self.fault(i, f"not a valid position: {e}")
            pos = None
        self.pos[i] = pos
        return pos

    def child(self, i: int, j, want: Position) -> int | None:
        """The distance of child ``j`` of node ``i``, which must hold ``want``; None if faulty."""
        if not isinstance(j, int) or j not in self.by_id:
            self.fault(i, f"names child {j!r}, which is not in the tree")
            return None
        cpos = self.position(j)
        if cpos is None:
            return None
        if cpos != want:
            self.fault(i, f"a move leads to {want.text()}, but its child {j} holds {cpos.text()}")
            return None
        d = self.by_id[j].get("plies")
        return d if isinstance(d, int) else None

    def run(self) -> None:
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            self.rep.nodes += 1
            for j in self.node(i):
                if isinstance(j, int) and j in self.by_id and j not in seen:
                    seen.add(j)
                    todo.append(j)

    def node(self, i: int) -> list:
        """Check node ``i`` against its children's records; returns the children's ids."""
        rec, cfg = self.by_id[i], self.cfg
        pos = self.position(i)
        d = rec.get("plies")
        if pos is None:
            return []
        if not isinstance(d, int) or d < 0:
            self.fault(i, f"distance {d!r} is not a whole number >= 0")
            return []
        st = status(cfg, pos)
        if st != ONGOING:
            self.rep.finished += 1
            if "move" in rec or "replies" in rec:
                self.fault(i, "the game is over here, yet the node has moves")
            if (st == WIN) != (pos.turn == self.winner):
                self.fault(i, f"a finished game lost by the winner {'xo'[self.winner]}")
            if d != 0:
                self.fault(i, f"a finished game has distance 0, not {d}")
            return []
        if pos.turn == self.winner:
            return self.winner_node(i, rec, pos, d)
        return self.loser_node(i, rec, pos, d)

    def winner_node(self, i: int, rec: dict, pos: Position, d: int) -> list:
        if "move" not in rec or "child" not in rec:
            self.fault(i, "the winner is to move but the node names no move and child" if "replies" not in rec
                       else "the winner is to move: one move, not replies")
            return []
        try:
            mv = parse_move(self.cfg, pos, str(rec["move"]))
        except ValueError as e:
            self.fault(i, f"move {rec['move']!r}: {e}")
            return []
        cd = self.child(i, rec["child"], apply(self.cfg, pos, mv))
        if cd is not None and d != cd + 1:
            self.fault(i, f"distance {d}, but 1 + its child's is {cd + 1}")
        return [rec["child"]]

    def loser_node(self, i: int, rec: dict, pos: Position, d: int) -> list:
        replies = rec.get("replies")
        if not isinstance(replies, list) or not replies or "move" in rec:
            self.fault(i, "the loser is to move: the node must list his replies")
            return []
        legal = {m.text(self.cfg.board): m for m in moves(self.cfg, pos)}
        listed: set[str] = set()
        dists, kids = [], []
        for r in replies:
            if not isinstance(r, dict) or not isinstance(r.get("moves"), list) or not r["moves"]:
                self.fault(i, f"reply {str(r)[:40]} has no moves")
                continue
            kids.append(r.get("child"))
            want = None
            for t in r["moves"]:
                if t not in legal:
                    self.fault(i, f"reply move {t!r} is not a legal move here")
                    continue
                if t in listed:
                    self.fault(i, f"reply move {t} is listed twice")
                listed.add(t)
                c = apply(self.cfg, pos, legal[t])
                if want is None:
                    want = c
                elif c != want:
                    self.fault(i, f"reply moves {r['moves'][0]} and {t} are grouped but lead to different positions")
            if want is not None:
                cd = self.child(i, r.get("child"), want)
                if cd is not None:
                    dists.append(cd)
        missing = [t for t in legal if t not in listed]
        if missing:
            self.fault(i, f"the loser's replies {', '.join(missing[:6])}{' ...' if len(missing) > 6 else ''} are missing")
        if dists and len(dists) == len(replies) and d != 1 + max(dists):
            self.fault(i, f"distance {d}, but 1 + its longest reply's is {1 + max(dists)}")
        return kids
