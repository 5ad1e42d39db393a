"""Opening books: the graph of openings from a start, every node searched by the engine and
by df-pn.

Nodes are merged by canonical position (symmetric positions and transpositions are one
node), stored in the ``book`` table of a :class:`solver.search.proofs.ProofStore` (key:
:func:`solver.search.booknode.node_key`) as JSON; the fields, the backed-up ``value``
(proven) and ``score`` (the engine's, negamax) are described in :mod:`solver.search.bookgraph`.

Two ways to grow it: :func:`build_book` expands every node to a depth (full width, level by
level), :func:`solver.search.bookgrow.grow_book` expands the most promising leaves first
(drop-out expansion). Re-running extends: existing nodes keep their proofs and scores;
here unresolved ones get another df-pn budget (their df-pn resumes from the stored
table), new levels are added below the old ones.
"""

from __future__ import annotations

import time
from pathlib import Path

from solver.game.config import Config
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, apply, moves, status
from solver.search import bookgraph
from solver.search.booknode import ENGINE_NODES, NodeWork, from_database, merge_proof, node_key
from solver.search.prover import Prover, make_pool, worker_prove

__all__ = ["build_book", "book_lookup", "book_line", "node_key", "backup", "export_json", "tree_text", "value_text"]

backup = bookgraph.backup
export_json = bookgraph.export_json
tree_text = bookgraph.tree_text
value_text = bookgraph.value_text
_merge_proof = merge_proof
_from_database = from_database


def build_book(cfg: Config, start: Position, depth: int, store_path, nodes: int | None = 100_000,
               seconds: float | None = None, jobs: int = 1, db_path=None, progress=None, deadline: float | None = None,
               tt_bits: int = 21, guided: bool = False, engine_nodes: int = ENGINE_NODES) -> dict:
    """Expand and prove the book to ``depth`` plies, every node also searched by the engine
    (``engine_nodes`` nodes, 0: none); returns a summary: ``depth`` is the deepest level
    whose every node got its budget (-1: none), ``partial`` the level a ``deadline`` cut
    short as ``(depth, proven, to prove)``."""
    from solver.db.database import open_db
    from solver.game.position import parse_position
    from solver.search.proofs import ProofStore

    t0 = time.monotonic()
    store = ProofStore(store_path, cfg)
    db = None
    try:
        db = open_db(db_path) if db_path else None
        work = NodeWork(cfg, db, tt_bits, guided, engine_nodes)
        prover = work.prover
        book = {k: v for k, v in store.items("book")}  # a damaged record: StoreError naming it
    except BaseException:
        store.close()
        if db is not None:
            db.close()
        raise
    pool = make_pool(jobs, cfg, db_path, store_path, tt_bits, guided) if jobs > 1 else None
    if pool is None:
        prover.attach(store)
    proved = 0
    level = {node_key(prover, start): start}
    reached = -1
    partial = None  # (depth, proven, to prove) of a level the deadline cut short
    visited: set[bytes] = set()
    try:
        for d in range(depth + 1):
            # expand this level's nodes
            nxt: dict[bytes, Position] = {}
            visited.update(level)
            todo = []
            for key, pos in level.items():
                node = book.get(key)
                if node is None:
                    node = {"position": pos.text(), "depth": d, "moves": None, "proof": None}
                    book[key] = node
                node["depth"] = min(node["depth"], d)
                over = pos.phase == PLAY and status(cfg, pos) != ONGOING
                if d < depth and node["moves"] is None and not over:
                    node["moves"] = []
                    for mv in moves(cfg, pos):
                        child = apply(cfg, pos, mv)
                        ck = node_key(prover, child)
                        if any(m["key"] == ck.hex() for m in node["moves"]):
                            continue
                        node["moves"].append({"move": mv.text(cfg.board), "key": ck.hex(), "position": child.text()})
                if d < depth and node["moves"]:
                    for m in node["moves"]:
                        ck = bytes.fromhex(m["key"])
                        if ck not in visited and ck not in level:
                            nxt.setdefault(ck, parse_position(m["position"]))
                proof = node["proof"]
                if pos.phase != PLAY and proof is None and db is not None and db.get_reason(pos) is None:
                    # a setup database answers placement, offer and pick positions exactly
                    _merge_proof(node, _from_database(pos, db.probe(pos)))
                elif pos.phase == PLAY and (proof is None or proof["lo"] != proof["hi"]):
                    todo.append((key, pos))
            # prove this level; the deadline is checked per node (and inside each proof):
            # the nodes it leaves unproven stay in the book for the next run
            done = 0
            if pool is not None:
                # workers see the deadline as wall-clock time (their monotonic clocks differ)
                until = None if deadline is None else time.time() + deadline - time.monotonic()
                futs = [(key, pool.submit(worker_prove, pos.text(), nodes, seconds, until)) for key, pos in todo]
                for key, f in futs:
                    rec = f.result()
                    if rec is None:
                        continue
                    _merge_proof(book[key], rec)
                    proved += 1
                    done += 1
                    if progress:
                        progress(d, proved, time.monotonic() - t0)
            else:
                for key, pos in todo:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    budget_s = left if seconds is None else (seconds if left is None else min(seconds, left))
                    res = prover.prove(pos, nodes=nodes, seconds=budget_s)
                    prover.save_result(pos, res, table=False)
                    _merge_proof(book[key], dict(res.to_json(), lo=res.lo, hi=res.hi, lower=res.lower))
                    proved += 1
                    done += 1
                    if progress:
                        progress(d, proved, time.monotonic() - t0)
            # the engine's score of each node that has none yet (in this process: a search is short)
            for key, pos in level.items():
                if engine_nodes and book[key].get("engine") is None and (deadline is None or time.monotonic() < deadline):
                    book[key]["engine"] = work.engine_record(pos)
            store.put_many("book", [(k, book[k]) for k, _ in todo] + [(k, book[k]) for k in level])
            if pool is None:
                prover.checkpoint()
            if done < len(todo):
                partial = (d, done, len(todo))
                break
            reached = d
            level = nxt
            if not level:
                break
        root = node_key(prover, start)
        backup(book, root)
        store.put_many("book", list(book.items()))
    finally:  # however the book ends (a full disk, ^C): the store can be opened again
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        store.close()
        if db is not None:
            db.close()
    return {"root": root, "book": book, "depth": reached, "nodes": len(book), "proved": proved,
            "partial": partial, "seconds": time.monotonic() - t0}


