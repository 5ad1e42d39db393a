"""Every repository path README.md and docs/*.md name exists, and every relative link
resolves inside the repository (to a heading that exists, where it names one).

A path counts when it starts with one of the repository's folders (solver/, scripts/,
tests/, data/, docs/, .ci/) in inline code, a code block or a link; a user's folders
(rotary-db/…, /tmp/…) and folders .gitignore anchors at the root do not. A glob or
``{a,b}`` must match something. Links: a web address is not followed; any other target
is a file or folder of the repository, relative to the page (``/…``: to the root).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.docs.mdtext import ROOT, doc_files, github_anchors, ignored_roots, links, path_exists, rel, repo_paths, split_blocks

PAGES = doc_files()


def missing_paths(text: str) -> list[str]:
    skip = ignored_roots()
    return [f"line {no}: {path}" for path, no in repo_paths(text)
            if not any(path.startswith(s) for s in skip) and not path_exists(path)]


def bad_links(page: Path, text: str) -> tuple[list[str], list[str]]:
    """(links to nothing or outside the repository, links to a heading that is not there)."""
    _, prose = split_blocks(text)
    broken, anchors = [], []
    for target, no in links(prose):
        if target.startswith(("http://", "https://", "mailto:", "ftp://")):
            continue
        if ":" in target.split("/")[0] and not target.startswith("#"):
            broken.append(f"line {no}: {target} (an address of an unknown kind)")
            continue
        path_part, _, anchor = target.partition("#")
        path_part = unquote(path_part)
        if path_part:
            base = ROOT if path_part.startswith("/") else page.parent
            dest = (base / path_part.lstrip("/")).resolve()
            try:
                dest.relative_to(ROOT)
            except ValueError:
                broken.append(f"line {no}: {target} (outside the repository)")
                continue
            if not dest.exists():
                broken.append(f"line {no}: {target} (no such file)")
                continue
        else:
            dest = page
        if anchor and dest.suffix == ".md" and anchor not in github_anchors(text if dest == page else dest.read_text()):
            anchors.append(f"line {no}: {target} (no heading makes #{anchor} in {rel(dest)})")
    return broken, anchors


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_paths_named_in_the_docs_exist(page):
    missing = missing_paths(page.read_text())
    assert not missing, f"{rel(page)} names paths the repository does not have:\n" + "\n".join(missing)


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_relative_links_resolve_inside_the_repository(page):
    broken, _ = bad_links(page, page.read_text())
    assert not broken, f"{rel(page)} has links that go nowhere:\n" + "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_links_to_headings_find_them(page):
    _, anchors = bad_links(page, page.read_text())
    assert not anchors, f"{rel(page)} links to headings that are not there:\n" + "\n".join(anchors)


# ---------------------------------------------------------------------------- the checks themselves


def test_the_checks_catch_a_renamed_path_and_a_link_out(tmp_path):
    page = ROOT / "docs" / "made-up.md"  # never written: its text is checked as if it were there
    text = "\n".join([
        "# Title", "",
        "See `solver/db/store.py` and `solver/db/stor.py:12` and [rules](rules.md#1-board).",
        "Run `python scripts/bench_solve.py --jobs 2`, read [here](../../shared/DESIGN.md),",
        "[there](cli.md#no-such-heading), [top](#title), `rotary-db/hex3-4v4/` and `/tmp/solver/x`.",
        "```", "python scripts/no_such_script.py", "```",
        "`data/checksums/*.sha256`, `data/checksums/*.nothing`, `solver/{game,db}/__init__.py`.",
    ])
    assert sorted(missing_paths(text)) == ["line 3: solver/db/stor.py", "line 7: scripts/no_such_script.py",
                                           "line 9: data/checksums/*.nothing"]
    broken, anchors = bad_links(page, text)
    assert broken == ["line 4: ../../shared/DESIGN.md (outside the repository)"]
    assert anchors == ["line 5: cli.md#no-such-heading (no heading makes #no-such-heading in docs/cli.md)"]
