"""Sanity checks of the brute-force oracle (tests/oracles/brute.py) against facts that follow
directly from docs/rules.md, not from the oracle's own algorithm.

The strongest one is :func:`check_against_children`: the local conditions it checks
(a win in d has a loss child in d-1 and none faster; a loss in d has only win children,
the slowest in d-1; a draw has no loss child and a draw child; distance 0 exactly for
finished positions) determine the values uniquely. By induction on the true distance,
a true win in d or loss in d cannot be labelled anything else, and then no draw can be
mislabelled either, because a labelled win/loss must have a finite chain of strictly
decreasing distances down to a finished position. So a table passing it *is* the
solution of the game graph that solver.game.rules.children defines.
"""

from __future__ import annotations

from collections import Counter
from functools import cache
from itertools import product

import pytest

from solver.game import rules
from solver.game.board import hex_board
from solver.game.config import make_config
from solver.game.position import Position

from tests.oracles.brute import DRAW, LOSS, WIN, materials, positions, solve_all, value_of

# hex(2) points: a1 b1 c1 / a2 b2 c2 d2 / a3 b3 c3 / a4 b4; centre b2 c2 b3.
TRAPS_X, TRAPS_O = "a1,c1", "a4,b4"

CONFIGS = {
    "hex2-2v2-base": dict(board=2, balls=2),
    "hex2-3v3-base": dict(board=2, balls=3),
    "hex2-2v2-edge": dict(board=2, balls=2, edge=True),
    "hex2-3v3-capture": dict(board=2, balls=3, capture=True, traps_x=TRAPS_X, traps_o=TRAPS_O),
    "hex2-3v3-capture-swapped": dict(board=2, balls=3, capture=True, traps_x=TRAPS_O, traps_o=TRAPS_X),
    "hex2-3v3-edge-capture": dict(board=2, balls=3, edge=True, capture=True, traps_x=TRAPS_X, traps_o=TRAPS_O),
    "hex2-3v2-base": (dict(board=2), (3, 2)),
    "hex2-2v3-base": (dict(board=2), (2, 3)),
    "hex2-3v2-edge": (dict(board=2, balls=3, edge=True), (3, 2)),
}
SLOW_CONFIGS = {
    "hex2-3v3-edge": dict(board=2, balls=3, edge=True),
    "hex3-2v2-capture": dict(board=3, balls=2, capture=True, traps_x="a1,f3", traps_o="a6,a3"),
}
ALL = {**CONFIGS, **SLOW_CONFIGS}


def _cfg_material(name):
    spec = ALL[name]
    kw, material = spec if isinstance(spec, tuple) else (spec, None)
    return make_config(**kw), material


@cache
def solved(name):
    cfg, material = _cfg_material(name)
    return cfg, material, solve_all(cfg, material, processes=2 if name in SLOW_CONFIGS else 1)


def params():
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_CONFIGS else n for n in ALL]


# ---------------------------------------------------------------- independent rule helpers


def legal(cfg, mover, opp):
    """docs/rules.md §3.1 / §5 edge, written out again: empty pivot, strict majority."""
    b = cfg.board
    out = []
    for c in range(b.size):
        if (mover | opp) >> c & 1:
            continue
        if not cfg.edge and not b.interior >> c & 1:
            continue
        mine = sum(mover >> nb & 1 for nb in b.neighbours[c] if nb >= 0)
        theirs = sum(opp >> nb & 1 for nb in b.neighbours[c] if nb >= 0)
        if mine > theirs:
            out.append(c)
    return out


def centre_of(board, bits):
    return all(bits >> p & 1 for p in board.centre)


def mover_opp(pos):
    return (pos.x, pos.o) if pos.turn == 0 else (pos.o, pos.x)


# ---------------------------------------------------------------- the table's domain


@cache
def all_colourings(size):
    """Every (x, o) pair of bitboards on ``size`` points: 3^size of them."""
    out = []
    for colours in product((0, 1, 2), repeat=size):
        x = sum(1 << p for p, c in enumerate(colours) if c == 1)
        o = sum(1 << p for p, c in enumerate(colours) if c == 2)
        out.append((x, o))
    return out


@pytest.mark.parametrize("name", [n for n in CONFIGS if n.startswith("hex2")])
def test_domain_is_every_legal_position(name):
    """Enumerated again by brute force over all 3^12 colourings of hex(2)."""
    cfg, material, table = solved(name)
    a, b = material or (cfg.balls, cfg.balls)
    expected = set()
    for x, o in all_colourings(cfg.board.size):
        nx, no = x.bit_count(), o.bit_count()
        if cfg.edge or cfg.capture:
            if nx > a or no > b:
                continue
        elif (nx, no) != (a, b):
            continue
        if cfg.capture and (x & cfg.traps_o or o & cfg.traps_x):
            continue
        expected.add((x, o))
    assert len(table) == 2 * len(expected)
    assert {(p.x, p.o) for p in table} == expected
    assert Counter(p.turn for p in table) == {0: len(expected), 1: len(expected)}
    assert all(p.phase == "play" for p in table)


