"""SVG pictures of positions: plain string generation, no dependencies (python-chess's ``chess.svg`` is the model).

    from solver.view import svg
    svg.board(pos)                                   # the board, the balls, the centre
    svg.board(pos, last_move="e3+4", legal=["d3"], values={"d3": Value("win", 5)},
              traps=(cfg.traps_x, cfg.traps_o), size=480)

Geometry follows docs/rules.md §1: point ``(q, r)`` is drawn at ``x = q + r/2``,
``y = r·√3/2`` (y upward on paper, so downward in SVG it is ``-y``). Every point is one
``<g class="point …" data-point="<name>">`` element holding its socket, its ball (a
``<circle class="ball x">`` or ``"ball o"``), its label and its marks, so that a page can
find and click a point by name.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping
from xml.sax.saxutils import escape, quoteattr

from solver.errors import UsageError
from solver.game.board import Board
from solver.game.move import OFFER_MOVE, PICK_MOVE, PLACE_MOVE, ROTATE, Move
from solver.game.notation import parse_move_text
from solver.game.render import Drawable

UNIT = 50.0  # user units between neighbouring points
SQRT3 = math.sqrt(3.0)

COLOURS = {
    "board": "#deb771",
    "board edge": "#a97f3a",
    "grid": "#8c6a32",
    "socket": "#9c7437",
    "label": "#5b4420",
    "centre": "#c0504d",
    "x": "#f7f0dc",  # light's balls
    "x stroke": "#7d6a45",
    "o": "#24272d",  # dark's balls
    "o stroke": "#000000",
    "last": "#1f6fd1",
    "legal": "#1f6fd1",
    "offered": "#7a3fb5",
    "hint": "#e07b00",  # a move the page points at (a proof tree's)
    "win": "#1e9e3e",
    "draw": "#d9a300",
    "loss": "#9c1b1b",
}
BALL_R, SOCKET_R, MARK_R = 0.39, 0.15, 0.47  # in units
SIDE_NAMES = ("light (x)", "dark (o)")


def _fmt(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _points(board: Board, items: Iterable[int | str] | int | None) -> list[int]:
    """Points from names, ints or a bitboard (an ``int``); in point order, no repeats."""
    if items is None:
        return []
    if isinstance(items, int):
        return [p for p in range(board.size) if items >> p & 1]
    out = {board.point(i) if isinstance(i, str) else int(i) for i in items}
    return sorted(out)


def value_of(value: Any) -> tuple[str, int | None] | None:
    """``(result, plies)`` from a :class:`~solver.game.values.Value`, a pair, an answer dict
    (``{"value": "win", "plies": 5}``) or a bare result word; None for unknown."""
    if value is None:
        return None
    if isinstance(value, str):
        return value, None
    if isinstance(value, Mapping):
        result = value.get("value", value.get("result"))
        return None if result is None else (result, value.get("plies"))
    if isinstance(value, tuple):
        return value[0], value[1]
    return value.result, value.plies


def value_words(result: str, plies: int | None) -> str:
    return result if plies is None or result == "draw" else f"{result} in {plies}"


class _Frame:
    """Drawing coordinates of a board's points, in user units, with a margin."""

    def __init__(self, board: Board, margin: float):
        raw = [(q + r / 2.0, -r * SQRT3 / 2.0) for q, r in board.coords]
        xs, ys = [x for x, _ in raw], [y for _, y in raw]
        self.x0, self.y0 = min(xs) - margin, min(ys) - margin
        self.width = (max(xs) - min(xs) + 2 * margin) * UNIT
        self.height = (max(ys) - min(ys) + 2 * margin) * UNIT
        self.xy = [((x - self.x0) * UNIT, (y - self.y0) * UNIT) for x, y in raw]


