"""A game in the terminal between people and built-in players (``rotary play``)."""

from __future__ import annotations

import sys
from typing import Callable, Optional, Sequence

from solver.game.config import Config
from solver.game.position import COLOUR_CHARS, OFFER, OFFER_MOVE, PLACE, ROTATE, Move, Position
from solver.errors import MissingValueError
from solver.game.render import LAST_MARK, draw, use_colour
from solver.game.rules import LOSS, ONGOING, IllegalMoveError, centre_owner, legal_points, moves, parse_move, play, status
from solver.game.values import DRAW, WIN, Value

SIDE_NAMES = ("light (x)", "dark (o)")
HELP = (
    "type a move (e4+2, e4-1, c2, 'offer d3 f3', 'pick f3'), 'moves' or '?' to list them, 'undo' to take "
    "back your last move, 'save FILE' to write the game record, 'quit' to stop; 'hint' for the best move, "
    "'values' for every move's value (from a database where one answers, else the engine's estimate)"
)
QUIT, EOF, UNDO = "quit", "eof", "undo"
COMMANDS = ("moves", "hint", "values", "value", "undo", "save ", "help", "quit")


def why_over(cfg: Config, pos: Position) -> str:
    """One sentence saying who won and why."""
    st = status(cfg, pos)
    mover, other = SIDE_NAMES[pos.turn], SIDE_NAMES[1 - pos.turn]
    owner = centre_owner(cfg, pos.x, pos.o) if pos.phase == "play" else None
    if owner is not None:
        return f"{SIDE_NAMES[owner]} wins: all three centre points are {COLOUR_CHARS[owner]}"
    assert st == LOSS
    return f"{other} wins: {mover} has no legal rotation point"


def describe_moves(cfg: Config, pos: Position, brief: bool = False) -> str:
    """The mover's legal moves in one line, the way a person types them.

    ``brief`` says where placements may go instead of listing every empty point.
    """
    board = cfg.board
    ms = moves(cfg, pos)
    if not ms:
        return "no moves: the game is over"
    if pos.phase == OFFER and ms[0].kind == OFFER_MOVE:
        points = [board.names[p] for p in legal_points(cfg, pos.x, pos.o)]
        return f"offer two of {' '.join(points)} (e.g. 'offer {points[0]} {points[1]}')"
    if ms[0].kind == ROTATE:
        points = list(dict.fromkeys(board.names[m.point] for m in ms))
        only = "only legal point, " if pos.phase == OFFER else ""
        return f"rotate at {' '.join(points)} ({only}by +0 .. +5, e.g. {points[0]}+1)"
    if pos.phase == PLACE and brief:
        traps = cfg.traps_of(1 - pos.turn)
        where = f", nor on {COLOUR_CHARS[1 - pos.turn]}'s trap fields {' '.join(cfg.names(traps))}" if traps else ""
        return f"place a ball on any empty point but the centre{where} (e.g. {ms[0].text(board)}; '?' lists them)"
    if pos.phase == PLACE:
        return "place a ball on " + " ".join(m.text(board) for m in ms)
    return " or ".join(repr(m.text(board)) for m in ms)


class Advisor:
    """What a database knows about the positions of a game: values of positions and moves.

    Positions the database does not answer (other material, phase or rules) get None.
    """

    def __init__(self, db):
        self.db = db
        self._ranked: dict[Position, list | None] = {}

    def ranked(self, pos: Position) -> list[tuple[Move, Value]] | None:
        """Every move with its value for the side to move, best first; None if unknown."""
        if pos not in self._ranked:
            try:
                self._ranked[pos] = self.db.best_moves(pos) if self.db.get_reason(pos) is None else None
            except MissingValueError:
                self._ranked[pos] = None
        return self._ranked[pos]

    def value(self, pos: Position) -> Value | None:
        ranked = self.ranked(pos)
        return ranked[0][1] if ranked else None

    def move_value(self, pos: Position, move: Move) -> Value | None:
        for m, v in self.ranked(pos) or ():
            if m == move:
                return v
        return None

    def drops(self, pos: Position, move: Move) -> str | None:
        """A warning if ``move`` gives away a win (or turns a draw into a loss)."""
        before, after = self.value(pos), self.move_value(pos, move)
        if before is None or after is None:
            return None
        if before.result == WIN and after.result != WIN:
            what = "the win"
        elif before.result == DRAW and after.result == LOSS:
            what = "the draw"
        else:
            return None
        return f"{what} ({before} now, {after} after it)"


