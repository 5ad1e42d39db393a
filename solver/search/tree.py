"""Proof trees: a proven win or loss written out so that anyone can check it by the rules.

    tree = proof_tree(prover, pos, res)        # res: a ProofResult, a win or loss with exact plies
    write_tree(tree, "standard-start.jsonl.gz")

The tree is the winner's strategy: at each of his turns one move, at each of the loser's
turns *every* legal reply, down to finished games. Each node carries its distance in
plies, exact: at the winner's nodes 1 + the child's, at the loser's 1 + the largest of his
replies', 0 at a finished game. Nodes are positions (text), so a position reached along
several lines is one node (the tree is a DAG). The format is in :mod:`solver.search.tree_check`,
which checks a tree against :mod:`solver.game.rules` alone.

How it is built: the distances come from the depth-limited search of
:meth:`solver.search.prover.Prover.wins_within` ("does the winner win within n plies?"),
which is exhaustive, so every node's distance is its true one: at a winner's node the
move chosen reaches a child lost in exactly one ply less (a child already in the tree is
preferred, then a finished game, then the child whose loser has the fewest distinct
replies), at a loser's node each reply's distance is the least n that the search proves.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from solver.errors import RotaryError
from solver.game.config import Config
from solver.game.position import Position
from solver.game.rules import ONGOING, WIN, apply, moves, status
from solver.kernels.code import LOSS_V, WIN_V
from solver.search.prover import ProofResult, Prover

FORMAT = "rotary-proof-tree"
VERSION = 1


class TreeError(RotaryError, ValueError):
    """A proof tree that cannot be built (no exact proof, budget too small) or read."""


def rules_key(cfg: Config) -> dict:
    """The rules a tree is for, as :meth:`Config.key` writes them."""
    return cfg.key()


class _Builder:
    def __init__(self, prover: Prover, attacker: int, budget: int):
        self.prover = prover
        self.cfg = prover.cfg
        self.attacker = attacker
        self.budget = budget
        self.spent0 = prover.nodes
        self.nodes: list[dict] = []
        self.ids: dict[str, int] = {}

    def within(self, pos: Position, n: int) -> bool:
        """Whether the attacker wins within ``n`` plies of the non-finished ``pos``."""
        left = self.budget - (self.prover.nodes - self.spent0)
        q = 0 if pos.turn == self.attacker else 1
        r = None if left <= 0 else self.prover.wins_within(pos.mover, pos.opponent, pos.turn, q, n, left)
        if r is None:
            raise TreeError(f"building the proof tree needed more than {self.budget:,} nodes of search "
                            f"(give more with --nodes)")
        return r

    def won(self, pos: Position) -> bool:
        """Whether ``pos`` is a finished game won by the attacker."""
        st = status(self.cfg, pos)
        return st != ONGOING and (st == WIN) == (pos.turn == self.attacker)

    def distance(self, pos: Position, upper: int) -> int:
        """The exact distance of the attacker's win from ``pos`` (attacker to move), known
        to be at most ``upper``: the least n of the win's parity (odd) that the search proves."""
        if status(self.cfg, pos) != ONGOING:
            if not self.won(pos):
                raise TreeError(f"the loser has a reply that wins: {pos.text()}")
            return 0
        for n in range(1, upper + 1, 2):
            if self.within(pos, n):
                return n
        raise TreeError(f"no win within {upper} plies from {pos.text()} (the proof's distance is wrong)")

    def grouped(self, pos: Position) -> dict[Position, list[str]]:
        """The distinct children of ``pos`` with the moves leading to each, in move order."""
        out: dict[Position, list[str]] = {}
        for mv in moves(self.cfg, pos):
            out.setdefault(apply(self.cfg, pos, mv), []).append(mv.text(self.cfg.board))
        return out

    def replies(self, pos: Position) -> int:
        return len({apply(self.cfg, pos, mv) for mv in moves(self.cfg, pos)})

    def build(self, pos: Position, d: int) -> int:
        """The node of ``pos``, whose exact distance is ``d``; made with its subtree if new."""
        text = pos.text()
        if text in self.ids:
            return self.ids[text]
        i = len(self.nodes)
        self.ids[text] = i
        node: dict = {"id": i, "position": text, "plies": d}
        self.nodes.append(node)
        if d == 0:
            if not self.won(pos):
                raise TreeError(f"a leaf of the proof is not a finished game won by the winner: {text}")
            return i
        kids = self.grouped(pos)
        if pos.turn == self.attacker:
            mv, c = self.winning_move(pos, kids, d)
            node["move"], node["child"] = mv, self.build(c, d - 1)
        else:
            dist = {c: self.distance(c, d - 1) for c in kids}
            if 1 + max(dist.values()) != d:
                raise TreeError(f"the loser's longest reply from {text} takes {max(dist.values())} plies, not {d - 1}")
            node["replies"] = [{"moves": mvs, "child": self.build(c, dist[c])} for c, mvs in kids.items()]
        return i

    def winning_move(self, pos: Position, kids: dict[Position, list[str]], d: int) -> tuple[str, Position]:
        """A move of the winner from ``pos`` (exact distance ``d``) to a child lost in
        ``d - 1``, and that child."""
        def order(c: Position):
            if c.text() in self.ids:
                return (0, 0)
            if status(self.cfg, c) != ONGOING:
                return (1, 0)
            return (2, self.replies(c))

        for c in sorted(kids, key=order):
            if d == 1:
                ok = self.won(c)
            else:
                ok = status(self.cfg, c) == ONGOING and self.within(c, d - 1)
            if ok:
                return kids[c][0], c
        raise TreeError(f"no move from {pos.text()} wins within {d} plies (the proof's distance is wrong)")


