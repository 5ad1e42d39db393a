"""Independent oracles: what the engine is checked against, written to be obviously correct.

- :mod:`tests.oracles.brute` — retrograde analysis over the explicit state graph of the
  rotation phase, from the plain-Python rules, no symmetry.
- :mod:`tests.oracles.brute_setup` — negamax over the explicit tree of the setup game,
  rotation-phase leaves from :mod:`~tests.oracles.brute`.
- :mod:`tests.oracles.perft_reference` — a re-implementation of the rules sharing no code
  with ``solver``, for perft counts and successor sets.
- :mod:`tests.oracles.rules_support` — the board formula, directions, a coordinate-level
  majority rule and rotation, position builders and hypothesis strategies, all from the
  rules text rather than from ``solver``.

And the stored results of the slow ones, with the commands that make them:

- :mod:`tests.oracles.golden` — which brute-force tables are stored in ``data/golden/``,
  how a file is named and read; ``python -m tests.oracles.golden`` makes them.
- :mod:`tests.oracles.perft` — the positions of ``data/perft.json``;
  ``python -m tests.oracles.perft`` makes it, checked against the reference first.

Scripts in ``scripts/`` never import this package; the tests never run a script.
"""
