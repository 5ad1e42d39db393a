"""df-pn's transposition table (``TT``): 16-byte entries, the pass argument on storing,
and persistence.

An entry is two words, one aligned 16-byte record; a bucket is four entries, one 64-byte
cache line (a probe reads one line):

```
 kw  64 bits   the stored key word S, XOR dw (Hyatt & Mann: a torn record fails the check)
 dw  bits 0-1  kind: 0 open, 1 proven (pn = 0), 2 disproven (dn = 0), 3 empty
     bits 2-7  effort code: the nodes spent below it, in half octaves (:func:`effort_code`)
     open:      bits 8-31 pn, 32-55 dn (both saturated at 2^24 - 1), 56-63 lb (at 255)
     proven:    bits 8-23 dist, 24-39 lb, 40-49 best move + 1
     disproven: bits 40-49 best move + 1
```

``pn``, ``dn``: proof and disproof numbers (a saturated number only reads smaller than it
is: it steers the search, never proves); ``dist``: an upper bound on the attacker's fastest
win (proven entries); ``lb``: a lower bound on it (a smaller bound is still a bound);
``best``: the move (``z * 6 + k``) of a resolved entry; the effort code orders replacement.

**Keys are exact** on boards of up to 48 points (hex(2) to hex(4)): the canonical key of
:mod:`solver.kernels.symkeys` (two bitboards, side and question) is packed in base 3 (each
point empty, mover's or opponent's) and mixed by a bijection; the bucket index is part of
the mixed value and the entry stores the rest, so an entry stands for exactly one key and a
collision is impossible. Up to 39 points the packed key is 64 bits (splitmix64's finaliser,
inverted by :func:`_unmix`); up to 48 points it is 80 bits (a four-round Feistel network
on two 40-bit halves), whose lowest 16 bits come from the bucket index: such a table has
at least :data:`MIN_BITS` = 2^18 entries. On larger boards (hex(5)) the key word is a
64-bit hash and the bucket index a second one: a wrong match needs both to collide
(about 2^-64 a probe), and the keys cannot be read back (:func:`tt_entry`), so such a
table is not persisted.

Replacement (:func:`tt_store`): a new key takes the emptiest entry of its bucket, else the
one with the least effort, resolved entries before open ones never (effort-based, as in
SmallTreeGC: the cheapest subtrees go first, proofs and disproofs last).

Several threads read and write one table without locks: :func:`tt_probe` reads ``dw`` and
``kw`` once and accepts them only when ``kw ^ dw`` is the key's stored word; a read torn
by a concurrent write fails (but for a chance of 2^-64) and counts as a miss, which only
costs work: a table is a cache. The thread counts of :mod:`solver.kernels.shared` live
beside the table, in ``busy`` (a checked table's; one slot otherwise), by key hash.
Paths (repetitions) are the searches' own (:mod:`solver.kernels.dfpn`), not the table's.

Persistence (:class:`solver.search.proofs.ProofStore`): :func:`tt_select` picks the
entries worth saving, :func:`tt_export` reads them back as fields, :func:`tt_load` stores
saved ones back.
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
NOPATH = -1  # "on no path" (:mod:`solver.kernels.shared`)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # the key of a child that needs none (and of an empty refine entry)
DMAX = 0xFFFF  # "no distance known"

OPEN, PROVEN, DISPROVEN, FREE = 0, 1, 2, 3  # an entry's kind (``dw & 3``)
NSAT = (1 << 24) - 1  # an open entry's pn and dn saturate here
LBSAT = 255  # an open entry's lb saturates here
MIN_BITS = 18  # the fewest entries (2^N) of a table with 80-bit keys: 2^16 buckets
BUSY_SLOTS = 1 << 16  # thread counts of a checked table (by key hash)
EXACT64, EXACT80, HASHED = 0, 1, 2  # key modes: <= 39 points, <= 48 points, more

# tt: the two words of each entry (views of one record array); mode: [key mode, bucket
# mask]; busy: the thread counts (several threads), one slot for one thread
TT = namedtuple("TT", "kw dw mode busy")

_RECORD = np.dtype({"names": ["kw", "dw"], "formats": ["<u8", "<u8"], "offsets": [0, 8], "itemsize": 16})
LINE = 64
_FREE_DW = np.uint64(FREE)


def _pow3_table() -> np.ndarray:
    """``P3[b, v]``: the base-3 digits of the points of byte ``v`` of a bitboard's byte ``b``
    (points ``8b .. 8b + 7``), each point ``i`` worth ``3^(i mod 24)``."""
    t = np.zeros((6, 256), dtype=np.uint64)
    for b in range(6):
        for v in range(256):
            t[b, v] = sum(3 ** ((8 * b + i) % 24) for i in range(8) if v >> i & 1)
    return t


P3 = _pow3_table()
POW24 = 3 ** 24
M40 = (1 << 40) - 1
M39 = (1 << 39) - 1
M24 = (1 << 24) - 1
_RK = np.array([0x243F6A8885A308D3, 0x13198A2E03707344, 0xA4093822299F31D0, 0x082EFA98EC4E6C89], dtype=np.uint64)


def line_records(n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` uninitialised records of ``dtype``, the first at the start of a cache line (a
    table's views of their fields: this table's, the refinement's, the engine's)."""
    raw = np.empty(n * dtype.itemsize + LINE, dtype=np.uint8)
    start = -raw.ctypes.data % LINE
    return raw[start:start + n * dtype.itemsize].view(dtype)


