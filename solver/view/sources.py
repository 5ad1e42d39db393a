"""Where the viewer's answers come from, in order: a value database, the shipped store of
known values (:mod:`solver.known`: the published proof trees and books, a user's book
adding to it), the opening book, a df-pn proof made on request, the rules.

Two marks are added to what they answer: the ``tree`` field where a loaded proof tree holds
the position (:mod:`solver.view.trees`), and ``book: true`` on the moves of a book answer
whose child is a position of the book.

Where none of them answers a position still in play, the engine's estimate
(:mod:`solver.view.analysing`) is made on request and shown with ``source: "engine"``.

Databases are opened read-only and pooled: a request takes one :class:`Database` (a thread
of its own while it holds it), reads everything it needs in one LMDB read transaction and
gives it back, so concurrent requests never share a block cache. Proofs run in one worker
process (spawned: numba and LMDB stay out of the server's threads); the server only starts
them and reports what they found.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from solver.analysis import book_answer, database_answer, rules_answer
from solver.db.database import Database
from solver.game.config import Config
from solver.game.position import PLAY, Position
from solver.game.rules import ONGOING, check_position, status
from solver.view.analysing import analyse_position
from solver.view.proving import prove_moves
from solver.view.trees import ProofTrees

# LMDB environments are shared per folder and process; opening and closing them is not
# thread-safe, so every open and close of the server goes through this lock.
_OPENING = threading.Lock()


class DbPool:
    """Read-only :class:`Database` handles of one folder, one per concurrent request."""

    def __init__(self, path: str | Path):
        with _OPENING:
            first = Database(path)
        self.path = Path(path)
        self.cfg: Config = first.cfg
        self.material = tuple(first.material)
        self.description = first.description
        self._meta = first  # answers get_reason (no reads) for any thread
        self._free: list[Database] = []
        self._all: list[Database] = [first]
        self._lock = threading.Lock()

    def answers(self, pos: Position) -> bool:
        return self._meta.get_reason(pos) is None

    @contextmanager
    def reading(self) -> Iterator[Database]:
        """A handle for this thread alone, inside one read transaction."""
        with self._lock:
            db = self._free.pop() if self._free else None
        if db is None:
            with _OPENING:
                db = Database(self.path)
            with self._lock:
                self._all.append(db)
        try:
            with db.store.reading():
                yield db
        finally:
            with self._lock:
                self._free.append(db)

    def close(self) -> None:
        with _OPENING:
            for db in self._all:
                db.close()
        self._all, self._free = [], []


class Sources:
    """Every source of answers the server reads; :meth:`answer` asks them in order.

    * ``databases`` — folders of value databases (the smallest one that answers is read);
    * ``rules_for(pos)`` — the rules of a position no database answers (may raise a
      :class:`~solver.errors.RotaryError`, e.g. rules that need trap fields on that board);
    * ``store_for(cfg)`` — the proof store holding the opening book of ``cfg``, or None;
    * ``prove_nodes`` — the df-pn budget of one "prove" (shared by the children);
    * ``engine_ms`` — the engine's thinking time for one analysis;
    * ``trees`` — loaded proof trees, whose nodes add the ``tree`` field.
    """

    def __init__(
        self,
        databases: list[str | Path],
        rules_for: Callable[[Position], Config],
        store_for: Callable[[Config], Path | None] | None = None,
        prove_nodes: int = 200_000,
        executor_factory: Callable[[], object] | None = None,
        engine_ms: int = 1000,
        trees: ProofTrees | None = None,
    ):
        self.trees = trees or ProofTrees()
        self.pools = [DbPool(p) for p in databases]
        self.rules_for = rules_for
        self.store_for = store_for
        self.prove_nodes = prove_nodes
        self._executor_factory = executor_factory or _spawn_executor
        self._executor = None
        self._jobs: dict[str, object] = {}  # position text -> future
        self._proved: dict[str, dict] = {}  # position text -> proof answer
        self.engine_ms = engine_ms
        self._engine_executor = None  # a worker of its own: an analysis never waits for a proof
        self._analyses: dict[str, object] = {}  # position text -> future
        self._analysed: dict[str, dict] = {}  # position text -> engine answer
        self._lock = threading.Lock()
        self._book_lock = threading.Lock()

    # ------------------------------------------------------------------ answers

    def pool_for(self, pos: Position) -> DbPool | None:
        fitting = [p for p in self.pools if p.answers(pos)]
        return min(fitting, key=lambda p: sum(p.material)) if fitting else None

    def config(self, pos: Position) -> Config:
        """The rules ``pos`` is read under (its database's, else ``rules_for``), checked."""
        pool = self.pool_for(pos)
        if pool is not None:
            return pool.cfg
        cfg = self.rules_for(pos)
        check_position(cfg, pos)
        return cfg

    def answer(self, pos: Position) -> tuple[dict, Config]:
        """The answer for ``pos`` in the one schema, and the rules it was made under; with
        the ``tree`` field where a loaded proof tree holds ``pos``."""
        answer, cfg = self._answer(pos)
        tree = self.trees.lookup(cfg, pos) if pos.phase == PLAY else None
        if tree is not None:
            answer = dict(answer, tree=tree)  # a copy: proofs' and analyses' answers are kept
        return answer, cfg

    def _answer(self, pos: Position) -> tuple[dict, Config]:
        pool = self.pool_for(pos)
        if pool is not None:
            with pool.reading() as db:
                return database_answer(db, pos), pool.cfg
        cfg = self.config(pos)
        text = pos.text()
        known = self._known(cfg, pos)
        if known is not None:
            return known, cfg
        book = self._book(cfg, pos)
        if book is not None:
            return book, cfg
        with self._lock:
            proved = self._proved.get(text)
            analysed = self._analysed.get(text)
        if proved is not None:
            return proved, cfg
        if analysed is not None:
            return analysed, cfg
        return rules_answer(cfg, pos), cfg

    def _known(self, cfg: Config, pos: Position) -> dict | None:
        """The shipped store's answer (:mod:`solver.known`), the user's book adding to it;
        moves neither knows are left unknown (the engine is asked on request only)."""
        from solver.known.answer import known_answer
        from solver.known.knowledge import Knowledge
        from solver.known.store import shipped

        store = shipped()
        if store is None or store.get(cfg, pos) is None:
            return None
        path = self.store_for(cfg) if self.store_for else None
        with self._book_lock:
            knowledge = Knowledge(store, path)
            try:
                return known_answer(cfg, pos, knowledge)
            finally:
                knowledge.close()

    def _book(self, cfg: Config, pos: Position) -> dict | None:
        path = self.store_for(cfg) if self.store_for else None
        if path is None or not (Path(path) / "data.mdb").exists() or pos.phase != PLAY:
            return None
        from solver.search.book import book_lookup

        with self._book_lock:
            node = book_lookup(path, cfg, pos)
        if node is None:
            return None
        answer = book_answer(cfg, pos, node)
        in_book = {c["move"] for c in node["children"] if c.get("book")}
        for m in answer["moves"]:
            if m["move"] in in_book:
                m["book"] = True
        return answer

    def sample_position(self, tries: int = 200, seed: int = 0) -> Position | None:
        """A position of the first rotation-phase database to start from, where there is no
        preset start: the first of a fixed pseudo-random sample that is a win of 9 plies or
        more (else the longest win seen); None without such a database."""
        import random

        pools = [p for p in self.pools if p.cfg.setup is None]
        if not pools:
            return None
        rng = random.Random(seed)
        best = None
        with pools[0].reading() as db:
            lay = db.layout
            for _ in range(tries):
                m, p, s = lay.position(rng.randrange(lay.total))
                x, o = (m, p) if s == 0 else (p, m)
                pos = Position.make(db.cfg.board, x, o, s)
                v = db.probe(pos)
                if v.result == "win" and (best is None or v.plies > best[0]):
                    best = (v.plies, pos)
                    if v.plies >= 9:
                        break
        return None if best is None else best[1]

    # ------------------------------------------------------------------ proofs

    def can_prove(self, cfg: Config, pos: Position, answer: dict) -> bool:
        """Whether a proof can add to ``answer``: nothing exact answers it (the rules, or an
        engine estimate), and it is a rotation-phase position in play."""
        return answer["source"] in ("rules", "engine") and pos.phase == PLAY and status(cfg, pos) == ONGOING

    def start_proof(self, pos: Position) -> dict:
        """Start proving ``pos`` in the worker unless it is running or done; its state."""
        cfg = self.config(pos)
        text = pos.text()
        with self._lock:
            if text not in self._jobs and text not in self._proved:
                if self._executor is None:
                    self._executor = self._executor_factory()
                self._jobs[text] = self._executor.submit(prove_moves, cfg.key(), text, self.prove_nodes)
        return self.proof_state(pos)

    def proof_state(self, pos: Position) -> dict:
        """``{"position", "state": none|running|done|failed, "answer"?, "error"?}``."""
        text = pos.text()
        with self._lock:
            if text in self._proved:
                return {"position": text, "state": "done", "answer": self._proved[text]}
            job = self._jobs.get(text)
            if job is None:
                return {"position": text, "state": "none"}
            if not job.done():
                return {"position": text, "state": "running"}
            del self._jobs[text]
            try:
                answer = job.result()
            except Exception as e:  # a crashed worker: say so, let the user try again
                return {"position": text, "state": "failed", "error": f"the proof failed: {e}"}
            self._proved[text] = answer
            return {"position": text, "state": "done", "answer": answer}

    # ------------------------------------------------------------------ engine

    def can_analyse(self, cfg: Config, pos: Position, answer: dict) -> bool:
        """Whether the engine can add to ``answer``: nothing else knows the position, and it is in play."""
        return answer["source"] == "rules" and status(cfg, pos) == ONGOING

    def start_analysis(self, pos: Position) -> dict:
        """Start the engine on ``pos`` in its worker unless it is running or done; its state."""
        cfg = self.config(pos)
        text = pos.text()
        with self._lock:
            if text not in self._analyses and text not in self._analysed:
                if self._engine_executor is None:
                    self._engine_executor = self._executor_factory()
                self._analyses[text] = self._engine_executor.submit(analyse_position, cfg.key(), text, self.engine_ms)
        return self.analysis_state(pos)

    def analysis_state(self, pos: Position) -> dict:
        """``{"position", "state": none|running|done|failed, "answer"?, "error"?}``."""
        text = pos.text()
        with self._lock:
            if text in self._analysed:
                return {"position": text, "state": "done", "answer": self._analysed[text]}
            job = self._analyses.get(text)
            if job is None:
                return {"position": text, "state": "none"}
            if not job.done():
                return {"position": text, "state": "running"}
            del self._analyses[text]
            try:
                answer = job.result()
            except Exception as e:  # a crashed worker: say so, let the user try again
                return {"position": text, "state": "failed", "error": f"the analysis failed: {e}"}
            self._analysed[text] = answer
            return {"position": text, "state": "done", "answer": answer}

    def close(self) -> None:
        with self._lock:
            for ex in (self._executor, self._engine_executor):
                if ex is not None:
                    ex.shutdown(wait=False, cancel_futures=True)
            self._executor = self._engine_executor = None
        for pool in self.pools:
            pool.close()


def _spawn_executor():
    from solver.retro.pool import spawn_pool  # a worker that leaves with the server, even after kill -9

    return spawn_pool(1, None, ())
