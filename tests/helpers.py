"""Helpers several test files call: the ``rotary`` command line in this process, and the
installed ``rotary`` script for the tests that run it as a real process."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

from solver.cli.main import main


def run(capsys, *argv, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    """``rotary *argv`` in this process: ``(exit status, stdout, stderr)``.

    Arguments may be numbers or paths (each is passed as ``str``); ``stdin`` text is fed
    through ``monkeypatch`` (give both)."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rotary_exe() -> str:
    """The installed console script: beside this Python first (a venv), else on PATH."""
    here = Path(sys.executable).with_name("rotary")
    found = str(here) if here.exists() else shutil.which("rotary")
    assert found, "the rotary script is not installed (pip install -e '.[test]')"
    return found
