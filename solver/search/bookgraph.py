"""The opening book as a graph: values backed up, what to expand next, statistics, export.

A book is a dict ``key -> node`` (the ``book`` table of a proof store; keys from
:func:`solver.search.book.node_key`, so transpositions and symmetric positions are one
node) and a root key. A node holds (:func:`solver.search.book` writes them)::

    position  text (of the first image of the node met)
    depth     the fewest plies from a root that reached it
    moves     [{"move", "key", "position"}] (one per distinct child), null while a leaf
    proof     a ProofResult record (df-pn or a database), null before one is made
    engine    {"kind", "value", "depth", "nodes"}: the engine's own search of the node
              (a Score: kind "cp" in hundredths of a logit, or "win"/"loss" in plies), or null
    value     backed up: {"result", "lo", "hi", "plies", "exact", "best_move"}
    score     backed up: {"kind", "value", "depth", "move"}, or null without engine values

:func:`backup` computes the last two from the root down, children first. ``value`` is the
proven interval: the node's own proof intersected with the best over its children (the
method of :func:`solver.search.prover.combine_children`; distances kept). ``score`` is the
negamax of the engine's values over the expanded part (a leaf's is its own search's),
``depth`` the plies behind it (the book's plies on the best line plus the engine's depth at
its end), ``move`` the best move of the node's own ``moves``; a proof overrides it: a
proven win or loss is ``win``/``loss`` with its plies, a draw ``cp 0``, a half-proven
value bounds it (``not-win``: at most 0, ``not-loss``: at least 0). A cycle of the graph
(a line coming back to a node on it) is cut there: that child counts with its own search.

:func:`expansion_order` is drop-out expansion (Lincke 2001) on the graph: a leaf's
priority is the cheapest path to it from the root, where each ply costs ``ply_cost`` and
each move costs how much worse it is than the best move of its node (its *drop*, in
hundredths of a logit). Principal lines cost plies only, so they grow first; side lines
grow once they are no worse than the principal line made ``drop / ply_cost`` plies longer.
Proven nodes are not expanded and not searched through.
"""

from __future__ import annotations

import heapq
import json
from functools import lru_cache
from pathlib import Path

from solver.engine.score import Score
from solver.game.position import Position
from solver.game.values import UNKNOWN, Value
from solver.kernels.code import DRAW_V, LOSS_V, WIN_V
from solver.search.prover import RESULT_NAMES, ProofResult, combine_children, result_from_json

FORMAT = "rotary-book"
VERSION = 2
CLAMP = 1000  # an estimate counts at most 10 logits in a drop: a proven result counts more
PLY_COST = 30  # drop-out expansion: hundredths of a logit a ply deeper costs


@lru_cache(maxsize=1 << 16)
def turn_of(text: str) -> int:
    """The side to move of a position text (0 light, 1 dark)."""
    return Position(text).turn


def score_of(rec: dict | None) -> Score | None:
    """A stored ``{"kind", "value", ...}`` as a Score (None stays None)."""
    if not rec or rec.get("kind") is None:
        return None
    return Score(rec["kind"], int(rec["value"]))


def through(parent_text: str, child_text: str, s: Score) -> Score:
    """A child's score (its mover's view) as the score of the move for the parent's mover:
    the other side's view one ply on, or the same side's (the last placer also rotating first)."""
    if turn_of(child_text) != turn_of(parent_text):
        return s.negate_after_move()
    return s if s.kind == "cp" else Score(s.kind, s.value + 1)


def utility(s: Score | None) -> int:
    """A number to measure drops by: estimates clamped, proven results beyond them."""
    if s is None:
        return 0
    if s.kind == "win":
        return 100 * CLAMP - s.value
    if s.kind == "loss":
        return -(100 * CLAMP - s.value)
    return max(-CLAMP, min(CLAMP, s.value))


