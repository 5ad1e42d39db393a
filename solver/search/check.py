"""df-pn checked against a retrograde database on every position it holds.

The check a forward solver has to pass: for each position of a solved configuration,
df-pn's win / loss / draw must equal the database's, a distance it calls exact must equal
the database's plies, and a bound must never be below them.

    report = check_all(cfg, db, nodes=2_000_000)     # CheckReport

All positions share one prover (one table), as a forward solver is used in practice: what
one proof shows — wins, losses, the draw closure's disproofs — answers many later
positions. Positions are visited in a fixed-seed random order in chunks; a compiled pass
(:func:`solver.kernels.answers.table_answers`) reads the answers the table already holds,
and only the other positions are searched (both questions, ``nodes`` each at most).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from solver.game.config import Config
from solver.game.position import Position
from solver.kernels.answers import audit_table, table_answers
from solver.kernels.code import DRAW_V, INVALID, result_of
from solver.kernels.leaves import DbInfo
from solver.search.prover import RESULT_NAMES, Prover, require_rules

# an answer: (lo, hi, plies, lower) — the value interval for the side to move (LOSS_V..WIN_V
# of solver.kernels.code) and the distance's upper and lower bounds (-1: none)


@dataclass
class CheckReport:
    positions: int = 0
    from_table: int = 0  # answered by the shared table without a search of their own
    searched: int = 0
    unresolved: int = 0  # searched, still not resolved within the budget
    exact: int = 0  # wins and losses whose distance is claimed exact (and equals the database's)
    decisive: int = 0
    nodes: int = 0
    seconds: float = 0.0
    closure_proven: int = 0
    table_checked: int = 0  # resolved table entries audited against the database at the end
    table_wrong: int = 0
    wrong: list = field(default_factory=list)  # (position, database value, df-pn's answer)
    open_positions: list = field(default_factory=list)

    def line(self) -> str:
        return (f"{self.positions:,} positions: {self.positions - self.unresolved - len(self.wrong):,} equal the database, "
                f"{len(self.wrong)} wrong, {self.unresolved} unresolved; {self.exact:,} of {self.decisive:,} distances exact; "
                f"{self.from_table:,} answered by the shared table, {self.searched:,} searched; "
                f"{self.nodes:,} nodes, {self.seconds:.0f} s; table audit: {self.table_checked:,} proofs and "
                f"disproofs, {self.table_wrong} wrong")

    @property
    def ok(self) -> bool:
        return not self.wrong and not self.unresolved and not self.table_wrong


def _agrees(lo: int, hi: int, plies: int, lower: int, code: int) -> bool | None:
    """True / False, or None when the answer is partial (then it only must not contradict)."""
    want, d = (int(v) for v in result_of(code))
    if lo == hi:
        if lo != want:
            return False
        if lo == DRAW_V:
            return True
        return plies >= d and (lower < plies or plies == d)
    if not lo <= want <= hi:
        return False
    return None


def _position(cfg: Config, db, g: int) -> Position:
    m, p, s = db.layout.position(int(g))
    return Position.make(cfg.board, m if s == 0 else p, p if s == 0 else m, s)


def _searched(prover: Prover, pos: Position, nodes: int) -> tuple[int, int, int, int]:
    """The answer (see above) that a search of its own proves about ``pos``."""
    res = prover.prove(pos, nodes=nodes, refine_nodes=0)
    plies = -1 if res.plies is None else res.plies
    return res.lo, res.hi, plies, plies if res.exact else -1


def _count(rep: CheckReport, cfg: Config, db, g: int, code: int, answer: tuple[int, int, int, int]) -> None:
    lo, hi, plies, lower = answer
    ok = _agrees(lo, hi, plies, lower, code)
    if ok is None:
        rep.unresolved += 1
        rep.open_positions.append(int(g))
        return
    if lo == hi != DRAW_V:
        rep.decisive += 1
        rep.exact += ok and lower >= plies
    if not ok:
        rep.wrong.append((_position(cfg, db, g).text(), code, RESULT_NAMES[(lo, hi)], plies, lower))


def check_budget(nodes: int, tt_bits: int, limit: int | None) -> None:
    """Refuse budgets that cannot work, naming the option (``ValueError``)."""
    if nodes < 1:
        raise ValueError(f"--nodes must be at least 1, got {nodes}")
    if not 8 <= tt_bits <= 32:
        raise ValueError(f"--tt-bits must be 8..32 (a table of 2^N entries), got {tt_bits}")
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")


def check_all(cfg: Config, db, nodes: int = 2_000_000, tt_bits: int = 23, limit: int | None = None, seed: int = 1,
              chunk: int = 4096, progress: bool = False, guided: bool = False, threads: int = 1) -> CheckReport:
    """Check df-pn against ``db`` on every position (or the first ``limit`` of the order);
    ``guided``: the prover's initial numbers from the evaluation (:mod:`solver.search.guide`);
    ``threads``: each search on that many threads (:mod:`solver.search.parallel`)."""
    from tqdm import tqdm

    require_rules(cfg, db)
    check_budget(nodes, tt_bits, limit)
    t0 = time.monotonic()
    prover = Prover(cfg, tt_bits=tt_bits, guided=guided, threads=threads)
    vals = db.values()
    lay = db.layout.lay
    order = np.random.default_rng(seed).permutation(vals.shape[0]).astype(np.int64)
    order = order[vals[order] != INVALID]
    if limit is not None:
        order = order[:limit]
    rep = CheckReport()
    out = np.zeros((chunk, 4), dtype=np.int64)
    bar = tqdm(total=len(order), unit="pos", disable=not progress, desc="df-pn vs database")
    for lo in range(0, len(order), chunk):
        part = order[lo : lo + chunk]
        table_answers(part, prover.geo, lay, prover.symtab, prover.tt, out)
        for i, g in enumerate(part):
            answer = tuple(int(v) for v in out[i])
            if answer[0] == answer[1]:
                rep.from_table += 1
            else:
                answer = _searched(prover, _position(cfg, db, g), nodes)
                rep.searched += 1
            rep.positions += 1
            _count(rep, cfg, db, g, int(vals[g]), answer)
        bar.update(len(part))
        bar.set_postfix(wrong=len(rep.wrong), open=rep.unresolved, searched=rep.searched)
    bar.close()
    # the first hard draws were searched with an almost empty table: now that it holds
    # the rest, search the positions left open once more
    still, rep.open_positions, rep.unresolved = rep.open_positions, [], 0
    for g in still:
        _count(rep, cfg, db, g, int(vals[g]), _searched(prover, _position(cfg, db, g), nodes))
    # every proof and disproof the table still holds (the closure's among them) must be true
    holds = DbInfo(True, cfg.variable_material, int(db.material[0]), int(db.material[1]))
    rep.table_checked, rep.table_wrong = (
        int(v) for v in audit_table(prover.tt, prover.geo, lay, holds, vals, np.zeros(16, dtype=np.int64)))
    rep.nodes = prover.nodes
    rep.closure_proven = int(prover.closure_stats[3])
    rep.seconds = time.monotonic() - t0
    return rep
