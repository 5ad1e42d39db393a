"""What the benchmark scripts share: one measured run in a fresh Python process.

A fresh process per run keeps peak-memory figures (``ru_maxrss``) and CPU times to that
run alone. The child program prints one JSON object as its last line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile


def run_child(child: str, *args: str, own_cwd: bool = False) -> dict:
    """Run ``python -c child *args <tmp>/db`` and return its last line, parsed.

    The database goes to a temporary folder removed afterwards; ``own_cwd`` runs the child
    in that folder, so that ``PYTHONPATH`` alone decides which checkout it imports.
    """
    with tempfile.TemporaryDirectory(prefix="rotary-bench-") as tmp:
        out = subprocess.run(
            [sys.executable, "-c", child, *args, f"{tmp}/db"],
            check=True, capture_output=True, text=True, cwd=tmp if own_cwd else None,
        ).stdout
    return json.loads(out.strip().splitlines()[-1])
