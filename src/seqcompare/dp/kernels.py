"""Compiled batched DP on the CPU: each call runs many pairs, threads over chunks of pairs (the kernels release
the GIL). One row of the matrix is kept per pair (plus Gotoh's column carries), so memory is O(length)."""

from __future__ import annotations

import numpy as np

from .._jit import jit

BIG = np.int64(1) << np.int64(60)  # "unreachable" for integer DP; far from overflow when costs are added


@jit
def nw_pairs(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, sub, io, ie, do, de, out):
    """Gotoh's affine NW cost of pairs ``first:last`` (target index ``pair_t[p]``, query ``pair_q[p]``)."""
    longest = 0
    for p in range(first, last):
        m = t_off[pair_t[p] + 1] - t_off[pair_t[p]]
        if m > longest:
            longest = m
    H = np.empty(longest + 1, np.int64)
    F = np.empty(longest + 1, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        m = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        n = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        for j in range(1, m + 1):
            H[j] = io + j * ie
            F[j] = BIG
        for i in range(1, n + 1):
            diag = H[0]
            H[0] = do + i * de
            e = BIG
            row = sub[q_codes[q0 + i - 1]]
            for j in range(1, m + 1):
                e = min(e + ie, H[j - 1] + io + ie)
                f = min(F[j] + de, H[j] + do + de)
                h = min(diag + row[t_codes[t0 + j - 1]], min(e, f))
                diag = H[j]
                H[j] = h
                F[j] = f
        out[p] = H[m]


@jit
def dtw_pairs(t_values, t_off, q_values, q_off, pair_t, pair_q, first, last, mode, band, unreachable, out):
    """DTW (|a - b|) of pairs ``first:last``; mode 0 full, 1 open end (min over the last row), 2 subsequence.
    ``band`` < 0: no window. Works on int64 or float64 signals (``unreachable`` of the same type)."""
    longest = 0
    for p in range(first, last):
        m = t_off[pair_t[p] + 1] - t_off[pair_t[p]]
        if m > longest:
            longest = m
    M = np.empty(longest + 1, t_values.dtype)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        m = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        n = q_off[pair_q[p] + 1] - q0
        width = max(band, abs(n - m)) if band >= 0 else m + n
        M[0] = 0
        for j in range(1, m + 1):
            M[j] = 0 if mode == 2 else unreachable
        for i in range(1, n + 1):
            diag = M[0]
            M[0] = unreachable
            x = q_values[q0 + i - 1]
            lo = max(1, i - width)
            hi = min(m, i + width)
            for j in range(1, lo):
                diag = M[j]
                M[j] = unreachable
            for j in range(lo, hi + 1):
                best = min(diag, min(M[j], M[j - 1]))
                diag = M[j]
                if best >= unreachable:
                    M[j] = unreachable
                else:
                    y = t_values[t0 + j - 1]
                    M[j] = best + (x - y if x >= y else y - x)
            for j in range(hi + 1, m + 1):
                M[j] = unreachable
        if mode == 0 or n == 0:
            out[p] = M[m] if (m > 0 or mode == 0) else (0 if mode == 2 else unreachable)
            if n == 0 and mode != 0:
                out[p] = 0 if (mode == 2 or m == 0) else unreachable
        else:
            best = unreachable
            for j in range(1, m + 1):
                if M[j] < best:
                    best = M[j]
            out[p] = best
