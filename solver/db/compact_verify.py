"""``rotary verify`` of a WDL-only exported set: every block's checksum, each tier's WDL
against the checksum recorded at export, and every win/draw/loss re-derived from the
children's (:func:`solver.kernels.compact.verify_wdl_range`). A set with distances is
checked as an LMDB database is (:mod:`solver.db.verify`)."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from solver.errors import StoreError, UsageError

STEP = 1 << 20  # positions a thread checks at a time


def verify_wdl(db, sample: int | None = None, seed: int = 0, progress: bool = True, jobs: int = 1,
               tiers=None, part=None) -> tuple[bool, int, str]:
    """``(ok, positions checked, message)`` for the WDL-only set ``db`` (opened)."""
    from tqdm import tqdm

    from solver.game.position import Position
    from solver.kernels.compact import verify_wdl_range

    if tiers is not None or part is not None:
        raise UsageError(f"{db.path} holds win/draw/loss only: verify it whole or with --sample (not --tier or --positions)")
    layout = db.layout
    try:
        wdl = db.wdl_values()
    except StoreError as e:
        return False, 0, f"FAIL: {e}"
    for no, t in enumerate(layout.tiers):
        f = db.files[no][0]
        if hashlib.sha256(wdl[t.base : t.base + t.size].tobytes()).hexdigest() != f.header["wdl_sha256"]:
            return False, 0, f"FAIL: {f.where}: tier {t.key} does not decode to the values it was exported from (checksum differs)"
    total = layout.total
    if sample is not None:
        rng = np.random.default_rng(seed)
        todo = [(int(g), int(g) + 1) for g in rng.integers(0, total, min(sample, total))]
    else:
        todo = [(lo, min(lo + STEP, total)) for lo in range(0, total, STEP)]

    def run(lohi: tuple[int, int]) -> int:
        buf = np.empty(6 * layout.geo.npoints, dtype=np.int64)
        return int(verify_wdl_range(wdl, lohi[0], lohi[1], layout.geo, layout.lay, buf))

    checked = 0
    with ThreadPoolExecutor(max(1, jobs)) as pool, tqdm(total=sum(b - a for a, b in todo), desc="values", unit="pos",
                                                         unit_scale=True, disable=not progress, leave=False) as bar:
        for (lo, hi), bad in zip(todo, pool.map(run, todo)):
            if bad >= 0:
                m, p, s = layout.position(bad)
                x, o = (m, p) if s == 0 else (p, m)
                pos = Position.make(db.cfg.board, x, o, s)
                return False, checked, f"FAIL: {pos.text()} (index {bad}): its win/draw/loss does not follow from its children"
            checked += hi - lo
            bar.update(hi - lo)
    blocks = sum(t["blocks"] for t in db.tier_meta.values())
    what = f"{checked:,} sampled positions" if sample is not None else f"all {checked:,} positions"
    return True, checked, (f"OK: {db.description}: {blocks} block checksums, win/draw/loss of {what} consistent with "
                           "their children (a WDL-only set: no distances to check)")
