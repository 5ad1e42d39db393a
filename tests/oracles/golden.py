"""Golden values for the solver tests: the brute-force oracle run once, stored compactly.

:mod:`tests.oracles.brute` solves a configuration from the plain-Python rules with no
symmetry at all; on hex(3) with 3 v 2 balls that takes many minutes, too slow to repeat in
CI. This module names the expensive configurations of ``tests/retro/test_retrograde.py``
(:data:`GOLDEN`), says how their files are named and read (:func:`golden_path`,
:func:`load_golden`), and, run as a module, makes one ``data/golden/<name>.npz`` per
configuration:

    codes   uint16 per position, in the order of :func:`enumerate_keys` (= the order of
            ``brute.positions``): 0 = draw, 0x8000|d = loss in d, 0xC000|d = win in d
            (plies d, from the side to move)
    meta    JSON text: name, rules (``Config.key()``), material, count, and the SHA-256
            of the enumerated keys, so a reader can prove it regenerated the same order

The positions themselves are not stored: :func:`enumerate_keys` regenerates them in a
second with numpy. Usage, from the repository root::

    python -m tests.oracles.golden                # every missing golden file
    python -m tests.oracles.golden hex3-3v2-edge -j 2 --force
    python -m tests.oracles.golden hex3-2v2-edge --check   # recompute, compare, write nothing
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "data" / "golden"

# hex(3) points: a1 b1 c1 d1 / a2..e2 / a3..f3 / a4..e4 / a5..d5 / a6 b6 c6;
# centre c3 d3 c4. Trap sets:
#   "a1,f3" / "a6,a3": no symmetry at all (two side tables, trivial group)
#   "a1,d1" / "f3,c6": a colour-swapping symmetry (one side table, folded by a non-identity map)
HEX3_ASYM = dict(traps_x="a1,f3", traps_o="a6,a3")
HEX3_SWAP = dict(traps_x="a1,d1", traps_o="f3,c6")
#   "a1,d1" / "a6,c6": a plain reflection only (two side tables, symmetric orbits)
HEX3_PLAIN = dict(traps_x="a1,d1", traps_o="a6,c6")

# name -> (make_config keyword arguments, material (light, dark))
GOLDEN: dict[str, tuple[dict, tuple[int, int]]] = {
    "hex2-4v4-edge": (dict(board=2, balls=4, edge=True), (4, 4)),
    "hex3-2v2-base": (dict(board=3, balls=2), (2, 2)),
    "hex3-2v2-edge": (dict(board=3, balls=2, edge=True), (2, 2)),
    "hex3-2v2-capture": (dict(board=3, balls=2, capture=True, **HEX3_PLAIN), (2, 2)),
    "hex3-2v2-edge-capture": (dict(board=3, balls=2, edge=True, capture=True, **HEX3_ASYM), (2, 2)),
    "hex3-3v2-base": (dict(board=3, balls=3), (3, 2)),
    "hex3-3v2-edge": (dict(board=3, balls=3, edge=True), (3, 2)),
    "hex3-3v2-capture": (dict(board=3, balls=3, capture=True, **HEX3_ASYM), (3, 2)),
    "hex3-3v2-edge-capture": (dict(board=3, balls=3, edge=True, capture=True, **HEX3_SWAP), (3, 2)),
}

DRAW_CODE, LOSS_CODE, WIN_CODE = 0x0000, 0x8000, 0xC000

# The provenance recorded in every stored file's meta, kept as it was written so that a
# remade file carries the same meta as the stored one (the generator was then a script).
MADE_BY = "scripts/make_golden.py (tests/brute.py solve_all)"


def config_of(name: str):
    from solver.game.config import make_config

    kw, material = GOLDEN[name]
    return make_config(**kw), material


def materials(cfg, material: tuple[int, int]) -> list[tuple[int, int]]:
    """Same pairs and order as ``brute.materials``."""
    a, b = material
    if cfg.edge or cfg.capture:
        return [(i, j) for i in range(a + 1) for j in range(b + 1)]
    return [(a, b)]


def enumerate_keys(cfg, material: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, o, turn)`` arrays of every position of ``brute.positions(cfg, material)``, same order.

    Order: materials; light sets in lexicographic combination order; dark sets among the
    remaining points in lexicographic order; turn x then o. With ``capture``, positions
    with a ball on the other colour's trap are left out.
    """
    n = cfg.board.size
    points = np.arange(n, dtype=np.uint64)
    xs_out, os_out = [], []
    for a, b in materials(cfg, material):
        combos = list(combinations(range(n - a), b))
        local = np.array(combos, dtype=np.int64).reshape(len(combos), b)
        for xs in combinations(range(n), a):
            x = sum(1 << p for p in xs)
            if cfg.capture and x & cfg.traps_o:
                continue
            rest = np.array([p for p in range(n) if not x >> p & 1], dtype=np.int64)
            o = np.bitwise_or.reduce(np.uint64(1) << points[rest[local]], axis=1) if b else np.zeros(len(local), np.uint64)
            if cfg.capture:
                o = o[(o & np.uint64(cfg.traps_x)) == 0]
            xs_out.append(np.full(len(o), x, dtype=np.uint64))
            os_out.append(o.astype(np.uint64))
    x = np.repeat(np.concatenate(xs_out), 2)
    o = np.repeat(np.concatenate(os_out), 2)
    turn = np.tile(np.array([0, 1], dtype=np.uint8), len(x) // 2)
    return x, o, turn


def keys_digest(x: np.ndarray, o: np.ndarray, turn: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(x, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(o, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(turn, dtype="u1").tobytes())
    return h.hexdigest()


def value_code(result: str, plies: int | None) -> int:
    if result == "draw":
        return DRAW_CODE
    return (WIN_CODE if result == "win" else LOSS_CODE) | int(plies)


def golden_path(name: str, folder: Path = GOLDEN_DIR) -> Path:
    return folder / f"{name}.npz"


def load_golden(name: str, folder: Path = GOLDEN_DIR):
    """``(cfg, material, x, o, turn, codes)``; the enumeration is checked against the file."""
    cfg, material = config_of(name)
    with np.load(golden_path(name, folder)) as f:
        codes = f["codes"]
        meta = json.loads(str(f["meta"]))
    if meta["rules"] != cfg.key() or tuple(meta["material"]) != material:
        raise ValueError(f"golden file {name} was made for {meta['rules']} {meta['material']}, not {cfg.key()} {material}")
    x, o, turn = enumerate_keys(cfg, material)
    if len(x) != meta["count"] or len(codes) != meta["count"] or keys_digest(x, o, turn) != meta["keys_sha256"]:
        raise ValueError(f"golden file {name}: the regenerated position order differs from the stored one")
    return cfg, material, x, o, turn, codes


def compute(name: str, processes: int) -> tuple[np.ndarray, dict]:
    """``(codes, meta)`` of configuration ``name``, from brute force (minutes for hex3 3 v 2)."""
    from solver.game.position import Position
    from tests.oracles.brute import solve_all

    cfg, material = config_of(name)
    table = solve_all(cfg, material, processes=processes)
    x, o, turn = enumerate_keys(cfg, material)
    if len(x) != len(table):
        raise AssertionError(f"{name}: brute force has {len(table)} positions, the enumeration {len(x)}")
    board = cfg.board
    codes = np.empty(len(x), dtype=np.uint16)
    for i, (xi, oi, ti) in enumerate(zip(x.tolist(), o.tolist(), turn.tolist())):
        codes[i] = value_code(*table[Position.make(board, xi, oi, ti)])
    meta = {
        "name": name,
        "rules": cfg.key(),
        "material": list(material),
        "count": len(x),
        "keys_sha256": keys_digest(x, o, turn),
        "made_by": MADE_BY,
    }
    return codes, meta


def make(name: str, processes: int, folder: Path = GOLDEN_DIR) -> Path:
    t0 = time.perf_counter()
    codes, meta = compute(name, processes)
    folder.mkdir(parents=True, exist_ok=True)
    path = golden_path(name, folder)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, codes=codes, meta=np.array(json.dumps(meta)))
    tmp.replace(path)
    print(f"{name}: {meta['count']:,} positions, {time.perf_counter() - t0:.0f} s, {path.stat().st_size / 1e6:.2f} MB -> {path}", flush=True)
    return path


def check(name: str, processes: int, folder: Path = GOLDEN_DIR) -> bool:
    """Recompute ``name`` and compare codes and meta with its stored file; writes nothing."""
    t0 = time.perf_counter()
    codes, meta = compute(name, processes)
    path = golden_path(name, folder)
    with np.load(path) as f:
        stored_codes = f["codes"]
        stored_meta = json.loads(str(f["meta"]))
    same = stored_meta == meta and stored_codes.dtype == codes.dtype and np.array_equal(stored_codes, codes)
    verdict = "same codes and meta as" if same else "DIFFERS from"
    print(f"{name}: {meta['count']:,} positions, {time.perf_counter() - t0:.0f} s, {verdict} {path}", flush=True)
    return same


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.oracles.golden", description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help=f"configurations (default: all missing): {', '.join(GOLDEN)}")
    ap.add_argument("-j", "--processes", type=int, default=2, help="worker processes for brute force")
    ap.add_argument("--force", action="store_true", help="remake existing files")
    ap.add_argument("--check", action="store_true", help="recompute and compare with the stored files (default: all); write nothing")
    ap.add_argument("--out", type=Path, default=GOLDEN_DIR)
    args = ap.parse_args(argv)
    for name in args.names:
        if name not in GOLDEN:
            ap.error(f"unknown configuration {name!r}: expected one of {', '.join(GOLDEN)}")
    if args.check:
        results = [check(name, args.processes, args.out) for name in args.names or list(GOLDEN)]
        return 0 if all(results) else 1
    for name in args.names or list(GOLDEN):
        if golden_path(name, args.out).exists() and not args.force:
            print(f"{name}: exists, skipped (--force to remake)")
            continue
        make(name, args.processes, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
