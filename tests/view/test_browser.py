"""``rotary serve`` in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium, never a browser download.

The test solves hex(3) 4v4 (once per test run, shared through ``solved_db``), starts
``rotary serve`` as a process, loads a position's page, finds the 27 points and every move
of the database's answer, clicks the best move, plays a move by clicking a point and then
a rotation, goes back and forward, lets the perfect reply answer, proves a position no
database answers (after the engine has scored it), shows the engine's score, line and
move scores on the standard start, and fails on any error in the browser's console. With
the standard start's proof tree loaded, it sees e4+3 marked, plays it and sees every
reply of dark answered, then follows the tree through a reply.

Without Chromium the test is skipped — unless ``ROTARY_REQUIRE_BROWSER=1`` (CI sets it),
which turns the skip into a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from solver.analysis import database_answer
from solver.db.database import open_db
from solver.game.config import make_config, standard_config
from solver.game.position import Position
from solver.game.rules import apply, moves, parse_move
from solver.game.start import STANDARD_START_TEXT, standard_start

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
REQUIRED = os.environ.get("ROTARY_REQUIRE_BROWSER") == "1"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--window-size=1200,800"]
W4 = ".../..o./.o.../x.x.../.o.xx/..o. x"  # hex3 4v4, docs/rules.md §4: light wins in 21
UNSOLVED = "o../.o../o..../.x..../x...x/.... x"  # 3 v 3: the 4v4 database does not answer it
WAIT = 30
pytestmark = pytest.mark.xdist_group("hex3-4v4")  # with the Ray test of hex(3) 4v4: one solve of it per run


def missing() -> list[str]:
    gone = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(path)]
    for module in ("selenium", "flask"):
        try:
            __import__(module)
        except ImportError:
            gone.append(f"the {module} package")
    return gone


@pytest.fixture(scope="module")
def browser():
    gone = missing()
    if gone:
        why = f"no Chromium: missing {', '.join(gone)} (apt-get install chromium chromium-driver; pip install -e '.[test]')"
        if REQUIRED:
            pytest.fail(why + " — ROTARY_REQUIRE_BROWSER=1 makes this a failure")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="rotary-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(autouse=True)
def fresh_page(request):
    """Each test starts on a blank page with an empty console: a page the last test left
    open goes on fetching from a server that test has stopped, and those errors are not
    this test's."""
    if "browser" not in request.fixturenames:
        yield
        return
    driver = request.getfixturevalue("browser")
    driver.get("about:blank")
    driver.get_log("browser")
    yield


