"""One node of the opening book: its key, its engine search and its proof.

The work a book does per position — the engine's search (:class:`solver.engine.engine.Engine`,
a node budget on a cleared table, so the same position always gets the same score) and a
df-pn proof (:class:`solver.search.prover.Prover`), or a database's exact value — is done
here, in the calling process or in a worker process (:func:`evaluate_job`). Workers only
compute: the book's driver is the only process that writes to the store.
"""

from __future__ import annotations

import time

from solver.game.config import Config, config_from_key
from solver.game.position import PLAY, Position, parse_position
from solver.game.rules import ONGOING, status
from solver.kernels.code import DRAW_V, LOSS_V, WIN_V
from solver.search.prover import ProofResult, Prover

ENGINE_NODES = 20_000  # the engine's search per book position (about 0.05 s on hex(4), one core)
ENGINE_TT_BITS = 18  # cleared before each position: small, so clearing costs nothing


def node_key(prover: Prover, pos: Position) -> bytes:
    """The book's key of ``pos``: the canonical key of a rotation position (symmetric
    positions are one node), ``b"T"`` + text for the setup phases (not merged)."""
    from solver.search.proofs import kbytes

    if pos.phase == PLAY:
        return kbytes(*prover.key(pos.mover, pos.opponent, pos.turn, 0))
    return b"T" + pos.text().encode()


def over(cfg: Config, pos: Position) -> bool:
    """Whether the game is finished in ``pos`` (a rotation position: the rules say so)."""
    return pos.phase == PLAY and status(cfg, pos) != ONGOING


def proof_record(res: ProofResult) -> dict:
    return dict(res.to_json(), lo=res.lo, hi=res.hi, lower=res.lower)


def from_database(pos: Position, value) -> dict:
    """A proof record for a value read from a retrograde or setup database (exact)."""
    v = {"win": WIN_V, "loss": LOSS_V, "draw": DRAW_V}[value.result]
    res = ProofResult(pos.text(), v, v, value.plies, True, value.plies)
    return proof_record(res)


def merge_proof(node: dict, rec: dict) -> None:
    """Put a new proof record into ``node``, never losing what an older one knew (the
    intervals intersected, the nodes spent added)."""
    old = node.get("proof")
    if old is not None:
        rec = dict(rec, nodes=rec["nodes"] + old.get("nodes", 0))
        if old["lo"] > rec["lo"] or old["hi"] < rec["hi"]:
            if old["lo"] == old["hi"]:
                rec = dict(old, nodes=rec["nodes"])
            else:
                rec = dict(rec, lo=max(old["lo"], rec["lo"]), hi=min(old["hi"], rec["hi"]))
    node["proof"] = rec


class NodeWork:
    """The engine and the prover of one process, reused from position to position (the
    prover's table keeps what earlier proofs found)."""

    def __init__(self, cfg: Config, db=None, tt_bits: int = 21, guided: bool = False, engine_nodes: int = ENGINE_NODES):
        self.cfg = cfg
        self.db = db
        self.prover = Prover(cfg, tt_bits=tt_bits, db=db, guided=guided)
        self.engine_nodes = engine_nodes
        self._engine = None

    def engine_record(self, pos: Position) -> dict | None:
        """The engine's search of ``pos``: ``{"kind", "value", "depth", "nodes", "move"}``
        (None with no engine budget)."""
        if not self.engine_nodes:
            return None
        from solver.engine.engine import Engine
        from solver.engine.score import Limit

        if self._engine is None:
            self._engine = Engine(self.cfg, tt_bits=ENGINE_TT_BITS)
        self._engine.new_game()  # the same position, the same score, whatever came before
        r = self._engine.think(pos, Limit(nodes=self.engine_nodes))
        return {"kind": r.score.kind, "value": int(r.score.value), "depth": int(r.depth), "nodes": int(r.nodes),
                "move": None if r.move is None else r.move.text(self.cfg.board)}

    def proof(self, pos: Position, nodes: int | None, seconds: float | None) -> dict | None:
        """A proof record for ``pos``: a database's value, df-pn's within the budget, or
        None (a setup position no database answers)."""
        if self.db is not None and self.db.get_reason(pos) is None:
            return from_database(pos, self.db.probe(pos))
        if pos.phase != PLAY:
            return None
        return proof_record(self.prover.prove(pos, nodes=nodes, seconds=seconds))

    def evaluate(self, pos: Position, nodes: int | None, seconds: float | None, engine: bool = True) -> dict:
        """``{"engine", "proof"}`` of ``pos`` (the engine's search only when ``engine``)."""
        return {"engine": self.engine_record(pos) if engine else None, "proof": self.proof(pos, nodes, seconds)}


# ---------------------------------------------------------------------------- worker processes

_WORKER: dict = {}


def worker_init(cfg_key: dict, db_path: str | None, tt_bits: int, guided: bool, engine_nodes: int) -> None:
    from solver.db.database import open_db

    cfg = config_from_key(cfg_key)
    db = open_db(db_path) if db_path else None
    _WORKER["work"] = NodeWork(cfg, db, tt_bits, guided, engine_nodes)


def evaluate_job(text: str, nodes: int | None, seconds: float | None, until: float | None) -> dict | None:
    """:meth:`NodeWork.evaluate` in a worker; ``until`` (wall-clock time) caps the proof's
    time, and a job that starts after it returns None."""
    if until is not None:
        left = until - time.time()
        if left <= 0:
            return None
        seconds = left if seconds is None else min(seconds, left)
    return _WORKER["work"].evaluate(parse_position(text), nodes, seconds)


def make_pool(jobs: int, cfg: Config, db_path=None, tt_bits: int = 21, guided: bool = False,
              engine_nodes: int = ENGINE_NODES):
    """Spawned workers for :func:`evaluate_job` (never forked: numba and LMDB)."""
    from solver.retro.pool import spawn_pool

    return spawn_pool(jobs, worker_init, (cfg.key(), str(db_path) if db_path else None, tt_bits, guided, engine_nodes))
