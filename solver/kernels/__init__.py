"""numba kernels: the compiled hot loops (bit tricks, move and unmove generation, ranking,
retrograde analysis, df-pn).

Kernels are module-level ``@njit`` functions over ints, arrays and namedtuples of them
only, and import nothing of :mod:`solver` outside this package; the Python modules
(:mod:`solver.index`, :mod:`solver.retro.driver`, :mod:`solver.search.prover`) validate
input, build the arrays and call them. One idea a module, dependencies pointing down:

* ``bits`` — popcount, count trailing zeros, 16-bit compare-and-swap, prefetch;
* ``code`` — the uint16 value code of the databases and the result integers;
* ``geometry`` — ``Geo``: a board and its rules as arrays (``make_geo``);
* ``moves`` — moves and unmoves on bitboards, ``terminal``, the child generator;
* ``encode`` — the symmetry-reduced index: ranking, ``index_of``, ``unrank``;
* ``retro``, ``setup`` — retrograde analysis of the rotation phase and the setup game;
* ``partition`` — the same retrograde analysis over one part of a group, for the Ray
  executor's actors (no shared memory: updates are listed, fetched and applied);
* ``lean``, ``lean_partition`` — the lean solve, one byte a position: its cell codes, the
  counters and plies of one machine, and the same over one part of a group for Ray;
* ``verify`` — ``rotary verify``: every value re-derived from its children's;
* ``symkeys`` — canonical keys of search questions;
* ``table`` — df-pn's transposition table, the pass argument, persistence;
* ``leaves`` — finished positions and database values as search leaves;
* ``dfpn`` — df-pn with cycles (the GHI argument), ``Ctx``;
* ``refine`` — "does the attacker win within n plies?" and its table;
* ``closure`` — the draw closure: disproofs as a fixpoint over the explored graph;
* ``answers`` — a df-pn table read against a database, in bulk;
* ``compact`` — the exported sets: the values the rules give, WDL and distance streams, the
  win/draw/loss check;
* ``compact_rans``, ``compact_rules`` — the exported sets' default codec (a tier's static
  context model coded by rANS, both streams); the rule cells a row at a time;
* ``compact_cm``, ``compact_dcm``, ``compact_enc``, ``compact_probe`` — the exported sets'
  adaptive WDL coder and distance coder (codec ``cm``); the exporter's pass coding a
  block's two ``cm`` streams at once; a single probe of a set in one call;
* ``evaluate``, ``alphabeta``, ``mcts`` — the engine: its evaluation, its alpha-beta search,
  and the MCTS-Solver it was measured against.
"""