def _bounded(s: Score | None, lo: int, hi: int, plies: int | None) -> Score | None:
    """The proof overrides the estimate: a proven value is the score, an interval bounds it."""
    if lo == hi:
        if lo == DRAW_V or plies is None:
            return Score("cp", 0)
        return Score("win" if lo == WIN_V else "loss", plies)
    if s is None:
        return None
    if hi <= DRAW_V and (s.kind == "win" or (s.kind == "cp" and s.value > 0)):
        return Score("cp", 0)
    if lo >= DRAW_V and (s.kind == "loss" or (s.kind == "cp" and s.value < 0)):
        return Score("cp", 0)
    return s


def _children(book: dict, key: bytes) -> list[tuple[str, bytes, str]]:
    """``(move, child key, child position as the move reaches it)``: a child's node may hold
    a symmetric image of it, whose side to move can differ (a symmetry with colour swap)."""
    return [(m["move"], bytes.fromhex(m["key"]), m["position"]) for m in book[key].get("moves") or []]


def backup(book: dict, root: bytes) -> set[bytes]:
    """Back up ``value`` and ``score`` of every node reachable from ``root`` (children
    first, cycles cut; no recursion: lines may be long); returns the keys whose backed-up
    fields changed."""
    done: dict[bytes, tuple[ProofResult, Score | None, int]] = {}
    onstack = {root}
    stack = [(root, iter(_children(book, root)))]
    changed: set[bytes] = set()
    while stack:
        key, it = stack[-1]
        for _, ck, _ in it:
            if ck in book and ck not in done and ck not in onstack:
                onstack.add(ck)
                stack.append((ck, iter(_children(book, ck))))
                break
        else:
            stack.pop()
            onstack.discard(key)
            done[key] = _combine(book, key, done, onstack)
            node = book[key]
            res, s, d = done[key]
            value = {"result": res.result, "lo": res.lo, "hi": res.hi, "plies": res.plies, "exact": res.exact,
                     "best_move": res.best_move}
            score = None if s is None else {"kind": s.kind, "value": s.value, "depth": d,
                                            "move": _best_move(book, key, done, onstack)}
            if node.get("value") != value or node.get("score") != score:
                node["value"], node["score"] = value, score
                changed.add(key)
    return changed


def _best_move(book: dict, key: bytes, done: dict, onstack: set) -> str | None:
    """The move of the node's own ``moves`` whose child scores best for the node's mover."""
    node = book[key]
    best, best_u = None, None
    for mv, ck, ctext in _children(book, key):
        s = _child_score(book, node, ck, done, onstack)
        if s is None:
            continue
        u = through(node["position"], ctext, s).raw()
        if best_u is None or u > best_u:
            best, best_u = mv, u
    return best if best is not None else (book[key].get("engine") or {}).get("move")


def _child_score(book: dict, node: dict, ck: bytes, done: dict, onstack: set) -> Score | None:
    if ck not in book:
        return None
    if ck in done and ck not in onstack:
        return done[ck][1]
    return score_of(book[ck].get("engine"))  # a cycle: the child's own search


def _combine(book: dict, key: bytes, done: dict, onstack: set) -> tuple[ProofResult, Score | None, int]:
    """``(value, score, depth behind the score)`` of ``key`` from its own proof and search
    and its children's backed-up ones."""
    node = book[key]
    text = node["position"]
    own = result_from_json(node["proof"]) if node.get("proof") else ProofResult(text, LOSS_V, WIN_V)
    kids: list | None = []
    known = []  # the children whose values are backed up (not missing, not on the line)
    for mv, ck, _ in _children(book, key):
        if ck not in book or ck in onstack or ck not in done:
            kids = None  # a child missing or on the line: no upper bound from the children
        else:
            known.append((mv, done[ck][0]))
    if kids is not None:
        kids = known
    res = own
    if kids is None and known:
        res = _raised(own, known, text)
    if kids:
        comb = combine_children(kids, text)
        lo, hi = max(own.lo, comb.lo), min(own.hi, comb.hi)
        if lo > hi:  # cannot happen when both are sound; keep the proof
            lo, hi = own.lo, own.hi
        pick = own if own.lo == own.hi else comb
        res = ProofResult(text, lo, hi, pick.plies if lo == hi else None, pick.exact if lo == hi else False, None,
                          pick.best_move if lo == hi else own.best_move, own.nodes)
    eng = node.get("engine") or {}
    score, depth = score_of(eng), int(eng.get("depth") or 0)
    best = None
    for _, ck, ctext in _children(book, key):
        s = _child_score(book, node, ck, done, onstack)
        if s is None:
            continue
        t = through(text, ctext, s)
        d = 1 + (done[ck][2] if ck in done and ck not in onstack else int((book[ck].get("engine") or {}).get("depth") or 0))
        if best is None or t.raw() > best[0].raw():
            best = (t, d)
    if best is not None:
        score, depth = best
    return res, _bounded(score, res.lo, res.hi, res.plies), depth


