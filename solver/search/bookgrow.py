"""Growing the book best first: drop-out expansion by the engine's scores, proofs on the way.

    out = grow_book(cfg, start, store_path, deadline=time.monotonic() + 900)   # rotary book --minutes 15

Each step expands the leaf that :func:`solver.search.bookgraph.expansion_order` puts first
(the principal lines, then the side lines that drop least): its legal moves become its
``moves``, every child not yet in the book becomes a node, searched by the engine and by
df-pn (:mod:`solver.search.booknode`; in ``jobs`` worker processes when ``jobs > 1``),
and the values and scores are backed up to the root (:func:`solver.search.bookgraph.backup`).

Only this process writes to the store: a leaf's moves and its new children in one
transaction, then the backed-up fields that changed. An interrupted run (a deadline, ^C,
a kill) leaves a book that the next run extends: nodes made but not yet searched are
searched first, then expansion goes on from the leaves as they stand.
"""

from __future__ import annotations

import time
from typing import Callable

from solver.game.config import Config
from solver.game.position import Position, parse_position
from solver.game.rules import apply, moves
from solver.search import bookgraph
from solver.search.booknode import ENGINE_NODES, NodeWork, evaluate_job, make_pool, merge_proof, node_key, over

# why a run ended
TIME, COUNT, DONE = "time", "expansions", "done"


class Grower:
    """One run of best-first growth over a store (see the module docstring)."""

    def __init__(self, cfg: Config, store, db, db_path, nodes: int | None, seconds: float | None, jobs: int,
                 tt_bits: int, guided: bool, engine_nodes: int):
        self.cfg = cfg
        self.store = store
        self.nodes = nodes
        self.seconds = seconds
        self.engine_nodes = engine_nodes
        self.work = NodeWork(cfg, db, tt_bits, guided, engine_nodes) if jobs == 1 else None
        self.keyer = self.work.prover if self.work else NodeWork(cfg, None, 4, False, 0).prover
        self.pool = make_pool(jobs, cfg, db_path, tt_bits, guided, engine_nodes) if jobs > 1 else None
        self.book: dict = dict(store.items("book"))  # a damaged record: StoreError naming it
        self.searched = 0

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)

    def wanting(self, key: bytes) -> bool:
        """Whether a node still lacks its engine search or its proof."""
        node = self.book[key]
        no_engine = self.engine_nodes > 0 and node.get("engine") is None
        return no_engine or (node.get("proof") is None and not node.get("unprovable"))

    def search(self, keys: list[bytes], deadline: float | None) -> int:
        """Search the nodes ``keys`` (engine and df-pn), in workers or here, until the
        deadline; returns how many were searched."""
        done = 0
        if self.pool is not None:
            until = None if deadline is None else time.time() + deadline - time.monotonic()
            futs = [(k, self.pool.submit(evaluate_job, self.book[k]["position"], self.nodes, self.seconds, until))
                    for k in keys]
            for k, f in futs:
                rec = f.result()
                if rec is not None:
                    self._take(k, rec)
                    done += 1
        else:
            for k in keys:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                sec = left if self.seconds is None else (self.seconds if left is None else min(self.seconds, left))
                self._take(k, self.work.evaluate(Position(self.book[k]["position"]), self.nodes, sec))
                done += 1
        self.searched += done
        return done

    def _take(self, key: bytes, rec: dict) -> None:
        node = self.book[key]
        if rec["engine"] is not None:
            node["engine"] = rec["engine"]
        if rec["proof"] is not None:
            merge_proof(node, rec["proof"])
        elif Position(node["position"]).phase != "play":
            node["unprovable"] = True  # a setup position no database answers: no proof to wait for

    def expand(self, key: bytes) -> list[bytes]:
        """Give the leaf ``key`` its moves and make its new children; returns their keys."""
        node = self.book[key]
        pos = parse_position(node["position"])
        out, seen, new = [], set(), []
        for mv in [] if over(self.cfg, pos) else moves(self.cfg, pos):
            child = apply(self.cfg, pos, mv)
            ck = node_key(self.keyer, child)
            if ck in seen:
                continue
            seen.add(ck)
            out.append({"move": mv.text(self.cfg.board), "key": ck.hex(), "position": child.text()})
            if ck in self.book:
                self.book[ck]["depth"] = min(self.book[ck]["depth"], node["depth"] + 1)
            else:
                self.book[ck] = {"position": child.text(), "depth": node["depth"] + 1, "moves": None, "proof": None,
                                 "engine": None}
                new.append(ck)
        node["moves"] = out
        return new