def proof_tree(prover: Prover, pos: Position, res: ProofResult, nodes: int = 10_000_000) -> dict:
    """The proof tree of ``pos`` from its proven result ``res`` (a win or a loss with an
    exact distance), with at most ``nodes`` nodes of search for the distances; a
    :class:`TreeError` when there is no such proof or the budget is too small."""
    if not res.resolved or res.lo not in (WIN_V, LOSS_V) or res.plies is None or not res.exact:
        what = res.text()
        raise TreeError(f"a proof tree needs a win or loss with an exact distance; {pos.text()} is {what}"
                        + (f" (stopped: {res.stopped})" if res.stopped else ""))
    attacker = pos.turn if res.lo == WIN_V else 1 - pos.turn
    b = _Builder(prover, attacker, nodes)
    b.build(pos, int(res.plies))
    header = {
        "format": FORMAT,
        "version": VERSION,
        "rules": rules_key(prover.cfg),
        "position": pos.text(),
        "result": res.result,
        "plies": int(res.plies),
        "winner": "xo"[attacker],
        "nodes": len(b.nodes),
    }
    return {"header": header, "nodes": b.nodes}


def proof_line(prover: Prover, pos: Position, res: ProofResult, plies: int, nodes: int = 10_000_000) -> list[str]:
    """The principal line of a proof: the winner's fastest win against the loser's longest
    resistance, up to ``plies`` moves or the end of the game, for a win or loss with an
    exact distance (the moves :func:`proof_tree` would take; at the loser's turns the
    first reply that lasts longest); otherwise the proof's best move alone, if it has one.
    A line the budget ``nodes`` cannot finish stops where it got."""
    if not res.resolved or res.lo not in (WIN_V, LOSS_V) or res.plies is None or not res.exact:
        return [res.best_move][:plies] if res.best_move else []
    b = _Builder(prover, pos.turn if res.lo == WIN_V else 1 - pos.turn, nodes)
    line: list[str] = []
    cur, d = pos, int(res.plies)
    try:
        while len(line) < plies and d > 0:
            kids = b.grouped(cur)
            if cur.turn == b.attacker:
                mv, cur = b.winning_move(cur, kids, d)
                d -= 1
            else:
                dist = {c: b.distance(c, d - 1) for c in kids}
                cur = max(kids, key=lambda c: dist[c])  # the first of the longest
                mv, d = kids[cur][0], dist[cur]
            line.append(mv)
    except TreeError:
        pass  # the budget ran out: the line so far
    return line


def write_tree(tree: dict, path: str | Path) -> None:
    """JSON Lines: the header, then one node a line in id order; gzip when ``path`` ends in ``.gz``."""
    path = Path(path)
    lines = [json.dumps(tree["header"], separators=(",", ":"))]
    lines += [json.dumps(n, separators=(",", ":")) for n in tree["nodes"]]
    data = ("\n".join(lines) + "\n").encode()
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)  # no time stamp: the same tree gives the same bytes
    if str(path) == "-":
        sys.stdout.buffer.write(data)
        return
    path.write_bytes(data)
