"""Fuzzed requests to ``rotary serve``: every route answers 2xx, or 4xx in one line.

Hypothesis builds requests to every route of the viewer (``/``, ``/api/position``,
``/svg``, ``/api/prove`` by GET and POST; ``/static/`` and other paths that must serve
nothing; unknown methods) with positions mutated from valid texts
(:func:`tests.cli.test_fuzz.positions`) or reached by random moves, moves ``m`` valid and
not, unicode, control characters, huge numbers, very long values, repeated and unknown
parameters, and raw query strings with broken percent escapes. The viewers asked: one
over a hex(3) 3v3 database, one over a hex(2) 2v2 setup database (placing, offering,
picking), one with no database (the standard start, answers from the rules), one on a
board without a preset start, and one with capture rules. "prove" runs df-pn in this
process (a small budget), so a position that crashes the prover shows as a failed proof.

Each answer must be a 2xx of the route's type (or Werkzeug's redirect of ``//``), or a
4xx whose error is one line (JSON ``{"error"}`` under ``/api/``, the page's error line on
``/``, plain text elsewhere); never a 5xx (the app runs with ``PROPAGATE_EXCEPTIONS``, so
a bug raises here with its traceback), never "Traceback" in a body, never a request past
the alarm (no hang).

CI runs 200 requests; ``-m slow`` runs 2,000.
"""

from __future__ import annotations

import re
import signal
from collections import Counter
from concurrent.futures import Future

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("flask")

from solver.cli.main import build_parser  # noqa: E402
from solver.cli.serve import build_viewer  # noqa: E402
from solver.errors import RotaryError  # noqa: E402
from solver.game.config import make_config  # noqa: E402
from solver.game.position import PLAY, Position  # noqa: E402
from solver.game.rules import ONGOING, apply, moves, status  # noqa: E402
from tests.cli.test_fuzz import ODD, VALID, positions  # noqa: E402

TIMEOUT = 30  # seconds a request may take
ROUTES = ["/", "/api/position", "/svg", "/api/prove"]
ODD_PATHS = ["/api", "/api/", "/api/position/", "/svg/", "/api/prove/x", "/static/", "/static/x.css", "/static/secret.txt",
             "/static/../pyproject.toml", "//", "/%00", "/%FF", "/index.html", "/api/position.json", "/\u00e9"]
MOVES = ["d3+0", "a1+1", "c3+2", "b2-1", "d4", "offer a1 b2", "pick a1", "at a1", "place c3", "zz9", "+", "a1+99999999999"]
RAW = ["p", "p=", "p=%", "p=%Z", "p=%FF%FE", "p=%00", "p=%2F%2F%2F", "&&&", "=", "p&p", "p=x&p=o", "m=%E2%80%AE"]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {TIMEOUT} s")


