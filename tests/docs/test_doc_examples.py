"""The Python the documentation shows runs: every ```python block of README.md and
docs/*.md, and every ``>>>`` example in the package's docstrings.

A block with ``>>>`` prompts runs as a doctest (its printed output compared; ``...`` may
stand for part of a line); another block is executed and must not raise. Each runs in an
empty folder of its own where ``rotary-db/NAME`` holds the database of every
``rotary-db/NAME`` the block names (``ROTARY_DB`` points there too), solved by the tests:
small ones (hex(3) 2v2, hex(2) anything) at once; hex(3) 4v4 in the ``hex3-4v4`` group of
tests, which solves it once per run for all of them; anything larger only with
``-m slow``. Python that is not meant to run belongs in a ```text block.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import math
import pkgutil
import re
from pathlib import Path

import pytest

import solver
from solver.errors import ChecksumsError
from solver.game.board import hex_board
from solver.game.config import make_config
from tests.docs.mdtext import ROOT, doc_files, rel, split_blocks

NAME = re.compile(r"^hex(?P<n>[2-5])-(?P<a>\d+)v(?P<b>\d+)(?P<edge>-edge)?(?P<capture>-capture)?(?:-setup-(?P<setup>offer|last))?$")
SMALL = 10_000_000  # positions before symmetry: a few seconds' solve at most
SHARED = {"hex3-4v4": "hex3-4v4"}  # databases other tests solve once per run in this xdist group


def databases_named(text: str) -> list[str]:
    return sorted(set(re.findall(r"rotary-db/([\w-]+)", text)))


def rules_of(name: str):
    """``hex3-3v3-edge`` -> (config, material); None for a name these tests cannot build."""
    m = NAME.match(name)
    if m is None:
        return None
    a, b = int(m["a"]), int(m["b"])
    cfg = make_config(f"hex{m['n']}", max(a, b), edge=bool(m["edge"]), capture=bool(m["capture"]), setup=m["setup"])
    return cfg, (a, b)


def raw_size(name: str) -> float:
    """Positions before symmetry, over every tier the database holds (an upper bound)."""
    m = NAME.match(name)
    if m is None:
        return math.inf
    points, a, b = hex_board(int(m["n"])).size, int(m["a"]), int(m["b"])
    tiers = [(i, j) for i in range(a + 1) for j in range(b + 1)] if (m["edge"] or m["capture"]) else [(a, b)]
    return sum(math.comb(points, i) * math.comb(points - i, j) for i, j in tiers)


def _marks(names: list[str]) -> list:
    marks = []
    for name in names:
        if raw_size(name) <= SMALL:
            continue
        if name in SHARED:
            marks.append(pytest.mark.xdist_group(SHARED[name]))
        else:
            marks.append(pytest.mark.slow)
    return marks


def python_blocks() -> list:
    params = []
    for page in doc_files():
        blocks, _ = split_blocks(page.read_text())
        for b in blocks:
            if b.info in ("python", "py", "pycon", "python3"):
                params.append(pytest.param(page, b, id=f"{rel(page)}:{b.line}", marks=_marks(databases_named(b.text))))
    return params


@pytest.fixture
def db_folder(tmp_path, monkeypatch, solved_db):
    """``provide(names)``: this test's folder, the current one, with rotary-db/NAME for each name."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "rotary-db"
    root.mkdir()
    monkeypatch.setenv("ROTARY_DB", str(root))

    def provide(names: list[str]) -> None:
        for name in names:
            rules = rules_of(name)
            assert rules is not None, f"rotary-db/{name}: not a database name these tests can build"
            cfg, material = rules
            if cfg.setup:
                from solver.retro.setup import solve_setup

                solve_setup(cfg, root / name, progress=False, executor="thread")
            else:
                (root / name).symlink_to(solved_db(cfg, material), target_is_directory=True)

    return provide


def run_doctest(text: str, name: str, globs: dict) -> tuple[int, int, str]:
    """(examples, failures, report) of ``text`` run as a doctest."""
    test = doctest.DocTestParser().get_doctest(text, globs, name, name, 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=report.append)
    return runner.tries, runner.failures, "".join(report)


@pytest.mark.parametrize("page, block", python_blocks())
def test_python_examples_in_the_docs_run(page, block, db_folder):
    db_folder(databases_named(block.text))
    where = f"{rel(page)}, the block at line {block.line}"
    if ">>>" in block.text:
        tries, failures, report = run_doctest(block.text, where, {"__name__": "__main__"})
        assert tries and not failures, f"{where} does not print what it shows:\n{report}"
    else:
        exec(compile(block.text, where, "exec"), {"__name__": "__main__"})


def docstring_modules() -> list[str]:
    """The package's modules whose source has a ``>>>`` example."""
    names = ["solver"]
    for info in pkgutil.walk_packages(solver.__path__, "solver."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and spec.origin.endswith(".py") and ">>>" in Path(spec.origin).read_text():
            names.append(info.name)
    return names


@pytest.mark.parametrize("module", docstring_modules())
def test_docstring_examples_run(module, db_folder):
    db_folder(["hex3-2v2"])  # the database the docstrings' examples read
    mod = importlib.import_module(module)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    for test in finder.find(mod, module):
        runner.run(test, out=report.append)
    assert runner.tries, f"{module}: no example found"
    assert not runner.failures, "".join(report)


# ---------------------------------------------------------------------------- the checks themselves


def test_a_wrong_output_or_a_renamed_name_fails(db_folder):
    db_folder(["hex3-2v2"])
    good = '>>> from solver import open_db, Position\n>>> with open_db("rotary-db/hex3-2v2") as db:\n' \
           '...     print(db.probe(Position("..o/..../...../....../.x.../.ox. x")))\nwin in 7\n'
    assert run_doctest(good, "good", {})[:2] == (2, 0)
    assert run_doctest(good.replace("win in 7", "win in 9"), "wrong", {})[1] == 1
    assert run_doctest(good.replace("open_db,", "open_database,"), "renamed", {})[1] >= 1
    with pytest.raises(ChecksumsError):  # an exec'd block raises as the code does
        exec(compile("from solver.db.checksums import parse_checksums\nparse_checksums('x', 'y')", "b", "exec"), {})


def test_database_names_and_sizes():
    assert rules_of("hex3-2v2")[1] == (2, 2) and rules_of("hex2-3v3-edge")[0].edge
    assert rules_of("hex3-4v4-setup-offer")[0].setup == "offer" and rules_of("hex3-4v4-capture-a1-b2") is None
    assert raw_size("hex3-2v2") <= SMALL and raw_size("hex3-3v3-edge") <= SMALL < raw_size("hex3-4v4")
    assert raw_size("hex3-2v2") == math.comb(27, 2) * math.comb(25, 2)
    assert [m.name for m in _marks(["hex3-4v4"])] == ["xdist_group"] and [m.name for m in _marks(["hex4-4v4"])] == ["slow"]
    assert ROOT.is_dir()