class Game:
    """A game's start, its moves and the positions they lead to (``positions[i]``: after
    ``i`` moves), with the players and what saving needs."""

    def __init__(self, cfg: Config, start: Position, players: Sequence["Player"], moves_: Sequence[Move] = (),
                 record: str | None = None):
        self.cfg, self.start, self.players, self.record = cfg, start, list(players), record
        self.moves: list[Move] = []
        self.positions: list[Position] = [start]
        for m in moves_:
            self.push(m)

    @property
    def pos(self) -> Position:
        return self.positions[-1]

    @property
    def plies(self) -> int:
        return len(self.moves)

    def push(self, move: Move) -> None:
        self.positions.append(play(self.cfg, self.pos, move))
        self.moves.append(move)

    def _human_plies(self) -> list[int]:
        return [i for i in range(self.plies) if self.players[self.positions[i].turn] is None]

    def can_undo(self) -> bool:
        return bool(self._human_plies())

    def undo(self) -> int:
        """Take back moves to the last position where a person was to move; plies taken back."""
        humans = self._human_plies()
        if not humans:
            return 0
        back = self.plies - humans[-1]
        del self.moves[humans[-1]:]
        del self.positions[humans[-1] + 1:]
        return back

    def last_points(self) -> int:
        """The points of the last move as a bitboard (its pivot, placed, offered or picked points)."""
        if not self.moves:
            return 0
        m = self.moves[-1]
        return (1 << m.point) | ((1 << m.point2) if m.kind == OFFER_MOVE else 0)

    def save(self, path: str, result: str | None = None) -> None:
        from solver.play.record import write_record

        write_record(path, self.cfg, self.start, self.moves, result)


def _read_line(prompt: str, out) -> str:
    """One line typed by the person: with line editing (readline) on a terminal."""
    if out is sys.stdout and sys.stdin.isatty() and sys.stdout.isatty():
        try:
            return input(prompt) + "\n"
        except EOFError:
            return ""
    out.write(prompt)
    out.flush()
    return sys.stdin.readline()


def _readline_setup(game: "Game") -> None:
    """Line editing and tab completion of commands and the legal moves, where readline is."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return
    try:
        import readline
    except ImportError:  # not on every platform: plain input() then
        return

    def complete(text: str, state: int) -> str | None:
        words = list(COMMANDS) + [m.text(game.cfg.board) for m in moves(game.cfg, game.pos)]
        found = [w for w in dict.fromkeys(words) if w.startswith(text)]
        return found[state] if state < len(found) else None

    readline.set_completer(complete)
    readline.set_completer_delims(" \t")
    readline.parse_and_bind("tab: complete")


def _values_text(cfg: Config, ranked: list[tuple[Move, Value]]) -> str:
    return "\n".join(f"  {m.text(cfg.board):<14} {v}" for m, v in ranked)


def _ask(game: "Game", advisor: "Advisor | None", out, err) -> Move | str:
    """The person's move; ``QUIT`` when he stops, ``EOF`` when the input ends, ``UNDO``."""
    cfg, pos = game.cfg, game.pos
    out.write(describe_moves(cfg, pos, brief=True) + "\n")
    warned: str | None = None
    while True:
        line = _read_line(f"{SIDE_NAMES[pos.turn]}> ", out)
        if not line:
            out.write("\n")
            return EOF
        text = line.strip()
        word, _, rest = text.partition(" ")
        if text in ("quit", "q", "exit"):
            return QUIT
        if text in ("moves", "?"):
            out.write(describe_moves(cfg, pos) + "\n")
            continue
        if text in ("help", ""):
            out.write(HELP + "\n")
            continue
        if text == "undo":
            if game.can_undo():
                return UNDO
            out.write("nothing to undo\n")
            continue
        if word == "save":
            if not rest.strip():
                err.write("save needs a file name: save FILE\n")
                continue
            try:
                game.save(rest.strip())
            except OSError as e:
                err.write(f"cannot save {rest.strip()}: {e.strerror or e}\n")
                continue
            out.write(f"saved {rest.strip()} ({game.plies} plies)\n")
            continue
        if text in ("hint", "values", "value"):
            ranked = advisor.ranked(pos) if advisor is not None else None
            if ranked is None:
                from solver.play.advice import engine_advice  # no database answers: the engine's estimate

                out.write(engine_advice(cfg, pos, game.positions, text) + "\n")
            elif text == "hint":
                best, v = ranked[0]
                out.write(f"hint: {best.text(cfg.board)} ({v}; {SIDE_NAMES[pos.turn]} {advisor.value(pos)} now)\n")
            elif text == "value":
                out.write(f"{SIDE_NAMES[pos.turn]}: {advisor.value(pos)}\n")
            else:
                out.write(f"{SIDE_NAMES[pos.turn]}: {advisor.value(pos)}; every move, best first:\n")
                out.write(_values_text(cfg, ranked) + "\n")
            continue
        try:
            move = parse_move(cfg, pos, text)
        except IllegalMoveError as e:
            err.write(f"{e}\n")
            err.flush()
            continue
        drop = advisor.drops(pos, move) if advisor is not None else None
        if drop is not None and warned != move.text(cfg.board):
            warned = move.text(cfg.board)
            out.write(f"warning: {warned} drops {drop}; type it again to play it, or 'hint'\n")
            continue
        return move


