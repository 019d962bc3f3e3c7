"""One place for Numba options, so every kernel compiles the same way.

Kernels are compiled lazily, on first call; importing this module imports Numba but compiles nothing.
Set ``SEQCOMPARE_DISABLE_NUMBA_CACHE=1`` to stop Numba writing its on-disk cache (read-only installs).
"""

from __future__ import annotations

import os

from numba import njit, types
from numba.core import event
from numba.extending import intrinsic

from .progress import notice_compilation

# A forced SIMD width (seqcompare._simd) changes compiled code that Numba's cache key cannot see.
_USE_CACHE = os.environ.get("SEQCOMPARE_DISABLE_NUMBA_CACHE", "") in ("", "0") and not os.environ.get(
    "SEQCOMPARE_VECTOR_BYTES"
)


class _CompileListener(event.Listener):
    """Tells :mod:`seqcompare.progress` when Numba compiles (it fires only on a cache miss, not on a load)."""

    def on_start(self, ev):
        notice_compilation()

    def on_end(self, ev):
        pass


event.register("numba:compile", _CompileListener())

# fastmath stays off: every kernel here is integer or must propagate NaN exactly.
DEFAULT_OPTIONS = {"nogil": True, "cache": _USE_CACHE, "fastmath": False}


def jit(function=None, **options):
    """Compile ``function`` with the package's Numba defaults (``nogil``, cached, no fastmath)."""
    merged = {**DEFAULT_OPTIONS, **options}

    def decorate(fn):
        return njit(**merged)(fn)

    return decorate if function is None else decorate(function)


@intrinsic
def popcount64(typingctx, word):
    """Population count of a 64-bit word as int64 (so sums stay integer); lowers to LLVM ``ctpop``."""
    signature = types.int64(types.uint64)

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])

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
