"""Published per-tier checksums, and a database compared with them.

A tier's checksum is the SHA-256 of its values as little-endian uint16 in index order
(:meth:`Database.tier_sha256 <solver.db.database.Database.tier_sha256>`): it depends on
the values alone, so a database rebuilt anywhere — any ``-j``, executor, machine, block
size or compression — must give the same ones. The published ones are plain text files,
one per configuration, under ``data/checksums/``, named as ``rotary solve`` names the
database folder (:func:`solver.db.catalog.db_name`) with ``.sha256`` added::

    # hex3 2v2 edge: per-tier SHA-256 of the values (little-endian uint16, index order)
    x0v0: 085edad400785fca7e7e90b1fac4beb776fc2beee5aa24352d5f39b5d57efcad
    x0v1: 6fa70a8d0c126a3bc221428bb84b214368aa419d6d82cebcb2f85666bd949dd8

One ``tier: sha256`` line a tier (a tier as the database names it, e.g. ``x3v4`` or
``place:x2v2``), blank lines and ``#`` comments allowed.

>>> sums = parse_checksums("# a comment\\nx2v2: " + "ab" * 32 + "\\n", "example")
>>> list(sums)
['x2v2']
>>> parse_checksums("x2v2 abc", "example")
Traceback (most recent call last):
solver.errors.ChecksumsError: example line 1: expected 'tier: sha256' (64 hex digits), got 'x2v2 abc'
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from solver.db.catalog import db_name
from solver.db.database import Database
from solver.errors import ChecksumsError

SUFFIX = ".sha256"
EQUAL, DIFFERENT, MISSING = "equal", "different", "missing"

_LINE = re.compile(r"^(?P<tier>\S+?)\s*:\s*(?P<sha>[0-9a-f]{64})$")


def parse_checksums(text: str, source: str) -> dict[str, str]:
    """``{tier: sha256}`` from a checksums file's text, in its order; ``source`` names the
    file in errors. :class:`ChecksumsError` naming the first line that does not read, a
    tier listed twice, or a file without any tier."""
    sums: dict[str, str] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = _LINE.match(line)
        if m is None:
            raise ChecksumsError(f"{source} line {no}: expected 'tier: sha256' (64 hex digits), got {line[:80]!r}")
        if m["tier"] in sums:
            raise ChecksumsError(f"{source} line {no}: tier {m['tier']} is listed twice")
        sums[m["tier"]] = m["sha"]
    if not sums:
        raise ChecksumsError(f"{source} lists no tier checksums")
    return sums


def read_checksums(path: str | Path) -> dict[str, str]:
    """:func:`parse_checksums` of the file at ``path``; :class:`ChecksumsError` if it
    cannot be read (missing, a folder, not text) or does not parse."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror.lower() if isinstance(e, OSError) and e.strerror else "not a text file"
        raise ChecksumsError(f"cannot read the checksums file {path}: {reason}") from None
    return parse_checksums(text, str(path))


def format_checksums(description: str, sums: dict[str, str]) -> str:
    """A checksums file's text for ``sums`` (``{tier: sha256}``) of a configuration."""
    head = f"# {description}: per-tier SHA-256 of the values (little-endian uint16, index order)\n"
    return head + "".join(f"{tier}: {sha}\n" for tier, sha in sums.items())


def tier_checksums(db: Database) -> dict[str, str]:
    """Every solved tier's SHA-256, in the database's order of tiers (unsolved ones left out)."""
    return {key: db.tier_sha256(key) for key in db.tier_keys() if db.finished(key)}


def checksums_dirs() -> list[Path]:
    """Where published checksums are looked for, in order: ``data/checksums`` of the
    source tree this package lies in (a checkout, or an editable install), then of the
    current folder (a repository root), then ``<prefix>/share/rotary/checksums``."""
    found = []
    for d in (
        Path(__file__).resolve().parents[2] / "data" / "checksums",
        Path.cwd() / "data" / "checksums",
        Path(sys.prefix) / "share" / "rotary" / "checksums",
    ):
        if d.is_dir() and d.resolve() not in [f.resolve() for f in found]:
            found.append(d)
    return found


def published_file(db: Database) -> Path:
    """The published checksums file of ``db``'s configuration; :class:`ChecksumsError`
    when none is found."""
    name = db_name(db.cfg, db.material) + SUFFIX
    dirs = checksums_dirs()
    for d in dirs:
        if (d / name).is_file():
            return d / name
    if dirs:
        where = f"{name} is in none of {', '.join(str(d) for d in dirs)}"
    else:
        where = "no data/checksums folder beside rotary's source nor in the current folder"
    raise ChecksumsError(f"no published checksums for {db.description}: {where} (name a file with --against)")


@dataclass(frozen=True)
class TierCheck:
    """One published tier compared: ``status`` is equal, different or missing (the
    database has not solved it, or has no such tier); ``found`` is the database's SHA-256
    (None where missing)."""

    tier: str
    status: str
    published: str
    found: str | None = None
    reason: str = ""


def compare(db: Database, published: dict[str, str]) -> list[TierCheck]:
    """Each published tier against ``db``, in the published order."""
    keys = set(db.tier_keys())
    out = []
    for tier, sha in published.items():
        if tier not in keys:
            out.append(TierCheck(tier, MISSING, sha, reason=f"{db.description} has no tier {tier}"))
        elif not db.finished(tier):
            out.append(TierCheck(tier, MISSING, sha, reason="not solved in this database"))
        else:
            found = db.tier_sha256(tier)
            out.append(TierCheck(tier, EQUAL if found == sha else DIFFERENT, sha, found))
    return out


def unpublished(db: Database, published: dict[str, str]) -> list[str]:
    """The database's solved tiers that ``published`` does not list."""
    return [key for key in db.tier_keys() if key not in published and db.finished(key)]
