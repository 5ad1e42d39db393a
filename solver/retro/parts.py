"""One actor's state in the Ray executor (:mod:`solver.retro.cluster`): its parts of
every group, and the partition kernels run on them.

Group ``glo..ghi`` is cut into P contiguous parts (:func:`part_bounds`); actor ``r`` keeps
part ``r`` of every group as its own numpy array (:class:`PartOwner`, two bytes a
position; :class:`~solver.retro.cluster_lean.LeanPartOwner`, one). :func:`owners` and
:func:`split_by_owner` route indices to the actors that own them.
"""

from __future__ import annotations

import os
import resource

import numpy as np

from solver.game.config import config_from_key
from solver.index import Layout
from solver.kernels.code import DMASK
from solver.memory import huge_zeros

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

    def resident(self) -> tuple[int, int]:
        """``(resident memory now, bytes of the parts held)``, bytes (0 where Linux's
        ``/proc`` does not tell)."""
        try:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            rss = 0
        return rss, sum(v.nbytes for v in self.values.values())

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
        lay = self.layout
        which = self.pending if pending else np.empty(0, np.int64)
        if pending and len(which) == 0:
            idx = np.empty(0, np.int64)
        else:
            idx = lower_requests(lo, hi, which, lay.geo, lay.lay)
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
        self._take_answers(answers)
        part = huge_zeros(hi - lo)  # updated at random: huge pages (solver.memory)
        top = init_part(part, lo, hi, self.layout.geo, self.layout.lay, self.keys, self.kvals)
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
        self._take_answers(answers)
        top = resolve_pending(
            self.values[gid], lo, self.pending, level, self.layout.geo, self.layout.lay, self.keys, self.kvals
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
