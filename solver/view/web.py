"""``rotary serve``: a local viewer of positions and their values (Flask, the ``web`` extra).

Routes (``p`` is position text, docs/rules.md §9; without it, the start position):

* ``GET /?p=`` — the page of a position (:mod:`solver.view.page`); ``m`` names the move that
  led there, to mark it on the board.
* ``GET /api/position?p=`` — ``rotary query --json``'s answer, with ``tree`` where a
  loaded proof tree holds the position and ``book`` on moves into the opening book
  (docs/json.md); 400 ``{"error"}`` on bad input.
* ``GET /svg?p=`` — the board as ``image/svg+xml``.
* ``POST /api/prove?p=`` starts a df-pn proof of a position no source answers (in a worker
  process); ``GET /api/prove?p=`` says how it stands and, when done, what it proved.
* ``POST /api/analyse?p=`` starts the engine on such a position (in a worker process of its
  own, for the server's ``--engine-ms``); ``GET /api/analyse?p=`` says how it stands and,
  when done, the engine's answer (``source: "engine"``), which the page then shows.

Any other path or method is a 4xx in one line: ``{"error"}`` under ``/api/``, plain text
elsewhere (not Flask's HTML page).
"""

from __future__ import annotations

import json
from typing import Callable

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from solver.errors import RotaryError
from solver.game.position import Position
from solver.view import page
from solver.view.picture import position_svg
from solver.view.sources import Sources


class NoStart(RotaryError):
    """A bare ``/`` with no start position to show."""


def create_app(sources: Sources, start: Callable[[], Position | None], rules_text: str = "") -> Flask:
    """The Flask application over ``sources``; ``start()`` is the position of a bare ``/``
    (None: a position of the first database, see :meth:`Sources.sample_position`)."""
    # no static folder: the page inlines its CSS and script, and Flask's default would serve
    # ./static of whatever folder the server was started in (its root path is the cwd here)
    app = Flask("rotary", static_folder=None)
    app.config["JSON_SORT_KEYS"] = False
    app.json.sort_keys = False  # the answer keeps the schema's order

    def position() -> Position:
        text = request.args.get("p", "").strip()
        if text:
            return Position(text)
        pos = start()
        if pos is None:
            pos = sources.sample_position()
        if pos is None:
            raise NoStart("this board has no preset start and no database is open: type a position above")
        return pos

    def bad(e: Exception, status: int = 400):
        return jsonify({"error": str(e)}), status

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        """404, 405, ...: one line, keeping the headers (``Allow`` of a 405)."""
        line = " ".join(f"{e.code} {e.name}: {e.description or ''}".split())
        response = e.get_response()
        if request.path.startswith("/api/"):
            response.set_data(json.dumps({"error": line}) + "\n")
            response.mimetype = "application/json"
        else:
            response.set_data(line + "\n")
            response.mimetype = "text/plain"
        return response

    @app.get("/")
    def index():
        try:
            pos = position()
            answer, cfg = sources.answer(pos)
        except RotaryError as e:  # bad input is a 400; a bare / with nothing to show is not
            html = page.error_page(str(e), request.args.get("p", ""), rules_text)
            return Response(html, status=200 if isinstance(e, NoStart) else 400, mimetype="text/html")
        html = page.render(
            cfg, pos, answer, last_move=request.args.get("m") or None, rules=cfg.describe(),
            can_prove=sources.can_prove(cfg, pos, answer), can_analyse=sources.can_analyse(cfg, pos, answer),
        )
        return Response(html, mimetype="text/html")

    @app.get("/api/position")
    def api_position():
        try:
            answer, _ = sources.answer(position())
        except RotaryError as e:
            return bad(e)
        return jsonify(answer)

    @app.get("/svg")
    def svg():
        try:
            pos = position()
            cfg = sources.config(pos)
            picture = position_svg(cfg, pos, last_move=request.args.get("m") or None)
        except RotaryError as e:
            return bad(e)
        return Response(picture, mimetype="image/svg+xml")

    @app.route("/api/prove", methods=["GET", "POST"])
    def api_prove():
        try:
            pos = position()
            if request.method == "POST":
                answer, cfg = sources.answer(pos)
                if not sources.can_prove(cfg, pos, answer):
                    return jsonify({"position": pos.text(), "state": "done", "answer": answer})
                return jsonify(sources.start_proof(pos)), 202
            sources.config(pos)  # refuse what cannot be proven under these rules, as the POST does
            return jsonify(sources.proof_state(pos))
        except RotaryError as e:
            return bad(e)

    @app.route("/api/analyse", methods=["GET", "POST"])
    def api_analyse():
        try:
            pos = position()
            if request.method == "POST":
                answer, cfg = sources.answer(pos)
                if not sources.can_analyse(cfg, pos, answer):
                    return jsonify({"position": pos.text(), "state": "done", "answer": answer})
                return jsonify(sources.start_analysis(pos)), 202
            sources.config(pos)
            return jsonify(sources.analysis_state(pos))
        except RotaryError as e:
            return bad(e)

    return app