def _raised(own: ProofResult, known: list, text: str) -> ProofResult:
    """The node's own proof with its lower bound raised by the children known: one move
    to a child lost for its mover is a win whatever the other moves are, one to a draw at
    least a draw. (The upper bound needs every child; the distance of a win found so is
    an upper bound, as a child not known could win faster.)"""
    part = combine_children(known, text)
    lo = max(own.lo, part.lo)
    if lo == own.lo or lo > own.hi:
        return own
    if lo == own.hi == WIN_V:
        wins = [(r.plies + 1, mv) for mv, r in known if r.lo == r.hi == LOSS_V and r.plies is not None]
        plies, move = min(wins) if wins else (None, part.best_move)
        return ProofResult(text, lo, own.hi, plies, False, None, move, own.nodes)
    return ProofResult(text, lo, own.hi, None, False, None, own.best_move, own.nodes)


# ---------------------------------------------------------------------------- what to expand


def proven(node: dict) -> bool:
    v = node.get("value") or node.get("proof")
    return bool(v) and v.get("lo") is not None and v["lo"] == v["hi"]


def expansion_order(book: dict, root: bytes, ply_cost: int = PLY_COST, over=None) -> list[tuple[int, bytes]]:
    """The leaves of the book worth expanding, cheapest first: ``(priority, key)`` (see the
    module docstring). ``over(node)`` says whether a node's game is finished (no moves)."""
    cost = {root: 0}
    heap = [(0, root)]
    leaves = []
    while heap:
        c, key = heapq.heappop(heap)
        if c > cost[key]:
            continue
        node = book[key]
        if proven(node) or (over is not None and over(node)):
            continue
        if node.get("moves") is None:
            leaves.append((c, key))
            continue
        mine = utility(score_of(node.get("score")))
        for _, ck, ctext in _children(book, key):
            child = book.get(ck)
            if child is None:
                continue
            s = score_of(child.get("score"))
            drop = 0 if s is None else max(0, mine - utility(through(node["position"], ctext, s)))
            nc = c + ply_cost + drop
            if nc < cost.get(ck, 1 << 62):
                cost[ck] = nc
                heapq.heappush(heap, (nc, ck))
    leaves.sort()
    return leaves


# ---------------------------------------------------------------------------- reading it


def reachable(book: dict, root: bytes) -> dict[bytes, int]:
    """Every node reachable from ``root`` with its fewest plies from it (breadth first)."""
    dist = {root: 0}
    level = [root]
    while level:
        nxt = []
        for key in level:
            for _, ck, _ in _children(book, key):
                if ck in book and ck not in dist:
                    dist[ck] = dist[key] + 1
                    nxt.append(ck)
        level = nxt
    return dist


