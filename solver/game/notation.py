"""docs/rules.md §9 position notation and §3 move notation: parse and format, exact errors.

Every error is a :class:`NotationError` (a ``ValueError``) whose one-line message quotes
the input and says what is wrong and where.
"""

from __future__ import annotations

from solver.errors import NotationError
from solver.game.board import MAX_N, MIN_N, Board, board_from_row_lengths, hex_board
from solver.game.move import AT, COLOUR_CHARS, O, OFFER, PICK, PLACE, PLAY, X, Move


def _board_rows_hint() -> str:
    return ", ".join(f"hex{n} {len(hex_board(n).rows)}" for n in range(MIN_N, MAX_N + 1))


def parse_fields(text: str) -> tuple[Board, int, int, int, str, tuple[int, ...]]:
    """Parse ``'<rows> <side> [phase …]'`` into ``(board, x, o, turn, phase, points)``.

    Raises :class:`NotationError` naming the fault. :class:`~solver.game.position.Position`
    is built from these fields (``Position(text)``).
    """
    if not isinstance(text, str):
        raise NotationError(f"a position must be text, not {type(text).__name__}")
    fields = text.split()
    if not fields:
        raise NotationError("empty position: expected '<rows separated by /> <x|o>'")
    rows = fields[0].split("/")
    board = _identify_board(text, rows)
    x = o = 0
    for i, row in enumerate(rows):
        points = board.rows[len(board.rows) - 1 - i]
        cells = _expand_row(text, i, row, len(points), board)
        for p, c in zip(points, cells):
            if c == "x":
                x |= 1 << p
            elif c == "o":
                o |= 1 << p
    if len(fields) < 2:
        raise NotationError(f"missing side to move in {text!r}: expected 'x' or 'o' after the board")
    side = fields[1]
    if side not in ("x", "o"):
        raise NotationError(f"bad side to move {side!r} in {text!r}: expected 'x' or 'o'")
    turn = COLOUR_CHARS.index(side)
    phase, points = _parse_phase(text, board, fields[2:])
    _check_phase(text, board, x, o, turn, phase, points)
    return board, x, o, turn, phase, tuple(sorted(points))


def _identify_board(text: str, rows: list[str]) -> Board:
    for n in range(MIN_N, MAX_N + 1):
        b = hex_board(n)
        if len(b.rows) == len(rows):
            return b
    raise NotationError(
        f"{len(rows)} rows in {text.split()[0]!r} match no board (rows per board: {_board_rows_hint()})"
    )


def _expand_row(text: str, i: int, row: str, length: int, board: Board) -> list[str]:
    label = f"row {len(board.rows) - i} ({row!r})"
    cells: list[str] = []
    for col, c in enumerate(row, 1):
        if c in "xo.":
            cells.append(c)
        elif c in "123456789":
            cells.extend("." * int(c))
        else:
            raise NotationError(
                f"{label}: unexpected character {c!r} at column {col}; expected x, o, . or a digit 1-9"
            )
    if len(cells) != length:
        raise NotationError(f"{label} has {len(cells)} points; {board.label} needs {length} in that row")
    return cells


def _point(text: str, board: Board, name: str) -> int:
    try:
        return board.point(name)
    except ValueError:
        raise NotationError(f"no point {name!r} on {board.label} in {text!r}") from None


def _parse_phase(text: str, board: Board, words: list[str]) -> tuple[str, tuple[int, ...]]:
    if not words:
        return PLAY, ()
    head, args = words[0], words[1:]
    expected = {PLACE: 0, OFFER: 0, PICK: 2, AT: 1}
    if head not in expected:
        raise NotationError(f"unknown phase {head!r} in {text!r}: expected place, offer, pick P Q or at P")
    if len(args) != expected[head]:
        want = {0: "no points", 1: "one point", 2: "two points"}[expected[head]]
        raise NotationError(f"phase {head!r} takes {want}, got {len(args)} in {text!r}")
    points = tuple(_point(text, board, a) for a in args)
    if head == PICK and points[0] == points[1]:
        raise NotationError(f"pick needs two different points, got {args[0]} twice in {text!r}")
    return head, tuple(sorted(points))


def _check_phase(text: str, board: Board, x: int, o: int, turn: int, phase: str, points) -> None:
    if x & o:
        raise AssertionError("a point holds two balls")  # cannot happen from text
    if phase == PLAY:
        return
    occupied_centre = (x | o) & board.centre_mask
    if occupied_centre:
        name = board.names[(occupied_centre & -occupied_centre).bit_length() - 1]
        article = "an" if phase[0] in "aeiou" else "a"  # an offer-phase, an at-phase, a pick-phase
        raise NotationError(f"centre point {name} is occupied in {article} {phase}-phase position {text!r}")
    want = {OFFER: X, AT: X, PICK: O}.get(phase)
    if phase == PLACE:
        nx, no = x.bit_count(), o.bit_count()
        if nx not in (no, no + 1):
            raise NotationError(f"impossible placement counts x {nx}, o {no} in {text!r}: light places first")
        want = X if nx == no else O
    if turn != want:
        raise NotationError(
            f"side {COLOUR_CHARS[turn]!r} does not fit phase {phase!r} in {text!r}: "
            f"{COLOUR_CHARS[want]!r} is to move there"
        )


def format_fields(board: Board, x: int, o: int, turn: int, phase: str, points: tuple[int, ...]) -> str:
    """§9 text of a position given by its fields (no digits on output)."""
    rows = []
    for row in reversed(board.rows):
        rows.append("".join("x" if x >> p & 1 else "o" if o >> p & 1 else "." for p in row))
    out = "/".join(rows) + " " + COLOUR_CHARS[turn]
    if phase != PLAY:
        out += " " + " ".join([phase] + [board.names[p] for p in points])
    return out


def parse_move_text(board: Board, text: str) -> Move:
    """Parse move text (shape only): ``e5+2``, ``e5-1``, ``c2``, ``offer d3 f3``, ``pick f3``."""
    words = text.split()
    if not words:
        raise NotationError("empty move")
    if words[0] == "offer":
        if len(words) != 3:
            raise NotationError(f"bad offer {text!r}: expected 'offer P Q'")
        p, q = (_point(text, board, w) for w in words[1:])
        if p == q:
            raise NotationError(f"bad offer {text!r}: the two points must differ")
        return Move.offer(p, q)
    if words[0] == "pick":
        if len(words) != 2:
            raise NotationError(f"bad pick {text!r}: expected 'pick P'")
        return Move.pick(_point(text, board, words[1]))
    if len(words) != 1:
        raise NotationError(f"bad move {text!r}: expected e.g. e5+2, c2, 'offer d3 f3' or 'pick f3'")
    word = words[0]
    for sign in "+-":
        if sign in word:
            name, _, k = word.partition(sign)
            if not k.isdigit() or not 0 <= int(k) <= 5:
                raise NotationError(f"bad rotation {text!r}: the turn must be +0..+5 or -0..-5")
            turn = int(k) if sign == "+" else -int(k)
            return Move.rotate(_point(text, board, name), turn % 6)
    return Move.place(_point(text, board, word))
