"""One place for Numba options, so every kernel compiles the same way.

Kernels are compiled lazily, on first call; importing this module imports Numba but compiles nothing.
Set ``SEQCOMPARE_DISABLE_NUMBA_CACHE=1`` to stop Numba writing its on-disk cache (read-only installs).
"""

from __future__ import annotations

import os

from numba import njit, types
from numba.extending import intrinsic

_USE_CACHE = os.environ.get("SEQCOMPARE_DISABLE_NUMBA_CACHE", "") in ("", "0")

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
