"""Everything the project knows, out of the box: the shipped store of known values.

``data/known/`` (built by ``scripts/build_known.py`` from the proof trees of
``data/proofs/`` and the opening books of ``data/books/``) holds every position of the
published proofs with its proven value and the books' values and estimates, by canonical
position. Every command consults it after the databases and before any search.

* :mod:`solver.known.canon` — one key per position under the rules' symmetries;
* :mod:`solver.known.store` — the store read and checked; :func:`known` for one position;
* :mod:`solver.known.knowledge` — the store and a user's own book, as one lookup;
* :mod:`solver.known.answer` — answers in the one schema (query, viewer), the line, the
  overlay on the engine's analysis;
* :mod:`solver.known.probe` — the engine's probe before it searches;
* :mod:`solver.known.build` — the store written from trees and book exports.
"""