@pytest.fixture(scope="module")
def served(browser, solved_db):
    """``(url, database path)`` of ``rotary serve`` over hex(3) 4v4, run as a process."""
    path = solved_db(make_config(3, 4), (4, 4))
    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    assert exe, "the rotary script is not installed (pip install -e '.[test]')"
    # module-scoped, so set up before the autouse fixture that turns the shipped store off:
    # say it here, or the standard start would be answered by the store, not the engine
    env = dict(os.environ, ROTARY_KNOWN="off")
    proc = subprocess.Popen([exe, "serve", "--db", str(path), "--port", "0", "--prove-nodes", "4000", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield found.group(0), path
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def shown(driver) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, "[data-position]").get_attribute("data-position")


def wait_for(driver, what, seconds: float = WAIT):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(lambda d: what(d))


def wait_position(driver, text: str, seconds: float = WAIT) -> None:
    def there(d):
        try:
            return shown(d) == text
        except Exception:  # the view is being replaced: ask again
            return False

    wait_for(driver, there, seconds)


def url_position(driver) -> str:
    return parse_qs(urlparse(driver.current_url).query)["p"][0]


def source_is(driver, source: str) -> bool:
    try:
        return driver.find_element(By_CSS, "[data-position]").get_attribute("data-source") == source
    except Exception:  # the view is being replaced: ask again
        return False


By_CSS = "css selector"


def console_errors(driver) -> list[dict]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def test_the_viewer_in_chromium(browser, served):
    from selenium.webdriver.common.by import By

    url, db_path = served
    d = browser
    with open_db(db_path) as db:
        first = database_answer(db, Position(W4))
        d.get(url + "?" + urlencode({"p": W4}))
        wait_position(d, W4)

        # the 27 points, named right, and every move of the answer in its order and colour
        points = d.find_elements(By.CSS_SELECTOR, "svg [data-point]")
        assert sorted(p.get_attribute("data-point") for p in points) == sorted(db.cfg.board.names)
        links = d.find_elements(By.CSS_SELECTOR, "#moves [data-move]")
        assert [a.get_attribute("data-move") for a in links] == [m["move"] for m in first["moves"]]
        assert [a.get_attribute("data-value") for a in links] == [m["value"] for m in first["moves"]]
        assert "win in 21" in d.find_element(By.CSS_SELECTOR, ".value").text

        # click the best move: the next position is shown, and the URL follows
        best = first["moves"][0]
        links[0].click()
        wait_position(d, best["position"])
        assert url_position(d) == best["position"]
        d.find_element(By.CSS_SELECTOR, "svg [data-last-move='%s']" % best["move"])

        # play a move by its point and a rotation: the second best, to make it a choice
        second = database_answer(db, Position(best["position"]))
        move = next(m for m in second["moves"][1:] if "+" in m["move"])
        point = move["move"].split("+")[0]
        d.find_element(By.CSS_SELECTOR, f"svg [data-point='{point}']").click()
        choice = wait_for(d, lambda dr: dr.find_elements(By.CSS_SELECTOR, f"[data-choose='{move['move']}']"))
        assert len(d.find_elements(By.CSS_SELECTOR, "[data-choose]")) == 6  # +0 .. +5 at that point
        choice[0].click()
        wait_position(d, move["position"])
        assert url_position(d) == move["position"]

        # back and forward walk the positions played
        d.back()
        wait_position(d, best["position"])
        d.back()
        wait_position(d, W4)
        d.forward()
        wait_position(d, best["position"])

        # the perfect reply: on, a move is answered by the database's best reply
        d.find_element(By.CSS_SELECTOR, "button[data-action=reply]").click()
        assert d.find_element(By.CSS_SELECTOR, "button[data-action=reply]").get_attribute("aria-pressed") == "true"
        mine = second["moves"][0]
        d.find_element(By.CSS_SELECTOR, f"#moves [data-move='{mine['move']}']").click()
        reply = database_answer(db, Position(mine["position"]))["moves"][0]
        wait_position(d, reply["position"])  # mine was shown, then answered
        d.find_element(By.CSS_SELECTOR, "button[data-action=reply]").click()  # off again

    # a position no database answers: the engine's estimates first, and a proof colours them
    d.get(url + "?" + urlencode({"p": UNSOLVED}))
    wait_position(d, UNSOLVED)
    wait_for(d, lambda dr: source_is(dr, "engine"), 120)
    values = {a.get_attribute("data-value") for a in d.find_elements(By.CSS_SELECTOR, "#moves [data-move]")}
    assert values <= {"unknown", "win", "loss"}
    d.find_element(By.CSS_SELECTOR, "button[data-action=prove]").click()
    wait_for(d, lambda dr: source_is(dr, "proof"), 180)
    values = [a.get_attribute("data-value") for a in d.find_elements(By.CSS_SELECTOR, "#moves [data-move]")]
    assert len(values) == len(moves(make_config(3), Position(UNSOLVED))) and set(values) - {"unknown"}, values

    # the standard start, which nothing but the engine answers: a score, a line, every move scored
    start = STANDARD_START_TEXT
    d.get(url + "?" + urlencode({"p": start}))
    wait_position(d, start)
    wait_for(d, lambda dr: source_is(dr, "engine"), 120)
    assert re.fullmatch(r"[+-]\d+\.\d\d|(win|loss) in ≤?\d+", d.find_element(By.CSS_SELECTOR, ".value .score").text)
    line = d.find_element(By.CSS_SELECTOR, "#line").text.split()
    cfg4 = standard_config()
    assert line and parse_move(cfg4, standard_start(), line[0])
    badges = [b.text for b in d.find_elements(By.CSS_SELECTOR, "#moves [data-move] .badge")]
    assert len(badges) == len(moves(cfg4, standard_start()))
    assert all(re.fullmatch(r"[+-]\d+\.\d\d|(win|loss) in ≤?\d+", b) for b in badges), badges

    shot = os.environ.get("ROTARY_SCREENSHOT")
    if shot:  # scripts/screenshot.py makes the README's picture its own way; this is for a look at CI
        d.get(url + "?" + urlencode({"p": W4}))
        wait_position(d, W4)
        d.save_screenshot(shot)
    assert console_errors(d) == []


def test_the_setup_game_by_clicks(browser, tmp_path):
    """hex(2) 2v2 with setup=offer, every move played by clicking points — a placement is
    one click, an offer two, a pick one, a rotation a point and then a turn: four scripted
    placements that leave light two points to offer, then the database's best moves."""
    from selenium.webdriver.common.by import By

    from solver.retro.setup import solve_setup
    from solver.view.page import move_points

    cfg = make_config(2, 2, setup="offer")
    path = tmp_path / "hex2-2v2-setup-offer"
    solve_setup(cfg, path, progress=False)
    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    proc = subprocess.Popen([exe, "serve", "--db", str(path), "--port", "0", "-q"], stdout=subprocess.PIPE, text=True)
    d = browser
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline()).group(0)
        d.get(url)
        phases = set()
        with open_db(path) as db:
            text = shown_when_ready(d)
            assert text.endswith(" x place")
            script = ["a1", "b1", "a3", "c1", "offer b2 b3"]  # placements that leave light two points to offer
            for step in range(12):
                answer = database_answer(db, Position(text))
                if not answer["moves"]:
                    break
                move = answer["moves"][0]
                if step < len(script):
                    move = next(m for m in answer["moves"] if m["move"] == script[step])
                phases.add((text.split() + ["play"])[2])
                for point in move_points(cfg, move["move"]):
                    d.find_element(By.CSS_SELECTOR, f"svg [data-point='{point}']").click()
                if "+" in move["move"]:
                    choice = wait_for(d, lambda dr: dr.find_elements(By.CSS_SELECTOR, f"[data-choose='{move['move']}']"))
                    choice[0].click()
                wait_position(d, move["position"])
                text = move["position"]
        assert {"place", "offer", "pick", "at"} <= phases, phases
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert console_errors(d) == []


