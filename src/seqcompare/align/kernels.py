"""Compiled batched DP on the CPU: each call runs many pairs, threads over chunks of pairs (the kernels release
the GIL). One row of the matrix is kept per pair (plus Gotoh's column carries), so memory is O(length)."""

from __future__ import annotations

import numpy as np

from .._intrinsics import add_narrow, min_narrow, sub_narrow
from .._jit import jit
from .costs import BIG


@jit
def _longest_target(t_off, pair_t, first, last):
    """The longest target among pairs ``first:last`` (the size of their shared row buffers)."""
    longest = 0
    for p in range(first, last):
        longest = max(longest, t_off[pair_t[p] + 1] - t_off[pair_t[p]])
    return longest


@jit
def nw_pairs(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, cost_by_query, io, ie, do, de, out):
    """Gotoh's affine NW cost of pairs ``first:last`` (target index ``pair_t[p]``, query ``pair_q[p]``).
    ``cost_by_query[y, x]`` is the cost of target code ``x`` against query code ``y``: the substitution table
    transposed, so that a query row's costs are one contiguous row."""
    longest = _longest_target(t_off, pair_t, first, last)
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
            row = cost_by_query[q_codes[q0 + i - 1]]
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
    ``band`` < 0: no window; else the cells with ``-(band + max(0, n - m)) <= j - i <= band + max(0, m - n)``
    (see :func:`seqcompare.align.api.dtw`). Works on int64 or float64 signals (``unreachable`` of the same type)."""
    longest = _longest_target(t_off, pair_t, first, last)
    M = np.empty(longest + 1, t_values.dtype)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        m = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        n = q_off[pair_q[p] + 1] - q0
        below = band + max(0, n - m) if band >= 0 else m + n  # how far the band reaches under the diagonal
        above = band + max(0, m - n) if band >= 0 else m + n  # and over it
        M[0] = 0
        for j in range(1, m + 1):
            M[j] = 0 if mode == 2 else unreachable
        for i in range(1, n + 1):
            diag = M[0]
            M[0] = unreachable
            x = q_values[q0 + i - 1]
            lo = max(1, i - below)
            hi = min(m, i + above)
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


@jit
def dtw_lanes(t_lanes, q_lanes, t_len, q_len, mode, band, unreachable, out):
    """DTW of ``L`` pairs at once, one per SIMD lane (lanes contiguous, so the innermost loop vectorises);
    modes and band as :func:`dtw_pairs`. Values beyond a lane's lengths are computed but never read."""
    M, L = t_lanes.shape
    N = q_lanes.shape[0]
    dtype = out.dtype
    D = np.empty((M + 1, L), dtype)
    diag = np.empty(L, dtype)
    best_last = np.empty(L, dtype)
    below = np.empty(L, np.int64)  # the band's reach under and over the diagonal, as in dtw_pairs
    above = np.empty(L, np.int64)
    for lane in range(L):
        below[lane] = band + max(0, q_len[lane] - t_len[lane]) if band >= 0 else M + N
        above[lane] = band + max(0, t_len[lane] - q_len[lane]) if band >= 0 else M + N
        best_last[lane] = unreachable
    for j in range(M + 1):
        for lane in range(L):
            D[j, lane] = 0 if (j == 0 or mode == 2) else unreachable
    for lane in range(L):
        if q_len[lane] == 0:
            out[lane] = D[t_len[lane], lane] if mode == 0 else (0 if (mode == 2 or t_len[lane] == 0) else unreachable)
    for i in range(1, N + 1):
        for lane in range(L):
            diag[lane] = D[0, lane]
            D[0, lane] = unreachable
        q = q_lanes[i - 1]
        if band < 0:
            # Unreachable cells need no test here: they start at `unreachable` (inf, or an integer far above
            # any score the caller allows) and only grow.
            for j in range(1, M + 1):
                t = t_lanes[j - 1]
                row = D[j]
                left = D[j - 1]
                for lane in range(L):
                    best = min_narrow(diag[lane], min_narrow(row[lane], left[lane]))
                    diag[lane] = row[lane]
                    x, y = q[lane], t[lane]
                    row[lane] = add_narrow(best, sub_narrow(x, y) if x >= y else sub_narrow(y, x))
        else:  # the same step, with the band's cells kept unreachable
            for j in range(1, M + 1):
                t = t_lanes[j - 1]
                row = D[j]
                left = D[j - 1]
                for lane in range(L):
                    best = min(diag[lane], min(row[lane], left[lane]))
                    diag[lane] = row[lane]
                    x, y = q[lane], t[lane]
                    cost = x - y if x >= y else y - x
                    value = best + cost if best < unreachable else unreachable
                    outside = (i - j > below[lane]) or (j - i > above[lane])
                    row[lane] = unreachable if outside else value
        for lane in range(L):
            if q_len[lane] == i:
                m = t_len[lane]
                if mode == 0:
                    out[lane] = min(D[m, lane], unreachable)
                else:
                    low = unreachable
                    for j in range(1, m + 1):
                        if D[j, lane] < low:
                            low = D[j, lane]
                    out[lane] = low


