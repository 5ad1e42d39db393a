"""The engine: the best move and a score for any position of any rule set.

    engine = Engine(cfg)                                   # db=open_db(...) optional
    r = engine.think(pos, Limit(movetime_ms=500))          # SearchResult
    r.move, r.score, r.pv, r.source, r.exact

Who answers, in this order:

* the rules, for a finished position (no move; a win or loss in 0);
* the database, when one is given and it answers every move (``source "database"``, exact);
  a database of the rotation phase also answers, exactly, every position of the search
  it holds (an endgame reached under ``edge`` or ``capture``);
* the search (:mod:`solver.engine.searcher`, ``source "engine"``): alpha-beta over the
  rotation phase. A win or loss it finds is proven (every defence was searched to the
  end); its distance is exact when it is within the depth searched full-width, else an
  upper bound (the duel rule: fastest win, slowest loss); anything else is an estimate.

The setup game's phases: ``at P`` and an offer with one legal point search the six turns
at the point; an ``offer`` searches every turn at every legal point and offers the two
points best for light (dark will pick the worse); a ``pick`` chooses the point whose best
turn is worst for light; a placement is searched by :mod:`solver.engine.setup_search`
(the placements to a depth, and where they end the setup, the offer, the pick and the
first rotations).

Thread safety: one ``think`` at a time; :meth:`Engine.stop` from any thread.
"""

from __future__ import annotations

from typing import Sequence

from solver.engine.score import Info, Limit, Score, SearchResult
from solver.engine.searcher import InfoCallback, Searcher, move_of_code
from solver.engine.setup_search import SetupSearcher
from solver.errors import MissingValueError
from solver.game.config import Config
from solver.game.position import AT, OFFER, PICK, PLACE, PLAY, Move, Position
from solver.game.rules import LOSS, ONGOING, WIN, apply, legal_points, moves, status
from solver.game.values import Value
from solver.search.prover import require_rules