def shown_when_ready(driver) -> str:
    wait_for(driver, lambda d: d.find_elements("css selector", "[data-position]"))
    return shown(driver)


def live(driver, read):
    """``read(driver)``, asked again while the view is being replaced (stale elements)."""
    def attempt(d):
        try:
            return read(d) or False
        except Exception:  # the view is being replaced: ask again
            return False

    return wait_for(driver, attempt)


def test_the_proof_tree_by_clicks(browser):
    """``--tree data/proofs/standard-start.jsonl``: at the start e4+3 is the tree's move (in the
    list and on the board); played, every legal reply of dark is listed with light's answer;
    a reply clicked there shows light's answer marked in turn."""
    from selenium.webdriver.common.by import By

    cfg = standard_config()
    start = standard_start()
    after = apply(cfg, start, parse_move(cfg, start, "e4+3"))
    tree = Path(__file__).resolve().parents[2] / "data" / "proofs" / "standard-start.jsonl"
    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    proc = subprocess.Popen([exe, "serve", "--tree", str(tree), "--port", "0", "--engine-ms", "100", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    d = browser
    try:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found and "standard-start.jsonl" in line, (line, proc.stderr.read() if proc.poll() is not None else "")
        d.get(found.group(0))
        wait_position(d, start.text())
        wait_for(d, lambda dr: source_is(dr, "engine"), 120)  # the engine's reload is over before a click
        marked = live(d, lambda dr: [(a.get_attribute("data-move"), a.find_element(By.CSS_SELECTOR, ".tag.tree").text)
                                     for a in dr.find_elements(By.CSS_SELECTOR, "#moves a.tree")])
        assert marked == [("e4+3", "proof tree: wins in 11")]
        assert d.find_elements(By.CSS_SELECTOR, "svg [data-hint-move='e4+3']")
        d.find_element(By.CSS_SELECTOR, "#moves a.tree").click()
        wait_position(d, after.text())
        assert url_position(d) == after.text()
        wait_for(d, lambda dr: source_is(dr, "engine"), 120)

        replies = live(d, lambda dr: [(r.get_attribute("data-reply").split(), r.get_attribute("data-answer"), r.text)
                                      for r in dr.find_elements(By.CSS_SELECTOR, "#tree li[data-reply]")])
        legal = sorted(m.text(cfg.board) for m in moves(cfg, after))
        assert sorted(mv for group, _, _ in replies for mv in group) == legal
        for group, answer, text in replies:  # light's answer is legal after each reply
            there = apply(cfg, after, parse_move(cfg, after, group[0]))
            assert parse_move(cfg, there, answer) and re.search(r"wins in \d+$", text), (group, text)
        assert "every reply of dark (o) is answered" in d.find_element(By.CSS_SELECTOR, "#tree").text

        # follow the tree: the longest reply, clicked in the tree's list; light's answer is marked
        group, answer, text = max(replies, key=lambda r: int(r[2].rsplit(" ", 1)[1]))
        d.find_element(By.CSS_SELECTOR, f"#tree a[data-play='{group[0]}']").click()
        there = apply(cfg, after, parse_move(cfg, after, group[0]))
        wait_position(d, there.text())
        marked = live(d, lambda dr: [a.get_attribute("data-move") for a in dr.find_elements(By.CSS_SELECTOR, "#moves a.tree")])
        assert answer in marked
        errors = console_errors(d)  # read while the server runs: the page's requests after it stops fail
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert errors == []


def test_the_shipped_proofs_in_chromium(browser, shipped_store):
    """``rotary serve`` with no database and the shipped store on: the standard start shows
    light's win in 11 (source proof), e4+3 a win in 11, e4+5 a loss in 16 and each of the
    eight passes a loss in 12, each tagged ``proof``; the other eight moves are estimates."""
    from selenium.webdriver.common.by import By

    exe = Path(sys.executable).with_name("rotary")
    exe = str(exe) if exe.exists() else shutil.which("rotary")
    proc = subprocess.Popen([exe, "serve", "--port", "0", "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    d = browser
    try:
        line = proc.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, (line, proc.stderr.read() if proc.poll() is not None else "")
        d.get(found.group(0) + "?" + urlencode({"p": STANDARD_START_TEXT}))
        wait_position(d, STANDARD_START_TEXT)
        assert source_is(d, "proof")
        assert "win in 11" in d.find_element(By.CSS_SELECTOR, "p.value").text
        rows = live(d, lambda dr: {a.get_attribute("data-move"): (a.get_attribute("data-value"), a.get_attribute("data-plies"),
                                                                   a.find_element(By.CSS_SELECTOR, ".badge").text,
                                                                   a.get_attribute("data-source"))
                                   for a in dr.find_elements(By.CSS_SELECTOR, "#moves a[data-move]")})
        assert len(rows) == 18
        assert rows["e4+3"] == ("win", "11", "win in 11", "proof")
        assert rows["e4+5"] == ("loss", "16", "loss in 16", "proof")
        for mv in ["d3+0", "e4+0"] + [f"f3+{k}" for k in range(6)]:
            assert rows[mv] == ("loss", "12", "loss in 12", "proof"), (mv, rows[mv])
        estimates = d.find_elements(By.CSS_SELECTOR, "#moves .tag.estimate")
        assert len(estimates) == 8
        errors = console_errors(d)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert errors == []
