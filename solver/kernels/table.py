"""df-pn's transposition table (``TT``), the pass argument on storing, and persistence.

4-way buckets keyed by the canonical key of :mod:`solver.kernels.symkeys` (position +
question). Entries hold pn, dn, ``dist`` (an upper bound on the attacker's fastest win,
valid when pn = 0), ``lb`` (a lower bound on it), the best move (``z * 6 + k``), the
effort (nodes spent below it, the replacement priority) and ``onpath``: the ply at which
the entry is on the current search path (``NOPATH`` when it is not), which is how df-pn
sees a repetition (:mod:`solver.kernels.dfpn`). Entries on the path are never replaced.
(In a search on several threads, :mod:`solver.kernels.shared`, ``onpath`` counts the
threads whose path holds the entry instead, minus one; each thread keeps its plies apart.)

Several threads read and write one table without locks (Hyatt & Mann's lockless hashing,
adapted to these field arrays): every write goes through :func:`tt_put`, which writes a
whole record, key included, and last ``chk``, a hash of the key and the fields that carry
meaning (pn, dn, dist, lb, best); :func:`tt_probe` reads a record into locals and accepts
it only when the hash of what it read equals the ``chk`` it read. A read torn by a
concurrent write (fields of two records) or two writes interleaved on one entry fail the
check (always when one field differs: each enters the hash through a bijection; when
several do, but for a chance of 2^-64) and count as a miss, which only costs work: a
table is a cache. No ordering or atomic instruction is needed (each field is one aligned
load or store), and readers never wait. ``effort`` and ``onpath`` are hints outside the
check. A table for one thread (``new_tt(bits)``) has no check words (``chk`` of size 1):
nothing is checked, nothing costs.

Persistence (:class:`solver.search.proofs.ProofStore`): :func:`tt_select` picks the
entries worth saving, :func:`tt_load` stores saved ones back.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from solver.kernels.bits import prefetch
from solver.kernels.code import ONGOING_V
from solver.kernels.moves import terminal
from solver.kernels.symkeys import canon

INF = 1 << 30  # an infinite proof or disproof number
NOPATH = -1  # ``onpath`` of an entry not on the current path
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # the key of an empty entry (and of a child that needs none)
DMAX = 0xFFFF  # "no distance known"

TT = namedtuple("TT", "k1 k2 pn dn dist lb best onpath effort chk mark")


# An entry's fields lie together in one record (the arrays of ``TT`` are views of its
# fields): a probe touches the two or three cache lines of its bucket, not one line per
# field. With check words 48 bytes (a bucket is three whole lines), without 40. ``mark``
# is the draw closure's (:mod:`solver.kernels.closure`): its region node at the entry, -1
# for none; it lies in the record so that the closure's lookups cost no extra line.
_FIELDS = [("k1", "<u8"), ("k2", "<u8"), ("chk", "<u8"), ("pn", "<u4"), ("dn", "<u4"), ("effort", "<u4"),
           ("dist", "<u2"), ("lb", "<u2"), ("best", "<i2"), ("onpath", "<i2"), ("mark", "<i4")]
LINE = 64


def _record(checked: bool) -> np.dtype:
    fields = [f for f in _FIELDS if checked or f[0] != "chk"]
    offsets = np.cumsum([0] + [np.dtype(t).itemsize for _, t in fields[:-1]]).tolist()
    return np.dtype({"names": [f for f, _ in fields], "formats": [t for _, t in fields], "offsets": offsets,
                     "itemsize": 48 if checked else 40})


def line_records(n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` uninitialised records of ``dtype``, the first at the start of a cache line (a
    table's views of their fields: this table's, the refinement's, the engine's)."""
    raw = np.empty(n * dtype.itemsize + LINE, dtype=np.uint8)
    start = -raw.ctypes.data % LINE
    return raw[start:start + n * dtype.itemsize].view(dtype)


def new_tt(bits: int, checked: bool = False) -> TT:
    """An empty table of ``2 ** bits`` entries; ``checked``: with check words (for
    several threads)."""
    rec = line_records(1 << bits, _record(checked))
    rec["k1"] = EMPTY
    rec["k2"] = EMPTY
    rec["pn"] = 1
    rec["dn"] = 1
    rec["dist"] = DMAX
    rec["lb"] = 0
    rec["best"] = -1
    rec["onpath"] = NOPATH
    rec["effort"] = 0
    rec["mark"] = -1
    if checked:
        rec["chk"] = 0
    chk = rec["chk"] if checked else np.zeros(1, dtype=np.uint64)
    return TT(rec["k1"], rec["k2"], rec["pn"], rec["dn"], rec["dist"], rec["lb"], rec["best"], rec["onpath"],
              rec["effort"], chk, rec["mark"])


