"""The retrograde solve on Ray: P actors, each owning one contiguous part of every group.

No process holds the whole value array. Group ``glo..ghi`` is cut into P parts
(:func:`part_bounds`); actor ``r`` keeps part ``r`` of every group as its own numpy array.
Per group:

1. *counters* — each actor values its part (:func:`~solver.kernels.partition.init_part`).
   Under ``edge``/``capture`` children may lie in lower, finished groups held by other
   actors: each actor first lists them (``lower_requests``), the lists go to their owners
   through the object store, the owners answer with the values, then the part is valued.
2. *plies* — at ply L each actor lists the in-group parents of its positions decided at L
   as updates (``level_emit``), one batch per owner; batches are passed from actor to
   actor as object references (zero-copy on one node) and each owner applies its own
   (``apply_updates``). Where lower tiers exist, losses found at L fetch their lower-tier
   children's values the same way (``resolve_pending``). A barrier per ply makes the
   result identical to the shared-memory executors.
3. *finish* — unresolved cells become draws; the driver, the only process that opens
   LMDB, commits the group in one transaction, reading the actors' parts window by window.

Resume is as in :mod:`solver.retro.driver`: finished groups are read back from the
database and handed to their owners part by part. A failed actor stops the solve with
one line; the finished groups stay, and a rerun goes on.
"""

from __future__ import annotations

import os
import resource
import time

import numpy as np

from solver.db.header import describe, open_for_solve
from solver.db.store import BLOCK, SolveLock, Store
from solver.errors import ClusterError, UsageError
from solver.game.config import Config, config_from_key
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.memory import huge_zeros
from solver.retro.pool import SMALL_GROUP
from solver.retro.report import ProgressBar, SolveReport, TierSummary, ply_note, summary_from_counts, time_left

INSTALL = "the Ray executor needs Ray: pip install 'rotary[cluster]'"
WINDOW = 1 << 20  # positions per read of the actors' parts while committing
ROUND = 1 << 21  # updates an actor lists per exchange round at most: its fixed working memory


