"""``rotary serve`` through Flask's test client: every route, bad input, the setup phases,
proofs of positions no database answers, and the command itself as a real process."""

from __future__ import annotations

import html
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytest.importorskip("flask")

from solver.analysis import database_answer  # noqa: E402
from solver.cli.main import build_parser, main  # noqa: E402
from solver.cli.serve import build_viewer  # noqa: E402
from solver.db.database import open_db  # noqa: E402
from solver.game.config import make_config  # noqa: E402
from solver.game.position import Position  # noqa: E402
from solver.game.start import empty_setup, standard_start  # noqa: E402

POS = ".../..o./.o.../..xx../.o..x/.... x"  # hex3 3v3
TWO = ".../...o/...../x.x.../.o.../.... x"  # hex3 2v2: no 3v3 database answers it
START = standard_start().text()


class Page(HTMLParser):
    """The attributes a test reads off a page: data-position, data-move links, data-point groups."""

    def __init__(self, html: str):
        super().__init__()
        self.positions, self.moves, self.points, self.buttons, self.last = [], [], [], [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-position" in a:
            self.positions.append(a["data-position"])
        if "data-move" in a:
            self.moves.append(a)
        if "data-point" in a:
            self.points.append(a)
        if "data-last-move" in a:
            self.last.append(a["data-last-move"])
        if tag == "button" and "data-action" in a:
            self.buttons.append(a["data-action"])


def viewer(argv: list[str], executor_factory=None):
    args = build_parser()[0].parse_args(["serve", *argv])
    app, sources = build_viewer(args, executor_factory=executor_factory)
    return app.test_client(), sources


@pytest.fixture(scope="module")
def db3(solved_db):
    return solved_db(make_config(3, 3), (3, 3))


@pytest.fixture(scope="module")
def client(db3):
    client, sources = viewer(["--db", str(db3)])
    yield client
    sources.close()


def query_json(capsys, db, text: str) -> dict:
    assert main(["query", text, "--db", str(db), "--json"]) == 0
    out, _ = capsys.readouterr()
    return json.loads(out)


def test_api_position_is_exactly_query_json(client, db3, capsys):
    for text in (POS, Position(POS).text().replace(" x", " o")):
        r = client.get("/api/position", query_string={"p": text})
        assert r.status_code == 200 and r.mimetype == "application/json"
        expected = query_json(capsys, db3, text)
        assert r.get_json() == expected
        assert list(r.get_json()) == list(expected)  # the same keys in the same order


def test_page_of_a_database_position(client, db3):
    r = client.get("/", query_string={"p": POS})
    assert r.status_code == 200 and r.mimetype == "text/html"
    html = r.get_data(as_text=True)
    page = Page(html)
    assert page.positions == [POS]
    assert sorted(p["data-point"] for p in page.points) == sorted(Position(POS).board.names)
    with open_db(db3) as db:
        answer = database_answer(db, Position(POS))
    assert [m["data-move"] for m in page.moves] == [m["move"] for m in answer["moves"]]
    for link, m in zip(page.moves, answer["moves"]):
        assert link["data-value"] == m["value"] and m["value"] in link["class"].split()
        assert link["data-plies"] == ("" if m["plies"] is None else str(m["plies"]))
        assert link["href"].startswith("/?p=")
    assert {"best", "reply"} <= set(page.buttons) and "prove" not in page.buttons
    assert f"{answer['value']} in {answer['plies']}" in html or answer["value"] == "draw"
    assert "<script>" in html and "http://" not in html.split("<script>")[1]  # no CDN, inline only


def test_last_move_is_marked(client):
    r = client.get("/api/position", query_string={"p": POS})
    best = r.get_json()["moves"][0]
    page = Page(client.get("/", query_string={"p": best["position"], "m": best["move"]}).get_data(as_text=True))
    assert page.positions == [best["position"]]
    if "+" in best["move"]:
        assert page.last == [best["move"]]
    # a move that does not parse is not drawn, and is no error
    assert client.get("/", query_string={"p": POS, "m": "zz9"}).status_code == 200


def test_svg_route(client):
    r = client.get("/svg", query_string={"p": POS})
    assert r.status_code == 200 and r.mimetype == "image/svg+xml"
    root = ET.fromstring(r.data)
    names = [e.attrib["data-point"] for e in root.iter() if "data-point" in e.attrib]
    assert sorted(names) == sorted(Position(POS).board.names)


@pytest.mark.parametrize("route", ["/", "/api/position", "/svg", "/api/prove"])
@pytest.mark.parametrize(
    "text,words",
    [
        ("zz x", "match no board"),
        (".../..o./.o.../..xx../.o..x/.... q", "side to move"),
        (".../..o./.o.../..xx../.o..x/.... x place", "centre point c3 is occupied"),
        (".../..o./.o.../..xx../.o.xx/.... x", "impossible"),  # 4 v 3 without edge/capture
        ("..../...../....../......./......../......./....../..... x offer", "offer"),
    ],
)
def test_bad_input_is_a_400_with_the_reason(client, route, text, words):
    r = client.get(route, query_string={"p": text})
    assert r.status_code == 400
    if route == "/":
        assert words in html.unescape(r.get_data(as_text=True))
    else:
        assert r.mimetype == "application/json" and words in r.get_json()["error"]


def test_unknown_paths_and_methods_are_one_line(client):
    """Not Flask's HTML page: one line, JSON under /api/, plain text elsewhere; a 405 keeps ``Allow``."""
    for method, path, status in [("GET", "/nope", 404), ("GET", "/api/nope", 404), ("POST", "/svg", 405),
                                 ("DELETE", "/api/position", 405), ("PUT", "/", 405)]:
        r = client.open(path, method=method, query_string={"p": POS})
        assert r.status_code == status, (method, path)
        if path.startswith("/api/"):
            assert r.mimetype == "application/json" and r.get_json()["error"].startswith(f"{status} ")
        else:
            assert r.mimetype == "text/plain"
            assert r.get_data(as_text=True).count("\n") == 1 and r.get_data(as_text=True).startswith(f"{status} ")
        if status == 405:
            assert "GET" in r.headers["Allow"]


def test_no_files_are_served(tmp_path, monkeypatch):
    """Flask's default /static/ would serve ./static of the folder ``serve`` was started in."""
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "secret.txt").write_text("secret")
    monkeypatch.chdir(tmp_path)
    client, sources = viewer([])
    try:
        for path in ("/static/secret.txt", "/static/../static/secret.txt", "/secret.txt"):
            r = client.get(path)
            assert r.status_code == 404 and r.data != b"secret", path
    finally:
        sources.close()


