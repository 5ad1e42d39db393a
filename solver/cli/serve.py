"""``rotary serve``: the local web viewer (needs the web extra: ``pip install 'rotary[web]'``).

The databases are read as ``query`` reads them: ``--db PATH`` names one (rule flags given
must be its own); without it every database of the asked rules under ``$ROTARY_DB`` (or
``./rotary-db``) is offered, and each position is read from the smallest one that answers.
Proof trees (``--tree``, else those of ``data/proofs/``) mark their nodes' moves.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import webbrowser
from dataclasses import replace

from solver.cli.find import check_flags, store_path
from solver.cli.options import add_db_option, add_rule_options, add_store_option, config_from_args, parse_material
from solver.db import catalog
from solver.db.database import Database
from solver.errors import StoreError, UsageError
from solver.game.position import Position
from solver.game.board import board_from_label
from solver.game.start import empty_setup, has_preset_start, standard_start

WEB_HINT = "rotary serve needs Flask: pip install 'rotary[web]'"


def database_paths(args: argparse.Namespace) -> list:
    """``--db`` (checked against the rule flags), else every database of these rules under the root."""
    if args.db:
        with Database(args.db) as db:
            check_flags(args, db)
        return [args.db]
    material = parse_material(args.balls)
    found = []
    for path in catalog.databases():
        try:
            db = Database(path)
        except StoreError:
            continue
        with db:
            rules = db.cfg
            if (rules.edge, rules.capture, rules.setup) != (args.edge, args.capture, args.setup):
                continue
            if args.board and rules.board.label != args.board.lower():
                continue
            if material is not None and tuple(db.material) != material:
                continue
            found.append(path)
    return found


def rules_of(args: argparse.Namespace):
    """``rules_for(pos)`` and ``start()`` of the viewer.

    A position on ``--db``'s board is read under the database's rules (any material where
    balls can leave the board); on another board under the flags with ``--db``'s variants.
    The start is the standard start, or the empty board of a setup game; None on a board
    without a preset start.
    """
    db_cfg = None
    if args.db:
        with Database(args.db) as db:
            db_cfg = db.cfg
    ns = argparse.Namespace(**vars(args))
    if db_cfg is not None:
        ns.edge, ns.capture, ns.setup = db_cfg.edge, db_cfg.capture, db_cfg.setup

    def rules_for(pos: Position):
        if db_cfg is not None and pos.board is db_cfg.board:
            return db_cfg if db_cfg.setup else replace(db_cfg, balls=None)
        return config_from_args(ns, pos)[0]

    def start() -> Position | None:
        if ns.setup:
            cfg = db_cfg if db_cfg is not None else config_from_args(ns)[0]
            return empty_setup(cfg)
        label = args.board or (db_cfg.board.label if db_cfg is not None else None)
        if label is None or has_preset_start(board_from_label(label)):
            return standard_start()
        return None  # no preset start on this board: the viewer picks a database position

    if db_cfg is None:
        config_from_args(ns)  # flags that make no rules fail here, in one line
    return rules_for, start


def proof_trees(args: argparse.Namespace):
    """``--tree`` (files or folders; a bad one is a one-line error), else the trees of
    ``data/proofs/`` of the source checkout or the current folder (a bad one there is
    left out and named in ``skipped``)."""
    from solver.view.trees import default_trees, load_trees

    return load_trees(args.tree) if args.tree else default_trees()


def build_viewer(args: argparse.Namespace, executor_factory=None):
    """The Flask app of ``rotary serve ARGS`` and its sources (close them when done)."""
    try:
        from solver.view.web import create_app
    except ImportError:
        raise UsageError(WEB_HINT) from None
    from solver.view.sources import Sources

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    if args.prove_nodes < 1:
        raise UsageError(f"--prove-nodes must be at least 1, got {args.prove_nodes}")
    if args.engine_ms < 1:
        raise UsageError(f"--engine-ms must be at least 1, got {args.engine_ms}")
    rules_for, start = rules_of(args)
    trees = proof_trees(args)
    first = start()
    if first is not None:
        rules_for(first)  # rules that cannot be built fail here, in one line, not per request
    sources = Sources(
        database_paths(args), rules_for, store_for=lambda cfg: store_path(args, cfg), prove_nodes=args.prove_nodes,
        executor_factory=executor_factory, engine_ms=args.engine_ms, trees=trees,
    )
    return create_app(sources, start), sources


def cmd_serve(args: argparse.Namespace) -> int:
    app, sources = build_viewer(args)
    from werkzeug.serving import make_server

    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as e:
        sources.close()
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None
    url = f"http://{args.host if ':' not in args.host else '[' + args.host + ']'}:{server.server_port}/"
    names = ", ".join(p.description for p in sources.pools) or "none (moves are shown without values)"
    print(f"rotary viewer on {url}  (databases: {names}; proof trees: {sources.trees.describe()}; "
          "Ctrl-C stops it)", flush=True)
    for line in sources.trees.skipped:
        print(f"rotary: left out a proof tree of data/proofs: {line}", file=sys.stderr, flush=True)
    if args.quiet:
        import logging

        logging.getLogger("werkzeug").setLevel(logging.WARNING)
    if args.open:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    signal.signal(signal.SIGTERM, _interrupt)  # kill PID stops it as cleanly as Ctrl-C
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("rotary: viewer stopped", file=sys.stderr)
    finally:
        server.server_close()
        sources.close()
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def register(sub, commands: dict) -> None:
    p = sub.add_parser("serve", help="a local web viewer: boards, values, moves to click (needs rotary[web])")
    add_db_option(p)
    add_store_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default %(default)s; 0 picks a free one)")
    p.add_argument("--open", action="store_true", help="open the viewer in the web browser")
    p.add_argument("--prove-nodes", type=int, default=200_000, metavar="N",
                   help="df-pn nodes of the 'prove' button, shared by the moves (default %(default)s)")
    p.add_argument("--engine-ms", type=int, default=1000, metavar="MS",
                   help="the engine's thinking time for a position nothing else answers (default %(default)s)")
    p.add_argument("--tree", action="append", metavar="PATH",
                   help="a proof tree (prove --tree) or a folder of them, whose moves the viewer marks (repeatable; "
                        "default: the trees of data/proofs/ of the source checkout or the current folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars (as everywhere), and no log line per request")
    add_rule_options(p)
    commands["serve"] = cmd_serve
