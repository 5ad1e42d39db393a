"""``rotary verify --positions FROM:TO``: one check split into parts, over runs or machines.

On the verify tests' database (hex(2) 3v3 edge): parts that tile the chosen positions
check exactly them between them, each exactly its own range, alone or with ``--tier``; a
falsified value is found by the part that holds it and by no other; an interrupted part
resumes only as the same part (its note is its own); a range outside the chosen
positions, empty or unreadable, is one line and exit 2.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from solver.db import verify
from solver.db.verify import verify_db
from solver.errors import UsageError
from tests.helpers import VERIFY_STEP as STEP
from tests.helpers import interrupt_at, layout_of, rewrite_block, tier_values
from tests.helpers import run


def test_parts_tile_the_database(db, calls):
    layout = layout_of(db)
    cuts = [0, 1, 1000, 3333, layout.total]
    for first, stop in zip(cuts, cuts[1:]):
        calls.clear()
        result = verify_db(db, progress=False, part=(first, stop))
        assert result.ok, result.message
        assert result.checked == stop - first
        assert sum(b - a for a, b in calls) == stop - first
        assert min(a for a, _ in calls) == first and max(b for _, b in calls) == stop
        assert f"positions {first:,}–{stop - 1:,} (in index order) of the {layout.total:,} in all" in result.message


def test_a_part_counts_within_the_tiers_chosen(db, calls):
    layout = layout_of(db)
    chosen = [t for t in layout.tiers if t.a + t.b == 4]  # two groups, not next to each other in index order
    flat = np.concatenate([np.arange(lo, lo + size) for lo, size in sorted((t.base, t.size) for t in chosen)])
    keys = [t.key for t in chosen]
    result = verify_db(db, progress=False, tiers=keys, part=(7, None))
    assert result.ok and result.checked == len(flat) - 7
    calls.clear()
    result = verify_db(db, progress=False, tiers=keys, part=(7, len(flat) - 5))
    assert result.ok and result.checked == len(flat) - 12
    checked = np.concatenate([np.arange(a, b) for a, b in calls])
    assert np.array_equal(np.sort(checked), flat[7:-5])


def test_a_falsified_value_is_found_by_its_part_alone(db):
    layout = layout_of(db)
    no, t = next((i, t) for i, t in enumerate(layout.tiers) if (t.a, t.b) == (3, 3))
    values = tier_values(db, no, t.size)
    local = int(np.nonzero((values & 0xC000) == 0xC000)[0][len(values) // 4])  # a win inside the tier
    values[local] += 2
    rewrite_block(db, no, values, local)
    bad = t.base + local
    result = verify_db(db, progress=False, part=(bad, bad + 1))
    assert not result.ok and int(re.search(r"\(index (\d+)\)", result.message).group(1)) == bad
    assert verify_db(db, progress=False, part=(0, bad)).ok
    assert verify_db(db, progress=False, part=(bad + 1, None)).ok
    result = verify_db(db, progress=False, tiers=[t.key], part=(local - 3, local + 3))
    assert not result.ok and f"(index {bad})" in result.message


def test_an_interrupted_part_resumes_only_as_the_same_part(db, monkeypatch):
    layout = layout_of(db)
    first = 100
    real = verify._verify_range
    interrupt_at(monkeypatch, 4)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False, part=(first, None))
    monkeypatch.setattr(verify, "_verify_range", real)
    assert len(list(db.glob("verify.all.*.progress"))) == 1
    result = verify_db(db, progress=False)  # the whole database: a note of its own, none here
    assert result.ok and result.resumed == 0
    result = verify_db(db, progress=False, part=(first + 1, None))  # another part
    assert result.ok and result.resumed == 0
    result = verify_db(db, progress=False, part=(first, None))
    assert result.ok and result.resumed == 3 * STEP and result.checked == layout.total - first
    assert not list(db.glob("verify*.progress*"))


@pytest.mark.parametrize("bad", [(5, 5), (7, 3), (-1, 10), (0, 10**9)])
def test_a_range_outside_the_positions_is_refused(db, bad):
    with pytest.raises(UsageError, match="non-empty range"):
        verify_db(db, progress=False, part=bad)


def test_cli_positions(db, capsys):
    layout = layout_of(db)
    code, out, err = run(capsys, "verify", "--db", str(db), "--positions", "1,000:", "-q")
    assert code == 0 and f"all {layout.total - 1000:,} positions 1,000–" in out
    top = layout.tiers[-1]
    code, out, err = run(capsys, "verify", "--db", str(db), "--tier", top.key, "--positions", ":10", "-q")
    assert code == 0 and f"positions 0–9 (in index order) of the {top.size:,} of {top.key}" in out
    for text in ("abc", "10", "5:5", "3:x", f"0:{layout.total + 1}"):
        code, out, err = run(capsys, "verify", "--db", str(db), "--positions", text, "-q")
        assert code == 2 and out == "" and err.count("\n") == 1 and "--positions" in err, text
