"""Fuzzed input: the command line and the Python API answer or refuse in one line.

Hypothesis builds command lines from a grammar of every command and option, with values
drawn from valid ones, near misses, huge numbers, unicode and control characters, and
positions mutated from valid texts (characters inserted, deleted, replaced, rows
swapped); ``query -`` reads fuzzed batches from standard input. Each runs in this
process through :func:`solver.cli.main.main` under an alarm (no hang), and must end with
exit status 0, or 2 and exactly one ``rotary: error:`` line on stderr — or 1 where the
command documents it (``verify`` FAIL, a batch ``query`` with a failing line) — and never
a traceback. The API: ``Position(text)`` parses or raises a :class:`RotaryError`;
``Database.probe`` answers or raises :class:`MissingValueError`; the SVG board draws any
position of any board.

CI runs 500 command lines and 300 API cases; ``-m slow`` runs 10,000 and 3,000.
"""

from __future__ import annotations

import io
import shutil
import signal
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.db import catalog
from solver.errors import MissingValueError, RotaryError
from solver.game.config import make_config

VALID = [
    ".oo./.o.o./ooooo./.o...x./.oo..xx./o.x.x.x/xxxxxx/..x.. x",  # the standard start (hex4)
    ".../..o./...../.xx.../..o../.... x",  # hex3 2v2
    ".../...o/x...o/....x./...../.... o",
    ".o/..x/o.x./... x",  # hex2
    ".../..../...../....../...../.... x place",  # the empty setup board
    ".../..../...../.o..../...../.o.. x",  # finished
    "..o/..../...../.xx.../..x../..oo x",  # hex3 3v3
]
ODD = ["", " ", "\x00", "\n", "\t", "é", "ＨＥＸ３", "𝔵", "\u202e", "\x1b[31m", "-", "--", "-1", "0", "1e9", "nan",
       "99999999999999999999999999", "-99999999999999999999", "2v", "v2", "3v2", "x", "place", "offer", "at a1", "pick a1 b2"]
TIMEOUT = 30  # seconds an example may take


def chars():
    return st.one_of(st.sampled_from(list("xo.*/ 0123456789abcdefghv+-,\n\t\x00é")), st.characters())


@st.composite
def positions(draw) -> str:
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2, 4]))):  # half of them valid
        if not text:
            text = draw(st.text(max_size=4))
            continue
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "rows", "dup", "case"]))
        if op == "insert":
            text = text[:i] + draw(chars()) + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1 :]
        elif op == "replace":
            text = text[:i] + draw(chars()) + text[i + 1 :]
        elif op == "rows":
            rows = text.split("/")
            a, b = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(rows) - 1))
            rows[a], rows[b] = rows[b], rows[a]
            text = "/".join(rows)
        elif op == "dup":
            text = text[:i] + text[i : i + draw(st.integers(1, 8))] * 2 + text[i + 8 :]
        else:
            text = text.swapcase()
    return text


def values(*valid: str):
    """Mostly a valid value, else a near miss, any text or a huge number."""
    good = st.sampled_from(list(valid) or ["1"])
    return st.one_of(good, good, good, good, st.sampled_from(ODD), st.text(max_size=10), st.integers(-(10**30), 10**30).map(str))


def small_ints(lo: int, hi: int):
    """A count that may be odd but never asks for hours of work."""
    good = st.integers(max(lo, 1), hi).map(str)
    return st.one_of(good, good, good, st.integers(lo, hi).map(str), st.sampled_from(ODD[:14] + ["-5", "0", "1.5", "ten"]))


@st.composite
def rule_options(draw) -> list[str]:
    out: list[str] = []
    if draw(st.booleans()):
        return out  # half the command lines give no rule options
    if draw(st.booleans()):
        out += ["--board", draw(values("hex2", "hex3", "hex4", "hex5", "hex6", "HEX3"))]
    if draw(st.booleans()):
        out += ["--balls", draw(values("2", "3", "4", "3v2", "2v3"))]
    for flag in ("--edge", "--capture"):
        if draw(st.integers(0, 3)) == 0:
            out.append(flag)
    if draw(st.integers(0, 5)) == 0:
        out += ["--traps-x", draw(values("a2,c1,f2,g3", "a1", "zz9", "a1,a1"))]
    if draw(st.integers(0, 5)) == 0:
        out += ["--traps-o", draw(values("a3,a6,b8,c8", "b1"))]
    if draw(st.integers(0, 5)) == 0:
        out += ["--setup", draw(values("offer", "last"))]
    return out


