"""Numba intrinsics the kernels share: a population count and arithmetic that keeps narrow integer types.

Apart from :mod:`seqcompare._jit` because defining them imports Numba: only kernel modules import this one.
"""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic


@intrinsic
def popcount64(typingctx, word):
    """Population count of a 64-bit word as int64 (so sums stay integer); lowers to LLVM ``ctpop``."""
    signature = types.int64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

    return signature, codegen


@intrinsic
def trailing_zeros64(typingctx, word):
    """Trailing zero bits of a 64-bit word as int64 (64 for zero); lowers to LLVM ``cttz`` (TZCNT)."""
    signature = types.int64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], context.get_constant(types.boolean, False))

    return signature, codegen


# Integer arithmetic in Numba is typed as int64, so kernels that keep many narrow values per SIMD register
# (16-bit DP lanes) would be widened to 8 lanes per 512-bit register. These keep the operands' own type: two
# values of one numeric type in, that type out (integers wrap like the hardware; callers ensure no overflow).
def _same_type(name, integer_op, float_op):
    @intrinsic
    def operation(typingctx, a, b):
        if not (isinstance(a, (types.Integer, types.Float)) and a == b):
            return None
        signature = a(a, b)

        def codegen(context, builder, sig, args):
            build = float_op if isinstance(sig.return_type, types.Float) else integer_op
            return build(builder, *args)

        return signature, codegen

    operation.__name__ = name
    return operation


add_narrow = _same_type("add_narrow", lambda b, x, y: b.add(x, y), lambda b, x, y: b.fadd(x, y))
sub_narrow = _same_type("sub_narrow", lambda b, x, y: b.sub(x, y), lambda b, x, y: b.fsub(x, y))
min_narrow = _same_type("min_narrow", lambda b, x, y: b.select(b.icmp_signed("<", x, y), x, y),
                        lambda b, x, y: b.select(b.fcmp_ordered("<", x, y), x, y))  # fmt: skip
