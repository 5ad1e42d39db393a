"""Brute-force reference solver: retrograde analysis over the explicit state graph.

This is a test oracle for the fast retrograde solver, written to be obviously correct
rather than fast. It uses nothing from ``solver`` but the plain-Python rules engine
(:mod:`solver.game.rules`, :mod:`solver.game.config`, :mod:`solver.game.position`, :mod:`solver.game.board`)
and no symmetry of any kind.

Values follow docs/rules.md §4: from the side to move, ``"win"`` / ``"loss"`` with the number
of plies to the end under optimal play (the winner finishes as fast as possible, the
loser holds out as long as possible; a finished position has distance 0), or ``"draw"``
with distance None for a position from which neither side can force an end.

Algorithm:

1. Enumerate every rotation-phase position of the configuration (both sides to move).
2. For each, ``solver.game.rules.status``: finished positions are win/loss in 0; for the
   others, ``solver.game.rules.children`` gives the distinct successors (each counted once).
3. Retrograde BFS by ply level, with a predecessor map and a counter of unresolved
   children per position. Positions leave the queue in non-decreasing distance, so:
   the first loss child reached makes a parent a win in (that distance + 1), the
   smallest possible; a parent becomes a loss when its *last* child is resolved as a
   win, i.e. in (largest child distance + 1). Whatever is never resolved is a draw.
"""

from __future__ import annotations

from array import array
from collections import deque
from itertools import combinations

from solver.game import rules
from solver.game.config import Config
from solver.game.position import Position

WIN, LOSS, DRAW = "win", "loss", "draw"
Value = tuple[str, "int | None"]


def materials(cfg: Config, material: tuple[int, int] | None = None) -> list[tuple[int, int]]:
    """The (light balls, dark balls) pairs whose positions the table holds.

    ``material=(a, b)``: light has ``a`` and dark ``b`` balls (default: ``cfg.balls``
    each). Without edge/capture material never changes, so only ``(a, b)`` itself;
    with either, every ``(a', b')`` with ``a' <= a`` and ``b' <= b`` (zero included).
    """
    if material is None:
        if cfg.balls is None:
            raise ValueError("solve_all needs cfg.balls or an explicit material=(a, b)")
        material = (cfg.balls, cfg.balls)
    a, b = material
    if a < 0 or b < 0 or a + b > cfg.board.size:
        raise ValueError(f"material {material} does not fit on {cfg.board.label}")
    if cfg.edge or cfg.capture:
        return [(i, j) for i in range(a + 1) for j in range(b + 1)]
    return [(a, b)]


def positions(cfg: Config, material: tuple[int, int] | None = None) -> list[Position]:
    """Every legal rotation-phase position of the table, both sides to move.

    With ``capture``, positions with a light ball on a dark trap field or a dark ball on
    a light trap field are left out (they cannot arise, docs/rules.md §5).
    """
    board = cfg.board
    points = range(board.size)
    out: list[Position] = []
    for a, b in materials(cfg, material):
        for xs in combinations(points, a):
            x = sum(1 << p for p in xs)
            if cfg.capture and x & cfg.traps_o:
                continue
            rest = [p for p in points if not x >> p & 1]
            for os in combinations(rest, b):
                o = sum(1 << p for p in os)
                if cfg.capture and o & cfg.traps_x:
                    continue
                out.append(Position.make(board, x, o, 0))
                out.append(Position.make(board, x, o, 1))
    return out


def _key(x: int, o: int, turn: int, size: int) -> int:
    """A position as one int (the table index is keyed by it)."""
    return ((x << size | o) << 1) | turn


# Set by solve_all before expanding; worker processes inherit them (fork).
_JOB: tuple = ()


