"""Readers during a write: what a solve has finished is served, what it has not is "not
solved yet" — never half a group, never a wrong value, never a damaged-looking file.

A real ``rotary solve`` (hex(3) 3v3 edge: 16 tiers in 10 groups) writes a database while
this process, in a loop until the solve ends, opens it as a :class:`Database` (probing
positions of every tier, loading finished tiers) and asks ``rotary query`` about it. Each
read must equal the database solved beforehand, or raise :class:`MissingValueError` /
:class:`StoreError` saying the tier is not solved yet (or that there is no database yet).
"""

from __future__ import annotations

import io
import subprocess
import time
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest

from solver.db.database import Database, open_db
from solver.errors import MissingValueError, StoreError
from solver.game.config import make_config
from solver.game.position import Position
from tests.helpers import rotary_exe

ARGS = ["--board", "hex3", "--balls", "3", "--edge"]


def samples(path, per_tier: int = 4) -> list[tuple[str, str, object]]:
    """``(tier key, position text, value)`` for a few positions of every tier."""
    out = []
    with open_db(path) as db:
        rng = np.random.default_rng(3)
        for t in db.layout.tiers:
            for i in rng.integers(t.base, t.base + t.size, min(per_tier, t.size)):
                m, p, s = db.layout.position(int(i))
                x, o = (m, p) if s == 0 else (p, m)
                pos = Position.make(db.cfg.board, x, o, s)
                out.append((t.key, pos.text(), db.probe(pos)))
    return out


def _answer(text: str) -> dict:
    import json

    answer = json.loads(text)
    answer.pop("source", None)
    return answer


def _plain(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k != "source"}


def viewer(path):
    """``rotary serve --db PATH`` as a Flask test client, and its sources (close them)."""
    from solver.cli.main import build_parser
    from solver.cli.serve import build_viewer

    app, sources = build_viewer(build_parser()[0].parse_args(["serve", "--db", str(path)]))
    return app.test_client(), sources


def query(*argv) -> tuple[int, str, str]:
    from solver.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def test_readers_during_a_solve(tmp_path, solved_db):
    ref_path = solved_db(make_config(3, 3, edge=True), (3, 3))
    cases = samples(ref_path)
    with open_db(ref_path) as ref:
        ref_tiers = {t.key: ref.store.read_tier(i, t.size).copy() for i, t in enumerate(ref.layout.tiers)}
    want_query = {text: query("query", "--db", ref_path, "--json", text) for _, text, _ in cases[::9]}

    ref_client, ref_sources = viewer(ref_path)
    want_served = {text: ref_client.get("/api/position", query_string={"p": text}).get_json() for _, text, _ in cases[::9]}
    ref_sources.close()
    client = sources = None

    path = tmp_path / "db"
    proc = subprocess.Popen([rotary_exe(), "solve", *ARGS, "--db", str(path), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen_states, reads, waits, served_waits = set(), 0, 0, 0
    try:
        while True:
            running = proc.poll() is None
            try:
                db = Database(path)
            except StoreError as e:  # before the solve has written its header: no database yet
                assert not seen_states, f"a database that was readable became unreadable: {e}"
                if not running:
                    break
                time.sleep(0.01)
                continue
            with db:
                finished = set(db.tier_meta)
                seen_states.add(len(finished))
                for key, text, value in cases:
                    try:
                        got = db.probe(Position(text))
                    except MissingValueError as e:
                        assert key not in finished and "not solved yet" in str(e), (key, str(e))
                        waits += 1
                    else:
                        assert got == value, (text, got, value)
                        reads += 1
                for i, t in enumerate(db.layout.tiers):
                    if t.key in finished:  # a finished tier reads whole, equal to the reference
                        assert np.array_equal(db.store.read_tier(i, t.size), ref_tiers[t.key]), t.key
            if client is None:  # rotary serve over the database, opened once while it grows
                client, sources = viewer(path)
            for text, want in want_served.items():
                r = client.get("/api/position", query_string={"p": text})
                if r.status_code == 200:
                    assert _plain(r.get_json()) == _plain(want), text
                else:
                    assert r.status_code == 400 and "not solved yet" in r.get_json()["error"], (r.status_code, r.get_data())
                    served_waits += 1
            for text, want in list(want_query.items())[: 3]:
                rc, out, err = query("query", "--db", path, "--json", text)
                if rc == 0:  # the same answer (a finished game may come from the rules before its tier is in)
                    assert _answer(out) == _answer(want[1]), text
                else:
                    assert rc == 2 and "not solved yet" in err and len(err.strip().splitlines()) == 1, err
            if not running:
                break
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        # the solve is over: the server that watched it grow answers every position now
        for text, want in want_served.items():
            r = client.get("/api/position", query_string={"p": text})
            assert r.status_code == 200 and _plain(r.get_json()) == _plain(want), (text, r.get_data())
    finally:
        if sources is not None:
            sources.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    print(f"{len(seen_states)} states seen ({sorted(seen_states)} tiers finished), {reads} values read, {waits} not yet,"
          f" {served_waits} served 'not solved yet'")
    assert len(seen_states) >= 3, seen_states  # the loop saw the database grow
    assert waits > 0 and reads > 0
    assert max(seen_states) == len(ref_tiers)


@pytest.mark.parametrize("jobs", ["1"])
def test_query_waits_for_nothing(jobs, tmp_path):
    """A query of a folder a solve has only just created says there is no database yet."""
    (tmp_path / "db").mkdir()
    rc, out, err = query("query", "--db", tmp_path / "db", ".../..o./...../.xx.../..o../.... x")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "no database" in err, err
