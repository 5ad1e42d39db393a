"""Published per-tier checksums (``data/checksums/``) and ``rotary checksums``.

The published files are the independent reference: written from databases built and
fully verified before, they must equal what a fresh solve here gives (hex(2) 3v3 edge, 16
tiers; hex(3) 2v2). A changed hash is named, a tier the database lacks is missing, a
malformed file is one line and exit 2, and every published file reads.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from solver.db import checksums
from solver.db.catalog import db_name
from solver.db.checksums import parse_checksums, read_checksums
from solver.db.database import open_db
from solver.errors import ChecksumsError
from solver.game.config import make_config
from tests.helpers import run

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "data" / "checksums"
NAME = re.compile(r"^hex(?P<n>[2-5])-(?P<a>\d+)v(?P<b>\d+)(?P<edge>-edge)?$")


@pytest.fixture
def edge_db(solved_db):
    """hex(2) 3v3 edge: 16 tiers, its published file data/checksums/hex2-3v3-edge.sha256."""
    return solved_db(make_config("hex2", 3, edge=True), (3, 3))


def lines_of(out: str) -> dict[str, str]:
    """``{tier: status line}`` of ``rotary checksums``' per-tier lines."""
    found = {}
    for line in out.splitlines()[1:-1]:
        tier, _, rest = line.strip().partition("  ")
        found[tier] = rest.strip()
    return found


def test_every_published_file_reads_and_is_named_for_its_configuration():
    files = sorted(PUBLISHED.glob("*"))
    assert files, "no published checksums"
    for path in files:
        assert path.suffix == ".sha256", f"{path.name}: not a .sha256 file"
        sums = read_checksums(path)
        m = NAME.match(path.stem)
        assert m, f"{path.name}: not a database folder name"
        a, b = int(m["a"]), int(m["b"])
        cfg = make_config(f"hex{m['n']}", max(a, b), edge=bool(m["edge"]))
        assert db_name(cfg, (a, b)) == path.stem
        assert f"x{a}v{b}" in sums, f"{path.name} lacks its top tier x{a}v{b}"
        for tier in sums:
            ta, tb = map(int, re.fullmatch(r"x(\d+)v(\d+)", tier).groups())
            assert ta <= a and tb <= b and (m["edge"] or (ta, tb) == (a, b)), f"{path.name}: tier {tier}"
        # the first line names the configuration, as scripts/tier_checksums.py writes it
        assert path.read_text().startswith(f"# hex{m['n']} {a}v{b} {'edge' if m['edge'] else 'base'}:")


def test_a_fresh_solve_equals_the_published_file(capsys, edge_db):
    rc, out, err = run(capsys, "checksums", "--db", edge_db)
    assert rc == 0, (out, err)
    published = read_checksums(PUBLISHED / "hex2-3v3-edge.sha256")
    assert lines_of(out) == {tier: "equal" for tier in published}
    assert out.splitlines()[0].endswith("hex2-3v3-edge.sha256")
    assert out.splitlines()[-1] == "OK: all 16 published tiers equal"


def test_hex3_2v2_equals_its_published_file(capsys, solved_db):
    path = solved_db(make_config("hex3", 2), (2, 2))
    rc, out, err = run(capsys, "checksums", "--db", path, "--json")
    answer = json.loads(out)
    assert rc == 0 and answer["ok"], answer
    assert answer["tiers"] == [{"tier": "x2v2", "status": "equal", "published": answer["tiers"][0]["sha256"],
                                "sha256": read_checksums(PUBLISHED / "hex3-2v2.sha256")["x2v2"]}]


def test_the_checksum_is_the_sha256_of_the_tiers_values(edge_db):
    """Independent of how the database reads it back: each tier's slice of the loaded value array, hashed here."""
    with open_db(edge_db) as db:
        values = db.values()
        for t in db.layout.tiers:
            expect = hashlib.sha256(values[t.base : t.base + t.size].astype("<u2").tobytes()).hexdigest()
            assert db.tier_sha256(t.key) == expect, t.key