@st.composite
def command_lines(draw, db: str, tmp: str) -> tuple[list[str], str | None]:
    """``(argv, stdin)``: one fuzzed ``rotary`` command line."""
    cmd = draw(st.sampled_from(["moves", "show", "start", "query", "query-", "stats", "verify", "prove", "play",
                                "book", "solve", "junk"]))
    rules = draw(rule_options())
    stdin = None
    dbopt = draw(st.sampled_from([[], [], ["--db", db], ["--db", db], ["--db", tmp + "/nothing"], ["--db", tmp], ["--db", "\x00"]]))
    if cmd == "moves":
        argv = ["moves", draw(positions()), *draw(st.sampled_from([[], ["--json"]])), *rules]
    elif cmd == "show":
        extra = draw(st.sampled_from([[], ["--no-colour"], ["--svg", tmp + "/b.svg"], ["--svg", tmp + "/no/such/b.svg"]]))
        if draw(st.booleans()):
            extra += ["--size", draw(small_ints(-10, 4000))]
        argv = ["show", draw(positions()), *extra, *rules]
    elif cmd == "start":
        argv = ["start", *draw(st.sampled_from([[], ["--draw"]])), *(["--board", draw(values("hex4", "hex3"))] if draw(st.booleans()) else [])]
    elif cmd in ("query", "query-"):
        extra = []
        if draw(st.booleans()):
            extra += ["--line", draw(st.one_of(small_ints(-3, 60), st.sampled_from(["99999999999", "10" * 15])))]
        if draw(st.integers(0, 4)) == 0:
            extra += ["--prove", draw(small_ints(-2, 300))]
        if draw(st.booleans()):
            extra.append("--json")
        if cmd == "query-":
            lines = draw(st.lists(st.one_of(positions(), st.text(max_size=20)), max_size=5))
            stdin = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n", "\x00"]))
            argv = ["query", "-", *dbopt, *extra, *rules]
        else:
            argv = ["query", *draw(st.lists(positions(), min_size=1, max_size=3)), *dbopt, *extra, *rules]
    elif cmd == "stats":
        argv = ["stats", *dbopt, *draw(st.sampled_from([[], ["--json"]])), *rules]
    elif cmd == "verify":
        extra = ["--sample", draw(small_ints(-3, 500))] if draw(st.booleans()) else []
        if draw(st.booleans()):
            extra += ["--seed", draw(values("0", "7"))]
        if draw(st.booleans()):
            extra += ["--tier", draw(values("x2v2", "x2v2,x2v2", "x2v3+x3v2", "x1v1,x9v9", ","))]
        if draw(st.booleans()):
            extra += ["--positions", draw(values("0:10", "100:", ":5", "5:5", "9:3", "-1:4", "0:99999999", "1,000:"))]
        argv = ["verify", *dbopt, "-q", *extra, *rules]
    elif cmd == "prove":
        argv = ["prove", draw(positions()), "--no-store", "--nodes", draw(small_ints(-2, 3000)),
                "--tt-bits", draw(st.one_of(st.integers(8, 14).map(str), st.integers(8, 14).map(str), st.integers(5, 40).map(str), st.sampled_from(ODD))),
                *draw(st.sampled_from([[], ["--json"], ["-q"]])), *(dbopt if draw(st.booleans()) else []), *rules]
    elif cmd == "play":
        x = draw(st.sampled_from(["random", "random", "greedy", "greedy", "human", "perfect", "robot"]))
        o = draw(st.sampled_from(["random", "greedy", "perfect"]))
        argv = ["play", "--x", x, "--o", o, "--seed", draw(values("1", "2")), "--max-plies", draw(small_ints(-2, 120)), *rules]
        if draw(st.booleans()):
            argv += ["--position", draw(positions())]
        stdin = draw(st.one_of(st.just(""), st.text(max_size=30), st.lists(st.sampled_from(["a1+1", "d4", "hint", "values", "quit", "?", "", "\x04"]), max_size=6).map("\n".join)))
    elif cmd == "book":
        argv = ["book", "--start", draw(positions()), "--depth", draw(st.sampled_from(["0", "1", "-1", "x", "", "1.5"])),
                "--nodes", draw(small_ints(-2, 300)), "--store", tmp + "/store", "--no-tree", "-q", *dbopt[:0]]
    elif cmd == "solve":
        argv = ["solve", "--board", draw(st.sampled_from(["hex2"] * 6 + ["hex1", "hex0", "x", "", "hex2 "])),
                "--balls", draw(st.one_of(st.integers(1, 5).map(str), st.integers(1, 5).map(str), st.integers(-2, 5).map(str),
                                          st.sampled_from(ODD), st.sampled_from(["1v2", "3v1", "5v5"]))),
                "--db", tmp + "/solved", "-q", "-j", draw(st.sampled_from(["1"] * 6 + ["0", "-1", "x"])),
                *[f for f in rules if f in ("--edge",)]]
    else:
        argv = [draw(values("quer", "help", "-h", "--version", "solv")), *draw(st.lists(values("--json", "-q"), max_size=3))]
    return argv, stdin


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {TIMEOUT} s")