def _expand(lo: int, hi: int) -> tuple[bytes, array, array]:
    """Status and children of positions ``lo .. hi-1`` of the current job.

    Returns ``(finished, counts, kids)``: ``finished[i]`` is 0 (ongoing), 1 (win in 0)
    or 2 (loss in 0); ``counts[i]`` the number of distinct children; ``kids`` the child
    indices, concatenated.
    """
    cfg, table, index = _JOB
    size = cfg.board.size
    finished = bytearray(hi - lo)
    counts = array("l", [0]) * (hi - lo)
    kids = array("l")
    for i in range(lo, hi):
        pos = table[i]
        st = rules.status(cfg, pos)
        if st != rules.ONGOING:
            finished[i - lo] = 1 if st == rules.WIN else 2
            continue
        succ = rules.children(cfg, pos)
        if not succ:
            raise AssertionError(f"ongoing position without moves: {pos!r}")
        for child in succ:
            j = index.get(_key(child.x, child.o, child.turn, size))
            if j is None:
                raise AssertionError(f"child {child!r} of {pos!r} is not in the table")
            kids.append(j)
        counts[i - lo] = len(succ)
    return bytes(finished), counts, kids


def solve_all(
    cfg: Config, material: tuple[int, int] | None = None, *, processes: int = 1
) -> dict[Position, Value]:
    """Solve every position of the configuration (see :func:`positions`).

    Returns ``{position: ("win" | "loss", plies)}`` or ``("draw", None)``.
    ``processes > 1`` generates the children in that many forked worker processes
    (the only expensive part); the result does not depend on it.
    Raises ``AssertionError`` if the rules produce a successor outside the table.
    """
    global _JOB
    table = positions(cfg, material)
    n = len(table)
    size = cfg.board.size
    index = {_key(p.x, p.o, p.turn, size): i for i, p in enumerate(table)}

    # Children (flattened: kids[start[i]:start[i+1]]) and the finished positions.
    _JOB = (cfg, table, index)
    try:
        step = max(1, -(-n // (4 * processes)))
        chunks = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
        if processes > 1 and n > 1:
            import multiprocessing

            with multiprocessing.get_context("fork").Pool(processes) as pool:
                parts = pool.starmap(_expand, chunks)
        else:
            parts = [_expand(lo, hi) for lo, hi in chunks]
    finally:
        _JOB = ()
    finished = b"".join(p[0] for p in parts)
    counts = array("l")
    kids = array("l")
    for _, c, k in parts:
        counts.extend(c)
        kids.extend(k)
    del parts
    value: list[str | None] = [None] * n
    dist = array("l", [-1]) * n
    start = array("l", [0]) * (n + 1)
    for i in range(n):
        start[i + 1] = start[i] + counts[i]
        if finished[i]:
            value[i] = WIN if finished[i] == 1 else LOSS
            dist[i] = 0
    if start[n] != len(kids):
        raise AssertionError("children lost between the workers and the table")

    # Predecessors, flattened the same way (counting sort by child).
    pstart = array("l", [0]) * (n + 1)
    for j in kids:
        pstart[j + 1] += 1
    for i in range(n):
        pstart[i + 1] += pstart[i]
    fill = array("l", pstart)
    preds = array("l", [0]) * len(kids)
    for i in range(n):
        for e in range(start[i], start[i + 1]):
            j = kids[e]
            preds[fill[j]] = i
            fill[j] += 1
    del fill

    # Retrograde BFS. `left[i]`: children of i not yet known to be wins.
    left = counts
    queue = deque(i for i in range(n) if value[i] is not None)
    while queue:
        j = queue.popleft()
        d = dist[j] + 1
        if value[j] == LOSS:
            for e in range(pstart[j], pstart[j + 1]):
                i = preds[e]
                if value[i] is None:
                    value[i] = WIN
                    dist[i] = d
                    queue.append(i)
        else:
            for e in range(pstart[j], pstart[j + 1]):
                i = preds[e]
                if value[i] is None:
                    left[i] -= 1
                    if left[i] == 0:
                        value[i] = LOSS
                        dist[i] = d
                        queue.append(i)

    # Share the value tuples: a table may hold millions of entries.
    shared: dict[tuple[str | None, int], Value] = {}
    result: dict[Position, Value] = {}
    for i, pos in enumerate(table):
        k = (value[i], dist[i])
        v = shared.get(k)
        if v is None:
            v = shared[k] = (DRAW, None) if value[i] is None else (value[i], dist[i])
        result[pos] = v
    return result


def value_of(table: dict[Position, Value], pos: Position | str) -> Value:
    """The value of ``pos`` (a Position or its docs/rules.md §9 text) in a solved table."""
    if isinstance(pos, str):
        pos = Position(pos)
    try:
        return table[pos]
    except KeyError:
        raise KeyError(f"{pos!r} is not in this table") from None
