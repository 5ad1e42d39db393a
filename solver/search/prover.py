"""Proving positions forward: df-pn with cycles, database leaves and distances.

    prover = Prover(cfg, db=open_db(path))      # db optional: its positions become leaves
    r = prover.prove(pos, nodes=1_000_000)       # ProofResult
    r.result, r.plies, r.exact, r.best_move
    Prover(cfg, guided=True)                     # df-pn+: numbers from the evaluation (solver.search.guide)
    Prover(cfg, threads=2)                       # one search on two threads, one table (solver.search.parallel)

The search itself is :func:`solver.kernels.dfpn.dfpn` (read its module docstring for the
method: AND/OR df-pn, repetition = draw, path-dependent disproofs never shared, 1+ε
thresholds, an edge cost, the pass argument). Here: the two questions, budgets, and what a result says.

A position's value is an interval ``lo..hi`` of loss < draw < win for the side to move:

* "does the mover win?" proven -> win; disproven -> at most a draw (``not-win``);
* "does the mover lose?" proven -> loss; disproven -> at least a draw (``not-loss``);
* both disproven -> draw; nothing known -> ``unknown``.

Distances: the proof tree gives an upper bound on the fastest win (the attacker can follow
it); the search also keeps a lower bound; the distance is *exact* when they meet. Where
they do not, :meth:`Prover.refine` runs an iterative-deepening "win within n plies?" search
(no repetition checks are needed there: the depth bounds the tree, and repeating never
shortens a win) to close the gap within a budget. A loss distance is the opponent's
fastest win (the loser's longest resistance).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from solver.db.compact_reader import require_distances
from solver.db.database import open_db
from solver.errors import StoreError
from solver.game.config import Config, config_from_key
from solver.game.position import PLAY, Move, Position, parse_position
from solver.game.rules import ONGOING, WIN, apply, moves, status
from solver.index import Layout, build_geo
from solver.kernels import closure
from solver.kernels.code import DRAW_V, LOSS_V, WIN_V
from solver.kernels.dfpn import Ctx, dfpn, new_stack
from solver.kernels.leaves import DbInfo
from solver.kernels.shared import no_par
from solver.kernels.symkeys import canon, sym_tables
from solver.kernels.table import DMAX, INF, new_tt, tt_count, tt_probe, tt_read
from solver.retro.pool import spawn_pool
from solver.search import closure_threads, distance, parallel
from solver.search.guide import make_guide
from solver.search.limits import NODES, PATH, TIME, stop_text
from solver.search.proofs import ProofStore, kbytes

# a value interval lo..hi (LOSS_V <= lo <= hi <= WIN_V) in words
RESULT_NAMES = {
    (WIN_V, WIN_V): "win",
    (LOSS_V, LOSS_V): "loss",
    (DRAW_V, DRAW_V): "draw",
    (LOSS_V, DRAW_V): "not-win",
    (DRAW_V, WIN_V): "not-loss",
    (LOSS_V, WIN_V): "unknown",
}


@dataclass
class ProofResult:
    position: str
    lo: int  # LOSS_V..WIN_V, for the side to move
    hi: int
    plies: int | None = None  # distance of a win / loss: exact or an upper bound
    exact: bool = False
    lower: int | None = None  # lower bound on that distance, when known
    best_move: str | None = None
    nodes: int = 0
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)
    stopped: str | None = None  # why the answer is short of exact (a limit), None when it is not

    @property
    def result(self) -> str:
        return RESULT_NAMES[(self.lo, self.hi)]

    @property
    def resolved(self) -> bool:
        return self.lo == self.hi

    def to_json(self) -> dict:
        return {
            "position": self.position,
            "result": self.result,
            "plies": self.plies,
            "exact": self.exact,
            "best_move": self.best_move,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
        }

    def text(self) -> str:
        out = self.result
        if self.plies is not None:
            out += f" in {self.plies}" if self.exact else f" in at most {self.plies}"
            if not self.exact and self.lower:
                out += f" (at least {self.lower})"
        return out


def _dummy_layout(cfg: Config):
    return Layout(cfg, (0, 0)).lay


def require_rules(cfg: Config, db) -> None:
    """Refuse a database solved under other rules than ``cfg`` (its values would be wrong here)."""
    if db.cfg.board is not cfg.board or db.cfg.edge != cfg.edge or db.cfg.capture != cfg.capture or (
        db.cfg.traps_x,
        db.cfg.traps_o,
    ) != (cfg.traps_x, cfg.traps_o):
        raise StoreError(f"the database {db.path} is for other rules ({db.description})")


#: What one unit of the draw closure's work (a node taken into its region or an edge walked)
#: costs in units of df-pn's (a child generated, or looked up again on the way back), for
#: the closure's share of a one-thread search: 160-330 ns against 35-45 ns on hex(3) 3v3
#: ``edge`` positions and the standard start's (2 cores, AMD EPYC), a ratio of 4 to 9; the
#: low end, as draws lean on closures. Counted in work, a one-thread search is the same at
#: any machine load: counted in seconds, the position after ``e4+3`` took from 0.5 M to over
#: 1 M nodes as the closures' timing varied.
CLOSURE_UNIT = 4

#: The draw closure's most region nodes (its edges four times as many): half the table's
#: entries up to tables of 2^24, so that a table of 2^28 entries (4 GiB) does not bring
#: buffers of twice its size.
CLOSURE_NODES = 1 << 23

#: A checkpoint waits at least this many times as long as the last one took: writing a
#: table of tens of millions of entries takes seconds, and a fixed minute would spend a
#: growing share of a long proof on it.
CHECKPOINT_SHARE = 20


class Prover:
    """A df-pn prover for one configuration: its table lives as long as the object."""

    def __init__(self, cfg: Config, tt_bits: int = 22, db=None, maxd: int = 1500, slice_nodes: int = 200_000,
                 naive: bool = False, guided: bool = False, threads: int = 1):
        if not 1 <= threads <= parallel.MAX_THREADS:
            raise ValueError(f"threads must be 1..{parallel.MAX_THREADS}, got {threads}")
        if threads > 1 and naive:
            raise ValueError("the naive table (a test of the path-dependence rule) is for one thread")
        self.threads = threads  # df-pn's threads on the one table (solver.search.parallel)
        self.naive = naive
        self.guided = guided  # initial numbers from the engine's evaluation (solver.search.guide)
        self.guide = make_guide(cfg, guided)
        self.store = None
        self.checkpoint_s = 60.0
        self._last_checkpoint = time.monotonic()
        self._checkpoint_took = 0.0  # seconds the last checkpoint took
        self.cfg = cfg
        self.geo = build_geo(cfg)
        n = self.geo.npoints
        self.symtab = sym_tables(self.geo)
        self.tt = new_tt(tt_bits, checked=threads > 1, npoints=n)
        self.maxd = maxd  # the path-length limit: a line is cut there (see solver.kernels.dfpn)
        self.last_stop: str | None = None  # what ended the last :meth:`search` unresolved
        self.maxc = 6 * n
        self.stack = new_stack(maxd, self.maxc)
        self.stats = np.zeros(8, dtype=np.int64)
        self.par = no_par()
        self.out = np.zeros(6, dtype=np.int64)
        self.slice_nodes = slice_nodes
        self.first_slice = min(10_000, slice_nodes)
        self._closure = None  # the draw closure's buffers, made when first needed
        self.closure_stats = np.zeros(4, dtype=np.int64)  # last region, edges, overflow; total proven
        self.closure_seconds = 0.0
        self.search_seconds = 0.0  # df-pn's own time (benchmarks)
        self.closure_units = 0  # the closures' work so far: nodes taken in plus edges walked
        self.search_work = 0  # one thread's df-pn work: children generated and looked up again
        self.closure_share = 1.0
        self.use_closure = True
        self.rtt = None  # the distance table of :meth:`refine`, made when first needed
        self.rtt_bits = min(tt_bits, 20)
        self._rstack = None
        if db is not None:
            require_rules(cfg, db)
            require_distances(db, "search leaves")
            self.dbvals = db.values()
            self.lay = db.layout.lay
            self.dbinfo = DbInfo(True, cfg.variable_material, int(db.material[0]), int(db.material[1]))
        else:
            self.dbvals = np.zeros(1, dtype=np.uint16)
            self.lay = _dummy_layout(cfg)
            self.dbinfo = DbInfo(False, False, 0, 0)
        self.ctx = Ctx(self.geo, self.symtab, self.tt, self.dbinfo, self.dbvals, self.lay, self.stats)
        self.threads_state = parallel.Threads(self, threads) if threads > 1 else None

    def work(self) -> int:
        """One thread's df-pn work so far: children generated plus children looked up again."""
        return int(self.stats[1]) + int(self.stats[3])

    @property
    def nodes(self) -> int:
        return int(self.stats[0]) if self.threads_state is None else self.threads_state.nodes()

    # ------------------------------------------------------------------ raw searches

    def key(self, m: int, p: int, s: int, q: int) -> tuple[int, int]:
        k1, k2 = canon(np.uint64(m), np.uint64(p), s, q, self.geo, self.symtab)
        return int(k1), int(k2)

    def search(self, m: int, p: int, s: int, q: int, budget: int, deadline: float | None = None, tick=None):
        """df-pn on one question until resolved, ``budget`` nodes or the deadline.

        The search runs in slices of at most ``slice_nodes`` (so deadlines and checkpoints
        are seen); at ``first_slice`` nodes and each doubling after, and when the budget or
        time is spent, the draw closure (:func:`solver.kernels.closure.close`) turns what
        the explored graph already shows into stored disproofs. Returns ``(pn, dn, dist,
        lb, best move code)`` of the root, and sets :attr:`last_stop` to what ended an
        unresolved search (:data:`NODES`, :data:`TIME` or :data:`PATH`; None when resolved).
        With ``threads`` > 1: :func:`solver.search.parallel.search`.
        """
        if self.threads_state is not None:
            return parallel.search(self, m, p, s, q, budget, deadline, tick)
        start = self.nodes
        # the closure's cost grows with the explored region: it runs at doubling node
        # counts, and is skipped while its work has cost more than ``closure_share`` of
        # df-pn's (so it can at most halve the node rate). Work, not seconds: with time the
        # nodes a proof took followed the machine's load (see CLOSURE_UNIT)
        close_at = self.first_slice
        k1, k2 = canon(np.uint64(m), np.uint64(p), s, q, self.geo, self.symtab)
        self.last_stop = NODES
        while True:
            left = budget - (self.nodes - start)
            if left <= 0:
                self.last_stop = NODES
                break
            spent = self.nodes - start
            t = time.monotonic()
            work = self.work()
            rc = dfpn(self.ctx, self.stack, np.uint64(m), np.uint64(p), s, q,
                      min(left, self.slice_nodes, max(close_at - spent, 1)), self.out, self.naive, self.guide, self.par)
            self.search_seconds += time.monotonic() - t
            pn, dn = int(self.out[0]), int(self.out[1])
            self.search_work += self.work() - work
            spent = self.nodes - start
            late = deadline is not None and time.monotonic() >= deadline
            due = spent >= close_at or spent >= budget or late
            cheap = self.closure_cheap(self.search_work)
            if pn != 0 and dn != 0 and self.use_closure and not self.naive and due and cheap:
                close_at = 2 * spent
                if self.close(k1, k2, 2 * spent + self.first_slice):
                    self.out[:] = (INF, 0, DMAX, DMAX, -1, INF)
                    dn = 0
            if tick is not None:
                tick()
            if self.checkpoint_due():
                self.checkpoint()
            if rc:
                # every line left was cut at the path-length limit: the root's "disproof"
                # rests on the cuts, so the question stays open (searching on would only
                # walk the same lines to the same cuts: they are never stored)
                self.out[:6] = (1, 1, DMAX, self.out[3], -1, INF)
                self.last_stop = PATH
                break
            if pn == 0 or dn == 0:
                self.last_stop = None
                break
            if deadline is not None and time.monotonic() >= deadline:
                self.last_stop = TIME
                break
        return tuple(int(v) for v in self.out[:5])

    def closure_cheap(self, work: int) -> bool:
        """Whether the closures' work so far is within ``closure_share`` of df-pn's ``work``
        (children generated and looked up again; a closure's unit counts as
        :data:`CLOSURE_UNIT` of them)."""
        return CLOSURE_UNIT * self.closure_units <= self.closure_share * work

    def closure_buffers(self):
        """The draw closure's buffers (made when first needed)."""
        if self._closure is None:
            # in proportion to the table up to 2^24 entries, then capped (a region that
            # outgrows them is cut, which proves less, never something false)
            size = self.tt.dw.shape[0]
            self._closure = closure.new_closure(self.tt, min(size // 2, CLOSURE_NODES), min(4 * size, 4 * CLOSURE_NODES),
                                                self.maxc)
        return self._closure

    def close(self, k1, k2, limit: int, stop: np.ndarray | None = None, threads=None) -> bool:
        """Run the draw closure from a root key over at most ``limit`` explored nodes
        (its cost is in proportion: the caller ties it to the nodes it searched);
        whether the root is now disproven. ``stop``: the threads' flags (the closure
        leaves, proving nothing, once ``stop[0]`` is set; by default the one thread's, never
        set); ``threads``: a :class:`solver.search.closure_threads.ClosureThreads` to grow
        its region on."""
        stop = self.par.ctl if stop is None else stop
        # a first call compiles the kernel (or loads it from numba's cache), seconds that
        # are not the closure's: counted, they would hold it off for most of a short proof
        first = threads is None and not closure.close.signatures
        t0 = time.monotonic()
        if threads is not None:
            proven = closure_threads.close_on_threads(self, k1, k2, limit, stop, threads)
        else:
            proven = closure.close(self.ctx, self.closure_buffers(), k1, k2, limit, self.closure_stats, stop)
        self.closure_stats[3] += proven
        self.closure_units += int(self.closure_stats[0]) + int(self.closure_stats[1])
        if not first:
            self.closure_seconds += time.monotonic() - t0
        i, _, dn, _, _ = tt_probe(self.tt, np.uint64(k1), np.uint64(k2))
        return i >= 0 and dn == 0

    def lookup(self, m: int, p: int, s: int, q: int):
        """The table's ``(pn, dn, dist, lb, best)`` for a question, or None."""
        k1, k2 = canon(np.uint64(m), np.uint64(p), s, q, self.geo, self.symtab)
        i, pn, dn, dist, lb, best = tt_read(self.tt, np.uint64(k1), np.uint64(k2))
        if i < 0:
            return None
        return int(pn), int(dn), int(dist), int(lb), int(best)

    # ------------------------------------------------------------------ persistence

    def attach(self, store) -> int:
        """Use a :class:`solver.search.proofs.ProofStore`: load what it holds (resume)."""
        self.store = store
        self._last_checkpoint = time.monotonic()
        return store.load_table(self.tt)

    def checkpoint(self) -> int:
        """Write the table's worthwhile entries to the store; how many."""
        t = time.monotonic()
        n = self.store.save_table(self.tt) if self.store is not None else 0
        self._last_checkpoint = time.monotonic()
        self._checkpoint_took = self._last_checkpoint - t
        return n

    def checkpoint_due(self) -> bool:
        """Whether the table should go to the store now: ``checkpoint_s`` after the last
        checkpoint, or CHECKPOINT_SHARE times as long as that one took if more (a large
        table's checkpoint then costs at most a twentieth of the search's time)."""
        wait = max(self.checkpoint_s, CHECKPOINT_SHARE * self._checkpoint_took)
        return self.store is not None and time.monotonic() - self._last_checkpoint > wait

    def stored_result(self, pos: Position) -> dict | None:
        if self.store is None or pos.phase != PLAY:
            return None
        return self.store.get("results", kbytes(*self.key(pos.mover, pos.opponent, pos.turn, 0)))

    def save_result(self, pos: Position, res: "ProofResult", table: bool = True) -> None:
        """Store a result; with ``table`` also the table (a checkpoint), else only when one is
        due (book jobs: writing the whole table after each of thousands of positions would
        cost more than proving them; a kill loses at most the table work since the last
        checkpoint (:meth:`checkpoint_due`), never a stored result)."""
        if self.store is None:
            return
        if table or self.checkpoint_due():
            self.checkpoint()
        old = self.stored_result(pos)
        rec = dict(res.to_json(), lo=res.lo, hi=res.hi, lower=res.lower)
        if old is not None:
            rec["nodes"] += old.get("nodes", 0)
        self.store.put("results", kbytes(*self.key(pos.mover, pos.opponent, pos.turn, 0)), rec)

    # ------------------------------------------------------------------ positions

    def move_text(self, code: int) -> str | None:
        if code < 0:
            return None
        return Move.rotate(code // 6, code % 6).text(self.cfg.board)

    def self_mirror(self, pos: Position) -> bool:
        """Whether a symmetry with a colour swap maps the board onto itself with the other
        side to move: then (pass argument, docs/rules.md §10) the mover cannot lose."""
        m, p, s = pos.mover, pos.opponent, pos.turn
        return self.key(m, p, s, 0) == self.key(p, m, 1 - s, 0)

    def prove(self, pos: Position, nodes: int | None = None, seconds: float | None = None, progress=None,
              refine_nodes: int | None = None) -> ProofResult:
        """Prove what can be proven about ``pos`` within the budget (nodes and/or seconds).

        A result short of an exact answer says why in ``stopped`` (:func:`solver.search.limits.stop_text`)."""
        if pos.phase != PLAY:
            raise ValueError(f"df-pn proves rotation-phase positions, not phase {pos.phase!r}")
        t0 = time.monotonic()
        n0 = self.nodes
        deadline = None if seconds is None else t0 + seconds
        budget = nodes if nodes is not None else (1 << 62)
        st = status(self.cfg, pos)
        text = pos.text()
        if st != ONGOING:
            v = WIN_V if st == WIN else LOSS_V
            return ProofResult(text, v, v, 0, True, 0, None, 0, time.monotonic() - t0)
        old = self.stored_result(pos)
        if old is not None and old["lo"] == old["hi"] and (old["plies"] is None or old["exact"]):
            res = result_from_json(old)
            res.position, res.nodes, res.seconds, res.stopped = text, 0, time.monotonic() - t0, None
            return res
        m, p, s = pos.mover, pos.opponent, pos.turn
        tick = (lambda: progress(self.nodes - n0, time.monotonic() - t0)) if progress else None
        late = lambda: deadline is not None and time.monotonic() >= deadline  # noqa: E731
        lo, hi = LOSS_V, WIN_V
        no_loss = self.self_mirror(pos)
        if no_loss:
            lo = DRAW_V
        res = ProofResult(text, lo, hi)
        why: dict[str, str] = {}  # question ("win", "loss") -> what stopped its search
        # the win question first (half the budget unless the loss one is settled)
        share = budget if no_loss else max(1, budget // 2)
        win = self.search(m, p, s, 0, share, deadline, tick)
        if win[0] == 0:
            res.lo = res.hi = WIN_V
            res.plies, res.lower, res.best_move = win[2], win[3], self.move_text(win[4])
        else:
            if win[1] == 0:
                res.hi = DRAW_V
                res.best_move = None
            else:
                why["win"] = self.last_stop
            if not no_loss:
                left = budget - (self.nodes - n0)
                lose = None
                if late() or left <= 0:
                    why["loss"] = TIME if late() else NODES
                else:
                    lose = self.search(m, p, s, 1, left, deadline, tick)
                    if lose[0] != 0 and lose[1] != 0:
                        why["loss"] = self.last_stop
                if lose is not None and lose[0] == 0:
                    res.lo = res.hi = LOSS_V
                    res.plies, res.lower, res.best_move = lose[2], lose[3], self.move_text(lose[4])
                elif lose is not None and lose[1] == 0:
                    res.lo = DRAW_V
                # the win question may still have budget: use it
                left = budget - (self.nodes - n0)
                if res.hi == WIN_V and res.lo == DRAW_V and left > 0 and not late():
                    win = self.search(m, p, s, 0, left, deadline, tick)
                    why["win"] = self.last_stop
                    if win[0] == 0:
                        res.lo = res.hi = WIN_V
                        res.plies, res.lower, res.best_move = win[2], win[3], self.move_text(win[4])
                    elif win[1] == 0:
                        res.hi = DRAW_V
            if res.lo == res.hi == DRAW_V:
                res.best_move = self._drawing_move(pos)
        if res.plies is not None:
            res.exact = res.lower is not None and res.lower >= res.plies
            if not res.exact:
                # the distance is a bound: refine it with the part of the node budget df-pn
                # left unspent (all of it with only a time budget), or ``refine_nodes``
                if refine_nodes is None:
                    refine_nodes = budget - (self.nodes - n0)
                if refine_nodes > 0 and not late():
                    self.refine(pos, res, refine_nodes, deadline)
                else:
                    res.extra["refine_stop"] = TIME if late() else NODES
        res.nodes = self.nodes - n0
        res.seconds = time.monotonic() - t0
        res.stopped = stop_text(res, why, "xo"[pos.turn], nodes, seconds, self.maxd, self.table_fill,
                                int(self.tt.dw.shape[0]).bit_length() - 1)
        return res

    def table_fill(self) -> float:
        """The share of the table's entries in use."""
        return float(tt_count(self.tt)) / self.tt.dw.shape[0]

    def _drawing_move(self, pos: Position) -> str | None:
        """In a proven draw: a move to a child that is proven not lost for us."""
        for mv in moves(self.cfg, pos):
            c = apply(self.cfg, pos, mv)
            e = self.lookup(c.mover, c.opponent, c.turn, 0)  # does the opponent win there?
            if e is not None and e[1] == 0:
                return mv.text(self.cfg.board)
        return None

    def wins_within(self, m: int, p: int, s: int, q: int, n: int, budget: int) -> bool | None:
        """Whether the attacker wins within ``n`` plies (:func:`solver.search.distance.wins_within`)."""
        return distance.wins_within(self, m, p, s, q, n, budget)

    def refine(self, pos: Position, res: ProofResult, budget: int, deadline: float | None = None) -> None:
        """Close the gap between ``res.lower`` and ``res.plies`` within ``budget`` nodes
        (:func:`solver.search.distance.refine`)."""
        distance.refine(self, pos, res, budget, deadline)


def result_from_json(rec: dict) -> ProofResult:
    return ProofResult(rec["position"], rec["lo"], rec["hi"], rec["plies"], rec["exact"], rec.get("lower"),
                       rec["best_move"], rec["nodes"], rec["seconds"], stopped=rec.get("stopped"))


# ---------------------------------------------------------------------------- worker processes
#
# Parallelism is job-level: each worker process (spawn context: numba's threading layer and
# LMDB environments must not cross a fork) owns a Prover and proves whole positions — the
# root's children for ``prove -j N``, the nodes of a book level for ``book -j N``. Workers
# share proven results through the proof store: each loads it when it starts, stores each
# result, and writes its table back when a checkpoint is due.

_WORKER: dict = {}


def worker_init(cfg_key: dict, db_path: str | None, store_path: str | None, tt_bits: int, guided: bool = False,
                threads: int = 1) -> None:
    cfg = config_from_key(cfg_key)
    db = open_db(db_path) if db_path else None
    prover = Prover(cfg, tt_bits=tt_bits, db=db, guided=guided, threads=threads)
    if store_path:
        prover.attach(ProofStore(store_path, cfg))
    _WORKER["prover"] = prover


def worker_prove(text: str, nodes: int | None, seconds: float | None, until: float | None = None) -> dict | None:
    """Prove one position in a worker; ``until`` (wall-clock time) caps the time, and a job
    that starts after it returns None."""
    prover: Prover = _WORKER["prover"]
    pos = parse_position(text)
    if until is not None:
        left = until - time.time()
        if left <= 0:
            return None
        seconds = left if seconds is None else min(seconds, left)
    res = prover.prove(pos, nodes=nodes, seconds=seconds)
    prover.save_result(pos, res, table=False)
    return dict(res.to_json(), lo=res.lo, hi=res.hi, lower=res.lower)


def make_pool(jobs: int, cfg: Config, db_path=None, store_path=None, tt_bits: int = 21, guided: bool = False,
              threads: int = 1):
    # spawned workers (never forked: numba and LMDB) that leave with their parent (kill -9)
    return spawn_pool(
        jobs, worker_init,
        (cfg.key(), str(db_path) if db_path else None, str(store_path) if store_path else None, tt_bits, guided, threads),
    )


def combine_children(results: list[tuple[str, ProofResult]], text: str) -> ProofResult:
    """A parent's value from its children's (each from the child's mover): the best move.

    Intervals: the parent can reach max over children of the child's value from the
    parent's view (loss <-> win swap). Distances are exact only when every child is
    resolved with an exact distance."""
    flip = {LOSS_V: WIN_V, DRAW_V: DRAW_V, WIN_V: LOSS_V}
    lo = max(flip[r.hi] for _, r in results)
    hi = max(flip[r.lo] for _, r in results)
    res = ProofResult(text, lo, hi, nodes=sum(r.nodes for _, r in results))
    if lo == hi:
        if lo == WIN_V:
            wins = [(r.plies + 1, r.exact, mv) for mv, r in results if r.lo == r.hi == LOSS_V]
            best = min(wins)
            res.plies, res.best_move = best[0], best[2]
            res.exact = all(r.resolved and (r.plies is None or r.exact) for _, r in results)
        elif lo == LOSS_V:
            worst = max((r.plies + 1, r.exact, mv) for mv, r in results)
            res.plies, res.best_move = worst[0], worst[2]
            res.exact = all(r.exact for _, r in results)
        else:
            res.best_move = next(mv for mv, r in results if r.lo == r.hi == DRAW_V)
    if not res.resolved or (res.plies is not None and not res.exact):
        why = [f"after {mv}: {r.stopped}" for mv, r in results if r.stopped]
        res.stopped = "; ".join(why[:3]) + (f"; and {len(why) - 3} more moves" if len(why) > 3 else "") or None
    return res
