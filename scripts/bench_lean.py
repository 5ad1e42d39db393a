"""The lean solve against the two-byte one: wall time, peak resident size, temporary disk.

    python scripts/bench_lean.py                         # hex(3) 4v4 and 5v5 base, -j 1
    python scripts/bench_lean.py hex3:4:edge hex2:5 -j 2 # configurations BOARD:BALLS[:edge]
    python scripts/bench_lean.py --keep /tmp/bench       # keep the databases there

Each configuration is solved twice by ``rotary solve`` in a process of its own, into a
fresh folder (``--checkpoint off``, ``-q``): once in two bytes a position, once with
``--lean``. The peak resident size is the process's own (``ru_maxrss`` from ``wait4``);
the lean solve's temporary folder is measured every 0.2 s. The per-tier SHA-256 of the two
databases are compared (they must be equal), and the table printed in Markdown, with what
the budget said each solve would need (:func:`solver.retro.budget.needs`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from solver.db.checksums import tier_checksums
from solver.db.database import open_db
from solver.game.config import make_config
from solver.retro import budget
from solver.retro.shape import Shape
from solver.retro.spill import FOLDER


def rotary() -> str:
    here = Path(sys.executable).with_name("rotary")
    return str(here) if here.exists() else "rotary"


def folder_bytes(path: Path) -> int:
    try:
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    except OSError:
        return 0


def run(board: str, balls: int, edge: bool, jobs: int, lean: bool, db: Path) -> dict:
    argv = [rotary(), "solve", "--board", board, "--balls", str(balls), "--db", str(db), "-q", "-j", str(jobs),
            "--checkpoint", "off", "--force"] + (["--edge"] if edge else []) + (["--lean"] if lean else [])
    peak_temp = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            peak_temp[0] = max(peak_temp[0], folder_bytes(db / FOLDER))

    threading.Thread(target=watch, daemon=True).start()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err}")
    with open_db(db) as d:
        sums = tier_checksums(d)
    return {"seconds": seconds, "peak": usage.ru_maxrss * 1024, "temp": peak_temp[0],
            "db": folder_bytes(db), "sums": sums, "cpu": usage.ru_utime + usage.ru_stime}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("configs", nargs="*", default=["hex3:4", "hex3:5"], help="BOARD:BALLS[:edge] (default hex3:4 hex3:5)")
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="solve into this folder and keep the databases")
    args = ap.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-lean-"))
    rows = []
    for spec in args.configs:
        board, balls, *rest = spec.split(":")
        edge = rest == ["edge"]
        cfg = make_config(board, int(balls), edge=edge)
        shape = Shape(cfg, (int(balls), int(balls)))
        out = {}
        for lean in (False, True):
            db = root / f"{spec.replace(':', '-')}-{'lean' if lean else 'two'}"
            shutil.rmtree(db, ignore_errors=True)
            need = budget.needs(shape, db, args.jobs, "thread", False, set(), lean=lean)
            out[lean] = dict(run(board, int(balls), edge, args.jobs, lean, db), need=need.memory)
            print(f"{spec} {'lean' if lean else 'two-byte'}: {out[lean]['seconds']:.1f} s", file=sys.stderr, flush=True)
        same = out[False]["sums"] == out[True]["sums"]
        for lean in (False, True):
            r = out[lean]
            rows.append((f"{cfg.describe()} ({shape.total:,} positions)", "lean" if lean else "two-byte", r, same))
        if args.keep is None:
            for lean in (False, True):
                shutil.rmtree(root / f"{spec.replace(':', '-')}-{'lean' if lean else 'two'}", ignore_errors=True)
    print(f"| configuration | solve (-j {args.jobs}) | wall | CPU | peak resident | budget said | temporary disk peak "
          "| database | same SHA-256 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name, mode, r, same in rows:
        temp = budget.gb(r["temp"]) if mode == "lean" else "-"
        print(f"| {name} | {mode} | {r['seconds']:.1f} s | {r['cpu']:.1f} s | {budget.gb(r['peak'])} | {budget.gb(r['need'])} "
              f"| {temp} | {budget.gb(r['db'])} | {'yes' if same else 'NO'} |")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if all(same for *_, same in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