def test_default_page_without_a_database_is_the_standard_start():
    """No database at all: the rules list the standard start's moves, uncoloured, and offer a proof."""
    client, sources = viewer([])
    try:
        page = Page(client.get("/").get_data(as_text=True))
        assert page.positions == [START]
        assert len(page.moves) == 18 and {m["data-value"] for m in page.moves} == {"unknown"}
        assert "prove" in page.buttons
        answer = client.get("/api/position").get_json()
        assert answer["source"] == "rules" and answer["value"] == "unknown"
        first = answer["moves"][0]
        assert first == {"move": "d3+0", "position": first["position"], "value": "unknown", "plies": None, "exact": False}
    finally:
        sources.close()


def test_a_board_without_a_preset_start_and_no_database():
    client, sources = viewer(["--board", "hex3"])
    try:
        r = client.get("/")
        assert r.status_code == 200 and "no preset start" in r.get_data(as_text=True)
        assert client.get("/api/position").status_code == 400
    finally:
        sources.close()


def test_default_page_of_a_board_without_a_preset_start(client):
    """hex3 has no preset start: the page shows a won position of the database."""
    page = Page(client.get("/").get_data(as_text=True))
    (text,) = page.positions
    answer = client.get("/api/position", query_string={"p": text}).get_json()
    assert Position(text).board.n == 3 and answer["value"] == "win" and page.moves


def test_a_finished_position_has_no_moves(client):
    done = ".../..o./..x../..xx../..o../..o. o"  # light holds the centre c3 d3 c4
    answer = client.get("/api/position", query_string={"p": done}).get_json()
    assert answer["value"] == "loss" and answer["plies"] == 0 and answer["moves"] == []
    html = client.get("/", query_string={"p": done}).get_data(as_text=True)
    assert "light (x) wins: all three centre points are x" in html


def wait_proved(client, text: str, seconds: float = 120.0) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        job = client.get("/api/prove", query_string={"p": text}).get_json()
        if job["state"] != "running":
            return job
        time.sleep(0.2)
    raise AssertionError(f"no proof of {text} within {seconds} s")