def test_materials():
    base = make_config(2, 3)
    edge = make_config(2, 3, edge=True)
    assert materials(base) == [(3, 3)]
    assert materials(base, (3, 2)) == [(3, 2)]
    assert materials(edge, (1, 2)) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    with pytest.raises(ValueError):
        materials(make_config(2))


def test_positions_count_hex3():
    cfg = make_config(3, 2)
    assert len(positions(cfg)) == 2 * 351 * 300  # C(27,2) * C(25,2), both sides to move


# ---------------------------------------------------------------- values


@pytest.mark.parametrize("name", params())
def test_values_well_formed(name):
    _, _, table = solved(name)
    for v in table.values():
        if v[0] == DRAW:
            assert v == (DRAW, None)
        else:
            assert v[0] in (WIN, LOSS) and isinstance(v[1], int) and v[1] >= 0


@pytest.mark.parametrize("name", params())
def test_finished_positions(name):
    """docs/rules.md §4: centre of the mover's colour: win 0; of the opponent's: loss 0;
    otherwise no legal point for the mover: loss 0; otherwise not finished."""
    cfg, _, table = solved(name)
    board = cfg.board
    for pos, v in table.items():
        mover, opp = mover_opp(pos)
        if centre_of(board, mover):
            assert v == (WIN, 0), pos
        elif centre_of(board, opp):
            assert v == (LOSS, 0), pos
        elif not legal(cfg, mover, opp):
            assert v == (LOSS, 0), pos
        else:
            assert v[1] != 0, pos


def inconsistencies(cfg, table, limit=5):
    """Positions whose value does not follow from their children's (see module doc)."""
    bad = []
    for pos, (kind, d) in table.items():
        kids = rules.children(cfg, pos)
        assert len(set(kids)) == len(kids)
        vals = [value_of(table, k) for k in kids]
        if d == 0:
            ok = not kids
        elif kind == WIN:
            losses = [e for k, e in vals if k == LOSS]
            ok = bool(losses) and min(losses) == d - 1
        elif kind == LOSS:
            ok = bool(vals) and all(k == WIN for k, _ in vals) and max(e for _, e in vals) == d - 1
        else:
            ok = all(k != LOSS for k, _ in vals) and any(k == DRAW for k, _ in vals)
        if not ok:
            bad.append((pos, (kind, d), list(zip(kids, vals))))
            if len(bad) >= limit:
                break
    return bad


@pytest.mark.parametrize("name", params())
def test_consistent_with_children(name):
    cfg, _, table = solved(name)
    bad = inconsistencies(cfg, table)
    assert not bad, f"inconsistent, first: {bad[0]}"


def test_consistency_check_catches_corruption():
    """The check above is not vacuous: small corruptions of a correct table are caught."""
    cfg, _, table = solved("hex2-2v2-edge")
    by_value = {}
    for pos, v in table.items():
        by_value.setdefault(v[0] if v[1] != 0 else "done", []).append(pos)
    for pos, wrong in (
        (by_value[WIN][0], (WIN, table[by_value[WIN][0]][1] + 2)),
        (by_value[LOSS][0], (LOSS, table[by_value[LOSS][0]][1] + 2)),
        (by_value[DRAW][0], (WIN, 5)),
        (by_value[WIN][1], (DRAW, None)),
        (by_value["done"][0], (DRAW, None)),
    ):
        corrupt = dict(table)
        corrupt[pos] = wrong
        assert inconsistencies(cfg, corrupt, limit=1), (pos, wrong)


@pytest.mark.parametrize("name", params())
def test_pass_argument(name):
    """docs/rules.md §10: the null rotation hands the same board over. If a board with one side
    to move is lost for it (and not by the centre), the same board with the other side to
    move is won by that side if it has a legal point, at most one ply later. And a
    position whose opponent has no legal point on the same board is a win in exactly 1
    (passing wins; 0 is impossible for a position that is not finished)."""
    cfg, _, table = solved(name)
    board = cfg.board
    checked = 0
    for pos, (kind, d) in table.items():
        mover, opp = mover_opp(pos)
        other = Position.make(board, pos.x, pos.o, 1 - pos.turn)
        if kind == LOSS and not centre_of(board, pos.x) and not centre_of(board, pos.o):
            if legal(cfg, opp, mover):
                ov = table[other]
                assert ov[0] == WIN and ov[1] <= d + 1, (pos, d, ov)
                checked += 1
        if not centre_of(board, pos.x | pos.o) and legal(cfg, mover, opp) and not legal(cfg, opp, mover):
            assert (kind, d) == (WIN, 1), pos
    assert checked


