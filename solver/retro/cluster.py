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

The actors (:mod:`solver.retro.parts`) hold two bytes a position; with ``lean``, one
(:mod:`solver.retro.cluster_lean`), through the same calls.
"""

from __future__ import annotations

import os
import time

import numpy as np

from solver.db.header import describe, open_for_solve
from solver.db.store import BLOCK, SolveLock, Store
from solver.errors import ClusterError, UsageError
from solver.game.config import Config
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.retro.parts import PartOwner, owners, part_bounds, split_by_owner  # noqa: F401 (owners, split_by_owner: the tests')
from solver.retro.pool import SMALL_GROUP
from solver.retro.report import (
    ProgressBar, SolveReport, TierSummary, ply_note, summary_from_counts, time_left, write_tiers, group_name,
)

INSTALL = "the Ray executor needs Ray: pip install 'rotary[cluster]'"
WINDOW = 1 << 20  # positions per read of the actors' parts while committing


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
    lean: bool | None = False,
) -> SolveReport:
    """Solve every position of ``cfg`` into ``db_path`` with ``jobs`` Ray actors (resuming);
    ``lean``: one byte a position (None: where two do not fit, :mod:`solver.retro.cluster_lean`)."""
    ray, started = start_ray(jobs, address)
    try:
        with SolveLock(db_path):
            return _solve(ray, cfg, db_path, jobs, material, progress, lean, None if address else db_path)
    finally:
        if started:
            ray.shutdown()


class _Cluster:
    """The driver's view of the actors: calls with the error handling of one place."""

    def __init__(self, ray, layout: Layout, parts: int, groups, owner: type | None = None, extra: tuple = ()):
        self.ray = ray
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < parts:
            raise ClusterError(f"-j {parts} needs {parts} CPUs of the Ray cluster, it has {cpus:g}")
        remote = ray.remote(num_cpus=1, max_restarts=0)(owner or PartOwner)
        self.actors = [remote.remote(layout.cfg.key(), layout.material, r, parts, groups, *extra) for r in range(parts)]
        self.parts = parts
        self.lean = owner is not None  # the actors hold one byte a position
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

    def get_counted(self, refs, sizes: list[int], bar: ProgressBar) -> list:
        """:meth:`get`, the bar advanced by ``sizes[i]`` as the call ``refs[i]`` finishes
        (an actor's counters pass is one call: the bar moves a part at a time)."""
        pending = list(zip(refs, sizes))
        try:
            while pending:
                ready, _ = self.ray.wait([r for r, _ in pending], num_returns=1)
                k = next(i for i, (r, _) in enumerate(pending) if r is ready[0])
                bar.add(pending.pop(k)[1])
        except self.ray.exceptions.RayError:
            pass  # get says it in one line
        return self.get(refs)

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


def _solve(ray, cfg, db_path, jobs, material, progress, lean: bool | None = False, local=None) -> SolveReport:
    start = time.perf_counter()
    layout = Layout(cfg, material)
    store = open_for_solve(db_path, layout)
    cluster = None
    try:
        from solver.retro.cluster_lean import actors_of, close_actors

        finished = store.meta_items("tier:")
        groups = [(glo, ghi) for _, glo, ghi in layout.groups]
        cluster = _Cluster(ray, layout, jobs, groups, *actors_of(ray, layout, jobs, lean, local))
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
            write_tiers(store, out, group_name(tiers), progress)
        info = cluster.get(cluster.call("info"))
        peaks = [peak for _, peak, _ in info]
        summaries = [TierSummary.from_meta(finished[t.key]) for t in layout.tiers]
        report = SolveReport(describe(layout), summaries, solved_now, time.perf_counter() - start, store.size_on_disk())
        report.exchanged = cluster.exchanged  # type: ignore[attr-defined]
        report.actor_peaks = peaks  # type: ignore[attr-defined]
        report.actor_cpu = [cpu for _, _, cpu in info]  # type: ignore[attr-defined]
        report.actor_resident = cluster.get(cluster.call("resident"))  # type: ignore[attr-defined]
        report.per_ply = cluster.per_ply  # type: ignore[attr-defined]
        report.lean = cluster.lean  # type: ignore[attr-defined]
        return report
    finally:
        if cluster is not None and cluster.lean:
            close_actors(cluster)
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
    name = group_name(tiers)
    if lower:
        answers = _exchange(cluster, gid, pending=False)
        refs = [cluster.actors[i].init.remote(gid, *answers[i]) for i in range(P)]
    else:
        refs = cluster.call("init", gid)
    bounds = part_bounds(glo, ghi, P)
    with ProgressBar(f"{name} counters (ray, {P} actors)", ghi - glo, "cell", progress) as bar:
        results = cluster.get_counted(refs, [int(bounds[r + 1] - bounds[r]) for r in range(P)], bar)
    top = max(t for t, _ in results)
    invalid = sum(n for _, n in results)
    with ProgressBar(f"{name} values (ray, {P} actors{', lean' if cluster.lean else ''})", ghi - glo - invalid, "pos", progress, eta=False) as bar:
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
