"""Opening books: the tree of openings from a start, every node proven within a budget.

Nodes are merged by canonical position (symmetric positions are one node), stored in the
``book`` table of a :class:`solver.search.proofs.ProofStore` (key: canonical key of the rotation
position, or ``b"T"`` + text for setup phases, which are not merged) as JSON::

    {"position", "depth", "moves": [{"move", "key"}], "proof": ProofResult JSON | null,
     "value": backed-up {"result", "lo", "hi", "plies", "exact", "best_move"}}

Re-running extends: existing nodes keep their proofs; unresolved ones get another budget
(their df-pn resumes from the stored table), new levels are added below the old ones.
Values are backed up from the leaves: a node's interval is its own proof intersected with
the best over its children.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from solver.game.config import Config
from solver.kernels.code import DRAW_V, LOSS_V, WIN_V
from solver.search.prover import ProofResult, Prover, combine_children, make_pool, result_from_json, worker_prove
from solver.game.position import PLAY, Position
from solver.game.rules import apply, moves, status, ONGOING


def node_key(prover: Prover, pos: Position) -> bytes:
    from solver.search.proofs import kbytes

    if pos.phase == PLAY:
        return kbytes(*prover.key(pos.mover, pos.opponent, pos.turn, 0))
    return b"T" + pos.text().encode()


def build_book(cfg: Config, start: Position, depth: int, store_path, nodes: int | None = 100_000,
               seconds: float | None = None, jobs: int = 1, db_path=None, progress=None, deadline: float | None = None,
               tt_bits: int = 21) -> dict:
    """Expand and prove the book to ``depth`` plies; returns a summary: ``depth`` is the
    deepest level whose every node got its budget (-1: none), ``partial`` the level a
    ``deadline`` cut short as ``(depth, proven, to prove)``."""
    from solver.db.database import open_db
    from solver.game.position import parse_position
    from solver.search.proofs import ProofStore

    t0 = time.monotonic()
    store = ProofStore(store_path, cfg)
    db = None
    try:
        db = open_db(db_path) if db_path else None
        prover = Prover(cfg, tt_bits=tt_bits, db=db)
        book = {k: v for k, v in store.items("book")}  # a damaged record: StoreError naming it
    except BaseException:
        store.close()
        if db is not None:
            db.close()
        raise
    pool = make_pool(jobs, cfg, db_path, store_path, tt_bits) if jobs > 1 else None
    if pool is None:
        prover.attach(store)
    proved = 0
    level = {node_key(prover, start): start}
    reached = -1
    partial = None  # (depth, proven, to prove) of a level the deadline cut short
    visited: set[bytes] = set()
    try:
        for d in range(depth + 1):
            # expand this level's nodes
            nxt: dict[bytes, Position] = {}
            visited.update(level)
            todo = []
            for key, pos in level.items():
                node = book.get(key)
                if node is None:
                    node = {"position": pos.text(), "depth": d, "moves": None, "proof": None}
                    book[key] = node
                node["depth"] = min(node["depth"], d)
                over = pos.phase == PLAY and status(cfg, pos) != ONGOING
                if d < depth and node["moves"] is None and not over:
                    node["moves"] = []
                    for mv in moves(cfg, pos):
                        child = apply(cfg, pos, mv)
                        ck = node_key(prover, child)
                        if any(m["key"] == ck.hex() for m in node["moves"]):
                            continue
                        node["moves"].append({"move": mv.text(cfg.board), "key": ck.hex(), "position": child.text()})
                if d < depth and node["moves"]:
                    for m in node["moves"]:
                        ck = bytes.fromhex(m["key"])
                        if ck not in visited and ck not in level:
                            nxt.setdefault(ck, parse_position(m["position"]))
                proof = node["proof"]
                if pos.phase != PLAY and proof is None and db is not None and db.get_reason(pos) is None:
                    # a setup database answers placement, offer and pick positions exactly
                    _merge_proof(node, _from_database(pos, db.probe(pos)))
                elif pos.phase == PLAY and (proof is None or proof["lo"] != proof["hi"]):
                    todo.append((key, pos))
            # prove this level; the deadline is checked per node (and inside each proof):
            # the nodes it leaves unproven stay in the book for the next run
            done = 0
            if pool is not None:
                # workers see the deadline as wall-clock time (their monotonic clocks differ)
                until = None if deadline is None else time.time() + deadline - time.monotonic()
                futs = [(key, pool.submit(worker_prove, pos.text(), nodes, seconds, until)) for key, pos in todo]
                for key, f in futs:
                    rec = f.result()
                    if rec is None:
                        continue
                    _merge_proof(book[key], rec)
                    proved += 1
                    done += 1
                    if progress:
                        progress(d, proved, time.monotonic() - t0)
            else:
                for key, pos in todo:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    budget_s = left if seconds is None else (seconds if left is None else min(seconds, left))
                    res = prover.prove(pos, nodes=nodes, seconds=budget_s)
                    prover.save_result(pos, res, table=False)
                    _merge_proof(book[key], dict(res.to_json(), lo=res.lo, hi=res.hi, lower=res.lower))
                    proved += 1
                    done += 1
                    if progress:
                        progress(d, proved, time.monotonic() - t0)
            store.put_many("book", [(k, book[k]) for k, _ in todo] + [(k, book[k]) for k in level])
            if pool is None:
                prover.checkpoint()
            if done < len(todo):
                partial = (d, done, len(todo))
                break
            reached = d
            level = nxt
            if not level:
                break
        root = node_key(prover, start)
        backup(book, root)
        store.put_many("book", list(book.items()))
    finally:  # however the book ends (a full disk, ^C): the store can be opened again
        if pool is not None:
            pool.shutdown(cancel_futures=True)
        store.close()
        if db is not None:
            db.close()
    return {"root": root, "book": book, "depth": reached, "nodes": len(book), "proved": proved,
            "partial": partial, "seconds": time.monotonic() - t0}


def reach_text(out: dict) -> str:
    """How far a :func:`build_book` run got, in words."""
    text = f"every position to depth {out['depth']} searched"
    if out["partial"]:
        d, done, todo = out["partial"]
        text += f", time ran out at depth {d} with {done} of {todo} searched (a re-run goes on)"
    return text


def _from_database(pos: Position, value) -> dict:
    """A proof record for a value read from a retrograde or setup database (exact)."""
    v = {"win": WIN_V, "loss": LOSS_V, "draw": DRAW_V}[value.result]
    res = ProofResult(pos.text(), v, v, value.plies, True, value.plies)
    return dict(res.to_json(), lo=v, hi=v, lower=value.plies)


def _merge_proof(node: dict, rec: dict) -> None:
    old = node.get("proof")
    if old is not None:
        rec = dict(rec, nodes=rec["nodes"] + old.get("nodes", 0))
        # never lose knowledge: intersect the intervals
        if old["lo"] > rec["lo"] or old["hi"] < rec["hi"]:
            if old["lo"] == old["hi"]:
                rec = dict(old, nodes=rec["nodes"])
            else:
                rec = dict(rec, lo=max(old["lo"], rec["lo"]), hi=min(old["hi"], rec["hi"]))
    node["proof"] = rec


def backup(book: dict, root: bytes) -> None:
    """Back up values from the leaves (children before parents; cycles cut)."""
    done: dict[bytes, ProofResult] = {}
    onstack: set[bytes] = set()

    def value(key: bytes) -> ProofResult:
        if key in done:
            return done[key]
        node = book[key]
        own = result_from_json(node["proof"]) if node.get("proof") else ProofResult(node["position"], LOSS_V, WIN_V)
        onstack.add(key)
        kids = []
        for m in node.get("moves") or []:
            ck = bytes.fromhex(m["key"])
            if ck not in book or ck in onstack:
                kids = None
                break
            kids.append((m["move"], value(ck)))
        onstack.discard(key)
        res = own
        if kids:
            comb = combine_children(kids, node["position"])
            lo, hi = max(own.lo, comb.lo), min(own.hi, comb.hi)
            if lo > hi:  # cannot happen when both are sound; keep the proof
                lo, hi = own.lo, own.hi
            pick = own if own.lo == own.hi else comb
            res = ProofResult(node["position"], lo, hi, pick.plies if lo == hi else None,
                              pick.exact if lo == hi else False, None,
                              pick.best_move if lo == hi else own.best_move, own.nodes)
        node["value"] = {"result": res.result, "lo": res.lo, "hi": res.hi, "plies": res.plies,
                         "exact": res.exact, "best_move": res.best_move}
        done[key] = res
        return res

    value(root)


def export_json(book: dict, root: bytes, path) -> None:
    data = {"root": root.hex(), "nodes": {k.hex(): v for k, v in book.items()}}
    Path(path).write_text(json.dumps(data, indent=1))


def value_text(v: dict | None) -> str:
    if not v:
        return "unknown"
    out = v["result"]
    if v.get("plies") is not None:
        out += f" in {v['plies']}" if v.get("exact") else f" in <={v['plies']}"
    return out


def tree_text(book: dict, root: bytes, max_depth: int | None = None) -> str:
    lines = []
    seen: set[bytes] = set()

    def walk(key: bytes, move: str, indent: int) -> None:
        node = book[key]
        head = "  " * indent + (f"{move}  " if move else "")
        mark = ""
        if key in seen and node.get("moves"):
            mark = "  (transposition, see above)"
        lines.append(f"{head}{value_text(node.get('value'))}  {node['position']}{mark}")
        if key in seen or (max_depth is not None and indent >= max_depth):
            return
        seen.add(key)
        for m in node.get("moves") or []:
            ck = bytes.fromhex(m["key"])
            if ck in book:
                walk(ck, m["move"], indent + 1)

    walk(root, "", 0)
    return "\n".join(lines) + "\n"


def book_lookup(store_path, cfg: Config, pos: Position) -> dict | None:
    """The book node of ``pos``, or None when ``pos`` is not in the book.

    The node is stored once per canonical position, so its own ``position`` and
    ``moves`` may be a symmetric image of ``pos``; ``children`` are therefore made from
    ``pos`` itself: every legal move of ``pos`` with its child and that child's book value
    (``{"move", "position", "value"}``; the value is the child's node's, from the child's
    mover, None where the child is not in the book). :func:`solver.analysis.book_answer`
    turns it into an answer."""
    from solver.search.proofs import ProofStore

    if not (Path(store_path) / "data.mdb").exists():
        return None
    with ProofStore(store_path, cfg) as store:
        prover = Prover(cfg, tt_bits=4)
        node = store.get("book", node_key(prover, pos))
        if node is None:
            return None
        kids, seen = [], {}
        over = pos.phase == PLAY and status(cfg, pos) != ONGOING
        for mv in [] if over else moves(cfg, pos):
            child = apply(cfg, pos, mv)
            ck = node_key(prover, child)
            if ck not in seen:
                seen[ck] = (store.get("book", ck) or {}).get("value")
            kids.append({"move": mv.text(cfg.board), "position": child.text(), "value": seen[ck]})
        return dict(node, children=kids)


def book_line(store_path, cfg: Config, pos: Position, plies: int) -> list[str]:
    """The principal line through the book from ``pos``, up to ``plies`` moves: at each
    position a move whose child's book value is the position's own proven value one ply
    on (the fastest win, the slowest loss, a drawing move); it ends where the book has no
    proven value, no such move, the game ends or a position repeats (a draw goes round)."""
    line: list[str] = []
    seen = {pos.text()}
    while len(line) < plies:
        node = book_lookup(store_path, cfg, pos)
        v = None if node is None else node.get("value")
        if not v or v.get("lo") != v.get("hi") or not node.get("children"):
            break
        want = {"win": "loss", "loss": "win", "draw": "draw"}[v["result"]]
        step = None
        for child in node["children"]:
            cv = child.get("value") or {}
            if cv.get("result") == want and cv.get("lo") == cv.get("hi") and (
                    want == "draw" or v.get("plies") is None or cv.get("plies") == v["plies"] - 1):
                step = child
                break
        if step is None:
            break
        line.append(step["move"])
        pos = Position(step["position"])
        if pos.text() in seen:
            break
        seen.add(pos.text())
    return line
