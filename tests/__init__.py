"""The test suite of rotary: ``python -m pytest -q`` from the repository root.

A package, so that test modules and the independent oracles they check against are imported
by their full names (``tests.oracles.brute``, ``tests.helpers``), never by file path.
"""