def key_mode(npoints: int) -> int:
    """How a table keys positions of a board of ``npoints`` points (the module docstring)."""
    return EXACT64 if npoints <= 39 else EXACT80 if npoints <= 48 else HASHED


def table_bits(bits: int, npoints: int = 48) -> int:
    """The size (2^N entries) of a table asked for with ``bits``: at least :data:`MIN_BITS`
    where keys are 80 bits."""
    return max(bits, MIN_BITS) if key_mode(npoints) == EXACT80 else max(bits, 2)


def new_tt(bits: int, checked: bool = False, npoints: int = 48) -> TT:
    """An empty table of ``2 ** table_bits(bits, npoints)`` entries for a board of
    ``npoints`` points; ``checked``: with thread counts (for several threads; every
    record is checked anyway)."""
    bits = table_bits(bits, npoints)
    rec = line_records(1 << bits, _RECORD)
    rec["kw"] = 0
    rec["dw"] = _FREE_DW
    mode = np.array([key_mode(npoints), (1 << (bits - 2)) - 1], dtype=np.int64)
    busy = np.zeros(BUSY_SLOTS if checked else 1, dtype=np.uint16)
    return TT(rec["kw"], rec["dw"], mode, busy)


def table_bytes(tt: TT) -> int:
    """The table's memory: 16 bytes an entry (and its thread counts)."""
    return 16 * tt.dw.shape[0] + tt.busy.nbytes


# ---------------------------------------------------------------------------- keys