def part_bounds(glo: int, ghi: int, parts: int) -> np.ndarray:
    """``parts + 1`` boundaries cutting ``glo..ghi`` into contiguous parts (some may be empty)."""
    return np.array([glo + (ghi - glo) * r // parts for r in range(parts + 1)], dtype=np.int64)


def owners(idx: np.ndarray, starts: np.ndarray, bounds: list[np.ndarray]) -> np.ndarray:
    """The actor owning each global index: its group from ``starts``, then that group's part."""
    out = np.empty(len(idx), dtype=np.int64)
    group = np.searchsorted(starts, idx, side="right") - 1
    for g in np.unique(group):
        sel = group == g
        out[sel] = np.searchsorted(bounds[g], idx[sel], side="right") - 1
    return out


def split_by_owner(idx: np.ndarray, who: np.ndarray, parts: int) -> list[np.ndarray]:
    """``idx`` in ``parts`` batches, batch r holding the entries owned by actor r (order kept)."""
    order = np.argsort(who, kind="stable")
    cuts = np.searchsorted(who[order], np.arange(parts + 1))
    return [idx[order[cuts[r] : cuts[r + 1]]] for r in range(parts)]


class PartOwner:
    """One actor's state: its parts of every group, and the kernels run on them."""

    def __init__(self, cfg_key: dict, material: tuple[int, int], rank: int, parts: int, groups: list[tuple[int, int]]):
        os.environ.setdefault("NUMBA_NUM_THREADS", "1")
        self.layout = Layout(config_from_key(cfg_key), tuple(material))
        self.rank, self.parts = rank, parts
        self.starts = np.array([g[0] for g in groups], dtype=np.int64)
        self.bounds = [part_bounds(glo, ghi, parts) for glo, ghi in groups]
        self.values: dict[int, np.ndarray] = {}
        self.keys = np.empty(0, np.int64)
        self.kvals = np.empty(0, np.uint16)
        self.asked: list[np.ndarray] = []
        self.pending = np.empty(0, np.int64)
        self.sent = 0
        self.cursor = 0  # the next index of the ply being emitted

    # ---------------------------------------------------------------- bookkeeping

    def span(self, gid: int) -> tuple[int, int]:
        b = self.bounds[gid]
        return int(b[self.rank]), int(b[self.rank + 1])

    def group(self, gid: int) -> tuple[int, int]:
        b = self.bounds[gid]
        return int(b[0]), int(b[-1])

    def info(self) -> tuple[int, int, float]:
        """``(pid, peak resident memory in bytes, CPU seconds)`` of this actor's process."""
        use = resource.getrusage(resource.RUSAGE_SELF)
        return os.getpid(), use.ru_maxrss * 1024, use.ru_utime + use.ru_stime

    def load(self, gid: int, values: np.ndarray) -> None:
        part = huge_zeros(len(values))  # object-store arrays are read-only: a copy, on huge pages
        part[:] = values
        self.values[gid] = part

    def _route(self, idx: np.ndarray) -> list[np.ndarray]:
        batches = split_by_owner(idx, owners(idx, self.starts, self.bounds), self.parts)
        self.sent += sum(b.nbytes for r, b in enumerate(batches) if r != self.rank)
        return batches

    def take_sent(self) -> int:
        sent, self.sent = self.sent, 0
        return sent

    # ---------------------------------------------------------------- lower tiers

    def requests(self, gid: int, pending: bool) -> list[np.ndarray]:
        """Lower-tier children to fetch, one batch per owner: of the whole part, or of the
        losses pending since the last ply."""
        from solver.kernels.partition import lower_requests

        lo, hi = self.span(gid)
        glo, ghi = self.group(gid)
        lay = self.layout
        which = self.pending if pending else np.empty(0, np.int64)
        if pending and len(which) == 0:
            idx = np.empty(0, np.int64)
        else:
            idx = lower_requests(lo, hi, which, glo, ghi, lay.geo, lay.lay)
        self.asked = self._route(idx)
        return [*self.asked, 0]  # the trailing 0 keeps num_returns above one (P == 1)

    def answer(self, *asked: np.ndarray) -> list[np.ndarray]:
        """The values of the indices each actor asked this one for, in its order."""
        out = []
        for idx in asked:
            vals = np.empty(len(idx), dtype=np.uint16)
            group = np.searchsorted(self.starts, idx, side="right") - 1
            for g in np.unique(group):
                sel = group == g
                lo, _ = self.span(int(g))
                vals[sel] = self.values[int(g)][idx[sel] - lo]
            out.append(vals)
        self.sent += sum(v.nbytes for r, v in enumerate(out) if r != self.rank)
        return [*out, 0]

    def _take_answers(self, answers) -> None:
        keys = np.concatenate(self.asked) if self.asked else np.empty(0, np.int64)
        kvals = np.concatenate(answers) if answers else np.empty(0, np.uint16)
        order = np.argsort(keys, kind="stable")
        self.keys, self.kvals = keys[order], kvals[order]

    # ---------------------------------------------------------------- the phases

    def init(self, gid: int, *answers: np.ndarray) -> tuple[int, int]:
        """Value the part; ``(largest distance written, cells that are no position)``."""
        from solver.kernels.partition import init_part
        from solver.kernels.retro import count_values

        lo, hi = self.span(gid)
        glo, ghi = self.group(gid)
        self._take_answers(answers)
        part = huge_zeros(hi - lo)  # updated at random: huge pages (solver.memory)
        top = init_part(part, lo, hi, glo, ghi, self.layout.geo, self.layout.lay, self.keys, self.kvals)
        self.values[gid] = part
        invalid = count_values(part, 0, len(part), DMASK)[3]  # `part == INVALID` would take a byte per cell
        return int(top), int(invalid)

    def emit(self, gid: int, level: int, first: bool) -> list:
        """The next round of updates of ply ``level`` (from the part's start when ``first``):
        at most ``ROUND`` of them, one batch per owner (``target * 2 + kind``), then
        ``(positions decided at level scanned, whether the part is done)``.

        A ply may take several rounds: applying a round's updates never changes a cell
        decided at ``level`` (wins and losses found now are at ``level + 1``), so later
        rounds of the same ply scan what they would have scanned in one."""
        from solver.kernels.partition import level_emit

        lo, hi = self.span(gid)
        if first:
            self.cursor = lo
        updates, cuts, seen, self.cursor = level_emit(
            self.values[gid], lo, self.cursor, hi, level, self.layout.geo, self.layout.lay, ROUND, self.bounds[gid]
        )
        batches = [updates[cuts[r] : cuts[r + 1]] for r in range(self.parts)]
        self.sent += sum(b.nbytes for r, b in enumerate(batches) if r != self.rank)
        return [*batches, (int(seen), self.cursor >= hi)]

    def apply(self, gid: int, level: int, *batches: np.ndarray) -> tuple[int, int]:
        """Apply the updates every actor sent here; ``(largest distance, pending losses)``."""
        from solver.kernels.partition import apply_updates

        lo, _ = self.span(gid)
        glo, _ = self.group(gid)
        updates = np.concatenate(batches) if len(batches) > 1 else batches[0]
        top, pending = apply_updates(self.values[gid], lo, level, updates, glo > 0)
        self.pending = np.concatenate([self.pending, pending])
        return int(top), len(self.pending)

    def resolve(self, gid: int, level: int, *answers: np.ndarray) -> int:
        from solver.kernels.partition import resolve_pending

        lo, _ = self.span(gid)
        glo, ghi = self.group(gid)
        self._take_answers(answers)
        top = resolve_pending(
            self.values[gid], lo, self.pending, level, glo, ghi, self.layout.geo, self.layout.lay, self.keys, self.kvals
        )
        self.pending = np.empty(0, np.int64)
        return int(top)

    def finish(self, gid: int) -> None:
        from solver.kernels.retro import finish_range

        part = self.values[gid]
        finish_range(part, 0, len(part))
        self.keys, self.kvals = np.empty(0, np.int64), np.empty(0, np.uint16)

    def count(self, gid: int, lo: int, hi: int):
        """``count_values`` of the part's cells inside global ``lo..hi``."""
        from solver.kernels.retro import count_values

        plo, phi = self.span(gid)
        a, b = max(lo, plo), min(hi, phi)
        return count_values(self.values[gid], max(a - plo, 0), max(b - plo, 0), DMASK)

    def read(self, gid: int, lo: int, hi: int) -> np.ndarray:
        plo, _ = self.span(gid)
        return self.values[gid][lo - plo : hi - plo]


# ------------------------------------------------------------------------------ the driver


def _token_auth() -> None:
    """Send this machine's Ray token when joining a head. ``ray start`` enables token
    authentication by default (Ray 2.59 and later) while ``ray.init(address=...)`` sends
    the token only under ``RAY_AUTH_MODE=token``; a mode the user set is kept."""
    if "RAY_AUTH_MODE" in os.environ:
        return
    token_file = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    if os.environ.get("RAY_AUTH_TOKEN") or os.path.exists(token_file):
        os.environ["RAY_AUTH_MODE"] = "token"


def start_ray(jobs: int, address: str | None):
    """Import Ray and join ``address`` or start an embedded local cluster; (ray, started)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # a lost actor is reported in one line by the solve; Ray would also print each of its
    # unfinished tasks' errors at exit
    os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
    if address:
        _token_auth()  # before Ray is imported: it reads the mode then
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL) from None
    if ray.is_initialized():
        return ray, False
    try:
        if address:
            ray.init(address=address, logging_level="ERROR", log_to_driver=False)
        else:
            # "local": a cluster of its own even where a `ray start` head runs on this machine
            # (without it ray.init joins that head, or refuses num_cpus)
            ray.init(address="local", num_cpus=jobs, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = f"the Ray cluster at {address}" if address else "an embedded Ray cluster"
        raise ClusterError(f"cannot start or join {where}: {str(e).splitlines()[0]}") from None
    return ray, True


def solve_ray(
    cfg: Config,
    db_path: str | os.PathLike,
    jobs: int = 1,
    material: tuple[int, int] | None = None,
    progress: bool = True,
    address: str | None = None,
) -> SolveReport:
    """Solve every position of ``cfg`` into ``db_path`` with ``jobs`` Ray actors (resuming)."""
    ray, started = start_ray(jobs, address)
    try:
        with SolveLock(db_path):
            return _solve(ray, cfg, db_path, jobs, material, progress)
    finally:
        if started:
            ray.shutdown()


class _Cluster:
    """The driver's view of the actors: calls with the error handling of one place."""

    def __init__(self, ray, layout: Layout, parts: int, groups):
        self.ray = ray
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < parts:
            raise ClusterError(f"-j {parts} needs {parts} CPUs of the Ray cluster, it has {cpus:g}")
        remote = ray.remote(num_cpus=1, max_restarts=0)(PartOwner)
        self.actors = [remote.remote(layout.cfg.key(), layout.material, r, parts, groups) for r in range(parts)]
        self.parts = parts
        self.exchanged = 0
        self.per_ply: list[int] = []  # bytes sent between actors in each ply, all groups

    def get(self, refs):
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayError as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ClusterError(
                f"a Ray worker failed ({type(e).__name__}: {first[:160]}); the finished groups are stored, rerun to go on"
            ) from None

    def call(self, method: str, *args, returns: int = 1):
        return [getattr(a, method).options(num_returns=returns).remote(*args) for a in self.actors]

    def fetch(self, gid: int, bounds: np.ndarray, lo: int, hi: int) -> np.ndarray:
        refs = []
        for r in range(self.parts):
            a, b = max(lo, int(bounds[r])), min(hi, int(bounds[r + 1]))
            if a < b:
                refs.append(self.actors[r].read.remote(gid, a, b))
        return np.concatenate(self.get(refs)) if refs else np.empty(0, np.uint16)

    def sent(self) -> int:
        n = sum(self.get(self.call("take_sent")))
        self.exchanged += n
        return n


class _Window:
    """A tier's values as a sliceable sequence read from the actors window by window
    (so the committing driver never holds a whole group)."""

    def __init__(self, cluster: _Cluster, gid: int, bounds: np.ndarray, base: int, size: int):
        self.cluster, self.gid, self.bounds, self.base, self.size = cluster, gid, bounds, base, size
        self.lo, self.data = -1, np.empty(0, np.uint16)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, s: slice) -> np.ndarray:
        a, b = s.start, min(s.stop, self.size)
        if not (self.lo <= a and b <= self.lo + len(self.data)):
            self.lo = a - a % WINDOW
            hi = min(self.lo + max(WINDOW, b - self.lo), self.size)
            self.data = self.cluster.fetch(self.gid, self.bounds, self.base + self.lo, self.base + hi)
        return self.data[a - self.lo : b - self.lo]


def _solve(ray, cfg, db_path, jobs, material, progress) -> SolveReport:
    start = time.perf_counter()
    layout = Layout(cfg, material)
    store = open_for_solve(db_path, layout)
    try:
        finished = store.meta_items("tier:")
        groups = [(glo, ghi) for _, glo, ghi in layout.groups]
        cluster = _Cluster(ray, layout, jobs, groups)
        tier_no = {t.key: i for i, t in enumerate(layout.tiers)}
        solved_now: list[str] = []
        for gid, (glo, ghi) in enumerate(groups):
            tiers = [t for t in layout.tiers if glo <= t.base < ghi]
            bounds = part_bounds(glo, ghi, jobs)
            if all(t.key in finished for t in tiers):
                _load_group(cluster, store, gid, bounds, tiers, tier_no)
                continue
            t0 = time.perf_counter()
            _solve_group(cluster, gid, glo, ghi, tiers, progress)
            seconds = time.perf_counter() - t0
            out = []
            for t in tiers:
                counts = _sum_counts(cluster.get(cluster.call("count", gid, t.base, t.base + t.size)))
                summary = summary_from_counts(t.key, t.size, counts, seconds * t.size / max(1, ghi - glo))
                out.append((tier_no[t.key], _Window(cluster, gid, bounds, t.base, t.size), t.key, summary.meta()))
                finished[t.key] = summary.meta()
                solved_now.append(t.key)
            store.write_tiers(out)
        info = cluster.get(cluster.call("info"))
        peaks = [peak for _, peak, _ in info]
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        report = SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
        report.exchanged = cluster.exchanged  # type: ignore[attr-defined]
        report.actor_peaks = peaks  # type: ignore[attr-defined]
        report.actor_cpu = [cpu for _, _, cpu in info]  # type: ignore[attr-defined]
        report.per_ply = cluster.per_ply  # type: ignore[attr-defined]
        return report
    finally:
        store.close()


def _sum_counts(parts):
    wins = sum(np.asarray(p[0]) for p in parts)
    losses = sum(np.asarray(p[1]) for p in parts)
    return wins, losses, sum(int(p[2]) for p in parts), sum(int(p[3]) for p in parts)


def _load_group(cluster: _Cluster, store: Store, gid: int, bounds: np.ndarray, tiers, tier_no) -> None:
    """Hand a finished group back to its owners, part by part, from the database."""
    refs = []
    for r in range(cluster.parts):
        lo, hi = int(bounds[r]), int(bounds[r + 1])
        part = np.empty(hi - lo, dtype=np.uint16)
        for t in tiers:
            a, b = max(lo, t.base), min(hi, t.base + t.size)
            for blk in range((a - t.base) // BLOCK, -(-(b - t.base) // BLOCK) if b > a else 0):
                block = store.read_block(tier_no[t.key], blk)
                s, e = max(a, t.base + blk * BLOCK), min(b, t.base + (blk + 1) * BLOCK)
                part[s - lo : e - lo] = block[s - t.base - blk * BLOCK : e - t.base - blk * BLOCK]
        refs.append(cluster.actors[r].load.remote(gid, part))
        del part
    cluster.get(refs)


def _exchange(cluster: _Cluster, gid: int, pending: bool):
    """Lower-tier values for every actor: requests to owners, answers back (references only)."""
    P = cluster.parts
    asked = cluster.call("requests", gid, pending, returns=P + 1)
    answers = [cluster.actors[k].answer.options(num_returns=P + 1).remote(*[asked[i][k] for i in range(P)]) for k in range(P)]
    return [[answers[k][i] for k in range(P)] for i in range(P)]


def _run_ply(cluster: _Cluster, gid: int, level: int, lower: bool) -> tuple[int, int]:
    """One ply on every actor, in rounds of at most ``ROUND`` updates an actor, then the
    lower-tier answers for parents left pending: ``(positions decided at level, the
    longest distance now known)``."""
    P = cluster.parts
    seen, top, outcome, first, done = 0, -1, [], True, False
    while not done:
        emitted = cluster.call("emit", gid, level, first, returns=P + 1)
        applied = [cluster.actors[j].apply.remote(gid, level, *[emitted[i][j] for i in range(P)]) for j in range(P)]
        status = cluster.get([emitted[i][P] for i in range(P)])
        seen += sum(n for n, _ in status)
        done = all(d for _, d in status)
        outcome = cluster.get(applied)
        top = max([top] + [t for t, _ in outcome])
        first = False
    if lower and any(n for _, n in outcome):
        answers = _exchange(cluster, gid, pending=True)
        top = max([top] + cluster.get([cluster.actors[i].resolve.remote(gid, level, *answers[i]) for i in range(P)]))
    return seen, top


def _scan_seconds(cluster: _Cluster, gid: int, lower: bool) -> float:
    """What a ply's scan of the group takes on the cluster by itself, for the time left:
    a ply at a distance no cell has (:data:`~solver.kernels.code.DMASK`) decides and
    sends nothing. The least of three runs, as the process driver measures it."""
    took = []
    for _ in range(3):
        t0 = time.perf_counter()
        _run_ply(cluster, gid, DMASK, lower)
        took.append(time.perf_counter() - t0)
    return min(took)


def _solve_group(cluster: _Cluster, gid: int, glo: int, ghi: int, tiers, progress: bool) -> None:
    P = cluster.parts
    lower = glo > 0
    name = "+".join(t.key for t in tiers)
    if lower:
        answers = _exchange(cluster, gid, pending=False)
        refs = [cluster.actors[i].init.remote(gid, *answers[i]) for i in range(P)]
    else:
        refs = cluster.call("init", gid)
    results = cluster.get(refs)
    top = max(t for t, _ in results)
    invalid = sum(n for _, n in results)
    with ProgressBar(f"{name} values (ray, {P} actors)", ghi - glo - invalid, "pos", progress, eta=False) as bar:
        level = 0
        per_ply: list[int] = []  # positions decided at each ply, and its seconds: the time left
        ply_seconds: list[float] = []
        eta = None
        scan = _scan_seconds(cluster, gid, lower) if ghi - glo >= SMALL_GROUP else None
        while level <= top:
            # one note a ply, drawn with the ply's positions: the ply before's count and exchange
            note = ply_note(level, per_ply[-1] if per_ply else None, bar.total - bar.n, eta)
            bar.note(f"{note}, {cluster.per_ply[-1] / 1e6:.1f} MB exchanged" if per_ply else note)
            t_ply = time.perf_counter()
            seen, ply_top = _run_ply(cluster, gid, level, lower)
            top = max(top, ply_top)
            per_ply.append(seen)
            ply_seconds.append(time.perf_counter() - t_ply)
            cluster.per_ply.append(cluster.sent())
            bar.add(seen)
            level += 1
            eta = time_left(per_ply, ply_seconds, scan, top - level + 1) if scan is not None else None
            if top > DMASK:
                raise OverflowError("distance beyond 16383 plies: the value format cannot hold it")
        cluster.get(cluster.call("finish", gid))
        bar.add(max(0, bar.total - bar.n))  # the draws, known now
