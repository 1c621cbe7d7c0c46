"""LLVM's prefetch, for numba kernels (numba has no spelling of it)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]


@intrinsic
def prefetch(typingctx, array, row, column):  # pragma: no cover - compiled
    """Ask the CPU to start loading ``array[row, column]``'s cache line (LLVM's prefetch:
    no fault, no wait; the load that follows finds the line on its way or already there)."""

    def codegen(context, builder, signature, args):
        kind = signature.args[0]
        ary = context.make_array(kind)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(context, builder, kind, ary, [args[1], args[2]])
        byte = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        int32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [byte.type, int32, int32, int32])
        prefetch = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(prefetch, [byte, ir.Constant(int32, 0), ir.Constant(int32, 3),
                                ir.Constant(int32, 1)])  # fmt: skip
        return context.get_dummy_value()

    return types.void(array, types.intp, types.intp), codegen
