"""Bit tricks numba lacks as builtins: popcount, count trailing zeros, parallel bit
extract, 16-bit CAS, prefetch.

All take and return ``uint64`` (``uint16`` for the CAS) so that no arithmetic silently
turns into int64 or float (numba types ``uint64 + 1``, ``x & 0xFF`` or ``x * 3`` as
int64 unless the constants are ``np.uint64``).
"""

from __future__ import annotations

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import types
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


# BMI2's pext is one instruction where the host has it (numba compiles for the host CPU);
# elsewhere the same result from a loop over the mask's bits.
HAS_PEXT = bool(llvm.get_host_cpu_features().get("bmi2", False))


def _pext_loop(x, mask):
    out = 0
    bit = 1
    while mask:
        low = mask & -mask
        if x & low:
            out |= bit
        bit <<= 1
        mask ^= low
    return out


@intrinsic
def pext(typingctx, x, mask):
    """The bits of ``x`` at the set bits of ``mask``, packed into the low bits in order
    (BMI2 ``pext``): ``pext(0b1010, 0b1110) == 0b101``."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        if HAS_PEXT:
            i64 = ir.IntType(64)
            fn = builder.module.declare_intrinsic("llvm.x86.bmi.pext.64", fnty=ir.FunctionType(i64, [i64, i64]))
            return builder.call(fn, args)
        return context.compile_internal(builder, _pext_loop, signature, args)

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


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint the cache to load ``arr[idx]`` (LLVM ``prefetch``, read, high locality)."""
    if not isinstance(arr, types.Array):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
        i8p = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p.type, i32, i32, i32])
        name = "llvm.prefetch.p0" if str(i8p.type) == "ptr" else "llvm.prefetch.p0i8"  # opaque pointers or not
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        builder.call(fn, [i8p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