def test_prove_colours_what_it_proves(db3):
    """A 2v2 position the 3v3 database does not answer: the proof runs in the background
    (here a thread; the server uses a spawned process) and then the page is coloured."""
    client, sources = viewer(["--db", str(db3), "--prove-nodes", "20000"], executor_factory=lambda: ThreadPoolExecutor(1))
    try:
        assert client.get("/api/prove", query_string={"p": TWO}).get_json()["state"] == "none"
        r = client.post("/api/prove", query_string={"p": TWO})
        assert r.status_code == 202 and r.get_json()["state"] in ("running", "done")
        job = wait_proved(client, TWO)
        assert job["state"] == "done"
        answer = client.get("/api/position", query_string={"p": TWO}).get_json()
        assert answer == job["answer"] and answer["source"] == "proof"
        values = {m["value"] for m in answer["moves"]}
        assert values - {"unknown"}, answer  # something was proven
        page = Page(client.get("/", query_string={"p": TWO}).get_data(as_text=True))
        assert [m["data-value"] for m in page.moves] == [m["value"] for m in answer["moves"]]
        assert "prove" not in page.buttons
        # a position a database answers is not proven again: the answer comes back at once
        r = client.post("/api/prove", query_string={"p": POS})
        assert r.status_code == 200 and r.get_json()["answer"]["value"] in ("win", "draw", "loss")
    finally:
        sources.close()


def test_every_api_answer_fits_the_schema(client, db3):
    """/api/position from a database, from the rules (finished, and in play with nothing
    known) and after a proof: each one valid against docs/answer.schema.json."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).parents[2] / "docs" / "answer.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    done = ".../..o./..x../..xx../..o../..o. o"
    for text in (POS, done, START, TWO):
        answer = client.get("/api/position", query_string={"p": text}).get_json()
        validator.validate(answer)
    proved_client, sources = viewer(["--db", str(db3), "--prove-nodes", "3000"], executor_factory=lambda: ThreadPoolExecutor(1))
    try:
        proved_client.post("/api/prove", query_string={"p": TWO})
        validator.validate(wait_proved(proved_client, TWO)["answer"])
    finally:
        sources.close()


def test_prove_in_a_worker_process(db3):
    """The server's own executor: a spawned process; the request returns at once."""
    client, sources = viewer(["--db", str(db3), "--prove-nodes", "5000"])
    try:
        t0 = time.monotonic()
        r = client.post("/api/prove", query_string={"p": TWO})
        assert r.status_code == 202 and time.monotonic() - t0 < 5
        assert wait_proved(client, TWO)["state"] == "done"
    finally:
        sources.close()


def test_setup_phases_are_playable(tmp_path):
    """A setup database: the empty board by default, placements coloured, then offer, pick, at."""
    from solver.retro.setup import solve_setup

    cfg = make_config(2, 2, setup="offer")
    path = tmp_path / "hex2-2v2-setup-offer"
    solve_setup(cfg, path, progress=False)
    client, sources = viewer(["--db", str(path)])
    try:
        page = Page(client.get("/").get_data(as_text=True))
        assert page.positions == [empty_setup(cfg).text()]
        seen = set()
        text = page.positions[0]
        for _ in range(12):
            answer = client.get("/api/position", query_string={"p": text}).get_json()
            if not answer["moves"]:
                break
            page = Page(client.get("/", query_string={"p": text}).get_data(as_text=True))
            assert [m["data-move"] for m in page.moves] == [m["move"] for m in answer["moves"]]
            assert all(m["data-value"] in ("win", "draw", "loss") for m in page.moves)
            phase = (text.split() + ["play"])[2]
            seen.add(phase)
            best = page.moves[0]
            if phase == "offer" and best["data-move"].startswith("offer"):
                assert len(best["data-points"].split()) == 2
            text = answer["moves"][0]["position"]
        assert {"place", "offer"} <= seen
    finally:
        sources.close()


def test_serve_errors_are_one_line(capsys, tmp_path, monkeypatch):
    import werkzeug.serving

    def never(*args, **kwargs):
        raise AssertionError("the viewer would have started")

    monkeypatch.setattr(werkzeug.serving, "make_server", never)
    for argv, words in [
        (["serve", "--db", str(tmp_path / "none")], "no database"),
        (["serve", "--port", "70000"], "--port"),
        (["serve", "--prove-nodes", "0"], "--prove-nodes"),
        (["serve", "--board", "hex3", "--capture"], "traps"),
        (["serve", "--capture", "--traps-x", "zz"], "no point 'zz'"),
    ]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, (argv, err)
    monkeypatch.setitem(sys.modules, "solver.view.web", None)  # as if Flask were missing
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == "rotary: error: rotary serve needs Flask: pip install 'rotary[web]'\n"


def test_serve_runs_as_a_process(db3):
    """``rotary serve --port 0`` binds 127.0.0.1, says where, answers, and stops on SIGTERM."""
    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    assert exe, "the rotary script is not installed (pip install -e '.[test]')"
    proc = subprocess.Popen([exe, "serve", "--db", str(db3), "--port", "0", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        assert "hex3 3v3 base" in line
        with urllib.request.urlopen(url + "api/position?p=" + urllib.parse.quote(POS), timeout=30) as r:
            assert json.loads(r.read())["position"] == POS
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr.read()