class InPlace:
    """An executor that runs the proof at once, here: a crash in it fails the proof."""

    def submit(self, fn, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - the route reports it as "failed"; the test fails on that
            future.set_exception(e)
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


@st.composite
def played(draw) -> tuple[str, str | None]:
    """A position some random moves after a valid one (under base or edge rules; from the
    setup board, placements, offers and picks), and the last move played (None if none was)."""
    pos = Position(draw(st.sampled_from(VALID)))
    last = None
    try:
        edge = draw(st.booleans())
        if pos.phase == PLAY:
            cfg = make_config(pos.board, edge=edge)
        else:  # the setup board: placing, then offering and picking
            cfg = make_config(pos.board, draw(st.sampled_from([2, 3])), edge=edge, setup=draw(st.sampled_from(["offer", "last"])))
        for _ in range(draw(st.integers(0, 12))):
            legal = moves(cfg, pos) if status(cfg, pos) == ONGOING else []
            if not legal:
                break
            move = draw(st.sampled_from(legal))
            last, pos = move.text(cfg.board), apply(cfg, pos, move)
    except RotaryError:  # rules this board cannot have: the position as it is
        pass
    return pos.text(), last


def values():
    """A query value: a position, a move, a near miss, any text, a huge number, a long one."""
    return st.one_of(
        positions(), positions(), played().map(lambda p: p[0]), played().map(lambda p: p[0]), st.sampled_from(MOVES), st.sampled_from(ODD), st.text(max_size=12),
        st.integers(-(10**40), 10**40).map(str), st.builds(lambda s, n: s * n, st.sampled_from(VALID + ["x", "\x00"]), st.integers(50, 400)),
    )


@st.composite
def requests_(draw) -> tuple[str, str, object]:
    """``(method, path, query)``: query a dict of lists, or a raw query string."""
    odd = draw(st.integers(0, 9)) == 0  # one in ten to a path that is no route
    route = draw(st.sampled_from(ODD_PATHS if odd else ROUTES))
    if route == "/api/prove":
        method = draw(st.sampled_from(["GET", "POST"]))
    elif draw(st.integers(0, 9)) == 0:
        method = draw(st.sampled_from(["POST", "HEAD", "PUT", "DELETE", "OPTIONS"]))
    else:
        method = "GET"
    if draw(st.integers(0, 9)) == 0:
        raw = "&".join(draw(st.lists(st.one_of(st.sampled_from(RAW), st.text(max_size=8).map(lambda s: "p=" + s)), min_size=1, max_size=3)))
        return method, route, raw
    query: dict[str, list[str]] = {}
    if draw(st.booleans()):  # a position reached by moves, and the move that led there
        text, last = draw(played())
        query["p"] = [text]
        if last is not None and draw(st.booleans()):
            query["m"] = [last]
    elif draw(st.integers(0, 5)):
        query["p"] = [draw(values())]
        if draw(st.integers(0, 9)) == 0:
            query["p"].append(draw(values()))
    if "m" not in query and draw(st.integers(0, 2)) == 0:
        query["m"] = [draw(st.one_of(st.sampled_from(MOVES), values()))]
    if draw(st.integers(0, 7)) == 0:
        query[draw(st.text(min_size=1, max_size=4))] = [draw(st.text(max_size=6))]
    return method, route, query


def check(client, method: str, path: str, query: object) -> int:
    """Ask, check the answer; its status."""
    where = f"{method} {path} {query!r}"
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        r = client.open(path, method=method, query_string=query)
        body = r.get_data(as_text=True)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert r.status_code < 500, f"{where}: {r.status_code}\n{body[:2000]}"
    assert "Traceback" not in body, f"{where}:\n{body[:2000]}"
    assert path in ROUTES or r.status_code >= 300, f"{where}: {r.status_code}: served a path that is no route"
    if method in ("HEAD", "OPTIONS"):  # no body; OPTIONS lists the methods
        return r.status_code
    if r.status_code in (301, 308):  # Werkzeug's "//" -> "/", "/static" -> "/static/"
        assert r.headers["Location"].startswith("http://localhost/"), f"{where}: {r.headers}"
        return r.status_code
    if 200 <= r.status_code < 300:
        if path == "/":
            assert r.mimetype == "text/html" and body.startswith("<!doctype html>"), where
        elif path == "/svg":
            assert r.mimetype == "image/svg+xml" and ("<svg" in body[:200]), where
        elif path in ("/api/position", "/api/prove"):
            answer = r.get_json()
            assert r.mimetype == "application/json" and isinstance(answer, dict) and "position" in answer, where
            assert answer.get("state") != "failed", f"{where}: {answer}"  # the prover crashed
        return r.status_code
    assert 400 <= r.status_code < 500, f"{where}: {r.status_code}"
    if path == "/" and r.mimetype == "text/html":  # the page, with its one error line
        errors = re.findall(r'<p class="error">(.*?)</p>', body, re.S)
        assert len(errors) == 1 and "\n" not in errors[0] and errors[0].strip(), f"{where}: {body[:2000]}"
    elif r.mimetype == "application/json":
        error = r.get_json()["error"]
        assert isinstance(error, str) and error.strip() and "\n" not in error, f"{where}: {error!r}"
    else:
        assert r.mimetype == "text/plain", f"{where}: {r.mimetype} {body[:500]}"
        assert body.strip() and "\n" not in body.strip(), f"{where}: {body!r}"
    return r.status_code


VIEWERS = {
    "db": lambda dbs: ["--db", str(dbs["hex3 3v3"])],
    "setup": lambda dbs: ["--db", str(dbs["hex2 2v2 setup"])],
    "rules": lambda dbs: [],
    "no start": lambda dbs: ["--board", "hex3", "--balls", "3v2", "--edge"],
    "capture": lambda dbs: ["--capture"],
}


@pytest.fixture(scope="module")
def clients(solved_db, tmp_path_factory):
    from solver.retro.setup import solve_setup

    setup = tmp_path_factory.mktemp("fuzzweb") / "hex2-2v2-setup-offer"
    solve_setup(make_config(2, 2, setup="offer"), setup, progress=False)
    dbs = {"hex3 3v3": solved_db(make_config(3, 3), (3, 3)), "hex2 2v2 setup": setup}
    made, sources_ = {}, []
    for name, argv in VIEWERS.items():
        args = build_parser()[0].parse_args(["serve", *argv(dbs), "--prove-nodes", "300"])
        app, sources = build_viewer(args, executor_factory=InPlace)
        app.config["PROPAGATE_EXCEPTIONS"] = True  # a bug raises here, with its traceback
        made[name] = app.test_client()
        sources_.append(sources)
    yield made
    for sources in sources_:
        sources.close()


def _fuzz_web(clients, examples: int) -> None:
    seen: Counter = Counter()  # (route, status class)

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(sorted(clients)), requests_())
    def fuzz(name, request):
        status = check(clients[name], *request)
        seen[(request[1] if request[1] in ROUTES else "other", f"{status // 100}xx")] += 1

    fuzz()
    print(f"{sum(seen.values())} requests:", ", ".join(f"{k[0]} {k[1]} {v}" for k, v in sorted(seen.items())))  # with -s


def test_fuzz_web(clients):
    _fuzz_web(clients, 200)


@pytest.mark.slow
def test_fuzz_web_2000(clients):
    _fuzz_web(clients, 2000)
