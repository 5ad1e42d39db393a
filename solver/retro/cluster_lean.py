"""The lean solve on Ray: each actor holds its parts in one byte a position.

The Ray executor (:mod:`solver.retro.cluster`) gives each of P actors one contiguous
part of every group; :class:`~solver.retro.parts.PartOwner` keeps a part as uint16
values, 2 bytes a position. :class:`LeanPartOwner` keeps it as byte cells, as the lean
solve of one machine does (:mod:`solver.retro.lean`), and answers the driver's calls
with the same signatures, so that the driver is the same:

* *counters* — :func:`~solver.kernels.lean_partition.init_part8`; a position decided
  through a lower tier waits, with its distance, in the actor's far lists
  (:class:`~solver.retro.spill.FarLists`);
* *plies* — the first emit of ply L first takes the positions waiting for L
  (:func:`~solver.kernels.lean.lean_arrive`); each emit writes the positions it took to
  the actor's ply log (:class:`~solver.retro.spill.PlyLog`): a position's distance is the
  ply that took it; a loss whose lower-tier children make it slower waits in the far
  lists too (:func:`~solver.kernels.lean_partition.resolve8`);
* *finish* — the part is merged window by window (:func:`solver.retro.lean.merge_window`:
  win, loss, draw or no position from the cells, the distance from the ply log) and
  counted per tier; a group below the last is re-encoded into its cells (a byte where the
  value fits, the rest in a side table, :class:`~solver.retro.lean.Escapes`) for the
  lookups of the groups above, and its files removed; the last group's part is merged
  again as the driver reads it for the database.

The values are the two-byte solve's bit for bit (``tests/retro/test_cluster_lean.py``).
An actor's temporary files are in a folder of its own: under ``lean-ray.tmp`` in the
database folder for an embedded cluster (emptied when the next Ray solve there starts),
in the system's temporary folder of the actor's machine on a cluster joined with
``--address``; it removes them when the solve ends (:meth:`LeanPartOwner.close`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from solver.errors import ClusterError
from solver.kernels.code import DMASK
from solver.kernels.lean import as_words8, decode_final, lean_arrive
from solver.memory import huge_zeros
from solver.retro.parts import ROUND, PartOwner
from solver.retro.lean import WINDOW, Escapes, merge_window
from solver.retro.spill import FarLists, PlyLog

TEMP = "lean-ray.tmp"  # the actors' temporary folders, in the database folder of an embedded cluster


def lean_fits(total: int, parts: int, memory: float | None) -> bool | None:
    """Whether to take the lean solve on Ray: where the cluster's memory (Ray's ``memory``
    resource, bytes) holds the values in one byte a position but not in two, with
    :data:`ACTOR_BYTES` for each actor; None where Ray does not say."""
    if not memory:
        return None
    return 2 * total + parts * ACTOR_BYTES > memory >= total + parts * ACTOR_BYTES


ACTOR_BYTES = 300 << 20  # an actor beside its parts: Python, numpy, numba, the layout, a round's updates


def actors_of(ray, layout, jobs: int, lean: bool | None, local) -> tuple[type | None, tuple]:
    """The actors' class and its last arguments: None (:class:`PartOwner`, two bytes a
    position) or :class:`LeanPartOwner` (``lean``; None: as :func:`lean_fits` says), its
    files under ``local`` (the database folder of an embedded cluster) or, None, in each
    actor's temporary folder."""
    if lean is None:
        lean = bool(lean_fits(layout.total, jobs, ray.cluster_resources().get("memory")))
    if not lean:
        return None, ()
    root = None
    if local is not None:
        root = Path(local) / TEMP
        shutil.rmtree(root, ignore_errors=True)  # a killed solve's
    return LeanPartOwner, (None if root is None else str(root),)


def close_actors(cluster) -> None:
    """Tell the lean actors the solve is over: they remove their files (an actor lost
    already is passed over)."""
    try:
        cluster.get([a.close.remote() for a in cluster.actors])
    except ClusterError:
        pass


