"""Flipped bytes: every command answers right or stops with one line naming the damage.

A small database (hex(3) 2v2, 17,652 positions, 53 kB) and a small proof store (an opening
book of depth 1 with its df-pn table) are copied per case and bytes flipped at random
offsets of the copy's ``data.mdb`` (LMDB's meta, branch and leaf pages, value blocks, the
overflow pages that hold them; fixed seeds). Then, in a forked child (so that a crash
would be seen as one, not take the test run with it):

* value database — every value loaded (``Database.values``), ``query`` on sampled
  positions (the value and every move's), ``verify``, ``stats``;
* proof store — ``query`` of the book's root and a child, ``prove`` of the root.

Each must print what the intact copy prints (exit 0), or fail with exit status 2 (``verify``:
1 and a ``FAIL`` line) and one line on stderr naming the damaged database or store —
never a different value, never a traceback, never a signal. CI runs 50 cases;
``-m slow`` runs 500 on the database and 200 on the proof store.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from solver.game.config import make_config
from solver.game.position import Position

ROOT = ".../..o./...../.xx.../..o../.... x"  # the proof store's book root (hex3 2v2, a win in 11)
BOOK = ["--depth", "1", "--nodes", "30000"]


def cli(*argv) -> tuple[int, str, str]:
    """``rotary *argv`` in this process; an exception that escapes ``main`` is reported
    as exit status ``'traceback'`` with the traceback as stderr."""
    from solver.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main([str(a) for a in argv])
    except SystemExit as e:  # argparse --help and the like
        rc = e.code
    except BaseException:  # noqa: BLE001 - a bug: reported, not raised
        return "traceback", out.getvalue(), traceback.format_exc()  # type: ignore[return-value]
    return rc, out.getvalue(), err.getvalue()


def flip(folder: Path, seed: int, count: int) -> list[int]:
    """XOR ``count`` random bytes of ``folder/data.mdb`` with random non-zero values."""
    rng = random.Random(seed)
    file = folder / "data.mdb"
    data = bytearray(file.read_bytes())
    offsets = [rng.randrange(len(data)) for _ in range(count)]
    for off in offsets:
        data[off] ^= rng.randrange(1, 256)
    file.write_bytes(bytes(data))
    return offsets


def in_child(fn, *args) -> object:
    """``fn(*args)`` in a forked child; its JSON result, or ``{"signal": n}`` if it died."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            result = fn(*args)
        except BaseException:  # noqa: BLE001
            result = {"harness": traceback.format_exc()}
        with os.fdopen(w, "w") as f:
            json.dump(result, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return json.loads(text)


# ---------------------------------------------------------------------------- the value database


def db_commands(path: Path, positions: list[str]) -> list[list[str]]:
    cmds = [["query", "--db", path, "--json", p] for p in positions]
    return cmds + [["verify", "--db", path, "-q"], ["stats", "--db", path, "--json"]]


def db_answers(path: Path, positions: list[str]) -> dict:
    """What every command prints for the database at ``path``, and its loaded values."""
    from solver.db.database import Database
    from solver.errors import RotaryError

    out: dict = {"commands": [list(map(str, c)) + list(cli(*c)) for c in db_commands(path, positions)]}
    try:
        with Database(path) as db:
            out["values"] = int(np.frombuffer(db.values().tobytes(), dtype=np.uint64).sum() % (1 << 61))
    except RotaryError as e:
        out["values"] = f"error: {e}"
    except BaseException:  # noqa: BLE001
        out["values"] = "traceback: " + traceback.format_exc()
    return out


def judge(intact: dict, damaged: dict, name: str) -> list[str]:
    """What is wrong in ``damaged``: a crash, a traceback, a different answer, an error
    that is not one line naming ``name``."""
    if "signal" in damaged or "harness" in damaged:
        return [f"crashed: {damaged}"]
    bad = []
    for want, got in zip(intact["commands"], damaged["commands"]):
        cmd, (rc, out, err) = got[:-3], got[-3:]
        if rc == "traceback" or "Traceback" in err:
            bad.append(f"{cmd}: traceback {err[-800:]}")
        elif rc == 0:
            if out != want[-2]:
                bad.append(f"{cmd}: a different answer: {out[:300]!r} instead of {want[-2][:300]!r}")
        elif cmd[0] == "verify" and rc == 1:
            if not out.startswith("FAIL") or err:
                bad.append(f"{cmd}: exit 1 without a FAIL line: {out!r} {err!r}")
        elif rc == 2:
            lines = err.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith("rotary: error: ") or name not in lines[0]:
                bad.append(f"{cmd}: not one line naming {name}: {err!r}")
        else:
            bad.append(f"{cmd}: exit status {rc}: {err!r}")
    values = damaged.get("values")
    if isinstance(values, str) and values.startswith("error: "):
        if name not in values:
            bad.append(f"Database.values: error not naming {name}: {values}")
    elif values != intact["values"]:
        bad.append(f"Database.values: {values!r} instead of the intact checksum")
    return bad


@pytest.fixture(scope="module")
def value_db(solved_db):
    return solved_db(make_config(3, 2), (2, 2))


@pytest.fixture(scope="module")
def sample_positions(value_db) -> list[str]:
    from solver.db.database import open_db

    with open_db(value_db) as db:
        layout = db.layout
        rng = np.random.default_rng(14)
        out = []
        for i in rng.integers(0, layout.total, 12):
            m, p, s = layout.position(int(i))
            x, o = (m, p) if s == 0 else (p, m)
            out.append(Position.make(db.cfg.board, x, o, s).text())
        return out


def corrupt_db_cases(value_db, positions, tmp_path, cases: range, flips=(1, 3, 12)) -> list[str]:
    """Run the cases; every problem found, one string each."""
    case = tmp_path / "case"
    shutil.copytree(value_db, case)
    intact = db_answers(case, positions)  # here: the children inherit the compiled kernels
    for want in intact["commands"]:
        assert want[-3] == 0, want  # the intact database answers everything
    problems, outcomes = [], {"same": 0, "refused": 0}
    for seed in cases:
        shutil.rmtree(case)
        shutil.copytree(value_db, case)
        n = flips[seed % len(flips)]
        offsets = flip(case, seed, n)
        got = in_child(db_answers, case, positions)
        bad = judge(intact, got, str(case))
        problems += [f"seed {seed} ({n} bytes at {offsets}): {b}" for b in bad]
        outcomes["same" if got.get("commands") == intact["commands"] else "refused"] += 1
    print(f"value database, {len(cases)} cases: {outcomes}")  # shown with -s
    return problems


def test_flipped_bytes_in_a_database(value_db, sample_positions, tmp_path):
    problems = corrupt_db_cases(value_db, sample_positions[:6], tmp_path, range(40))
    assert not problems, "\n".join(problems[:10])


@pytest.mark.slow
def test_flipped_bytes_in_a_database_500(value_db, sample_positions, tmp_path):
    problems = corrupt_db_cases(value_db, sample_positions, tmp_path, range(1000, 1500))
    assert not problems, "\n".join(problems[:10])


# ---------------------------------------------------------------------------- the proof store


@pytest.fixture(scope="module")
def proof_store(tmp_path_factory) -> Path:
    store = tmp_path_factory.mktemp("proofs") / "store"
    rc, out, err = cli("book", "--start", ROOT, *BOOK, "--store", store, "--no-tree", "-q")
    assert rc == 0, err
    rc, out, err = cli("prove", ROOT, "--store", store, "--nodes", 30000, "--json")
    assert rc == 0, err
    return store


def store_answers(store: Path) -> dict:
    child = json.loads(cli("query", "--store", store, "--json", ROOT)[1] or "{}").get("moves", [{}])[0].get("position", ROOT)
    cmds = [
        ["query", "--store", store, "--json", ROOT],
        ["query", "--store", store, "--json", child],
        ["prove", ROOT, "--store", store, "--nodes", 30000, "--tt-bits", 16, "--json"],
    ]
    out = []
    for c in cmds:
        rc, o, e = cli(*c)
        if c[0] == "prove" and rc == 0:  # nodes and seconds differ from run to run
            a = json.loads(o)
            o = json.dumps({k: a.get(k) for k in ("value", "plies", "exact", "best_move")})
        out.append(list(map(str, c)) + [rc, o, e])
    return {"commands": out, "values": 0}


def corrupt_store_cases(proof_store, tmp_path, cases: range, flips=(1, 3, 12)) -> list[str]:
    case = tmp_path / "store"
    shutil.copytree(proof_store, case)
    intact = store_answers(case)  # here: the children inherit the compiled kernels
    for want in intact["commands"]:
        assert want[-3] == 0, want
    problems, outcomes = [], {"same": 0, "refused": 0}
    for seed in cases:
        shutil.rmtree(case)
        shutil.copytree(proof_store, case)
        n = flips[seed % len(flips)]
        offsets = flip(case, seed, n)
        got = in_child(store_answers, case)
        bad = judge(intact, got, str(case))
        problems += [f"seed {seed} ({n} bytes at {offsets}): {b}" for b in bad]
        outcomes["same" if got.get("commands") == intact["commands"] else "refused"] += 1
    print(f"proof store, {len(cases)} cases: {outcomes}")
    return problems


def test_flipped_bytes_in_a_proof_store(proof_store, tmp_path):
    problems = corrupt_store_cases(proof_store, tmp_path, range(10))
    assert not problems, "\n".join(problems[:10])


@pytest.mark.slow
def test_flipped_bytes_in_a_proof_store_200(proof_store, tmp_path):
    problems = corrupt_store_cases(proof_store, tmp_path, range(2000, 2200))
    assert not problems, "\n".join(problems[:10])
