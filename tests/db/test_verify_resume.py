"""An interrupted ``rotary verify`` resumes where it stopped, and only on the same values.

A small database (hex(2) 3v3 edge) is checked in ranges of 64 positions (``verify.STEP``
patched down from 2^20) so that it has dozens of ranges; the range check is wrapped to
count the ranges it is asked for and to raise ``KeyboardInterrupt`` (a Ctrl-C) at a chosen
one. Then: the progress file holds exactly the ranges finished before; a rerun checks only
the rest and says so; a database whose values changed since — a value falsified in the
checked prefix, with its block's checksum rewritten to match — is checked from the start
and the falsified position is found; ``restart``, a damaged file and a folder where the
file cannot be written all mean a check from the start.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from solver.db import verify, verify_progress
from solver.db.database import open_db
from solver.db.store import BLOCK, Store, block_key, pack_block
from solver.db.verify import verify_db

from tests.helpers import VERIFY_STEP as STEP


class Ranges:
    """The range check, counting its calls and interrupted at call number ``stop`` (1-based)."""

    def __init__(self, monkeypatch, stop: int | None = None):
        self.calls: list[tuple[int, int]] = []
        self.stop = stop
        real = verify._verify_range

        def wrapped(vals, lo, hi, layout, buf, buf2):
            self.calls.append((lo, hi))
            if self.stop is not None and len(self.calls) == self.stop:
                raise KeyboardInterrupt
            return real(vals, lo, hi, layout, buf, buf2)

        monkeypatch.setattr(verify, "_verify_range", wrapped)


def _total(path) -> int:
    with open_db(path) as d:
        return d.layout.total


def _done(path) -> int:
    return json.loads((path / verify_progress.NAME).read_text())["done"]


def test_an_interrupted_verify_resumes_after_the_ranges_it_finished(db, monkeypatch, capsys):
    total = _total(db)
    assert total > 20 * STEP
    Ranges(monkeypatch, stop=8)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False, jobs=1)
    assert _done(db) == 7 * STEP  # ranges 1..7 finished, the 8th interrupted

    ranges = Ranges(monkeypatch)
    result = verify_db(db, progress=True, jobs=2)
    assert result.ok and result.checked == total and result.resumed == 7 * STEP
    assert min(lo for lo, _ in ranges.calls) == 7 * STEP
    assert sum(hi - lo for lo, hi in ranges.calls) == total - 7 * STEP
    assert f"the first {7 * STEP:,} checked by an interrupted run" in result.message
    assert "resuming verify" in capsys.readouterr().err
    assert not (db / verify_progress.NAME).exists()  # finished: the next verify starts afresh

    ranges = Ranges(monkeypatch)
    result = verify_db(db, progress=False)
    assert result.ok and result.resumed == 0 and min(lo for lo, _ in ranges.calls) == 0


def test_a_database_changed_since_is_checked_from_the_start(db, monkeypatch):
    with open_db(db) as d:
        layout = d.layout
    no, t = max(enumerate(layout.tiers), key=lambda it: it[1].size)
    store = Store(db)
    values = store.read_tier(no, t.size).copy()
    store.close()
    wins = np.nonzero((values & 0xC000) == 0xC000)[0]
    local = int(wins[0])
    falsified = t.base + local
    Ranges(monkeypatch, stop=falsified // STEP + 3)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False, jobs=1)
    assert _done(db) > falsified  # the position was checked (and fine) before the interrupt

    values[local] += 2  # win in d -> win in d + 2, its block's checksum rewritten to match
    b = local // BLOCK
    store = Store(db)
    try:
        data = pack_block(values[b * BLOCK : (b + 1) * BLOCK], block_key(no, b))
        store._write(lambda txn: txn.put(block_key(no, b), data, db=store.blocks))
    finally:
        store.close()

    ranges = Ranges(monkeypatch)
    result = verify_db(db, progress=False, jobs=1)
    assert not result.ok and result.resumed == 0, result.message
    assert min(lo for lo, _ in ranges.calls) == 0
    index = int(re.search(r"\(index (\d+)\)", result.message).group(1))
    assert index <= falsified  # the falsified position, or a parent of it found first


def test_restart_and_a_damaged_file_check_everything(db, monkeypatch):
    Ranges(monkeypatch, stop=5)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False)
    assert _done(db) == 4 * STEP
    ranges = Ranges(monkeypatch)
    assert verify_db(db, progress=False, restart=True).resumed == 0
    assert min(lo for lo, _ in ranges.calls) == 0

    for damaged in ("{not json", json.dumps({"version": 1, "done": 128}), json.dumps([1, 2])):
        (db / verify_progress.NAME).write_text(damaged)
        ranges = Ranges(monkeypatch)
        result = verify_db(db, progress=False)
        assert result.ok and result.resumed == 0 and min(lo for lo, _ in ranges.calls) == 0
        assert not (db / verify_progress.NAME).exists()


def test_a_folder_where_the_file_cannot_be_written(db, monkeypatch, capsys):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(verify_progress.os, "replace", refuse)
    Ranges(monkeypatch, stop=5)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot note verify's progress" in err and "no space left" in err
    assert not (db / verify_progress.NAME).exists()
    assert not (db / (verify_progress.NAME + ".tmp")).exists()


def test_progress_is_written_at_most_every_so_often(tmp_path, monkeypatch):
    clock = [0.0]
    monkeypatch.setattr(verify_progress, "_now", lambda: clock[0])
    notes = verify_progress.VerifyProgress(tmp_path, {"rules": "r", "tiers": {"a": 1}}, every_s=60)
    notes.note(100)
    assert not notes.path.exists()
    clock[0] = 61
    notes.note(200)
    assert _done(tmp_path) == 200
    clock[0] = 100
    notes.note(300)
    assert _done(tmp_path) == 200  # 39 s since the last one
    notes.note(300, force=True)
    assert _done(tmp_path) == 300
    again = verify_progress.VerifyProgress(tmp_path, {"rules": "r", "tiers": {"a": 1}})
    assert again.resume() == 300 and again.started == notes.started
    other = verify_progress.VerifyProgress(tmp_path, {"rules": "r", "tiers": {"a": 2}})
    assert other.resume() == 0