class LeanPartOwner(PartOwner):
    """One actor's parts in byte cells (see the module's note)."""

    def __init__(self, cfg_key: dict, material: tuple[int, int], rank: int, parts: int, groups: list[tuple[int, int]],
                 temp_root: str | None = None):
        super().__init__(cfg_key, material, rank, parts, groups)
        if temp_root is not None:
            os.makedirs(temp_root, exist_ok=True)
        self.temp = Path(tempfile.mkdtemp(prefix=f"rotary-lean-{rank}-", dir=temp_root))
        self.esc: dict[int, Escapes] = {}
        self.logs: dict[int, PlyLog] = {}
        self.far: dict[int, FarLists] = {}
        self.counts: dict[int, dict[tuple[int, int], tuple]] = {}
        self.taken = np.empty(0, np.int64)

    # ---------------------------------------------------------------- finished groups

    def load(self, gid: int, values: np.ndarray) -> None:
        """A finished part from the database (uint16 values), encoded into bytes (a window
        at a time: the encoder's scratch is 10 bytes a value)."""
        part = huge_zeros(len(values), np.uint8)
        esc = Escapes()
        for a in range(0, len(values), WINDOW):
            esc.encode(np.asarray(values[a : a + WINDOW], np.uint16), part, a)
        esc.seal()
        self.values[gid], self.esc[gid] = part, esc

    def answer(self, *asked: np.ndarray) -> list[np.ndarray]:
        from solver.kernels.lean_partition import lower_values8

        out = []
        for idx in asked:
            vals = np.empty(len(idx), dtype=np.uint16)
            group = np.searchsorted(self.starts, idx, side="right") - 1
            for g in np.unique(group):
                sel = group == g
                lo, _ = self.span(int(g))
                esc = self.esc[int(g)]
                got = np.empty(int(sel.sum()), np.uint16)
                lower_values8(self.values[int(g)], idx[sel] - lo, esc.idx, esc.val, got)
                vals[sel] = got
            out.append(vals)
        self.sent += sum(v.nbytes for r, v in enumerate(out) if r != self.rank)
        return [*out, 0]

    # ---------------------------------------------------------------- the phases

    def _files(self, gid: int) -> Path:
        folder = self.temp / f"g{gid}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder

    def init(self, gid: int, *answers: np.ndarray) -> tuple[int, int]:
        from solver.kernels.lean_partition import init_part8

        lo, hi = self.span(gid)
        self._take_answers(answers)
        folder = self._files(gid)
        self.logs[gid], self.far[gid] = PlyLog(folder), FarLists(folder)
        part = huge_zeros(hi - lo, np.uint8)
        step = min(max(hi - lo, 1), WINDOW)  # the far lists' room: 16 bytes a cell of a step
        fi, fd = np.empty(step, np.int64), np.empty(step, np.int64)
        top, invalid = -1, 0
        for a in range(lo, hi, step):
            b = min(a + step, hi)
            nfar, bad, t = init_part8(part[a - lo : b - lo], a, b, self.layout.geo, self.layout.lay,
                                      self.keys, self.kvals, fi, fd)
            self.far[gid].add(fi[:nfar] + (a - lo), fd[:nfar])
            top, invalid = max(top, int(t)), invalid + int(bad)
        self.values[gid] = part
        return top, invalid

    def emit(self, gid: int, level: int, first: bool) -> list:
        from solver.kernels.lean_partition import emit8

        lo, hi = self.span(gid)
        part = self.values[gid]
        if first:
            self.cursor = lo
            if level < DMASK:  # the scans that time a ply (at DMASK) take nothing
                for piece in self.far[gid].pieces(level):
                    lean_arrive(part, piece, len(piece), level)
        if len(self.taken) < ROUND:
            self.taken = np.empty(ROUND, np.int64)
        updates, cuts, seen, self.cursor = emit8(part, as_words8(part), lo, self.cursor, hi, level,
                                                 self.layout.geo, self.layout.lay, ROUND, self.bounds[gid], self.taken)
        self.logs[gid].add(level, self.taken[:seen])
        batches = [updates[cuts[r] : cuts[r + 1]] for r in range(self.parts)]
        self.sent += sum(b.nbytes for r, b in enumerate(batches) if r != self.rank)
        return [*batches, (int(seen), self.cursor >= hi)]

    def apply(self, gid: int, level: int, *batches: np.ndarray) -> tuple[int, int]:
        from solver.kernels.lean_partition import apply8

        lo, _ = self.span(gid)
        glo, _ = self.group(gid)
        updates = np.concatenate(batches) if len(batches) > 1 else batches[0]
        top, pending = apply8(self.values[gid], lo, level, updates, glo > 0)
        self.pending = np.concatenate([self.pending, pending])
        return int(top), len(self.pending)

    def resolve(self, gid: int, level: int, *answers: np.ndarray) -> int:
        from solver.kernels.lean_partition import resolve8

        lo, _ = self.span(gid)
        self._take_answers(answers)
        n = len(self.pending)
        fi, fd = np.empty(n, np.int64), np.empty(n, np.int64)
        nfar, top = resolve8(self.values[gid], lo, self.pending, level, self.layout.geo, self.layout.lay,
                             self.keys, self.kvals, fi, fd)
        self.far[gid].add(fi[:nfar], fd[:nfar])
        self.pending = np.empty(0, np.int64)
        return int(top)

    def finish(self, gid: int) -> None:
        """Merge the part, count it per tier; re-encode it where groups above look into it."""
        from solver.kernels.retro import count_values

        if self.far[gid].pending():
            raise AssertionError(f"positions left waiting for plies {self.far[gid].pending()}: a bug in the lean solve")
        lo, hi = self.span(gid)
        glo, ghi = self.group(gid)
        part, log = self.values[gid], self.logs[gid]
        keep = gid < len(self.bounds) - 1  # groups above look into this one
        esc = self.esc[gid] = Escapes()
        out = np.empty(WINDOW, np.uint16)
        counts = {}
        for t in self.layout.tiers:
            a0, b0 = max(lo, t.base), min(hi, t.base + t.size)
            if not (glo <= t.base < ghi) or a0 >= b0:
                continue
            wins, losses = np.zeros(DMASK + 1, np.int64), np.zeros(DMASK + 1, np.int64)
            draws = invalid = 0
            for a in range(a0, b0, WINDOW):
                b = min(a + WINDOW, b0)
                o = out[: b - a]
                merge_window(part, log, a - lo, b - lo, o)
                w, lo_, d, bad = count_values(o, 0, b - a, DMASK)
                wins += w
                losses += lo_
                draws += int(d)
                invalid += int(bad)
                if keep:
                    esc.encode(o, part, a - lo)
            counts[(t.base, t.base + t.size)] = (wins, losses, draws, invalid)
        esc.seal()
        self.counts[gid] = counts
        self.keys, self.kvals = np.empty(0, np.int64), np.empty(0, np.uint16)
        if keep:
            self._drop(gid)

    def _drop(self, gid: int) -> None:
        log = self.logs.pop(gid, None)
        if log is not None:
            log.close()
        self.far.pop(gid, None)
        shutil.rmtree(self.temp / f"g{gid}", ignore_errors=True)

    def count(self, gid: int, lo: int, hi: int):
        """The counts of the tier ``lo..hi`` in this part (:meth:`finish` made them)."""
        got = self.counts.get(gid, {}).get((lo, hi))
        if got is None:
            return np.zeros(DMASK + 1, np.int64), np.zeros(DMASK + 1, np.int64), 0, 0
        return got

    def read(self, gid: int, lo: int, hi: int) -> np.ndarray:
        plo, _ = self.span(gid)
        out = np.empty(hi - lo, np.uint16)
        if gid in self.logs:  # the last group: merged again, a window at a time, as it is written
            merge_window(self.values[gid], self.logs[gid], lo - plo, hi - plo, out)
        else:
            esc = self.esc[gid]
            decode_final(self.values[gid], lo - plo, hi - plo, esc.idx, esc.val, out)
        return out

    def close(self) -> None:
        """Remove the temporary files (the solve is over)."""
        for gid in list(self.logs):
            self._drop(gid)
        shutil.rmtree(self.temp, ignore_errors=True)
        if self.temp.parent.name == TEMP:
            try:
                self.temp.parent.rmdir()  # the last actor to leave removes the database folder's
            except OSError:
                pass
