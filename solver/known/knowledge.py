"""Everything known of positions, in one lookup: the shipped store, then a user's opening book.

    k = Knowledge.default(book_store=path_or_None)
    k.get(cfg, pos)     # Known or None: the more informative of the two where both know it

The shipped store (:func:`solver.known.store.shipped`) is read-only; a user's own proof
store (``rotary book``) adds to it: a position only the user's book holds is answered from
it, and where both hold one the one that says more (a proven value over a half-known one,
an exact distance over a bound) answers.
"""

from __future__ import annotations

from pathlib import Path

from solver.game.config import Config
from solver.game.position import Position
from solver.game.values import Value
from solver.known.store import Known, KnownStore, shipped


def rank(v: Value) -> int:
    """How much a value says: exact proven 3, a proven bound 2, half known 1, unknown 0."""
    if v.proven:
        return 3 if v.exact else 2
    return 0 if v.result == "unknown" else 1


class Knowledge:
    """The shipped store and (optionally) a user's proof store with an opening book."""

    def __init__(self, store: KnownStore | None, book_store: str | Path | None = None):
        self.store = store
        self.book_store = Path(book_store) if book_store and (Path(book_store) / "data.mdb").exists() else None
        self._books: dict = {}

    @classmethod
    def default(cls, book_store: str | Path | None = None) -> "Knowledge":
        return cls(shipped(), book_store)

    def __bool__(self) -> bool:
        return self.store is not None or self.book_store is not None

    def get(self, cfg: Config, pos: Position) -> Known | None:
        mine = self.store.get(cfg, pos) if self.store is not None else None
        theirs = self._book(cfg, pos) if self.book_store is not None else None
        if mine is None or theirs is None:
            return mine or theirs
        return theirs if rank(theirs.value) > rank(mine.value) else mine

    def _book(self, cfg: Config, pos: Position) -> Known | None:
        from solver.analysis import book_value
        from solver.search.booknode import node_key
        from solver.search.proofs import ProofStore
        from solver.search.prover import Prover

        if cfg not in self._books:
            self._books[cfg] = (ProofStore(self.book_store, cfg), Prover(cfg, tt_bits=4))
        store, prover = self._books[cfg]
        node = store.get("book", node_key(prover, pos))
        if node is None:
            return None
        # the node may be stored as a symmetric image of pos: values and scores are the side to move's either way
        value, score = book_value(node.get("value")), node.get("score")
        if value.result == "unknown" and not score:
            return None
        return Known(value, "book", str(self.book_store), None if value.proven or not score else dict(score))

    def close(self) -> None:
        for store, _ in self._books.values():
            store.close()
        self._books = {}
