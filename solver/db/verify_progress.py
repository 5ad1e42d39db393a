"""An interrupted ``rotary verify`` resumes where it stopped.

A full verify of a multi-GB database re-derives billions of positions (hex(4) 4v4: 52
minutes on two cores); a Ctrl-C, a kill or a machine taken away should cost minutes, not
the hour. While it runs, verify notes how far its values check has come — the first
``done`` positions it checks, in index order, are consistent with their children — in
one small file of the database folder, ``verify.progress`` (JSON)::

    {"version": 1, "identity": {...}, "done": 123731968, "started": "2026-12-02T09:41:07Z"}

``identity`` is what was checked: the database's rules and, per tier, the CRC-32 of its
values as loaded (and ``only``, the tiers a ``--tier`` verify checks, whose notes lie
in a file of their own: :func:`note_name`). A rerun computes the same identity from the
values it loads (the block checksums are always checked again: loading the values does
that) and skips the prefix only where both agree, so a database re-solved or altered
since, even in a block whose own checksum was rewritten to match, is checked from the
start. A damaged or foreign
file is ignored; ``--restart`` ignores it on purpose. The file is written to a temporary
name and renamed, at most every :data:`EVERY_S` seconds and when interrupted; a finished
verify (OK or FAIL) deletes it. Where the folder is read-only verify goes on without
(one warning).
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib
from pathlib import Path

from solver.db.store import remove_quietly

NAME = "verify.progress"
VERSION = 1
EVERY_S = 60.0
_now = time.monotonic  # the tests wind their own clock


def note_name(tiers: list[str] | None = None, part: tuple[int, int] | None = None) -> str:
    """The file of a full verify (``verify.progress``), or of a ``--tier`` verify of ``tiers``
    (``verify.<first>-<last>.<crc>.progress``), or of a ``--positions`` part of either (its
    range in the crc): checks of other tiers or parts, which may run at the same time, keep
    notes of their own."""
    if tiers is None and part is None:
        return NAME
    what = ",".join(tiers or ["all"]) + ("" if part is None else f"@{part[0]}:{part[1]}")
    ends = f"{tiers[0]}-{tiers[-1]}" if tiers else "all"
    return f"verify.{ends}.{zlib.crc32(what.encode()):08x}.progress"


def values_identity(rules: dict, crcs: dict[str, int]) -> dict:
    """The rules and per tier key the CRC-32 of its 16-bit values in index order
    (:func:`solver.db.verify_values.read_values` computes them as it reads)."""
    return {"rules": rules, "tiers": dict(crcs)}


class VerifyProgress:
    """The progress file of one database folder for the values ``identity``."""

    def __init__(self, folder: str | os.PathLike, identity: dict, every_s: float | None = None, name: str = NAME):
        self.path = Path(folder) / name
        self.identity = identity
        self.every_s = EVERY_S if every_s is None else every_s
        self.since = _now()
        self.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.failed = False
        self.saved = -1

    def resume(self) -> int:
        """Positions ``0 .. n-1`` checked by an earlier run of these values: ``n``, else 0."""
        try:
            head = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return 0
        if not isinstance(head, dict) or head.get("version") != VERSION or head.get("identity") != self.identity:
            return 0
        done = head.get("done")
        if not isinstance(done, int) or done < 0:
            return 0
        self.started = str(head.get("started", self.started))
        self.saved = done
        return done

    def note(self, done: int, force: bool = False) -> None:
        """The first ``done`` positions are checked; written if due (or ``force``)."""
        if self.failed or done == self.saved or not (force or _now() - self.since >= self.every_s):
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        record = {"version": VERSION, "identity": self.identity, "done": int(done), "started": self.started}
        try:
            with open(tmp, "w") as f:
                json.dump(record, f, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except OSError as e:
            remove_quietly(tmp)
            self.failed = True
            print(
                f"rotary: warning: cannot note verify's progress in {self.path.parent} "
                f"({(e.strerror or str(e)).lower()}); an interrupted verify will start again",
                file=sys.stderr,
            )
            return
        self.saved = done
        self.since = _now()

    def clear(self) -> None:
        """Delete the file: the verify finished."""
        remove_quietly(self.path, self.path.with_name(self.path.name + ".tmp"))