def test_one_wrong_hash_is_named_and_fails(capsys, edge_db, tmp_path):
    text = (PUBLISHED / "hex2-3v3-edge.sha256").read_text()
    good = read_checksums(PUBLISHED / "hex2-3v3-edge.sha256")["x1v2"]
    bad = tmp_path / "bad.sha256"
    bad.write_text(text.replace(f"x1v2: {good}", f"x1v2: {good[:-1]}{'0' if good[-1] != '0' else '1'}"))
    rc, out, err = run(capsys, "checksums", "--db", edge_db, "--against", bad)
    assert rc == 1, (out, err)
    found = lines_of(out)
    assert found.pop("x1v2").startswith("different")
    assert set(found.values()) == {"equal"} and len(found) == 15
    assert out.splitlines()[-1] == "NOT EQUAL: 15 equal, 1 different (x1v2) of 16 published tiers"


def test_tiers_the_database_lacks_are_missing(capsys, edge_db):
    """hex(2) 4v4 edge's file: the 16 tiers of 3v3 edge are the same values, 9 more are not there."""
    rc, out, err = run(capsys, "checksums", "--db", edge_db, "--against", PUBLISHED / "hex2-4v4-edge.sha256")
    assert rc == 1, (out, err)
    found = lines_of(out)
    missing = sorted(t for t, s in found.items() if s.startswith("missing"))
    assert missing == sorted(["x0v4", "x4v0", "x1v4", "x4v1", "x2v4", "x4v2", "x3v4", "x4v3", "x4v4"])
    assert sum(s == "equal" for s in found.values()) == 16
    assert "9 missing (" in out.splitlines()[-1]


@pytest.mark.parametrize(
    "text, words",
    [
        ("x2v2 06e5e0c9\n", ["line 1", "expected 'tier: sha256'"]),
        ("# only a comment\n", ["lists no tier checksums"]),
        ("x0v0: " + "a" * 64 + "\nx0v0: " + "b" * 64 + "\n", ["line 2", "listed twice"]),
        ("x0v0: " + "A" * 64 + "\n", ["line 1"]),  # digests are written in lower case
    ],
)
def test_a_malformed_file_is_one_line_and_exit_2(capsys, edge_db, tmp_path, text, words):
    path = tmp_path / "bad.sha256"
    path.write_text(text)
    rc, out, err = run(capsys, "checksums", "--db", edge_db, "--against", path)
    assert rc == 2 and not out, (rc, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("rotary: error: "), err
    for w in words:
        assert w in err, (w, err)


def test_no_published_file_and_unreadable_files_are_one_line(capsys, edge_db, tmp_path, monkeypatch):
    monkeypatch.setattr(checksums, "checksums_dirs", lambda: [tmp_path])
    rc, out, err = run(capsys, "checksums", "--db", edge_db)
    assert rc == 2 and "no published checksums for hex2 3v3 edge" in err and "hex2-3v3-edge.sha256" in err, err
    for against in (tmp_path / "nothing.sha256", tmp_path):
        rc, out, err = run(capsys, "checksums", "--db", edge_db, "--against", against)
        assert rc == 2 and len(err.splitlines()) == 1 and "cannot read the checksums file" in err, err


def test_the_published_folder_of_the_current_directory_is_searched(tmp_path, monkeypatch):
    (tmp_path / "data" / "checksums").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert tmp_path / "data" / "checksums" in checksums.checksums_dirs()


def test_parse_keeps_the_order_and_reads_setup_layers():
    text = "# c\n\nplace:x2v2: " + "1" * 64 + "  # a layer\nx2v2 : " + "2" * 64 + "\n"
    assert list(parse_checksums(text, "t").items()) == [("place:x2v2", "1" * 64), ("x2v2", "2" * 64)]
    with pytest.raises(ChecksumsError):
        parse_checksums("x2v2: " + "1" * 63, "t")