def _hull(pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Convex hull (Andrew's monotone chain), counter-clockwise."""
    pts = sorted(set((round(x, 6), round(y, 6)) for x, y in pts))

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower: list = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _as_move(board: Board, move: Move | str | None) -> Move | None:
    if move is None or isinstance(move, Move):
        return move
    return parse_move_text(board, move)


def _rotation_arrow(cx: float, cy: float, k: int, colour: str) -> str:
    """A counter-clockwise arc of ``k``·60° inside the pivot's ring, with its head and ``+k``."""
    r = 0.5 * UNIT
    width = 0.07 * UNIT
    parts = []
    if k == 0:  # the null rotation: a closed dashed ring
        parts.append(
            f'<circle cx="{_fmt(cx)}" cy="{_fmt(cy)}" r="{_fmt(r)}" fill="none" stroke="{colour}" '
            f'stroke-width="{_fmt(width)}" stroke-dasharray="{_fmt(0.12 * UNIT)} {_fmt(0.08 * UNIT)}"/>'
        )
    else:
        a0 = math.radians(90.0)
        a1 = a0 + math.radians(60.0 * k) - math.radians(14.0)  # leave room for the head
        sx, sy = cx + r * math.cos(a0), cy - r * math.sin(a0)
        ex, ey = cx + r * math.cos(a1), cy - r * math.sin(a1)
        large = 1 if (a1 - a0) > math.pi else 0
        parts.append(
            f'<path d="M {_fmt(sx)} {_fmt(sy)} A {_fmt(r)} {_fmt(r)} 0 {large} 0 {_fmt(ex)} {_fmt(ey)}" '
            f'fill="none" stroke="{colour}" stroke-width="{_fmt(width)}" stroke-linecap="round"/>'
        )
        # head: a triangle pointing along the counter-clockwise tangent at the arc's end
        a2 = a0 + math.radians(60.0 * k)
        tip = (cx + r * math.cos(a2), cy - r * math.sin(a2))
        nx, ny = math.cos(a1), -math.sin(a1)  # outward normal at the arc's end
        h = 0.08 * UNIT
        left, right = (ex + nx * h, ey + ny * h), (ex - nx * h, ey - ny * h)
        pts = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in (tip, left, right))
        parts.append(f'<polygon points="{pts}" fill="{colour}"/>')
    parts.append(
        f'<text x="{_fmt(cx)}" y="{_fmt(cy + 0.1 * UNIT)}" font-size="{_fmt(0.28 * UNIT)}" text-anchor="middle" '
        f'font-family="sans-serif" font-weight="bold" fill="{colour}">+{k}</text>'
    )
    return "".join(parts)


def board(
    position: Drawable,
    *,
    size: int | None = 480,
    coordinates: bool = True,
    last_move: Move | str | None = None,
    legal: Iterable[int | str] | int | None = None,
    values: Mapping[int | str, Any] | None = None,
    traps: tuple[Iterable[int | str] | int, Iterable[int | str] | int] | None = None,
    turn: bool = True,
    colours: Mapping[str, str] | None = None,
    hint: Move | str | None = None,
) -> str:
    """The position as an SVG document (a string).

    * ``size`` — width in pixels (height follows); None leaves the size to the container.
    * ``coordinates`` — each point's name in its socket (``a1`` … ; letters count within
      a row, docs/rules.md §1, so names beat a margin of letters here).
    * ``last_move`` — a :class:`Move` or move text: the pivot with a counter-clockwise
      arrow of ``k``·60° for a rotation, a ring on a placed, offered or picked point.
    * ``legal`` — points to mark as playable (names, ints or a bitboard).
    * ``values`` — point -> value (a ``Value``, ``(result, plies)``, an answer dict or a
      word): a ring in the value's colour, win / draw / loss for the side to move.
    * ``traps`` — ``(light's trap fields, dark's)`` under ``capture``: a ring in the
      owner's colour on each.
    * ``turn`` — a small ball in the corner in the colour of the side to move.
    * ``colours`` — overrides of :data:`COLOURS`.
    * ``hint`` — a rotation to point at (a proof tree's move): its arrow in the hint
      colour, in ``<g class="hint" data-hint-move="…">``.
    """
    b = position.board
    col = dict(COLOURS, **(colours or {}))
    frame = _Frame(b, margin=0.85)
    xy = frame.xy
    move = _as_move(b, last_move)
    legal_set = set(_points(b, legal))
    trap_owner: dict[int, str] = {}
    if traps is not None:
        for side, bits in zip("xo", traps):
            for p in _points(b, bits):
                trap_owner[p] = side
    marks: dict[int, tuple[str, int | None]] = {}
    for key, val in (values or {}).items():
        v = value_of(val)
        if v is not None:
            marks[b.point(key) if isinstance(key, str) else int(key)] = v
    last_points: set[int] = set()
    if move is not None and move.kind in (PLACE_MOVE, PICK_MOVE, OFFER_MOVE):
        last_points = {move.point} | ({move.point2} if move.kind == OFFER_MOVE else set())

    w, h = frame.width, frame.height
    dims = "" if size is None else f' width="{size}" height="{_fmt(size * h / w)}"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="0 0 {_fmt(w)} {_fmt(h)}"{dims} '
        f'class="rotary-board" data-board="{b.label}">'
    ]
    text = getattr(position, "text", None)
    if callable(text):
        out.append(f"<title>{escape(text())}</title>")

    # the board: the hull of the points, widened by a round-joined stroke of the same colour
    hull = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in _hull(xy))
    for cls, colour, width in (("board-edge", col["board edge"], 1.42), ("board", col["board"], 1.3)):
        out.append(
            f'<polygon class="{cls}" points="{hull}" fill="{colour}" stroke="{colour}" '
            f'stroke-width="{_fmt(width * UNIT)}" stroke-linejoin="round"/>'
        )

    # the lattice: one segment per pair of neighbours (E, NE, NW of each point)
    segs = []
    for p, nbs in enumerate(b.neighbours):
        for d in (0, 1, 2):
            q = nbs[d]
            if q >= 0:
                segs.append(f"M{_fmt(xy[p][0])} {_fmt(xy[p][1])}L{_fmt(xy[q][0])} {_fmt(xy[q][1])}")
    out.append(f'<path class="grid" d="{"".join(segs)}" stroke="{col["grid"]}" stroke-width="{_fmt(0.035 * UNIT)}" '
               f'stroke-opacity="0.55" fill="none"/>')

    # the centre triangle
    tri = " ".join(f"{_fmt(xy[p][0])},{_fmt(xy[p][1])}" for p in b.centre)
    out.append(
        f'<polygon class="centre" points="{tri}" fill="{col["centre"]}" fill-opacity="0.28" '
        f'stroke="{col["centre"]}" stroke-width="{_fmt(0.5 * UNIT)}" stroke-opacity="0.28" stroke-linejoin="round"/>'
    )

    offered = set(position.points) if position.phase in ("pick", "at") else set()
    for p in range(b.size):
        out.append(_point(position, p, xy[p], col, coordinates=coordinates, legal=p in legal_set,
                          trap=trap_owner.get(p), mark=marks.get(p), last=p in last_points,
                          offered=p in offered))

    if move is not None and move.kind == ROTATE:
        cx, cy = xy[move.point]
        out.append(f'<g class="last-move" data-last-move="{escape(move.text(b))}">'
                   f"{_rotation_arrow(cx, cy, move.k, col['last'])}</g>")

    shown = _as_move(b, hint)
    if shown is not None and shown.kind == ROTATE:
        cx, cy = xy[shown.point]
        out.append(f'<g class="hint" data-hint-move="{escape(shown.text(b))}" pointer-events="none">'
                   f"{_rotation_arrow(cx, cy, shown.k, col['hint'])}</g>")

    if turn:
        side = "xo"[position.turn]
        r = 0.28 * UNIT
        cx, cy = 0.45 * UNIT, 0.45 * UNIT
        out.append(
            f'<g class="turn" data-turn="{side}"><title>{SIDE_NAMES[position.turn]} to move</title>'
            f'<circle cx="{_fmt(cx)}" cy="{_fmt(cy)}" r="{_fmt(r)}" fill="{col[side]}" '
            f'stroke="{col[side + " stroke"]}" stroke-width="{_fmt(0.04 * UNIT)}"/></g>'
        )
    out.append("</svg>")
    return "".join(out)


