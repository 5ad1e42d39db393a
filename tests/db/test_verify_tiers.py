"""``rotary verify --tier``: the positions of some tiers, reading only what their children need.

A small database (hex(2) 3v3 edge, 16 tiers in 10 groups) is checked tier by tier: a
group's check covers exactly its positions, passes, and reads nothing above its group
(a damaged block there is not seen); a value falsified inside the group is found; a
tier checked without the other tier of its group would read a child it has not loaded,
which is why the whole group is read (the bug this test was written after); a sample
stays inside the tiers; an interrupted check resumes only for the same tiers, and checks
of other tiers keep notes of their own; a tier that does not exist is one line and exit 2.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from solver.db import verify, verify_progress
from solver.db.verify import verify_db
from tests.helpers import VERIFY_STEP as STEP
from tests.helpers import interrupt_at, layout_of, rewrite_block, tier_values
from tests.helpers import run


def test_a_group_is_checked_alone_and_exactly(db, calls):
    layout = layout_of(db)
    (_, lo, hi) = layout.groups[-2]  # x2v3+x3v2 below the top group x3v3
    keys = [t.key for t in layout.tiers if lo <= t.base < hi]
    assert len(keys) == 2
    result = verify_db(db, progress=False, tiers=keys)
    assert result.ok, result.message
    assert result.checked == hi - lo
    assert min(a for a, _ in calls) == lo and max(b for _, b in calls) == hi
    assert sum(b - a for a, b in calls) == hi - lo
    assert f"all {hi - lo:,} positions of {', '.join(keys)}" in result.message


def test_one_tier_of_a_group_reads_the_other(db, calls):
    layout = layout_of(db)
    lower, upper = [t for t in layout.tiers if (t.a, t.b) in ((2, 3), (3, 2))]
    result = verify_db(db, progress=False, tiers=[lower.key])
    assert result.ok, result.message  # its children, mover swapped, are in the other tier
    assert result.checked == lower.size
    assert all(lower.base <= a and b <= lower.base + lower.size for a, b in calls)


def test_the_tiers_above_are_not_read(db):
    layout = layout_of(db)
    no, top = len(layout.tiers) - 1, layout.tiers[-1]
    values = tier_values(db, no, top.size)
    rewrite_block(db, no, values, 0, checksum=False)  # a damaged block in x3v3
    assert not verify_db(db, progress=False).ok
    below = [t.key for t in layout.tiers[:-1]]
    result = verify_db(db, progress=False, tiers=below)
    assert result.ok, result.message
    assert result.checked == layout.total - top.size


def test_a_falsified_value_in_the_tier_is_found(db):
    layout = layout_of(db)
    no, t = next((i, t) for i, t in enumerate(layout.tiers) if (t.a, t.b) == (2, 3))
    values = tier_values(db, no, t.size)
    local = int(np.nonzero((values & 0xC000) == 0xC000)[0][0])  # a win
    values[local] += 2  # win in d -> win in d + 2, its block's checksum rewritten to match
    rewrite_block(db, no, values, local)
    result = verify_db(db, progress=False, tiers=[t.key])
    assert not result.ok
    index = int(re.search(r"\(index (\d+)\)", result.message).group(1))
    assert index == t.base + local
    lower = [x.key for x in layout.tiers if x.a + x.b < 5]
    assert verify_db(db, progress=False, tiers=lower).ok  # below the falsified group


def test_a_sample_stays_inside_the_tiers(db, calls):
    layout = layout_of(db)
    chosen = [t for t in layout.tiers if t.a + t.b == 4]  # x1v3, x3v1, x2v2: two groups
    assert len(chosen) == 3 and len({(min(t.a, t.b), max(t.a, t.b)) for t in chosen}) == 2
    result = verify_db(db, progress=False, sample=300, seed=3, tiers=[t.key for t in chosen])
    assert result.ok and result.checked == 300
    assert len(calls) == 300
    assert all(any(t.base <= a < t.base + t.size for t in chosen) for a, _ in calls)
    assert len({next(t.key for t in chosen if t.base <= a < t.base + t.size) for a, _ in calls}) == len(chosen)


def test_an_interrupted_tier_check_resumes_only_for_the_same_tiers(db, monkeypatch):
    layout = layout_of(db)
    keys = [t.key for t in layout.tiers if t.a + t.b >= 5]
    size = sum(t.size for t in layout.tiers if t.a + t.b >= 5)
    real = verify._verify_range
    interrupt_at(monkeypatch, 6)
    with pytest.raises(KeyboardInterrupt):
        verify_db(db, progress=False, tiers=keys)
    monkeypatch.setattr(verify, "_verify_range", real)

    result = verify_db(db, progress=False, tiers=keys[:-1])  # other tiers: from the start
    assert result.ok and result.resumed == 0
    result = verify_db(db, progress=False, tiers=keys)
    assert result.ok and result.resumed == 5 * STEP and result.checked == size
    assert not list(db.glob("verify*.progress*"))


def test_checks_of_other_tiers_keep_notes_of_their_own(db, monkeypatch):
    layout = layout_of(db)
    lower = [t.key for t in layout.tiers if t.a + t.b < 5]
    upper = [t.key for t in layout.tiers if t.a + t.b >= 5]
    real = verify._verify_range
    for keys, n in ((lower, 4), (upper, 7), (None, 3)):  # three checks, each interrupted
        interrupt_at(monkeypatch, n)
        with pytest.raises(KeyboardInterrupt):
            verify_db(db, progress=False, tiers=keys)
    names = {p.name for p in db.glob("verify*.progress")}
    assert len(names) == 3 and verify_progress.NAME in names
    monkeypatch.setattr(verify, "_verify_range", real)
    for keys, n in ((upper, 7), (lower, 4), (None, 3)):
        result = verify_db(db, progress=False, tiers=keys)
        assert result.ok and result.resumed == (n - 1) * STEP, (keys, result.message)
    assert not list(db.glob("verify*.progress*"))


def test_cli_tier(db, capsys):
    layout = layout_of(db)
    group = "+".join(t.key for t in layout.tiers if (t.a, t.b) in ((1, 2), (2, 1)))
    code, out, err = run(capsys, "verify", "--db", str(db), "--tier", group, "-q")
    assert code == 0 and out.startswith("OK: ") and f"of {group.replace('+', ', ')} consistent" in out
    code, out, err = run(capsys, "verify", "--db", str(db), "--tier", "x2v3,x7v7", "-q")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "x7v7" in err and "its tiers: x0v0" in err
    code, out, err = run(capsys, "verify", "--db", str(db), "--tier", ",", "-q")
    assert code == 2 and err.count("\n") == 1
