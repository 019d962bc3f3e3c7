"""Bit-packed popcount tile kernels (Numba, one tile per call, GIL released so tiles run in threads).

Operands are :func:`seqcompare.encoding.pack_planes` arrays ``(n, P + 1, W)`` viewed as rows of
``(P + 1) * W`` words (plane ``p`` of a row at words ``p*W .. p*W + W - 1``; the last plane is validity).
Per 64 sites the count is one popcount of

* equal:    ``(OR_p a_p ^ b_p) & valid_a & valid_b``
* disjoint: ``~(OR_p a_p & b_p) & valid_a & valid_b``

Word indices are unsigned: Numba wraps negative signed indices, and that select stops LLVM from seeing a
unit-stride loop (it emitted gathers); with unsigned indices the loops vectorise (VPOPCNTQ on CPUs with
AVX-512 VPOPCNTDQ). The DNA kernel (two value planes) works
on 4 left x 2 right rows at a time: every loaded word is used two or four times, which keeps it compute-bound.
``cap`` gives early exit: a block of pairs stops counting once all its pairs reached ``cap`` (checked every
``_CHUNK_WORDS`` words) and every stored value is ``min(count, cap)``.
"""

import numpy as np

from .._intrinsics import popcount64
from .._jit import jit

_CHUNK_WORDS = 128


@jit(inline="always")
def _dna_word(a0, a1, av, b0, b1, bv):
    return popcount64(((a0 ^ b0) | (a1 ^ b1)) & av & bv)


@jit
def _dna_block_4x2(x0, x1, x2, x3, y0, y1, words, cap, result):
    """Distances of left rows x0..x3 to right rows y0, y1 (flat DNA rows), into ``result[8]``."""
    w1 = np.uint64(words)
    w2 = np.uint64(2 * words)
    t00 = 0
    t10 = 0
    t20 = 0
    t30 = 0
    t01 = 0
    t11 = 0
    t21 = 0
    t31 = 0
    start = 0
    while start < words:
        stop = min(words, start + _CHUNK_WORDS)
        for word in range(start, stop):
            w = np.uint64(word)
            p0 = y0[w]
            p1 = y0[w1 + w]
            pv = y0[w2 + w]
            q0 = y1[w]
            q1 = y1[w1 + w]
            qv = y1[w2 + w]
            a0 = x0[w]
            a1 = x0[w1 + w]
            av = x0[w2 + w]
            t00 += _dna_word(a0, a1, av, p0, p1, pv)
            t01 += _dna_word(a0, a1, av, q0, q1, qv)
            a0 = x1[w]
            a1 = x1[w1 + w]
            av = x1[w2 + w]
            t10 += _dna_word(a0, a1, av, p0, p1, pv)
            t11 += _dna_word(a0, a1, av, q0, q1, qv)
            a0 = x2[w]
            a1 = x2[w1 + w]
            av = x2[w2 + w]
            t20 += _dna_word(a0, a1, av, p0, p1, pv)
            t21 += _dna_word(a0, a1, av, q0, q1, qv)
            a0 = x3[w]
            a1 = x3[w1 + w]
            av = x3[w2 + w]
            t30 += _dna_word(a0, a1, av, p0, p1, pv)
            t31 += _dna_word(a0, a1, av, q0, q1, qv)
        low = min(min(min(t00, t10), min(t20, t30)), min(min(t01, t11), min(t21, t31)))
        if low >= cap:
            break
        start = stop
    result[0] = min(t00, cap)
    result[1] = min(t10, cap)
    result[2] = min(t20, cap)
    result[3] = min(t30, cap)
    result[4] = min(t01, cap)
    result[5] = min(t11, cap)
    result[6] = min(t21, cap)
    result[7] = min(t31, cap)


@jit
def _pair(x, y, n_planes, words, disjoint, cap):
    """Distance of two flat rows, any number of planes, either relation."""
    stride = np.uint64(words)
    valid = np.uint64(n_planes * words)
    total = 0
    start = 0
    while start < words:
        stop = min(words, start + _CHUNK_WORDS)
        if n_planes == 2 and not disjoint:
            for word in range(start, stop):
                w = np.uint64(word)
                total += _dna_word(x[w], x[stride + w], x[valid + w], y[w], y[stride + w], y[valid + w])
        elif disjoint:
            for word in range(start, stop):
                w = np.uint64(word)
                shared = x[w] & y[w]
                for p in range(1, n_planes):
                    offset = np.uint64(p) * stride + w
                    shared |= x[offset] & y[offset]
                total += popcount64(~shared & x[valid + w] & y[valid + w])
        else:
            for word in range(start, stop):
                w = np.uint64(word)
                differ = x[w] ^ y[w]
                for p in range(1, n_planes):
                    offset = np.uint64(p) * stride + w
                    differ |= x[offset] ^ y[offset]
                total += popcount64(differ & x[valid + w] & y[valid + w])
        if total >= cap:
            return cap
        start = stop
    return total


@jit(reads=("left", "right"))
def bitpack_tile(left, right, row0, row1, col0, col1, lower, disjoint, cap, out):
    """Fill ``out`` (rows ``row0:row1`` x cols ``col0:col1``) with distances capped at ``cap``.

    ``left`` and ``right`` are packed planes ``(n, P + 1, W)``. When ``lower`` (a diagonal tile of a
    symmetric problem, ``row0 == col0``) only pairs ``j < i`` are counted, then mirrored; the diagonal is 0.
    """
    n_planes = left.shape[1] - 1
    words = left.shape[2]
    flat_left = left.reshape(left.shape[0], (n_planes + 1) * words)
    flat_right = right.reshape(right.shape[0], (n_planes + 1) * words)
    dna = n_planes == 2 and not disjoint
    block = np.empty(8, np.int64)
    i = row0
    while i < row1:
        j_stop = i if lower else col1
        j = col0
        if dna and i + 4 <= row1:
            x0 = flat_left[i]
            x1 = flat_left[i + 1]
            x2 = flat_left[i + 2]
            x3 = flat_left[i + 3]
            while j + 2 <= j_stop:
                _dna_block_4x2(x0, x1, x2, x3, flat_right[j], flat_right[j + 1], words, cap, block)
                for k in range(4):
                    out[i + k - row0, j - col0] = block[k]
                    out[i + k - row0, j + 1 - col0] = block[4 + k]
                j += 2
            rows_done = 4
        else:
            rows_done = 1
        # Columns the 4x2 blocks did not cover, row by row.
        for k in range(rows_done):
            for jj in range(j, j_stop):
                out[i + k - row0, jj - col0] = _pair(
                    flat_left[i + k], flat_right[jj], n_planes, words, disjoint, cap
                )
        if lower:
            # Pairs among the rows just handled, then mirror their rows into the upper triangle.
            for k in range(rows_done):
                for q in range(k):
                    out[i + k - row0, i + q - col0] = _pair(
                        flat_left[i + k], flat_right[i + q], n_planes, words, disjoint, cap
                    )
                out[i + k - row0, i + k - col0] = 0
                for jj in range(col0, i + k):
                    out[jj - col0, i + k - row0] = out[i + k - row0, jj - col0]
        i += rows_done
