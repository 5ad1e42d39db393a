"""Bit tricks numba lacks as builtins: popcount, count trailing zeros, 16-bit CAS.

All take and return ``uint64`` (``uint16`` for the CAS) so that no arithmetic silently
turns into int64 or float (DESIGN.md pitfalls).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

ONE = np.uint64(1)
ZERO = np.uint64(0)


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ``ctpop``)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, [args[0]])

    return sig, codegen


@intrinsic
def ctz(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM ``cttz``)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.cttz", [ir.IntType(64), ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 0)])

    return sig, codegen


@intrinsic
def cas_u16(typingctx, arr, idx, expected, new):
    """Atomic compare-and-swap on ``arr[idx]`` (a uint16 array); returns the old value.

    Works across processes on shared memory: it is a hardware ``cmpxchg``.
    """
    if not (isinstance(arr, types.Array) and arr.dtype == types.uint16):
        return None
    sig = types.uint16(arr, idx, types.uint16, types.uint16)

    def codegen(context, builder, signature, args):
        arr_v, idx_v, exp_v, new_v = args
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, arr_v)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [idx_v], wraparound=False)
        res = builder.cmpxchg(ptr, exp_v, new_v, "monotonic", "monotonic")
        return builder.extract_value(res, 0)

    return sig, codegen


@njit(cache=True)
def bit(i):
    return ONE << np.uint64(i)
