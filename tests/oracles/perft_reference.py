"""A tiny, deliberately independent re-implementation of docs/rules.md, for cross-checking perft.

It shares no code with ``solver``: the board comes from the §1 formula (exact fractions),
positions are dicts ``(q, r) -> 'x' | 'o' | '.'`` parsed and written by the §9 text rules,
and successors follow §3–§5 literally. It is slow and that is fine: it only has to agree
with ``solver.game.rules.children`` on the handful of positions in ``data/perft.json``.

Rules are a plain dict as stored in ``data/perft.json``::

    {"board": "hex4", "balls": 13, "edge": false, "capture": false,
     "traps_x": [...], "traps_o": [...], "setup": null}
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache

# docs/rules.md §1, counter-clockwise from E.
DIRS = ((1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1))
CENTRE = ((0, 0), (1, 0), (0, 1))


@cache
def cells(n: int) -> tuple[tuple[int, int], ...]:
    """hex(n) in point order (bottom row first, left to right): 3·|p − c|² ≤ 3n² − 3n + 1."""
    cx, cy2 = Fraction(1, 2), Fraction(1, 6)  # c = (1/2, √3/6); work with y/√3 to stay rational
    found = []
    for r in range(-n - 2, n + 3):
        for q in range(-n - 2, n + 3):
            x, y_over_root3 = q + Fraction(r, 2), Fraction(r, 2)
            dist2 = (x - cx) ** 2 + 3 * (y_over_root3 - cy2) ** 2
            if 3 * dist2 <= 3 * n * n - 3 * n + 1:
                found.append((q, r))
    found.sort(key=lambda p: (p[1], p[0]))
    assert len(found) == 3 * n * n
    return tuple(found)


@cache
def rows(n: int) -> list[list[tuple[int, int]]]:
    """Rows bottom first, each left to right."""
    out: dict[int, list] = {}
    for q, r in cells(n):
        out.setdefault(r, []).append((q, r))
    return [out[r] for r in sorted(out)]


@cache
def names(n: int) -> dict[str, tuple[int, int]]:
    return {f"{chr(97 + i)}{j + 1}": p for j, row in enumerate(rows(n)) for i, p in enumerate(row)}


def on_board(n: int, p) -> bool:
    return p in _cellset(n)


@cache
def _cellset(n: int) -> frozenset:
    return frozenset(cells(n))


def ring(p):
    return [(p[0] + dq, p[1] + dr) for dq, dr in DIRS]


def interior(n: int, p) -> bool:
    return all(on_board(n, nb) for nb in ring(p))


# ------------------------------------------------------------------------ text (docs/rules.md §9)


def parse(text: str):
    """-> (n, board dict, side, phase, phase points as a sorted tuple of names)."""
    fields = text.split()
    strings = fields[0].split("/")
    n = next(n for n in range(2, 6) if len(rows(n)) == len(strings))
    board = {}
    for row, s in zip(reversed(rows(n)), strings):
        expanded = "".join("." * int(c) if c.isdigit() else c for c in s)
        assert len(expanded) == len(row)
        board.update(zip(row, expanded))
    phase = fields[2] if len(fields) > 2 else "play"
    return n, board, fields[1], phase, tuple(fields[3:])


def fmt(n: int, board: dict, side: str, phase: str = "play", pts: tuple = ()) -> str:
    text = "/".join("".join(board[p] for p in row) for row in reversed(rows(n))) + " " + side
    if phase != "play":
        order = {name: i for i, name in enumerate(names(n))}
        text += " " + " ".join([phase, *sorted(pts, key=order.__getitem__)])
    return text


# ------------------------------------------------------------------------ rules (docs/rules.md §3-§5)


def other(side: str) -> str:
    return "o" if side == "x" else "x"


def legal(rules: dict, n: int, board: dict, side: str) -> list:
    out = []
    for p in cells(n):
        if board[p] != "." or not (rules["edge"] or interior(n, p)):
            continue
        around = [board[nb] for nb in ring(p) if on_board(n, nb)]
        if around.count(side) > around.count(other(side)):
            out.append(p)
    return out


def turn(rules: dict, n: int, board: dict, p, k: int) -> dict:
    """Rotate about ``p`` by k·60° CCW, then balls off the board are gone, then traps."""
    new = dict(board)
    nbs = ring(p)
    for nb in nbs:
        if on_board(n, nb):
            new[nb] = "."  # an off-board source brings a hole
    for i, nb in enumerate(nbs):
        dest = nbs[(i + k) % 6]
        if on_board(n, nb) and on_board(n, dest):
            new[dest] = board[nb]  # an off-board destination swallows the ball
    if rules["capture"]:
        traps = {"x": rules["traps_x"], "o": rules["traps_o"]}
        for owner, fields in traps.items():
            for name in fields:
                q = names(n)[name]
                if new[q] == other(owner):
                    new[q] = "."
    return new


def centre_colour(board: dict):
    colours = {board[p] for p in CENTRE}
    return colours.pop() if len(colours) == 1 and "." not in colours else None


def successors(rules: dict, text: str) -> set[str]:
    """The set of distinct position texts one move away (empty when the game is over)."""
    n, board, side, phase, pts = parse(text)
    name_of = {p: nm for nm, p in names(n).items()}
    if phase == "play":
        if centre_colour(board) is not None:
            return set()
        return {
            fmt(n, turn(rules, n, board, p, k), other(side))
            for p in legal(rules, n, board, side)
            for k in range(6)
        }
    if phase == "place":
        banned = set(CENTRE)
        if rules["capture"]:
            banned |= {names(n)[t] for t in rules["traps_o" if side == "x" else "traps_x"]}
        out = set()
        for p in cells(n):
            if board[p] == "." and p not in banned:
                new = dict(board)
                new[p] = side
                counts = [list(new.values()).count(c) for c in "xo"]
                if min(counts) < rules["balls"]:
                    out.add(fmt(n, new, other(side), "place"))
                elif rules["setup"] == "offer":
                    out.add(fmt(n, new, "x", "offer"))
                else:  # setup=last: the player who placed the last ball rotates first
                    out.add(fmt(n, new, side))
        return out
    if phase == "offer":
        points = legal(rules, n, board, "x")
        if len(points) == 1:
            return {fmt(n, turn(rules, n, board, points[0], k), "o") for k in range(6)}
        return {
            fmt(n, board, "o", "pick", (name_of[a], name_of[b]))
            for i, a in enumerate(points)
            for b in points[i + 1 :]
        }
    if phase == "pick":
        return {fmt(n, board, "x", "at", (pt,)) for pt in pts}
    assert phase == "at"
    p = names(n)[pts[0]]
    return {fmt(n, turn(rules, n, board, p, k), "o") for k in range(6)}


def perft(rules: dict, text: str, depth: int) -> int:
    if depth == 0:
        return 1
    kids = successors(rules, text)
    if depth == 1:
        return len(kids)
    return sum(perft(rules, kid, depth - 1) for kid in kids)