def reach_text(out: dict) -> str:
    """How far a :func:`build_book` run got, in words."""
    text = f"every position to depth {out['depth']} searched"
    if out["partial"]:
        d, done, todo = out["partial"]
        text += f", time ran out at depth {d} with {done} of {todo} searched (a re-run goes on)"
    return text


def book_lookup(store_path, cfg: Config, pos: Position) -> dict | None:
    """The book node of ``pos``, or None when ``pos`` is not in the book.

    The node is stored once per canonical position, so its own ``position`` and
    ``moves`` may be a symmetric image of ``pos``; ``children`` are therefore made from
    ``pos`` itself: every legal move of ``pos`` with its child and that child's book value
    (``{"move", "position", "value", "score", "book"}``; value and score are the child's
    node's, from the child's mover, None where the child is not in the book; ``book`` says
    whether it is).
    :func:`solver.analysis.book_answer` turns it into an answer."""
    from solver.search.proofs import ProofStore

    if not (Path(store_path) / "data.mdb").exists():
        return None
    with ProofStore(store_path, cfg) as store:
        prover = Prover(cfg, tt_bits=4)
        node = store.get("book", node_key(prover, pos))
        if node is None:
            return None
        kids, seen = [], {}
        over = pos.phase == PLAY and status(cfg, pos) != ONGOING
        for mv in [] if over else moves(cfg, pos):
            child = apply(cfg, pos, mv)
            ck = node_key(prover, child)
            if ck not in seen:
                rec = store.get("book", ck)
                seen[ck] = (rec or {}).get("value"), (rec or {}).get("score"), rec is not None
            kids.append({"move": mv.text(cfg.board), "position": child.text(), "value": seen[ck][0],
                         "score": seen[ck][1], "book": seen[ck][2]})
        return dict(node, children=kids)


def book_line(store_path, cfg: Config, pos: Position, plies: int) -> list[str]:
    """The principal line through the book from ``pos``, up to ``plies`` moves. Where the
    position's value is proven: a move whose child's book value is that value one ply on
    (the fastest win, the slowest loss, a drawing move); elsewhere the move whose child
    scores best for the side to move (the engine's backed-up score). It ends where the book
    has neither, the game ends or a position repeats (a draw goes round)."""
    line: list[str] = []
    seen = {pos.text()}
    while len(line) < plies:
        node = book_lookup(store_path, cfg, pos)
        if node is None or not node.get("children"):
            break
        step = _proven_step(node) or _scored_step(pos, node)
        if step is None:
            break
        line.append(step["move"])
        pos = Position(step["position"])
        if pos.text() in seen:
            break
        seen.add(pos.text())
    return line


def _proven_step(node: dict) -> dict | None:
    v = node.get("value")
    if not v or v.get("lo") != v.get("hi"):
        return None
    want = {"win": "loss", "loss": "win", "draw": "draw"}[v["result"]]
    for child in node["children"]:
        cv = child.get("value") or {}
        if cv.get("result") == want and cv.get("lo") == cv.get("hi") and (
                want == "draw" or v.get("plies") is None or cv.get("plies") == v["plies"] - 1):
            return child
    return None


def _scored_step(pos: Position, node: dict) -> dict | None:
    """An open position's best child by score (children of expanded nodes only: a leaf
    of the book has no children in it)."""
    if node.get("moves") is None:
        return None
    best, best_raw = None, None
    for child in node["children"]:
        s = bookgraph.score_of(child.get("score"))
        if s is None:
            continue
        raw = bookgraph.through(pos.text(), child["position"], s).raw()
        if best_raw is None or raw > best_raw:
            best, best_raw = child, raw
    return best