def _point(pos: Drawable, p: int, at: tuple[float, float], col: dict, *, coordinates: bool, legal: bool,
           trap: str | None, mark: tuple[str, int | None] | None, last: bool, offered: bool) -> str:
    b = pos.board
    name = b.names[p]
    cx, cy = (_fmt(v) for v in at)
    ball = "x" if pos.x >> p & 1 else "o" if pos.o >> p & 1 else None
    classes = ["point", ball or "empty"]
    if p in b.centre:
        classes.append("centre-point")
    if legal:
        classes.append("legal")
    tip = [name]
    attrs = [f"data-point={quoteattr(name)}"]
    if ball:
        attrs.append(f'data-ball="{ball}"')
    if mark is not None:
        classes.append(f"value-{mark[0]}")
        tip.append(value_words(*mark))
        attrs.append(f'data-value="{escape(mark[0])}"')
    if trap:
        tip.append(f"trap field of {trap}")
    g = [f'<g class="{" ".join(classes)}" {" ".join(attrs)}><title>{escape(", ".join(tip))}</title>']
    # an invisible disc makes the whole point clickable, not just its ball
    g.append(f'<circle cx="{cx}" cy="{cy}" r="{_fmt(0.5 * UNIT)}" fill="#000" fill-opacity="0"/>')
    if mark is not None:
        colour = col.get(mark[0], col["draw"])
        g.append(f'<circle class="mark {escape(mark[0])}" cx="{cx}" cy="{cy}" r="{_fmt(MARK_R * UNIT)}" '
                 f'fill="{colour}" fill-opacity="0.35" stroke="{colour}" stroke-width="{_fmt(0.06 * UNIT)}"/>')
    g.append(f'<circle class="socket" cx="{cx}" cy="{cy}" r="{_fmt(SOCKET_R * UNIT)}" fill="{col["socket"]}"/>')
    if trap:
        g.append(f'<circle class="trap {trap}" cx="{cx}" cy="{cy}" r="{_fmt(0.44 * UNIT)}" fill="none" '
                 f'stroke="{col[trap + " stroke"] if trap == "o" else col["x stroke"]}" stroke-width="{_fmt(0.05 * UNIT)}" '
                 f'stroke-dasharray="{_fmt(0.09 * UNIT)} {_fmt(0.06 * UNIT)}"/>')
        if trap == "x":
            g.append(f'<circle cx="{cx}" cy="{cy}" r="{_fmt(0.44 * UNIT)}" fill="none" stroke="{col["x"]}" '
                     f'stroke-width="{_fmt(0.03 * UNIT)}" stroke-dasharray="{_fmt(0.09 * UNIT)} {_fmt(0.06 * UNIT)}"/>')
    if ball:
        g.append(f'<circle class="ball {ball}" cx="{cx}" cy="{cy}" r="{_fmt(BALL_R * UNIT)}" fill="{col[ball]}" '
                 f'stroke="{col[ball + " stroke"]}" stroke-width="{_fmt(0.04 * UNIT)}"/>')
    if offered:
        g.append(f'<circle class="offered" cx="{cx}" cy="{cy}" r="{_fmt(0.44 * UNIT)}" fill="none" '
                 f'stroke="{col["offered"]}" stroke-width="{_fmt(0.06 * UNIT)}" stroke-dasharray="{_fmt(0.1 * UNIT)} {_fmt(0.05 * UNIT)}"/>')
    if last:
        g.append(f'<circle class="last" cx="{cx}" cy="{cy}" r="{_fmt(0.46 * UNIT)}" fill="none" '
                 f'stroke="{col["last"]}" stroke-width="{_fmt(0.08 * UNIT)}"/>')
    if legal:
        g.append(f'<circle class="legal-mark" cx="{cx}" cy="{cy}" r="{_fmt(0.2 * UNIT)}" fill="{col["legal"]}" '
                 f'fill-opacity="0.45" stroke="{col["legal"]}" stroke-width="{_fmt(0.03 * UNIT)}"/>')
    if coordinates:
        fill = col["label"] if not ball else (col["x stroke"] if ball == "x" else col["x"])
        dy = 0.33 * UNIT if not ball else 0.1 * UNIT
        opacity = "0.8" if not ball else "0.55"
        g.append(f'<text x="{cx}" y="{_fmt(at[1] + dy)}" font-size="{_fmt(0.22 * UNIT)}" text-anchor="middle" '
                 f'font-family="sans-serif" fill="{fill}" fill-opacity="{opacity}" pointer-events="none">{name}</text>')
    g.append("</g>")
    return "".join(g)


PNG_HINT = "PNG pictures need resvg-py: pip install 'rotary[png]'"


def png(svg_text: str, *, scale: float = 1.0) -> bytes:
    """The SVG rendered to PNG bytes with resvg-py (the optional ``png`` extra);
    :class:`~solver.errors.UsageError` saying how to install it when it is missing."""
    try:
        import resvg_py
    except ImportError:
        raise UsageError(PNG_HINT) from None
    data = resvg_py.svg_to_bytes(svg_string=svg_text, zoom=scale if scale != 1.0 else None)
    if isinstance(data, str):  # resvg-py before 0.2 returned base64 text
        import base64

        data = base64.b64decode(data)
    return bytes(data)
