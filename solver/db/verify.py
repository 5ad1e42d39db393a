"""``rotary verify``: every block's checksum, and values re-derived from children."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solver.db.database import Database
from solver.db.store import StoreError
from solver.db.verify_progress import VerifyProgress, note_name, values_identity
from solver.db.verify_values import MAX_BYTES, Values, read_values
from solver.errors import UsageError
from solver.memory import mem_available


@dataclass
class VerifyResult:
    ok: bool
    checked: int
    message: str
    resumed: int = 0  # positions checked by an interrupted run before this one


STEP = 1 << 20  # positions a thread checks at a time; the progress file counts whole steps


def verify_db(
    path: str | os.PathLike, sample: int | None = None, seed: int = 0, progress: bool = True, jobs: int = 1,
    restart: bool = False, tiers: Sequence[str] | None = None, part: tuple[int, int | None] | None = None,
) -> VerifyResult:
    """Check a database; the message names the first bad block or position.

    ``sample``: check this many random positions (at least one) instead of all.
    ``jobs``: threads re-deriving values (the kernel releases the GIL; the values are
    read-only and shared). A full check notes its progress in the database folder and
    resumes an interrupted one of the same values (:mod:`solver.db.verify_progress`);
    ``restart``: check every position again all the same. ``tiers``: check only the
    positions of these rotation tiers (keys such as ``x5v6``); only their groups and the
    groups before them in solving order — every child lies there — are read, so a database
    whose later tiers are still being solved can be checked tier by tier. ``part``:
    ``(first, end)`` — check only the positions ``first .. end - 1`` of those chosen, counted
    in index order from 0 (``end`` None: to the last), so that one long check can be split
    over runs or machines; it keeps a progress note of its own.
    """
    if sample is not None and sample < 1:
        raise ValueError(f"sample must be at least 1, got {sample}")
    if seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {seed}")
    from tqdm import tqdm

    from solver.game.position import Position

    with Database(path) as db:
        if not getattr(db, "distances", True):  # an exported WDL-only set: its win/draw/loss re-derived
            from solver.db.compact_verify import verify_wdl

            return VerifyResult(*verify_wdl(db, sample, seed, progress, jobs, tiers, part))
        layout = db.layout
        chosen = _chosen_tiers(layout, tiers)
        only = None if tiers is None else [layout.tiers[i].key for i in chosen]  # a --tier check: its tiers
        # the chosen tiers and every tier their children can be in: their groups and the groups before
        end = next(hi for _, lo, hi in layout.groups if lo <= layout.tiers[max(chosen)].base < hi)
        read = [t for t in layout.tiers if t.base < end]
        missing = [t.key for t in read if t.key not in db.tier_meta]
        if missing:
            return VerifyResult(False, 0, f"FAIL: tiers not solved yet: {', '.join(missing)}")
        width = _value_width(db, read)
        bar = lambda tiers: tqdm(tiers, desc="checksums", disable=not progress, leave=False)  # noqa: E731
        try:  # tiers not read take no memory
            vals, crcs = read_values(db.store, read, layout.total, bar, one_byte=width == 1)
        except StoreError as e:
            return VerifyResult(False, 0, f"FAIL: {e}")  # names the database, tier and block
        spans: list[tuple[int, int]] = []
        for i in chosen:  # neighbouring tiers as one span: whole STEPs across tier bounds
            lo, hi = layout.tiers[i].base, layout.tiers[i].base + layout.tiers[i].size
            if spans and spans[-1][1] == lo:
                spans[-1] = (spans[-1][0], hi)
            else:
                spans.append((lo, hi))
        chosen_total = sum(hi - lo for lo, hi in spans)
        if part is not None:
            first, stop = part[0], chosen_total if part[1] is None else part[1]
            if not 0 <= first < stop <= chosen_total:
                raise UsageError(
                    f"--positions {first}:{'' if part[1] is None else part[1]}: the tiers chosen hold positions "
                    f"0:{chosen_total} (a non-empty range within them)"
                )
            spans = _slice(spans, first, stop)
        total = sum(hi - lo for lo, hi in spans)
        notes, resumed = None, 0
        if sample is not None:
            rng = np.random.default_rng(seed)
            todo = [(int(i), int(i) + 1) for i in _nth(spans, rng.integers(0, total, min(sample, total)))]
        else:
            identity = values_identity(db.header["rules"], crcs)
            if only is not None:
                identity["only"] = only
            if part is not None:
                identity["part"] = [first, stop]
            notes = VerifyProgress(path, identity, name=note_name(only, None if part is None else (first, stop)))
            resumed = 0 if restart else min(notes.resume(), total)
            if resumed and progress:
                print(f"rotary: resuming verify: the first {resumed:,} positions were checked by a run begun "
                      f"{notes.started} (--restart checks them again)", file=sys.stderr)
            todo = _steps(spans, resumed)
        with tqdm(total=resumed + sum(hi - lo for lo, hi in todo), initial=resumed, desc="values", unit="pos",
                  unit_scale=True, disable=not progress, leave=False) as bar:
            checked, bad = _check_values(vals, todo, layout, jobs, bar, notes, resumed)
        checked += resumed
        failure = None
        if bad >= 0:
            m, p, s = layout.position(bad)
            x, o = (m, p) if s == 0 else (p, m)
            pos = Position.make(db.cfg.board, x, o, s)
            failure = f"FAIL: {pos.text()} (index {bad}) does not follow from its children"
        elif db.placement is not None and only is None and part is None:
            failure = _verify_placement(db, vals.vals)
            if not failure:
                checked += db.placement.layout.total
        if notes is not None:
            notes.clear()  # finished, OK or not: the next verify starts afresh
        if failure:
            return VerifyResult(False, checked, failure, resumed)
        metas = db.tier_meta.values() if only is None else [db.tier_meta[t.key] for t in read]
        blocks = sum(t["blocks"] for t in metas)
        what = f"{checked:,} sampled positions" if sample is not None else f"all {checked:,} positions"
        if part is not None:
            what += f" {first:,}–{stop - 1:,} (in index order) of the {chosen_total:,}"
            what += "" if only is not None else " in all"
        if only is not None:
            what += " of " + ", ".join(only)
        earlier = f" (the first {resumed:,} checked by an interrupted run begun {notes.started})" if resumed else ""
        return VerifyResult(
            True, checked, f"OK: {db.description}: {blocks} block checksums, {what} consistent with their children{earlier}",
            resumed,
        )


FIXED_BYTES = 600_000_000  # Python, numpy, numba and the kernels beside the values (a 12v12 verify: 1.9 GB, 1.3 of it values)


def _value_width(db, read) -> int:
    """The bytes a position verify keeps of the tiers ``read``: one, or two where the
    database may hold more than 256 distinct codes (its longest win and loss say) or has
    placement layers (their check needs the 16-bit codes). A verify whose values do not fit
    in the memory to be had is refused in one line, before anything is read."""
    metas = [db.tier_meta[t.key] for t in read]
    longest = sum(max((m.get(k) or 0 for m in metas), default=0) for k in ("longest_win", "longest_loss"))
    width = 2 if db.placement is not None or longest + 4 > MAX_BYTES else 1
    positions = sum(t.size for t in read)
    need = width * positions + FIXED_BYTES
    avail = mem_available()
    if avail is not None and need > avail:
        raise UsageError(
            f"verify needs about {need / 1e9:.1f} GB of memory for the values of {positions:,} positions "
            f"({width} byte{'s' if width > 1 else ''} each) and {avail / 1e9:.1f} GB are available: free memory "
            "or use a larger machine"
        )
    return width


def _chosen_tiers(layout, keys: Sequence[str] | None) -> list[int]:
    """The numbers of the rotation tiers named by ``keys`` (all where None), in index order."""
    if keys is None:
        return list(range(len(layout.tiers)))
    number = {t.key: i for i, t in enumerate(layout.tiers)}
    unknown = [k for k in keys if k not in number]
    if unknown or not keys:
        raise UsageError(
            f"--tier {','.join(unknown) or '(none)'}: this database has no such tier "
            f"(its tiers: {', '.join(number)})"
        )
    return sorted({number[k] for k in keys})


def _slice(spans: list[tuple[int, int]], first: int, stop: int) -> list[tuple[int, int]]:
    """The index ranges of the positions ``first .. stop - 1`` of ``spans`` taken one after another."""
    out, seen = [], 0
    for lo, hi in spans:
        a, b = max(lo, lo + first - seen), min(hi, lo + stop - seen)
        if a < b:
            out.append((a, b))
        seen += hi - lo
    return out


def _steps(spans: list[tuple[int, int]], skip: int) -> list[tuple[int, int]]:
    """The index ranges of ``spans`` in ``STEP``s, the first ``skip`` positions left out."""
    out = []
    for lo, hi in spans:
        if skip >= hi - lo:
            skip -= hi - lo
            continue
        lo, skip = lo + skip, 0
        out += [(a, min(a + STEP, hi)) for a in range(lo, hi, STEP)]
    return out


def _nth(spans: list[tuple[int, int]], ns: np.ndarray) -> np.ndarray:
    """The global indices of the ``ns``-th positions of ``spans`` taken one after another."""
    sizes = np.array([hi - lo for lo, hi in spans], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    k = np.searchsorted(starts, ns, side="right") - 1
    return np.array([lo for lo, _ in spans], dtype=np.int64)[k] + (ns - starts[k])


def _check_values(
    vals: Values, todo: list[tuple[int, int]], layout, jobs: int, bar, notes: VerifyProgress | None = None,
    start: int = 0,
) -> tuple[int, int]:
    """Run :func:`verify_range` over the ranges ``todo`` on ``jobs`` threads.

    Returns ``(positions checked, first bad index or -1)``: the bad index is the first in
    ``todo``'s order among the ranges checked (every range before a bad one is checked,
    so the answer does not depend on the threads' timing); ranges not started yet are
    dropped once one is bad, or on an interrupt (the ranges running finish: a second
    or so). ``notes``: where the checked prefix ``start + checked`` is noted — ``todo``
    then follows the ``start`` positions checked before, in the same order.
    """
    from concurrent.futures import ThreadPoolExecutor

    def run(lohi: tuple[int, int]) -> int:
        buf, buf2 = (np.empty(6 * layout.geo.npoints, dtype=np.int64) for _ in range(2))
        return _verify_range(vals, lohi[0], lohi[1], layout, buf, buf2)

    checked = 0
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run, lohi) for lohi in todo]
        try:
            for lohi, fut in zip(todo, futures):
                bad = fut.result()
                if bad >= 0:
                    return checked, bad
                checked += lohi[1] - lohi[0]
                bar.update(lohi[1] - lohi[0])
                if notes is not None:
                    notes.note(start + checked)
        except BaseException:  # Ctrl-C: keep what is checked, and do not wait for the rest
            if notes is not None:
                notes.note(start + checked, force=True)
            raise
        finally:
            for f in futures:
                f.cancel()
    return checked, -1


def _verify_range(vals: Values, lo: int, hi: int, layout, buf: np.ndarray, buf2: np.ndarray) -> int:
    """The first index in ``lo..hi`` whose value does not follow from its children, else -1."""
    from solver.kernels.verify import verify_range

    return int(verify_range(vals.vals, vals.dec, lo, hi, layout.geo, layout.lay, buf, buf2))


def _verify_placement(db: Database, rot_vals: np.ndarray) -> str | None:
    """Recompute every placement layer from the layer above and compare; None if all agree."""
    from solver.kernels.setup import stretch
    from solver.game.position import Position

    place = db.placement
    lay = place.layout
    board = db.cfg.board
    try:
        stored = db.placement_values()
    except StoreError as e:
        return f"FAIL: placement layers: {e}"
    fresh = stored.copy()
    for t in lay.tiers:
        place.solve_range(fresh, t.base, t.base + t.size, rot_vals, db.layout)
        diff = np.nonzero(fresh[t.base : t.base + t.size] != stored[t.base : t.base + t.size])[0]
        if len(diff):
            gi = t.base + int(diff[0])
            m, p, s = lay.position(gi)
            m, p = int(stretch(np.uint64(m), place.back)), int(stretch(np.uint64(p), place.back))
            x, o = (m, p) if s == 0 else (p, m)
            phase = "offer" if (x.bit_count(), o.bit_count()) == (db.cfg.balls, db.cfg.balls) else "place"
            pos = Position.make(board, x, o, s, phase)
            return f"FAIL: {pos.text()} (placement index {gi}) does not follow from its children"
    return None
