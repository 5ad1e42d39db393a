"""What df-pn needs to run on several threads over one table: :class:`Par` and its atomics.

Each thread runs :func:`solver.kernels.dfpn.dfpn` (compiled ``nogil``) on the same root
with its own stack, counters and :class:`Par`; all share the table
(:mod:`solver.kernels.table`, lockless: every record is checked against its key) and ``ctl``.

* Repetitions are a thread's own business: ``path`` (one per thread, :data:`PATH_SLOTS`
  counters, small enough to stay in the core's cache) counts the frames of the thread's
  path by a hash of their keys (:func:`path_slot`); only when a child's counter is not zero
  are the frames looked through for its key (:func:`on_path`), which gives the ply of the
  repetition. One thread searches the same way (its ``path`` in :func:`no_par`). Table
  entries can be replaced while their keys are on a path; the frames keep their keys, so
  that changes nothing here (the path-dependence argument of :mod:`solver.kernels.dfpn`
  holds per thread: a thread stores a disproof only when it relies on nothing above the
  node on its own path).
* Virtual proof numbers (after Kaneko 2010, "Parallel depth first proof number search"):
  the table's ``busy`` counters (:mod:`solver.kernels.table`, :data:`BUSY_SLOTS` of them,
  by key hash: :func:`busy_slot`) count the threads whose path holds a key, changed by
  atomic compare-and-swap. When a thread picks the child to follow, a child that ``b``
  other threads are in counts with its picking number (pn at an OR node, dn at an AND
  node) times ``1 + b``, so threads spread over the tree instead of all following the one
  most-proving line. Virtual numbers steer the choice and the child's threshold only; what
  a node stores and returns is its real numbers, so answers do not depend on them (nor on
  two keys sharing a counter).
* Ties among equally good children are broken per thread (a rotation of the child order
  drawn from ``seed``), and ``spin`` > 0 adds random busy-waits (tests vary the
  interleaving with it).
* ``ctl[0]`` is the stop flag: a thread that settles the root sets it, and every thread
  leaves at its next node (unwinding as at the end of a budget). ``ctl[1]`` is left to the
  driver (:mod:`solver.search.parallel`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from solver.kernels.bits import cas_u16
from solver.kernels.table import NOPATH

# on: 0 for one thread, 1 for a thread of several; path: this thread's frames counted by
# key hash (:func:`path_slot`); busy: the table's thread counts (uint16, CAS); ctl:
# shared flags; rot: this thread's tie-break rotation seed (0: none); spin: random
# busy-waits per 1024 nodes (0: none); rng: this thread's random state (one uint64);
# vnum: 1 to steer by virtual proof numbers, 0 not to
Par = namedtuple("Par", "on path busy ctl rot spin rng vnum")


def no_par() -> Par:
    """The one-thread setting (its own path counters; no thread counts)."""
    return Par(0, np.zeros(PATH_SLOTS, dtype=np.uint16), np.zeros(1, dtype=np.uint16), np.zeros(2, dtype=np.int64),
               0, 0, np.ones(1, dtype=np.uint64), 0)


def new_par(tt, ctl: np.ndarray, tid: int, spin: int = 0, seed: int = 0, vnum: int = 1) -> Par:
    """Thread ``tid``'s setting over table ``tt`` and the shared flags ``ctl`` (int64[2]).
    Thread 0 keeps the plain child order unless ``seed`` is given."""
    rot = 0 if tid == 0 and seed == 0 else (seed * 0x9E3779B1 + tid * 0x85EBCA77 + 1) & 0x7FFFFFFF
    rng = np.array([(seed * 0x2545F4914F6CDD1D + tid * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF or 1],
                   dtype=np.uint64)
    return Par(1, np.zeros(PATH_SLOTS, dtype=np.uint16), tt.busy, ctl, rot, spin, rng, vnum)


PATH_SLOTS = 1 << 14  # a path is at most a few thousand frames: few slots are shared


@njit(cache=True, _nrt=False, inline="always")
def path_slot(k1, k2):
    """The counter of a key in a thread's ``path``."""
    return np.int64(((k1 ^ (k2 * np.uint64(0x9E3779B97F4A7C15))) * np.uint64(0xC2B2AE3D27D4EB4F)) >> np.uint64(50))


@njit(cache=True, _nrt=False, inline="always")
def on_path(st, d, k1, k2):
    """The ply of the frame of ``st`` (frames ``0..d``) that holds key ``(k1, k2)``, or
    ``NOPATH``."""
    for pl in range(d, -1, -1):
        if st.f_k1[pl] == k1 and st.f_k2[pl] == k2:
            return np.int64(pl)
    return np.int64(NOPATH)


@intrinsic
def load_i64(typingctx, arr, idx):
    """``arr[idx]`` of an int64 array as an atomic (monotonic) load: read from memory each
    time, never hoisted out of a loop (another thread writes it)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.int64):
        return None
    sig = types.int64(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        return builder.load_atomic(ptr, "monotonic", 8)

    return sig, codegen


@njit(cache=True, _nrt=False, inline="always")
def busy_add(busy, i, delta):
    """Add ``delta`` (1 or -1) to the thread count of slot ``i`` (:func:`busy_slot`)."""
    while True:
        old = busy[i]
        new = np.uint16((np.int64(old) + delta) & 0xFFFF)
        if cas_u16(busy, i, old, new) == old:
            return


@njit(cache=True, _nrt=False, inline="always")
def busy_slot(busy, k1, k2):
    """The thread counter of a key in ``busy``."""
    h = ((k1 * np.uint64(0xC2B2AE3D27D4EB4F)) ^ k2) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64((h >> np.uint64(32)) & np.uint64(busy.shape[0] - 1))


@njit(cache=True, _nrt=False, inline="always")
def next_random(rng):
    """xorshift64: the thread's next random word."""
    x = rng[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    rng[0] = x
    return x


@njit(cache=True, _nrt=False)
def maybe_spin(par):
    """With ``par.spin``: now and then wait a random while, polling the stop flag (a test's
    way to vary which thread writes an entry first)."""
    x = next_random(par.rng)
    if (x & np.uint64(1023)) < np.uint64(par.spin):
        for _ in range(np.int64((x >> np.uint64(10)) & np.uint64(0xFFFF))):
            if load_i64(par.ctl, 0):
                break
