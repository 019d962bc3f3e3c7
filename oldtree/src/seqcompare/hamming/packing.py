"""Compiled encoders: byte-to-code tables and bit-plane packing (apart so that importing
:mod:`seqcompare.hamming.encoding` compiles nothing)."""

import numpy as np

from .._jit import jit


@jit
def apply_table(table, matrix, out):
    """``out[i, s] = table[matrix[i, s]]`` (``np.take`` widens indices to intp, which is 8x the traffic)."""
    n, m = matrix.shape
    for i in range(n):
        for s in range(m):
            out[i, s] = table[matrix[i, s]]


@jit(reads=("matrix", "patterns"))
def pack_rows(matrix, patterns, n_plane_bits, row_start, row_stop, out):
    """Pack rows ``row_start:row_stop``: bit ``k`` of ``out[i, p, w]`` = bit ``p`` of
    ``patterns[matrix[i, 64 w + k]]``.

    ``patterns`` maps each input value straight to its plane bits (value planes, then validity), so the
    code matrix is never materialised. One table look-up per site; the per-plane bit gathering then runs
    over a 64-entry buffer in loops LLVM vectorises.
    """
    m = matrix.shape[1]
    words = out.shape[2]
    site_bits = np.zeros(64, np.uint64)
    for i in range(row_start, row_stop):
        row = matrix[i]
        for w in range(words):
            start = w * 64
            count = min(m, start + 64) - start
            for k in range(count):
                site_bits[k] = patterns[row[start + k]]
            for k in range(count, 64):
                site_bits[k] = 0
            for p in range(n_plane_bits):
                word = np.uint64(0)
                shift = np.uint64(p)
                for k in range(64):
                    word |= ((site_bits[k] >> shift) & np.uint64(1)) << np.uint64(k)
                out[i, p, w] = word