@njit(cache=True, _nrt=False, inline="always")
def _mix(z):
    """splitmix64's finaliser: a bijection of 64-bit words."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, _nrt=False)
def _unmix(z):
    """The inverse of :func:`_mix`."""
    # y = z ^ (z >> k) with 2k < 64 < 4k: t = y ^ (y >> k) = z ^ (z >> 2k), z = t ^ (t >> 2k)
    z ^= z >> np.uint64(31)
    z ^= z >> np.uint64(62)
    z *= np.uint64(0x319642B2D24D8EC3)
    z ^= z >> np.uint64(27)
    z ^= z >> np.uint64(54)
    z *= np.uint64(0x96DE1B173F119089)
    z ^= z >> np.uint64(30)
    return z ^ (z >> np.uint64(60))


@njit(cache=True, _nrt=False, inline="always")
def _round(x, r):
    """The Feistel network's round function (any function of 40 bits keeps it a bijection)."""
    return (((x ^ _RK[r]) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(17)) & np.uint64(M40)


@njit(cache=True, _nrt=False, inline="always")
def _ternary(m, p):
    """``(A, B)``: points 0..23 and 24..47 in base 3 (empty 0, mover 1, opponent 2)."""
    a = np.uint64(0)
    b = np.uint64(0)
    for byte in range(3):
        sh = np.uint64(8 * byte)
        a += P3[byte, np.int64((m >> sh) & np.uint64(0xFF))] + np.uint64(2) * P3[byte, np.int64((p >> sh) & np.uint64(0xFF))]
    for byte in range(3, 6):
        sh = np.uint64(8 * byte)
        b += P3[byte, np.int64((m >> sh) & np.uint64(0xFF))] + np.uint64(2) * P3[byte, np.int64((p >> sh) & np.uint64(0xFF))]
    return a, b


@njit(cache=True, _nrt=False, inline="always")
def tt_key(tt, k1, k2):
    """``(first entry of the key's bucket, stored word)`` of canonical key ``(k1, k2)``."""
    k1 = np.uint64(k1)  # a key from Python arrives as int64: its shifts would be signed
    k2 = np.uint64(k2)
    mode = tt.mode[0]
    mask = np.uint64(tt.mode[1])
    s = k1 >> np.uint64(63)
    q = (k1 >> np.uint64(62)) & np.uint64(1)
    if mode == EXACT64:
        a, b = _ternary(k1, k2)
        h = _mix((((a + b * np.uint64(POW24)) << np.uint64(2)) | (s << np.uint64(1)) | q))
        return np.int64(h & mask) * 4, h
    if mode == EXACT80:
        a, b = _ternary(k1, k2)
        lo = a | (s << np.uint64(39))
        hi = b | (q << np.uint64(39))
        for r in range(4):
            t = hi
            hi = lo ^ _round(hi, r)
            lo = t
        return np.int64(hi & mask) * 4, (lo << np.uint64(24)) | (hi >> np.uint64(16))
    h = _mix(k1 ^ _mix(k2 + np.uint64(0x9E3779B97F4A7C15)))
    g = _mix(k2 ^ _mix(k1 + np.uint64(0xC2B2AE3D27D4EB4F)))
    return np.int64(g & mask) * 4, h


@njit(cache=True, _nrt=False)
def _unternary(a, first):
    """The bitboards ``(m, p)`` of base-3 digits ``a`` of points ``first .. first + 23``."""
    m = np.uint64(0)
    p = np.uint64(0)
    for i in range(24):
        d = a % np.uint64(3)
        a //= np.uint64(3)
        if d == 1:
            m |= np.uint64(1) << np.uint64(first + i)
        elif d == 2:
            p |= np.uint64(1) << np.uint64(first + i)
    return m, p


@njit(cache=True, _nrt=False)
def key_of(tt, i, sw):
    """The canonical key ``(k1, k2, ok)`` that stored word ``sw`` at entry ``i`` stands for
    (``ok`` 0 in a hashed table: no key can be read back)."""
    sw = np.uint64(sw)
    mode = tt.mode[0]
    if mode == EXACT64:
        z = _unmix(sw)
        q = z & np.uint64(1)
        s = (z >> np.uint64(1)) & np.uint64(1)
        t = z >> np.uint64(2)
        a = t % np.uint64(POW24)
        b = t // np.uint64(POW24)
    elif mode == EXACT80:
        hi = ((sw & np.uint64(M24)) << np.uint64(16)) | (np.uint64(i >> 2) & np.uint64(0xFFFF))
        lo = sw >> np.uint64(24)
        for r in range(3, -1, -1):
            t = lo
            lo = hi ^ _round(lo, r)
            hi = t
        a = lo & np.uint64(M39)
        s = lo >> np.uint64(39)
        b = hi & np.uint64(M39)
        q = hi >> np.uint64(39)
    else:
        return EMPTY, EMPTY, 0
    m1, p1 = _unternary(a, 0)
    m2, p2 = _unternary(b, 24)
    return (m1 | m2) | (s << np.uint64(63)) | (q << np.uint64(62)), p1 | p2, 1


# ---------------------------------------------------------------------------- records


@njit(cache=True, _nrt=False, inline="always")
def effort_code(e):
    """``e`` on a scale of half octaves: 0 and 1 for themselves, then ``2L - 2 + h`` for a
    number of ``L`` bits whose second bit is ``h`` (at most 63: about 3.2 * 10^9)."""
    if e <= 1:
        return max(e, 0)
    n = 0
    x = e
    while x > 0:
        n += 1
        x >>= 1
    if n > 32:
        return 63
    return 2 * n - 2 + ((e >> (n - 2)) & 1)


@njit(cache=True, _nrt=False, inline="always")
def code_value(c):
    """The least effort that code ``c`` stands for."""
    if c <= 1:
        return np.int64(c)
    return np.int64(2 + (c & 1)) << np.int64((c + 2) // 2 - 2)


@njit(cache=True, _nrt=False, inline="always")
def effort_of(dw):
    """The least effort an entry's code stands for."""
    return code_value(np.int64((dw >> np.uint64(2)) & np.uint64(63)))


@njit(cache=True, _nrt=False, inline="always")
def add_effort(dw, effort, sw):
    """The code of an entry's effort plus ``effort``, rounded up or down with odds that
    keep its expected value (by a hash of the key and the sum, so a search repeats
    exactly): rounded down only, an entry met again and again with a little work each
    time would never grow."""
    v = effort_of(dw) + effort
    c = effort_code(v)
    lo = code_value(c)
    if c < 63 and v > lo:
        span = code_value(c + 1) - lo
        h = _mix(sw ^ np.uint64(v))
        if np.int64(h % np.uint64(span)) < v - lo:
            c += 1
    return c


@njit(cache=True, _nrt=False, inline="always")
def _open_dw(pn, dn, lb, ec):
    return (np.uint64(OPEN) | (np.uint64(ec) << np.uint64(2)) | (np.uint64(min(pn, NSAT)) << np.uint64(8))
            | (np.uint64(min(dn, NSAT)) << np.uint64(32)) | (np.uint64(min(lb, LBSAT)) << np.uint64(56)))


@njit(cache=True, _nrt=False, inline="always")
def _resolved_dw(kind, dist, lb, best, ec):
    w = np.uint64(kind) | (np.uint64(ec) << np.uint64(2)) | (np.uint64((best + 1) & 0x3FF) << np.uint64(40))
    if kind == PROVEN:
        w |= (np.uint64(min(dist, DMAX)) << np.uint64(8)) | (np.uint64(min(lb, DMAX)) << np.uint64(24))
    return w


@njit(cache=True, _nrt=False, inline="always")
def decode(dw):
    """``(pn, dn, dist, lb, best)`` of a record's data word."""
    kind = dw & np.uint64(3)
    if kind == OPEN:
        return (np.int64((dw >> np.uint64(8)) & np.uint64(NSAT)), np.int64((dw >> np.uint64(32)) & np.uint64(NSAT)),
                DMAX, np.int64(dw >> np.uint64(56)), -1)
    best = np.int64((dw >> np.uint64(40)) & np.uint64(0x3FF)) - 1
    if kind == PROVEN:
        return 0, INF, np.int64((dw >> np.uint64(8)) & np.uint64(0xFFFF)), np.int64((dw >> np.uint64(24)) & np.uint64(0xFFFF)), best
    return INF, 0, DMAX, DMAX, best


@njit(cache=True, _nrt=False)
def tt_prefetch(tt, k1, k2):
    """Start loading the bucket of a key (one cache line)."""
    b, _ = tt_key(tt, k1, k2)
    prefetch(tt.dw, b)


@njit(cache=True, _nrt=False, inline="always")
def tt_probe(tt, k1, k2):
    """A key's record read once and checked (the module docstring): ``(i, pn, dn, dist,
    lb)``, with ``i = -1`` when the key is absent or its record fails the check."""
    b, sw = tt_key(tt, k1, k2)
    for i in range(b, b + 4):
        dw = tt.dw[i]
        if (tt.kw[i] ^ dw) == sw and (dw & np.uint64(3)) != FREE:
            pn, dn, dist, lb, _ = decode(dw)
            return i, pn, dn, dist, lb
    return -1, 1, 1, DMAX, 0


@njit(cache=True, _nrt=False)
def tt_find(tt, k1, k2):
    """The entry of a key in ``tt``, or -1."""
    return tt_probe(tt, k1, k2)[0]


@njit(cache=True, _nrt=False)
def tt_read(tt, k1, k2):
    """``(i, pn, dn, dist, lb, best)`` of a key (``i = -1``: absent)."""
    b, sw = tt_key(tt, k1, k2)
    for i in range(b, b + 4):
        dw = tt.dw[i]
        if (tt.kw[i] ^ dw) == sw and (dw & np.uint64(3)) != FREE:
            pn, dn, dist, lb, best = decode(dw)
            return i, pn, dn, dist, lb, best
    return -1, 1, 1, DMAX, 0, -1


@njit(cache=True, _nrt=False)
def tt_store(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Record a search result (numbers capped at ``INF``, distances at ``DMAX``); a
    resolved entry is kept and only its distances tightened. Returns the entry or -1.
    The old record is read checked and the new one written whole."""
    b, sw = tt_key(tt, k1, k2)
    i = -1
    victim = b
    vscore = np.int64(1) << np.int64(62)
    old = _FREE_DW
    for j in range(b, b + 4):
        dw = tt.dw[j]
        kind = dw & np.uint64(3)
        if kind != FREE and (tt.kw[j] ^ dw) == sw:
            i = j
            old = dw
            break
        if kind == FREE:
            score = np.int64(-1)
        else:
            score = np.int64((dw >> np.uint64(2)) & np.uint64(63))
            if kind != OPEN:
                score += 64
        if score < vscore:
            vscore = score
            victim = j
    if i < 0:
        i = victim
    okind = old & np.uint64(3)
    if okind == PROVEN or okind == DISPROVEN:  # resolved: keep, only tighten the distances
        if pn == 0 and okind == PROVEN:
            _, _, odist, olb, obest = decode(old)
            if dist < odist or lb > olb:
                if dist < odist:
                    odist = dist
                    obest = best
                olb = max(olb, min(lb, DMAX))
                w = _resolved_dw(PROVEN, odist, olb, obest, np.int64((old >> np.uint64(2)) & np.uint64(63)))
                tt.dw[i] = w
                tt.kw[i] = sw ^ w
        return i
    olb = 0
    if okind == OPEN:
        olb = np.int64(old >> np.uint64(56))
    else:
        old = np.uint64(FREE)  # no effort yet
    ec = add_effort(old, effort, sw)
    lb = max(lb, olb)
    if pn == 0:
        w = _resolved_dw(PROVEN, dist, lb, best, ec)
    elif dn == 0:
        w = _resolved_dw(DISPROVEN, DMAX, DMAX, best, ec)
    else:
        w = _open_dw(min(pn, INF), min(dn, INF), lb, ec)
    tt.dw[i] = w
    tt.kw[i] = sw ^ w
    return i


@njit(cache=True, _nrt=False)
def tt_touch(tt, k1, k2):
    """Make sure a key has an entry (a new one open, pn = dn = 1, no effort): a node whose
    result is not stored (path-dependent) is still *explored*, which the draw closure
    reads from the table (:mod:`solver.kernels.closure`). Returns the entry."""
    i, _, _, _, _ = tt_probe(tt, k1, k2)
    if i >= 0:
        return i
    return tt_store(tt, k1, k2, 1, 1, DMAX, 0, -1, 0)


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


# ------------------------------------------------------ tables keyed by (k1, k2) words


@njit(cache=True, _nrt=False)
def bucket(table, k1, k2):
    """First entry of a key's 4-way bucket in a table with ``k1, k2`` key arrays of a
    power-of-two size (``RTT`` of :mod:`solver.kernels.refine`)."""
    mask = np.uint64((table.k1.shape[0] >> 2) - 1)
    h = k1 * np.uint64(0x9E3779B97F4A7C15) ^ (k2 * np.uint64(0xC2B2AE3D27D4EB4F))
    h ^= h >> np.uint64(31)
    return int(h & mask) * 4


@njit(cache=True, _nrt=False)
def key_find(table, k1, k2):
    """The entry of a key in a table with ``k1, k2`` key arrays, or -1."""
    b = bucket(table, k1, k2)
    for i in range(b, b + 4):
        if table.k1[i] == k1 and table.k2[i] == k2:
            return i
    return -1


# ---------------------------------------------------------------------------- persistence


@njit(cache=True, _nrt=False)
def tt_select(tt, min_resolved, min_open, out_idx):
    """Indices of entries worth keeping: resolved with effort >= ``min_resolved``, open
    with effort >= ``min_open`` (efforts as their codes stand for: a power of two at
    most the true one). Returns the count (0 for a hashed table: its keys cannot be read
    back)."""
    if tt.mode[0] == HASHED:
        return 0
    n = 0
    for i in range(tt.dw.shape[0]):
        dw = tt.dw[i]
        kind = dw & np.uint64(3)
        if kind == FREE:
            continue
        e = effort_of(dw)
        if kind != OPEN:
            if e >= min_resolved:
                out_idx[n] = i
                n += 1
        elif e >= min_open:
            out_idx[n] = i
            n += 1
    return n


@njit(cache=True, _nrt=False)
def tt_export(tt, idx, k1, k2, pn, dn, dist, lb, best, effort):
    """The fields of entries ``idx`` (keys read back) into the arrays given."""
    for j in range(idx.shape[0]):
        i = idx[j]
        dw = tt.dw[i]
        a, b, _ = key_of(tt, i, tt.kw[i] ^ dw)
        k1[j] = a
        k2[j] = b
        pn[j], dn[j], dist[j], lb[j], best[j] = decode(dw)
        effort[j] = effort_of(dw)


@njit(cache=True, _nrt=False)
def tt_load(tt, k1, k2, pn, dn, dist, lb, best, effort):
    """Store saved entries (arrays of the fields) into ``tt``, as :func:`tt_store` does."""
    for j in range(k1.shape[0]):
        tt_store(tt, k1[j], k2[j], np.int64(pn[j]), np.int64(dn[j]), np.int64(dist[j]), np.int64(lb[j]),
                 np.int64(best[j]), np.int64(effort[j]))


@njit(cache=True, _nrt=False)
def tt_count(tt):
    """How many entries are in use."""
    n = 0
    for i in range(tt.dw.shape[0]):
        if (tt.dw[i] & np.uint64(3)) != FREE:
            n += 1
    return n
