"""Bit-packed popcount tile kernels (Numba, one tile per call, GIL released so tiles run in threads).

Operands are :func:`seqcompare.encoding.pack_planes` arrays ``(n, P + 1, W)``; the last plane is validity.
Per 64 sites the count is one popcount of

* equal:    ``(OR_p a_p ^ b_p) & valid_a & valid_b``
* disjoint: ``~(OR_p a_p & b_p) & valid_a & valid_b``

The inner loops run over contiguous words with no branches, so LLVM vectorises them (VPOPCNTQ on CPUs with
AVX-512 VPOPCNTDQ). Four rows of the left operand share each load of the right one, which cuts cache traffic
four-fold. ``cap`` implements early exit: counting stops once a pair reaches it (checked every
``_CHUNK_WORDS`` words) and the stored value is ``min(count, cap)``.
"""

import numpy as np

from .._jit import jit, popcount64

_CHUNK_WORDS = 64


@jit
def _dna_pair(a, b, cap):
    words = a.shape[1]
    total = 0
    start = 0
    while start < words:
        stop = min(words, start + _CHUNK_WORDS)
        for w in range(start, stop):
            x = ((a[0, w] ^ b[0, w]) | (a[1, w] ^ b[1, w])) & a[2, w] & b[2, w]
            total += popcount64(x)
        if total >= cap:
            return cap
        start = stop
    return total


@jit
def _dna_four(a0, a1, a2, a3, b, cap, result):
    """Counts of four left rows against one right row, sharing the loads of ``b``."""
    words = b.shape[1]
    t0 = 0
    t1 = 0
    t2 = 0
    t3 = 0
    start = 0
    while start < words:
        stop = min(words, start + _CHUNK_WORDS)
        for w in range(start, stop):
            b0 = b[0, w]
            b1 = b[1, w]
            bv = b[2, w]
            t0 += popcount64(((a0[0, w] ^ b0) | (a0[1, w] ^ b1)) & a0[2, w] & bv)
            t1 += popcount64(((a1[0, w] ^ b0) | (a1[1, w] ^ b1)) & a1[2, w] & bv)
            t2 += popcount64(((a2[0, w] ^ b0) | (a2[1, w] ^ b1)) & a2[2, w] & bv)
            t3 += popcount64(((a3[0, w] ^ b0) | (a3[1, w] ^ b1)) & a3[2, w] & bv)
        if min(min(t0, t1), min(t2, t3)) >= cap:
            break
        start = stop
    result[0] = min(t0, cap)
    result[1] = min(t1, cap)
    result[2] = min(t2, cap)
    result[3] = min(t3, cap)


@jit
def _generic_pair(a, b, n_planes, disjoint, cap):
    words = a.shape[1]
    total = 0
    start = 0
    while start < words:
        stop = min(words, start + _CHUNK_WORDS)
        for w in range(start, stop):
            x = np.uint64(0)
            if disjoint:
                for p in range(n_planes):
                    x |= a[p, w] & b[p, w]
                x = ~x
            else:
                for p in range(n_planes):
                    x |= a[p, w] ^ b[p, w]
            total += popcount64(x & a[n_planes, w] & b[n_planes, w])
        if total >= cap:
            return cap
        start = stop
    return total


@jit
def bitpack_tile(left, right, row0, row1, col0, col1, lower, disjoint, cap, out):
    """Fill ``out`` (rows ``row0:row1`` x cols ``col0:col1``) with distances capped at ``cap``.

    When ``lower`` (a diagonal tile of a symmetric problem, ``row0 == col0``) only pairs ``j < i`` are
    counted, then mirrored; the diagonal is zero.
    """
    n_planes = left.shape[1] - 1
    dna = n_planes == 2 and not disjoint
    four = np.empty(4, np.int64)
    i = row0
    while i < row1:
        j_stop = i if lower else col1
        if dna and i + 4 <= row1:
            for j in range(col0, j_stop):
                _dna_four(left[i], left[i + 1], left[i + 2], left[i + 3], right[j], cap, four)
                for k in range(4):
                    out[i + k - row0, j - col0] = four[k]
                    if lower:
                        out[j - col0, i + k - row0] = four[k]
            if lower:
                # Pairs among the four rows themselves.
                for k in range(4):
                    for q in range(k):
                        d = _dna_pair(left[i + k], right[i + q], cap)
                        out[i + k - row0, i + q - col0] = d
                        out[i + q - col0, i + k - row0] = d
                    out[i + k - row0, i + k - col0] = 0
            i += 4
            continue
        for j in range(col0, j_stop):
            if dna:
                d = _dna_pair(left[i], right[j], cap)
            else:
                d = _generic_pair(left[i], right[j], n_planes, disjoint, cap)
            out[i - row0, j - col0] = d
            if lower:
                out[j - col0, i - row0] = d
        if lower:
            out[i - row0, i - col0] = 0
        i += 1
