"""Perft counts in data/perft.json pin the move generator (made by ``python -m tests.oracles.perft``).

Every entry is recomputed with ``solver.game.rules.perft``; depths 1-2 are also recomputed with
the independent re-implementation in ``tests/oracles/perft_reference.py``, successor set by
successor set, so that a wrong count points at the position where the two disagree.
"""

from __future__ import annotations

import json

import pytest

from solver.game.position import parse_position
from solver.game.position import PLAY
from solver.game.rules import ONGOING, check_position, children, perft, status
from tests.oracles import perft_reference as ref
from tests.oracles.perft import PERFT_FILE, config_of

DATA = json.loads(PERFT_FILE.read_text(encoding="utf-8"))
ENTRIES = DATA["positions"]
IDS = [e["name"] for e in ENTRIES]


def load(entry):
    cfg = config_of(entry["rules"])
    pos = parse_position(entry["position"])
    check_position(cfg, pos)
    return cfg, pos


def test_file_covers_the_variants():
    kinds = set()
    for e in ENTRIES:
        r, phase = e["rules"], parse_position(e["position"]).phase
        kinds.add((r["edge"], r["capture"], r["setup"], phase))
        assert min(map(int, e["perft"])) == 1 and max(map(int, e["perft"])) >= 3, e["name"]
    assert (False, False, None, PLAY) in kinds
    assert any(k[0] and not k[1] for k in kinds)
    assert any(k[1] and not k[0] for k in kinds)
    assert any(k[0] and k[1] for k in kinds)
    assert {("offer", "offer"), ("offer", "place")} <= {(k[2], k[3]) for k in kinds}
    assert any(k[2] == "last" for k in kinds)
    assert any(e["position"] == ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x" for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_perft(entry):
    cfg, pos = load(entry)
    got = {d: perft(cfg, pos, int(d)) for d in entry["perft"]}
    assert got == entry["perft"]


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_reference_agrees_to_depth_2(entry):
    cfg, pos = load(entry)
    rules = entry["rules"]
    assert ref.perft(rules, entry["position"], 1) == entry["perft"]["1"]
    assert ref.perft(rules, entry["position"], 2) == entry["perft"]["2"]
    for node in [pos, *children(cfg, pos)]:
        ours = {c.text() for c in children(cfg, node)}
        assert ours == ref.successors(rules, node.text()), node.text()


def reaches(cfg, pos, depth, wanted) -> bool:
    """Whether some move within ``depth`` plies of ``pos`` is ``wanted(parent, child)``."""
    return depth > 0 and any(
        wanted(pos, c) or reaches(cfg, c, depth - 1, wanted) for c in children(cfg, pos)
    )


def material(p) -> int:
    return p.x.bit_count() + p.o.bit_count()


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_the_variant_matters(entry):
    """Within the recorded depth, edge/capture positions lose balls and setup positions change phase."""
    cfg, pos = load(entry)
    depth = max(map(int, entry["perft"]))
    if status(cfg, pos) != ONGOING:
        assert not children(cfg, pos)
        return
    if cfg.variable_material:
        assert reaches(cfg, pos, depth, lambda parent, child: material(child) < material(parent))
    if cfg.setup:
        assert reaches(cfg, pos, depth, lambda parent, child: child.phase != parent.phase)