def statistics(book: dict, root: bytes) -> dict:
    """What the book holds below ``root``: nodes, expanded, proven and open, by value and
    by depth, the deepest ply, the engine's and df-pn's nodes spent, the root's value."""
    dist = reachable(book, root)
    by_value = {name: 0 for name in RESULT_NAMES.values()}
    levels: dict[int, dict] = {}
    expanded = engine_nodes = proof_nodes = 0
    for key, d in dist.items():
        node = book[key]
        v = node.get("value") or {}
        by_value[v.get("result", "unknown")] += 1
        lv = levels.setdefault(d, {"depth": d, "positions": 0, "proven": 0, "open": 0})
        lv["positions"] += 1
        lv["proven" if proven(node) else "open"] += 1
        expanded += node.get("moves") is not None
        engine_nodes += int((node.get("engine") or {}).get("nodes") or 0)
        proof_nodes += int((node.get("proof") or {}).get("nodes") or 0)
    n_proven = sum(lv["proven"] for lv in levels.values())
    return {"nodes": len(dist), "expanded": expanded, "leaves": len(dist) - expanded, "proven": n_proven,
            "open": len(dist) - n_proven, "depth": max(levels), "by_value": by_value,
            "levels": [levels[d] for d in sorted(levels)], "engine_nodes": engine_nodes, "proof_nodes": proof_nodes,
            "root": root_summary(book, root)}


def root_summary(book: dict, root: bytes) -> dict:
    node = book[root]
    v = node.get("value") or {}
    s = node.get("score")
    return {"position": node["position"], "value": v.get("result", "unknown"), "plies": v.get("plies"),
            "exact": bool(v.get("exact")) and v.get("lo") == v.get("hi"),
            "score": None if not s else {"kind": s["kind"], "value": s["value"]},
            "score_depth": None if not s else s["depth"], "best_move": None if not s else s["move"]}


def export_json(book: dict, root: bytes, path, rules: dict | None = None) -> None:
    """The book below ``root`` as one JSON file (the format is in docs/pns.md)::

        {"format": "rotary-book", "version": 2, "rules": {...}, "root": key,
         "statistics": {...}, "nodes": {key: node, ...}}
    """
    dist = reachable(book, root)
    data = {"format": FORMAT, "version": VERSION, "rules": rules, "root": root.hex(),
            "statistics": statistics(book, root), "nodes": {k.hex(): book[k] for k in dist}}
    Path(path).write_text(json.dumps(data, indent=1))


def value_text(v: dict | None) -> str:
    if not v:
        return "unknown"
    out = v["result"]
    if v.get("plies") is not None:
        out += f" in {v['plies']}" if v.get("exact") else f" in <={v['plies']}"
    return out


def score_text(s: dict | None) -> str:
    """``+0.61 d9`` (an estimate and the plies behind it), ``win in 7``, or ``-``."""
    if not s:
        return "-"
    sc = Score(s["kind"], s["value"])
    return f"{sc} d{s['depth']}" if sc.kind == "cp" else str(sc)


def tree_text(book: dict, root: bytes, max_depth: int | None = None) -> str:
    """The book as an indented tree: per node its move, value, score and position, children
    best first by score; a transposition's subtree is shown once."""
    lines = []
    seen: set[bytes] = set()
    stack = [(root, "", 0)]
    while stack:
        key, move, indent = stack.pop()
        node = book[key]
        head = "  " * indent + (f"{move}  " if move else "")
        mark = "  (transposition, see above)" if key in seen and node.get("moves") else ""
        lines.append(f"{head}{value_text(node.get('value'))}  {score_text(node.get('score'))}  {node['position']}{mark}")
        if key in seen or (max_depth is not None and indent >= max_depth):
            continue
        seen.add(key)
        kids = [(mv, ck, ctext) for mv, ck, ctext in _children(book, key) if ck in book]
        kids.sort(key=lambda mc: _order(book, node, mc[1], mc[2]))
        for mv, ck, _ in reversed(kids):  # the stack pops the best first
            stack.append((ck, mv, indent + 1))
    return "\n".join(lines) + "\n"


def _order(book: dict, node: dict, ck: bytes, ctext: str) -> tuple:
    """Best first for the node's mover: the proven value, then the score."""
    child = book[ck]
    v = child.get("value") or {}
    mine = Value(UNKNOWN)
    if v.get("result"):
        cv = Value(v["result"], v.get("plies"), bool(v.get("exact")))
        mine = cv.after_move() if turn_of(ctext) != turn_of(node["position"]) else cv
    s = score_of(child.get("score"))
    return mine.sort_key(), -(through(node["position"], ctext, s).raw() if s else 0)
