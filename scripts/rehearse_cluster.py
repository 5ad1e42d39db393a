"""Rehearse a multi-machine Ray solve on one machine: N Ray nodes started with ``ray
start`` (the head, then N - 1 joined to it, each with its own raylet and object store, as
separate machines have), the solve joined to them with ``--address`` as on a real
cluster (token authentication included), then its per-tier SHA-256 compared with the
published ones (``rotary checksums``).

    python scripts/rehearse_cluster.py --board hex3 --balls 6 --nodes 2 --actors 4 --lean \\
        --db /tmp/hex3-6v6-ray

Prints the solve's own output, its wall time, the peak resident memory of each actor
(the processes Ray names ``ray::…``) and the checksums' verdict. Exit status: that of the
checksum comparison (0: every published tier equal), or the solve's where it failed.
Ends with ``ray stop``, which stops every Ray process of this machine: run it where no
other Ray cluster runs. The nodes share this machine's cores: a rehearsal shows that the
multi-machine path gives the same database bit for bit, not how fast P machines are
(docs/distributed.md has the projection).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path


def _peak_bytes(pid: int) -> int | None:
    """A process's peak resident size so far (VmHWM), from /proc."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def _actor_peaks(peaks: dict[int, int], stop: threading.Event) -> None:
    """Every second, the peak resident size (VmHWM) of each Ray worker process (command
    line ``ray::…``: the actors once they hold their parts), kept per process."""
    while not stop.is_set():
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                if not (d / "cmdline").read_bytes().startswith(b"ray::"):
                    continue
            except OSError:
                continue
            found = _peak_bytes(int(d.name))
            if found is not None:
                peaks[int(d.name)] = max(peaks.get(int(d.name), 0), found)
        stop.wait(1.0)


def _exe(name: str) -> str:
    """A console script beside this Python (a venv not activated), else on PATH."""
    here = Path(sys.executable).with_name(name)
    return str(here) if here.exists() else name


def _ray(*args: str) -> None:
    env = dict(os.environ)
    if (Path.home() / ".ray" / "auth_token").exists() or "RAY_AUTH_TOKEN" in env:
        env.setdefault("RAY_AUTH_MODE", "token")
    try:
        done = subprocess.run([_exe("ray"), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    except FileNotFoundError:
        raise SystemExit("rehearse_cluster: error: 'ray' is not installed (pip install 'rotary[cluster]')") from None
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SystemExit(f"rehearse_cluster: error: 'ray {args[0]}' failed: {last[:200]}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--board", default="hex3")
    ap.add_argument("--balls", default="3")
    ap.add_argument("--edge", action="store_true")
    ap.add_argument("--capture", action="store_true")
    ap.add_argument("--nodes", type=int, default=2, help="Ray nodes to start on this machine (the 'machines')")
    ap.add_argument("--actors", type=int, default=4, help="-j of the solve: actors, one CPU each")
    ap.add_argument("--lean", action="store_true", help="the actors keep one byte a position")
    ap.add_argument("--store-gb", type=float, default=2.0, help="each node's object store (GB)")
    ap.add_argument("--port", type=int, default=6390, help="the head's port")
    ap.add_argument("--db", type=Path, required=True, help="the database folder to write")
    args = ap.parse_args(argv)
    if args.actors % args.nodes:
        ap.error("--actors must be a multiple of --nodes (each node gets as many CPUs as actors)")
    per_node = args.actors // args.nodes
    rules = ["--board", args.board, "--balls", str(args.balls)] + ["--edge"] * args.edge + ["--capture"] * args.capture
    address = f"127.0.0.1:{args.port}"
    store = str(int(args.store_gb * 1e9))
    peaks: dict[int, int] = {}
    stop = threading.Event()
    try:
        _ray("start", "--head", "--port", str(args.port), "--num-cpus", str(per_node),
             "--object-store-memory", store, "--include-dashboard", "false")
        for _ in range(args.nodes - 1):
            _ray("start", "--address", address, "--num-cpus", str(per_node), "--object-store-memory", store)
        cpus = f"{per_node} CPU" + "s" * (per_node > 1)
        print(f"cluster: {args.nodes} nodes of {cpus} at {address}; {args.actors} actors", flush=True)
        sampler = threading.Thread(target=_actor_peaks, args=(peaks, stop), daemon=True)
        sampler.start()
        cmd = [_exe("rotary"), "solve", *rules, "--executor", "ray", "--address", address, "-j", str(args.actors),
               "--db", str(args.db), *(["--lean"] if args.lean else [])]
        print("$ " + " ".join(cmd), flush=True)
        t0 = time.perf_counter()
        rc = subprocess.call(cmd)
        wall = time.perf_counter() - t0
    finally:
        stop.set()
        subprocess.run([_exe("ray"), "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"solve: exit {rc}, {wall:.1f} s wall")
    top = sorted(peaks.values(), reverse=True)[: args.actors]
    print(f"peak resident of the {len(top)} largest Ray workers (the actors): "
          f"{', '.join(f'{x / 1e6:.0f}' for x in top)} MB")
    if rc:
        return rc
    check = [_exe("rotary"), "checksums", *rules, "--db", str(args.db)]
    print("$ " + " ".join(check), flush=True)
    return subprocess.call(check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
