"""``scripts/rehearse_cluster.py``: two Ray nodes started with ``ray start`` on this
machine, the solve joined to them with ``--address``, its database equal to the published
checksums. Slow: it ends with ``ray stop``, which stops every Ray process of the machine."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_two_node_rehearsal_gives_the_published_database(tmp_path):
    pytest.importorskip("ray")
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "rehearse_cluster.py"), "--board", "hex2", "--balls", "3",
         "--nodes", "2", "--actors", "2", "--lean", "--port", str(_free_port()), "--db", str(tmp_path / "db")],
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert "cluster: 2 nodes of 1 CPU at" in out.stdout
    assert "x3v3  equal" in out.stdout and "OK: all 1 published tiers equal" in out.stdout
    assert "peak resident of the 2 largest Ray workers" in out.stdout