Player = Optional[Callable[[Config, Position], Move]]  # None: a human at the terminal


def run_game(cfg: Config, pos: Position, players: Sequence[Player], max_plies: int = 400, *,
             db=None, history: Sequence[Move] = (), record: str | None = None) -> int:
    """Play ``pos`` out between ``players`` (light, dark); 0 when it ends, stops or a human quits.

    A human's illegal move is refused with one line on stderr and asked again; if the
    input ends before the game does, the game is abandoned with exit status 1.

    ``db`` — a database for the person's ``hint``, ``values`` and the warning when a move
    drops a win; ``history`` — moves already played from ``pos`` (a loaded record);
    ``record`` — a file that gets the game record after every move.
    """
    out, err = sys.stdout, sys.stderr
    colour = use_colour(out)
    traps = (cfg.traps_x, cfg.traps_o)
    game = Game(cfg, pos, players, history, record)
    advisor = Advisor(db) if db is not None and None in players else None

    def save(result: str | None = None) -> None:
        if record:
            game.save(record, result)

    out.write(f"rules: {cfg.describe()}\n")
    if advisor is not None:
        out.write(f"database: {db.description} ('hint', 'values', 'undo', 'save FILE')\n")
    if None in players:
        _readline_setup(game)
    if history:
        out.write(f"replayed {len(history)} plies\n")
    save()  # a record that cannot be written fails now, not after the first move

    def show() -> None:
        if game.moves:
            last = game.moves[-1].text(cfg.board)
            out.write(f"\nlast move: {last} by {SIDE_NAMES[game.positions[-2].turn]}, marked {LAST_MARK[0]} {LAST_MARK[1]}")
        out.write("\n" + draw(game.pos, colour=colour, traps=traps, last=game.last_points()) + "\n")

    while status(cfg, game.pos) == ONGOING:
        if game.plies >= max_plies:
            out.write(f"stopped after {game.plies} plies without a result\n")
            save()
            return 0
        show()
        player = players[game.pos.turn]
        if player is None:
            move = _ask(game, advisor, out, err)
            if move == UNDO:
                out.write(f"took back {game.undo()} plies\n")
                save()
                continue
            if move == QUIT:
                out.write(f"game abandoned after {game.plies} plies\n")
                save()
                return 0
            if move == EOF:
                out.write(f"game abandoned: the input ended after {game.plies} plies\n")
                save()
                return 1
        else:
            if getattr(player, "wants_history", False):  # a searching player knows repetitions
                move = player(cfg, game.pos, history=game.positions)
            else:
                move = player(cfg, game.pos)
            out.write(f"{SIDE_NAMES[game.pos.turn]} plays {move.text(cfg.board)}\n")
        game.push(move)
        save()
    show()
    result = why_over(cfg, game.pos)
    out.write(f"{result} after {game.plies} plies\n")
    out.write(f"final: {game.pos.text()}\n")
    save(result)
    return 0