@jit(reads=("t", "q"))
def nw_traceback(t, q, cost_by_query, io, ie, do, de, ops):
    """Gotoh NW with a traceback: fills ``ops`` (length >= n + m) from the end with 0 = M, 1 = I (target
    base against a gap), 2 = D (query base against a gap); returns ``(cost, first)`` with the alignment in
    ``ops[first:]``. Two bits per cell and state record where each of H, E and F came from. ``cost_by_query``
    as :func:`nw_pairs` takes it."""
    m, n = t.size, q.size
    H = np.empty(m + 1, np.int64)
    F = np.empty(m + 1, np.int64)
    # per cell: bit 0-1 H's source (0 diagonal, 1 E, 2 F); bit 2: E extends E; bit 3: F extends F
    where = np.zeros((n + 1, m + 1), np.uint8)
    H[0] = 0
    for j in range(1, m + 1):
        H[j] = io + j * ie
        F[j] = BIG
        where[0, j] = 1 | 4 if j > 1 else 1
    for i in range(1, n + 1):
        diag = H[0]
        H[0] = do + i * de
        where[i, 0] = 2 | 8 if i > 1 else 2
        e = BIG
        row = cost_by_query[q[i - 1]]
        for j in range(1, m + 1):
            e_open = H[j - 1] + io + ie
            e_ext = e + ie
            code = 0
            if e_ext <= e_open:
                e = e_ext
                code |= 4
            else:
                e = e_open
            f_open = H[j] + do + de
            f_ext = F[j] + de
            if f_ext <= f_open:
                f = f_ext
                code |= 8
            else:
                f = f_open
            h = diag + row[t[j - 1]]
            if e < h:
                h = e
                code |= 1
            if f < h:
                h = f
                code = (code & ~3) | 2
            diag = H[j]
            H[j] = h
            F[j] = f
            where[i, j] = code
    at = ops.size
    i, j, state = n, m, 0  # 0: H, 1: E, 2: F
    while i > 0 or j > 0:
        code = where[i, j]
        if state == 0:
            source = code & 3
            if source == 0:
                at -= 1
                ops[at] = 0
                i -= 1
                j -= 1
            else:
                state = source
        elif state == 1:
            at -= 1
            ops[at] = 1
            state = 1 if code & 4 else 0
            j -= 1
        else:
            at -= 1
            ops[at] = 2
            state = 2 if code & 8 else 0
            i -= 1
    return H[m], at


@jit(reads=("ops", "firsts", "ends"))
def cigar_text(ops, firsts, ends, text, text_ends) -> None:
    """Each CIGAR ``ops[firsts[k] : ends[k]]`` (operation codes 0 = M, 1 = I, 2 = D) written as ASCII
    ``<count><letter>`` runs into ``text`` (at least twice the codes' total long: a run of ``c`` codes takes at
    most ``c + 1`` bytes), the ``k``-th ending at ``text_ends[k]``."""
    digits = np.empty(20, np.uint8)
    at = 0
    for k in range(firsts.size):
        i = firsts[k]
        end = ends[k]
        while i < end:
            op = ops[i]
            j = i + 1
            while j < end and ops[j] == op:
                j += 1
            count = j - i
            d = 0
            while True:
                digits[d] = 48 + count % 10
                count //= 10
                d += 1
                if count == 0:
                    break
            for x in range(d - 1, -1, -1):
                text[at] = digits[x]
                at += 1
            text[at] = 77 if op == 0 else (73 if op == 1 else 68)  # M, I, D
            at += 1
            i = j
        text_ends[k] = at