class Engine:
    """A search engine for one configuration; see the module docstring."""

    def __init__(self, cfg: Config, db=None, tt_bits: int = 22, weights=None):
        self.cfg = cfg
        self.db = db
        leaves = db if db is not None and db.cfg.setup is None else None
        if leaves is not None:
            require_rules(cfg, leaves)  # a database of other rules would give wrong "exact" values
        self.searcher = Searcher(cfg, tt_bits=tt_bits, weights=weights, db=leaves)
        self.setup = SetupSearcher(cfg, self.searcher) if cfg.setup is not None and cfg.balls is not None else None

    def stop(self) -> None:
        """Stop the running :meth:`think` as soon as possible (any thread)."""
        self.searcher.stop()

    def new_game(self) -> None:
        """Forget what earlier games taught the search (its table and move statistics)."""
        self.searcher.clear()
        if self.setup is not None:
            self.setup.clear()

    def warm_up(self) -> None:
        """Compile (or load) the kernels now, so that the first real search is not charged."""
        from solver.game.start import standard_start

        board = self.cfg.board
        pos = standard_start() if board.n == 4 else Position.make(board, 0, 0, 0)
        m, p = pos.mover, pos.opponent
        if legal_points(self.cfg, m, p):
            self.searcher.rotation(m, p, pos.turn, Limit(depth=1))
        if self.setup is not None:
            self.setup.placement(0, 0, 0, Limit(depth=1))
            self.setup.clear()
        self.searcher.clear()

    # ------------------------------------------------------------------ the answer

    def think(self, pos: Position, limit: Limit, history: Sequence[Position] = (), on_info: InfoCallback | None = None,
              rank_all: bool = False) -> SearchResult:
        """The move to play in ``pos`` and its score (see the module docstring).

        ``history``: the game's earlier positions, oldest first (``pos`` itself may end
        it), for repetitions. ``rank_all``: also score every legal move
        (``SearchResult.ranked``, best first), at a cost in depth.
        """
        cfg = self.cfg
        st = status(cfg, pos)
        if st != ONGOING:
            return SearchResult(None, Score(WIN if st == WIN else LOSS, 0), source="rules", exact=True,
                                ranked=[] if rank_all else None)
        answer = self._from_database(pos)
        if answer is not None:
            return answer
        if pos.phase == PLAY:
            return self._rotation(pos, limit, history, on_info, rank_all)
        if pos.phase == PLACE:
            return self._placement(pos, limit, on_info, rank_all)
        return self._handover(pos, limit, on_info)

    def _from_database(self, pos: Position) -> SearchResult | None:
        if self.db is None:
            return None
        try:
            ranked = self.db.best_moves(pos)
        except MissingValueError:
            return None
        if not ranked:
            return None
        scored = [(m, Score.from_value(v)) for m, v in ranked]
        best, value = ranked[0]
        return SearchResult(best, scored[0][1], pv=[best.text(self.cfg.board)], ranked=scored, source="database",
                            exact=value.proven)

    def _rotation(self, pos: Position, limit: Limit, history: Sequence[Position], on_info, rank_all: bool):
        board = self.cfg.board
        past = [(q.mover, q.opponent, q.turn) for q in history if q.phase == PLAY and q != pos]
        names = _Namer(board)
        code, score, depth, nodes, ms, pv, ranked = self.searcher.rotation(
            pos.mover, pos.opponent, pos.turn, limit, past, names.wrap(on_info), rank_all)
        move = move_of_code(code) if code >= 0 else moves(self.cfg, pos)[0]
        result = SearchResult(move, score, depth, nodes, ms, [names.text(c) for c in pv] or [move.text(board)],
                              source="engine", exact=score.proven and score.value <= depth and self.searcher.full_width)
        if ranked is not None:
            result.ranked = self._every_move(pos, {code: sc for code, sc in ranked})
        return result

    def _every_move(self, pos: Position, by_code: dict[int, Score]) -> list[tuple[Move, Score]]:
        """Every legal move with the score of the child it leads to, best first (moves with
        the same result share the score of the kernel's one copy of that child)."""
        by_child: dict[tuple[int, int], Score] = {}
        for code, sc in by_code.items():
            child = apply(self.cfg, pos, move_of_code(code))
            by_child[(child.x, child.o)] = sc
        out = []
        for m in moves(self.cfg, pos):
            child = apply(self.cfg, pos, m)
            out.append((m, by_child.get((child.x, child.o), Score("cp", 0))))
        out.sort(key=lambda ms: -ms[1].raw())
        return out

    def _handover(self, pos: Position, limit: Limit, on_info) -> SearchResult:
        """``offer``, ``pick P Q`` and ``at P``: the turns at the points in question."""
        cfg = self.cfg
        if pos.phase == PICK:
            points = list(pos.points)
        elif pos.phase == AT:
            points = [pos.points[0]]
        else:
            assert pos.phase == OFFER
            points = legal_points(cfg, pos.x, pos.o)
        rotations = [(pt, Move.rotate(pt, k)) for pt in points for k in range(6)]
        base = pos.replace(phase=PLAY, points=(), turn=0)  # the rotating side is light in every handover phase
        kids = [apply(cfg, base, m) for _, m in rotations]
        scores, depth, nodes, ms = self.searcher.children([(k.mover, k.opponent, k.turn) for k in kids], limit, on_info)
        per_move = [sc.negate_after_move() for sc in scores]  # light's view, at the point
        best_at: dict[int, tuple[Score, Move]] = {}
        for (pt, m), sc in zip(rotations, per_move):
            if pt not in best_at or sc.raw() > best_at[pt][0].raw():
                best_at[pt] = (sc, m)
        exact = all(sc.proven for sc in per_move)
        if pos.phase in (AT, OFFER) and len(points) == 1 or pos.phase == AT:
            ranked = sorted(zip((m for _, m in rotations), per_move), key=lambda ms_: -ms_[1].raw())
            move, score = ranked[0]
            return SearchResult(move, score, depth, nodes, ms, [move.text(cfg.board)], ranked, "engine", exact)
        if pos.phase == PICK:
            # dark's view of picking P: light then rotates at P, one ply later
            ranked = [(Move.pick(pt), best_at[pt][0].negate_after_move()) for pt in points]
            ranked.sort(key=lambda ms_: -ms_[1].raw())
            move, score = ranked[0]
            return SearchResult(move, score, depth, nodes, ms, [move.text(cfg.board)], ranked, "engine", exact)
        ordered = sorted(points, key=lambda pt: -best_at[pt][0].raw())
        ranked = []
        for i, p in enumerate(ordered):
            for q in ordered[i + 1:]:
                # dark picks the worse point for light; the offer and the pick are two plies
                worse = best_at[q][0]
                ranked.append((Move.offer(p, q), _two_plies_later(worse)))
        ranked.sort(key=lambda ms_: -ms_[1].raw())
        move, score = ranked[0]
        return SearchResult(move, score, depth, nodes, ms, [move.text(cfg.board)], ranked, "engine", exact)

    def _placement(self, pos: Position, limit: Limit, on_info, rank_all: bool = False) -> SearchResult:
        """A placement: the setup search (:mod:`solver.engine.setup_search`) when the number
        of balls is fixed, else each placement scored by the evaluation of the board it leaves."""
        cfg = self.cfg
        if self.setup is not None:
            names = _Namer(cfg.board, placements=True)
            point, score, depth, nodes, ms, pv, ranked = self.setup.placement(pos.x, pos.o, pos.turn, limit,
                                                                              names.wrap(on_info), rank_all)
            by_move = [(Move.place(q), sc) for q, sc in ranked] if ranked is not None else None
            return SearchResult(Move.place(point), score, depth, nodes, ms, [names.text(q) for q in pv], by_move,
                                "engine", score.proven and 0 < score.value <= depth)
        options = moves(cfg, pos)
        kids = [apply(cfg, pos, m) for m in options]
        mine = [(k.x, k.o) if pos.turn == 0 else (k.o, k.x) for k in kids]
        scores = [Score.from_search(self.searcher.static(m, p, pos.turn)) for m, p in mine]
        ranked = sorted(zip(options, scores), key=lambda ms_: -ms_[1].raw())
        move, score = ranked[0]
        return SearchResult(move, score, 0, len(kids), 0, [move.text(cfg.board)], ranked, "engine", False)


def _two_plies_later(score: Score) -> Score:
    return score if score.kind == "cp" else Score(score.kind, score.value + 2)


class _Namer:
    """Kernel move codes (or placement points) as move texts, for progress lines."""

    def __init__(self, board, placements: bool = False):
        self.board = board
        self.placements = placements

    def text(self, code: int | str) -> str:
        if self.placements:
            return Move.place(int(code)).text(self.board)
        return move_of_code(int(code)).text(self.board)

    def wrap(self, on_info: InfoCallback | None) -> InfoCallback | None:
        if on_info is None:
            return None

        def named(info: Info) -> None:
            info.pv = [self.text(c) for c in info.pv]
            on_info(info)

        return named


def value_of(result: SearchResult) -> Value:
    """The answer-schema value of a result: exact only where proven."""
    return result.score.value_of() if result.exact else Value("unknown")