def run_cli(argv: list[str], stdin: str | None) -> tuple[object, str, str]:
    from solver.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main(argv)
    except SystemExit as e:  # --help, --version
        rc = e.code or 0
    except BaseException:  # noqa: BLE001 - a bug: reported by the test
        return "traceback", out.getvalue(), traceback.format_exc()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.stdin = old_stdin
    return rc, out.getvalue(), err.getvalue()


def check(argv: list[str], stdin: str | None) -> None:
    rc, out, err = run_cli(argv, stdin)
    where = f"rotary {argv!r} (stdin {stdin!r})"
    assert rc != "traceback", f"{where}:\n{err}"
    assert "Traceback" not in err, f"{where}:\n{err}"
    if rc == 0:
        return
    if rc == 1:
        batch = argv[0] == "query" and (argv[1] == "-" or sum(1 for a in argv[1:] if not a.startswith("--")) > 1)
        ended = argv[0] == "play" and "the input ended" in out  # a game whose player's input ran out
        assert (argv[0] == "verify" and out.startswith("FAIL")) or batch or ended, f"{where}: exit 1\n{out}\n{err}"
        return
    assert rc == 2, f"{where}: exit status {rc}\n{err}"
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("rotary: error: ") and lines[0].strip() != "rotary: error:", f"{where}: {err!r}"


@pytest.fixture(scope="module")
def fuzz_root(solved_db, tmp_path_factory):
    """A database folder holding hex3 2v2 under its catalog name, and a scratch folder."""
    cfg = make_config(3, 2)
    root = tmp_path_factory.mktemp("fuzzdb")
    db = root / catalog.db_name(cfg, (2, 2))
    shutil.copytree(solved_db(cfg, (2, 2)), db)
    tmp = tmp_path_factory.mktemp("fuzztmp")
    _warm_up(db, tmp)
    return root, db, tmp


def _warm_up(db: Path, tmp: Path) -> None:
    """Compile the kernels each command family uses before any example runs under the
    alarm: in a fresh environment (CI) numba compiles them at first use, which on a busy
    2-core machine takes longer than an example may."""
    from solver.cli.main import main
    from solver.game.start import standard_start

    start = standard_start().text()
    for argv in (["prove", start, "--no-store", "--nodes", "50", "-q"],
                 ["book", "--start", start, "--depth", "0", "--nodes", "1", "--store", str(tmp / "warm"), "--no-tree", "-q"],
                 ["play", "--x", "random", "--o", "greedy", "--seed", "1", "--max-plies", "4"],
                 ["verify", "--db", str(db), "-q"],
                 ["solve", "--board", "hex2", "--balls", "2", "--db", str(tmp / "warm-db"), "-q"]):
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            main(argv)
    shutil.rmtree(tmp / "warm", ignore_errors=True)
    shutil.rmtree(tmp / "warm-db", ignore_errors=True)


def _fuzz_cli(fuzz_root, monkeypatch, examples: int) -> None:
    root, db, tmp = fuzz_root
    monkeypatch.setenv(catalog.DB_ENV, str(root))
    monkeypatch.setenv(catalog.PROOFS_ENV, str(tmp / "proofs"))

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(command_lines(str(db), str(tmp)))
    def fuzz(case):
        check(*case)

    fuzz()


def test_fuzz_command_line(fuzz_root, monkeypatch):
    _fuzz_cli(fuzz_root, monkeypatch, 500)


@pytest.mark.slow
def test_fuzz_command_line_10000(fuzz_root, monkeypatch):
    _fuzz_cli(fuzz_root, monkeypatch, 10_000)


# ---------------------------------------------------------------------------- the Python API


def _fuzz_api(fuzz_root, examples: int) -> None:
    from solver.db.database import open_db
    from solver.game.position import Position
    from solver.view.svg import board

    _, path, _ = fuzz_root
    with open_db(path) as db:

        @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(st.one_of(positions(), st.text(max_size=40)), st.sampled_from([None, 0, 1, 48, 480]))
        def fuzz(text, size):
            try:
                pos = Position(text)
            except RotaryError:
                return
            assert repr(pos).startswith("Position(")
            assert Position(pos.text()) == pos  # what it prints parses back to itself
            try:
                v = db.probe(pos)
            except MissingValueError:
                pass
            else:
                assert v.result in ("win", "loss", "draw"), v
                assert db.get(pos) == v
            svg = board(pos, size=size)
            assert svg.startswith("<svg") or svg.startswith("<?xml"), svg[:80]

        fuzz()


def test_fuzz_api(fuzz_root):
    _fuzz_api(fuzz_root, 300)


@pytest.mark.slow
def test_fuzz_api_3000(fuzz_root):
    _fuzz_api(fuzz_root, 3000)