@pytest.mark.parametrize("name", params())
def test_colour_symmetry(name):
    """docs/rules.md §7: swapping colours and the side to move keeps the value, when the trap
    fields are swapped too (and, with unequal material, the material)."""
    cfg, material, table = solved(name)
    partner = {
        "hex2-3v3-capture": "hex2-3v3-capture-swapped",
        "hex2-3v3-capture-swapped": "hex2-3v3-capture",
        "hex2-3v2-base": "hex2-2v3-base",
        "hex2-2v3-base": "hex2-3v2-base",
    }.get(name)
    if partner is None and (cfg.capture or (material and material[0] != material[1])):
        pytest.skip("no colour-swapped table in this test set")
    other = table if partner is None else solved(partner)[2]
    for pos, v in table.items():
        assert other[Position.make(cfg.board, pos.o, pos.x, 1 - pos.turn)] == v, pos


@pytest.mark.parametrize("name", params())
def test_board_symmetry(name):
    """docs/rules.md §1: a board symmetry keeping the trap fields keeps every value."""
    cfg, _, table = solved(name)
    board = cfg.board
    syms = [
        s for s in board.symmetries[1:]
        if board.map_bits(s, cfg.traps_x) == cfg.traps_x and board.map_bits(s, cfg.traps_o) == cfg.traps_o
    ]
    if not syms:
        pytest.skip("the trap fields break every board symmetry")
    for s in syms:
        for pos, v in table.items():
            img = Position.make(board, board.map_bits(s, pos.x), board.map_bits(s, pos.o), pos.turn)
            assert table[img] == v, (pos, img)


def test_processes_do_not_change_the_result():
    cfg, material, table = solved("hex2-3v3-edge-capture")
    assert solve_all(cfg, material, processes=2) == table


# ---------------------------------------------------------------- facts about hex(2)


@pytest.mark.parametrize("name", ["hex2-2v2-base", "hex2-3v3-base", "hex2-3v2-base"])
def test_hex2_base_centre_never_completed(name):
    """docs/rules.md §10: on hex(2) the only pivots are the centre points and the pivot stays
    empty, so no move completes the centre: every win or loss in >0 plies comes from a
    side running out of legal points, and no position is a loss in 1 (that needs every
    move to complete the other side's centre).
    """
    cfg, _, table = solved(name)
    board = cfg.board
    for pos, v in table.items():
        for kid in rules.children(cfg, pos):
            assert not centre_of(board, kid.x) and not centre_of(board, kid.o), (pos, kid)
        assert v != (LOSS, 1), pos


def test_hand_positions():
    """hex(2), edge + capture (x's traps a1, c1; o's traps a4, b4).

    x on b2, c2, c3. The edge point b4 has the on-board ring a4, b3, c3 (directions
    W, SW, SE); it is empty and x outnumbers o there (1 to 0), so ``b4+5`` carries c3 to
    b3 and completes x's centre b2, c2, b3: x to move wins in exactly 1 (the position is
    not finished, so not in 0).

    With o on a2, a3, o's only legal point is a4 (ring b4, a3, b3: 1 o ball to 0), so with
    o to move the board is not finished. With o on a2, d2 instead, every empty point has
    an x majority or a tie for o, so o to move loses in 0.
    """
    cfg, _, table = solved("hex2-3v3-edge-capture")
    board = cfg.board
    pt = board.point

    def bits(*names):
        return sum(1 << pt(n) for n in names)

    x = bits("b2", "c2", "c3")
    after = rules.rotate(cfg, x, bits("a2", "a3"), pt("b4"), 5)
    assert after[0] == bits("b2", "c2", "b3")

    assert value_of(table, "../o.x/oxx./... x") == (WIN, 1)
    assert Position("../o.x/oxx./... x") == Position.make(board, x, bits("a2", "a3"), 0)
    assert value_of(table, Position.make(board, x, bits("a2", "a3"), 1))[1] != 0
    assert value_of(table, Position.make(board, x, bits("a2", "d2"), 0)) == (WIN, 1)
    assert value_of(table, Position.make(board, x, bits("a2", "d2"), 1)) == (LOSS, 0)
    # The centre complete: finished, whoever is to move.
    done = bits("b2", "c2", "b3")
    assert value_of(table, Position.make(board, done, bits("a2"), 0)) == (WIN, 0)
    assert value_of(table, Position.make(board, done, bits("a2"), 1)) == (LOSS, 0)
    assert value_of(table, Position.make(board, bits("a2"), done, 1)) == (WIN, 0)


def test_value_of_accepts_text():
    cfg, _, table = solved("hex2-2v2-base")
    pos = next(iter(table))
    assert value_of(table, pos.text()) == table[pos]
    with pytest.raises(KeyError):
        value_of(solved("hex2-3v3-base")[2], pos)