def grow_book(cfg: Config, start: Position, store_path, deadline: float | None = None, expansions: int | None = None,
              nodes: int | None = 50_000, seconds: float | None = None, jobs: int = 1, db_path=None,
              tt_bits: int = 21, guided: bool = False, engine_nodes: int = ENGINE_NODES,
              ply_cost: int = bookgraph.PLY_COST, progress: Callable[[dict], None] | None = None) -> dict:
    """Grow the book from ``start`` best first until ``deadline`` (monotonic time),
    ``expansions`` leaves expanded, or nothing is left to expand (every leaf proven).

    ``nodes``/``seconds``: df-pn's budget per new node; ``engine_nodes``: the engine's.
    ``progress(info)`` is called after each expansion with ``expanded``, ``searched``,
    ``seconds`` and the book's :func:`~solver.search.bookgraph.statistics`-like ``nodes``,
    ``proven`` and ``root``. Returns ``{"root", "book", "expanded", "searched", "stopped",
    "seconds"}``; ``stopped`` is ``"time"``, ``"expansions"`` or ``"done"``.
    """
    from solver.db.database import open_db
    from solver.search.proofs import ProofStore

    t0 = time.monotonic()
    store = ProofStore(store_path, cfg)
    db = grower = None
    try:
        db = open_db(db_path) if db_path else None
        grower = Grower(cfg, store, db, db_path, nodes, seconds, jobs, tt_bits, guided, engine_nodes)
        book = grower.book
        root = node_key(grower.keyer, start)
        if root not in book:
            book[root] = {"position": start.text(), "depth": 0, "moves": None, "proof": None, "engine": None}
        book[root]["depth"] = 0
        # nodes an interrupted run made but did not search: first
        late = lambda: deadline is not None and time.monotonic() >= deadline  # noqa: E731
        todo = [k for k in bookgraph.reachable(book, root) if grower.wanting(k)]
        grower.search(todo, deadline)
        store.put_many("book", [(k, book[k]) for k in todo])
        _backup(store, book, root)
        expanded, stopped = 0, None
        while stopped is None:
            if late():
                stopped = TIME
                break
            if expansions is not None and expanded >= expansions:
                stopped = COUNT
                break
            order = bookgraph.expansion_order(book, root, ply_cost)
            if not order:
                stopped = DONE
                break
            key = order[0][1]
            new = grower.expand(key)
            grower.search(new, deadline)
            store.put_many("book", [(key, book[key])] + [(k, book[k]) for k in new])
            _backup(store, book, root)
            expanded += 1
            if progress is not None:
                progress({"expanded": expanded, "searched": grower.searched, "seconds": time.monotonic() - t0,
                          "nodes": len(book), "proven": sum(1 for n in book.values() if bookgraph.proven(n)),
                          "root": bookgraph.root_summary(book, root)})
    finally:  # however the run ends (a full disk, ^C): the store can be opened again
        if grower is not None:
            grower.close()
        store.close()
        if db is not None:
            db.close()
    return {"root": root, "book": book, "expanded": expanded, "searched": grower.searched, "stopped": stopped,
            "seconds": time.monotonic() - t0}


def _backup(store, book: dict, root: bytes) -> None:
    changed = bookgraph.backup(book, root)
    if changed:
        store.put_many("book", [(k, book[k]) for k in changed])