@njit(cache=True, _nrt=False)
def bucket(table, k1, k2):
    """First entry of a key's 4-way bucket in ``table`` (any table with ``k1, k2`` key
    arrays of a power-of-two size: ``TT`` here, ``RTT`` of :mod:`solver.kernels.refine`)."""
    mask = np.uint64((table.k1.shape[0] >> 2) - 1)
    h = k1 * np.uint64(0x9E3779B97F4A7C15) ^ (k2 * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    return int(h & mask) * 4


@njit(cache=True, _nrt=False)
def tt_prefetch(tt, k1, k2):
    """Start loading the bucket of a key (all the fields a probe reads)."""
    b = bucket(tt, k1, k2)
    # the bucket's records (40 or 48 bytes each) span at most three lines: these touch each
    prefetch(tt.k1, b)
    prefetch(tt.k1, b + 2)
    prefetch(tt.onpath, b + 3)


@njit(cache=True, _nrt=False, inline="always")
def tt_check(k1, k2, pn, dn, dist, lb, best):
    """The check word of a record: each argument enters through a bijection, so records
    that differ in one field always differ here."""
    w1 = (k1 ^ (np.uint64(pn) | (np.uint64(dn) << np.uint64(32)))) * np.uint64(0x9E3779B97F4A7C15)
    w2 = np.uint64(dist) | (np.uint64(lb) << np.uint64(16)) | (np.uint64(best & 0xFFFF) << np.uint64(32))
    h = w1 ^ ((k2 ^ w2) * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return h


@njit(cache=True, _nrt=False, inline="always")
def tt_probe(tt, k1, k2):
    """A key's record read once and checked (the module docstring): ``(i, pn, dn, dist,
    lb)``, with ``i = -1`` when the key is absent or its record fails the check."""
    i = tt_find(tt, k1, k2)
    if i < 0:
        return -1, 1, 1, DMAX, 0
    pn = np.int64(tt.pn[i])
    dn = np.int64(tt.dn[i])
    dist = np.int64(tt.dist[i])
    lb = np.int64(tt.lb[i])
    if tt.chk.shape[0] > 1 and tt.chk[i] != tt_check(k1, k2, pn, dn, dist, lb, np.int64(tt.best[i])):
        return -1, 1, 1, DMAX, 0
    return i, pn, dn, dist, lb


@njit(cache=True, _nrt=False, inline="always")
def tt_put(tt, i, k1, k2, pn, dn, dist, lb, best):
    """Write a whole record at entry ``i``, its check word last."""
    tt.k1[i] = k1
    tt.k2[i] = k2
    tt.pn[i] = pn
    tt.dn[i] = dn
    tt.dist[i] = dist
    tt.lb[i] = lb
    tt.best[i] = best
    if tt.chk.shape[0] > 1:
        tt.chk[i] = tt_check(k1, k2, pn, dn, dist, lb, best)


@njit(cache=True, _nrt=False)
def tt_find(tt, k1, k2):
    """The entry of a key in ``tt`` (or in an ``RTT``), or -1."""
    b = bucket(tt, k1, k2)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
    return -1


@njit(cache=True, _nrt=False)
def tt_slot(tt, k1, k2):
    """The entry of a key, made if absent (replacing the least valuable); -1 if none free."""
    b = bucket(tt, k1, k2)
    victim = -1
    vscore = np.int64(1) << np.int64(62)
    for i in range(b, b + 4):
        if tt.k1[i] == k1 and tt.k2[i] == k2:
            return i
        if tt.onpath[i] != NOPATH:
            continue
        if tt.k2[i] == EMPTY:
            score = np.int64(-1)
        else:
            score = np.int64(tt.effort[i])
            if tt.pn[i] == 0 or tt.dn[i] == 0:
                score += np.int64(1) << np.int64(40)
        if score < vscore:
            vscore = score
            victim = i
    if victim >= 0:
        tt.effort[victim] = 0
        tt_put(tt, victim, k1, k2, 1, 1, DMAX, 0, -1)
    return victim


@njit(cache=True, _nrt=False)
def tt_store(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Record a search result (numbers capped at ``INF``, distances at ``DMAX``); a
    resolved entry is kept and only its distances tightened. Returns the entry or -1.
    In a checked table the old record is read checked and the new one written whole."""
    i = tt_slot(tt, k1, k2)
    if i < 0:
        return i
    if tt.chk.shape[0] > 1:
        return _store_checked(tt, i, k1, k2, pn, dn, dist, lb, best, effort)
    if tt.pn[i] == 0 or tt.dn[i] == 0:  # resolved: keep, only tighten the distances
        if pn == 0 and tt.pn[i] == 0:
            if dist < tt.dist[i]:
                tt.dist[i] = dist
                tt.best[i] = best
            if lb > tt.lb[i]:
                tt.lb[i] = min(lb, DMAX)
        return i
    tt.pn[i] = min(pn, INF)
    tt.dn[i] = min(dn, INF)
    tt.dist[i] = min(dist, DMAX)
    tt.lb[i] = min(max(lb, np.int64(tt.lb[i])), DMAX)
    tt.best[i] = best
    tt.effort[i] = min(np.int64(tt.effort[i]) + effort, np.int64(0xFFFFFFFF))
    return i


@njit(cache=True, _nrt=False)
def _store_checked(tt, i, k1, k2, pn, dn, dist, lb, best, effort):
    """:func:`tt_store` at entry ``i`` of a checked table: what it does to the fields, done
    on a checked copy of the old record and written back whole (:func:`tt_put`)."""
    opn = np.int64(tt.pn[i])
    odn = np.int64(tt.dn[i])
    odist = np.int64(tt.dist[i])
    olb = np.int64(tt.lb[i])
    obest = np.int64(tt.best[i])
    if tt.chk[i] != tt_check(k1, k2, opn, odn, odist, olb, obest):
        opn, odn, odist, olb, obest = 1, 1, DMAX, 0, -1  # torn by another thread: start afresh
    if opn == 0 or odn == 0:
        if pn == 0 and opn == 0 and (dist < odist or lb > olb):
            if dist < odist:
                odist = dist
                obest = best
            if lb > olb:
                olb = min(lb, DMAX)
            tt_put(tt, i, k1, k2, opn, odn, odist, olb, obest)
        return i
    tt_put(tt, i, k1, k2, min(pn, INF), min(dn, INF), min(dist, DMAX), min(max(lb, olb), DMAX), best)
    tt.effort[i] = min(np.int64(tt.effort[i]) + effort, np.int64(0xFFFFFFFF))
    return i


@njit(cache=True, _nrt=False)
def pass_store(tt, m, p, s, q, pn, dn, dist, geo, symtab):
    """docs/rules.md §10 applied to a path-independent result of non-terminal ``(m, p, s)``:
    a board lost for X to move is won for Y to move (Y passes), and a board not won for X
    to move is not lost for Y to move; store those."""
    if q == 1 and pn == 0:
        # the mover X loses: for Y to move on the same board, Y wins by passing
        if terminal(p, m, geo) == ONGOING_V:
            k1, k2 = canon(p, m, 1 - s, 0, geo, symtab)
            tt_store(tt, k1, k2, 0, INF, min(dist + 1, DMAX - 1), 1, -1, 0)
    elif q == 0 and dn == 0:
        # X to move does not win: Y to move on the same board does not lose
        if terminal(p, m, geo) == ONGOING_V:
            k1, k2 = canon(p, m, 1 - s, 1, geo, symtab)
            tt_store(tt, k1, k2, INF, 0, DMAX, 0, -1, 0)


# ---------------------------------------------------------------------------- persistence


@njit(cache=True, _nrt=False)
def tt_select(tt, min_resolved, min_open, out_idx):
    """Indices of entries worth keeping: resolved with effort >= ``min_resolved``, open
    with effort >= ``min_open``; entries on the current path are skipped. Returns count."""
    n = 0
    for i in range(tt.k1.shape[0]):
        if tt.k2[i] == EMPTY or tt.onpath[i] != NOPATH:
            continue
        e = np.int64(tt.effort[i])
        if tt.pn[i] == 0 or tt.dn[i] == 0:
            if e >= min_resolved:
                out_idx[n] = i
                n += 1
        elif e >= min_open:
            out_idx[n] = i
            n += 1
    return n


@njit(cache=True, _nrt=False)
def tt_load(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Store saved entries (arrays of the fields) into ``tt``, as :func:`tt_store` does."""
    for j in range(k1.shape[0]):
        tt_store(tt, k1[j], k2[j], np.int64(pn[j]), np.int64(dn[j]), np.int64(dist[j]), np.int64(lb[j]),
                 np.int64(best[j]), np.int64(effort[j]))
