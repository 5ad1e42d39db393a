"""Helpers several test files call: the ``rotary`` command line in this process, the
installed ``rotary`` script for the tests that run it as a real process, a script of
``scripts/`` loaded as a module, and the verify tests' tools (a check interrupted, a block rewritten, a tier read raw)."""

from __future__ import annotations

import importlib.util
import io
import shutil
import sys
from pathlib import Path

import numpy as np

from solver.cli.main import main
from solver.db import verify
from solver.db.database import open_db
from solver.db.store import BLOCK, Store, block_key, pack_block

VERIFY_STEP = 64  # positions a verify range holds in the verify tests (``verify.STEP`` patched down)


def load_script(name: str):
    """``scripts/NAME.py`` as a module (registered in ``sys.modules`` under ``name``)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def run(capsys, *argv, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    """``rotary *argv`` in this process: ``(exit status, stdout, stderr)``.

    Arguments may be numbers or paths (each is passed as ``str``); ``stdin`` text is fed
    through ``monkeypatch`` (give both)."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rotary_exe() -> str:
    """The installed console script: beside this Python first (a venv), else on PATH."""
    here = Path(sys.executable).with_name("rotary")
    found = str(here) if here.exists() else shutil.which("rotary")
    assert found, "the rotary script is not installed (pip install -e '.[test]')"
    return found


def interrupt_at(monkeypatch, n: int) -> None:
    """A Ctrl-C at the ``n``-th range the value check of ``verify`` is asked for."""
    real = verify._verify_range
    count = [0]

    def wrapped(vals, lo, hi, lay, buf, buf2):
        count[0] += 1
        if count[0] == n:
            raise KeyboardInterrupt
        return real(vals, lo, hi, lay, buf, buf2)

    monkeypatch.setattr(verify, "_verify_range", wrapped)


def layout_of(path):
    """The index layout of the database at ``path``."""
    with open_db(path) as d:
        return d.layout


def rewrite_block(path, no: int, values: np.ndarray, local: int, checksum: bool = True) -> None:
    """Store tier ``no``'s block holding ``local`` from ``values`` (its checksum matching, or not)."""
    b = local // BLOCK
    data = pack_block(values[b * BLOCK : (b + 1) * BLOCK], block_key(no, b))
    if not checksum:
        data = data[:-1] + bytes([data[-1] ^ 0xFF])
    store = Store(path)
    try:
        store._write(lambda txn: txn.put(block_key(no, b), data, db=store.blocks))
    finally:
        store.close()


def tier_values(path, no: int, size: int) -> np.ndarray:
    """Tier ``no``'s ``size`` stored values, as a new array."""
    store = Store(path)
    try:
        return store.read_tier(no, size).copy()
    finally:
        store.close()


def racing_writes(monkeypatch, cells: np.ndarray, at: int) -> None:
    """From now on ``cells[at]`` changes after every ``zlib.crc32``: a counters task that
    writes a cell between a checkpoint chunk's checksum and its write (use inside
    ``monkeypatch.context()`` to stop it)."""
    import zlib

    real = zlib.crc32

    def racing(data, crc=0):
        out = real(data, crc)
        cells[at] ^= 0x5A
        return out

    monkeypatch.setattr(zlib, "crc32", racing)


def rewrite_checkpoint_header(path, **changes) -> dict:
    """Change fields of a checkpoint's JSON header in place (either format: magic, u32
    length, header; the checksum covers what follows); the new header."""
    import json
    import struct

    raw = Path(path).read_bytes()
    (n,) = struct.unpack_from("<I", raw, 8)
    head = dict(json.loads(raw[12 : 12 + n]), **changes)
    text = json.dumps(head, sort_keys=True).encode()
    Path(path).write_bytes(raw[:8] + struct.pack("<I", len(text)) + text + raw[12 + n :])
    return head
