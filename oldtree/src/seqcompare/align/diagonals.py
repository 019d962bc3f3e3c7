"""NW and DTW of small batches in NumPy alone: every pair at once, one anti-diagonal of the DP per step.

Numba's import and cache load cost about 0.35 s, far more than a few short pairs take. Here the pairs are
padded to a common shape and swept together: the cells of one anti-diagonal (``i + j = d``) depend only on
the two diagonals before it, so each step is a handful of NumPy operations over ``pairs x diagonal`` cells.
Cells past a pair's own lengths are computed from padding and never read, since the DP only looks up and
left; each pair's result is taken on the diagonal that holds its last cell.

The results equal the compiled kernels' exactly: integers in int64, floats in the signals' own dtype with
one rounding per operation in the same order (``|x - y|``, then ``best + cost``).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from .costs import BIG

# Batches with at most this many diagonals and padded cells take the NumPy sweep: at most about 10 ms each on
# one core, where the compiled kernels take a millisecond once loaded, after 0.35 s to load them.
SMALL_DIAGONALS = 512
SMALL_CELLS = 1 << 19
# Once the sweep has cost a process as much as loading the compiled kernels would, the kernels take over (a
# caller scoring small batches in a loop pays the load once, not 10 ms a call forever).
SWEEP_BUDGET_S = 0.3
_spent_s = [0.0]


def is_small(t_len: np.ndarray, q_len: np.ndarray) -> bool:
    """Whether the pairs with these lengths are few and short enough for the NumPy sweep (and the process has
    not yet spent its budget on it)."""
    if _spent_s[0] >= SWEEP_BUDGET_S:
        return False
    if not len(t_len):
        return True
    longest_t, longest_q = int(t_len.max()), int(q_len.max())
    cells = len(t_len) * (longest_t + 1) * (longest_q + 1)
    return longest_t + longest_q <= SMALL_DIAGONALS and cells <= SMALL_CELLS


def _timed(sweep):
    """``sweep`` with its time added to what the process has spent on the NumPy path."""

    @functools.wraps(sweep)
    def timed(*args):
        start = time.perf_counter()
        try:
            return sweep(*args)
        finally:
            _spent_s[0] += time.perf_counter() - start

    return timed


def _padded(values: np.ndarray, offsets: np.ndarray, index: np.ndarray, fill=0):
    """``(pairs, longest)`` rows of the sequences ``index`` names, padded with ``fill``, and their lengths."""
    starts = offsets[index]
    lengths = (offsets[index + 1] - starts).astype(np.int64)
    width = int(lengths.max(initial=0))
    columns = np.arange(width, dtype=np.int64)
    inside = columns[None, :] < lengths[:, None]
    if values.size == 0:
        return np.full((len(index), width), fill, dtype=values.dtype), lengths
    at = np.minimum(starts[:, None] + columns[None, :], values.size - 1)
    return np.where(inside, values[at], np.asarray(fill, dtype=values.dtype)), lengths


@_timed
def nw_small(t_codes, t_off, q_codes, q_off, plan: np.ndarray, substitution: np.ndarray, io: int, ie: int,
             do: int, de: int) -> np.ndarray:  # fmt: skip
    """Gotoh's affine NW costs (int64) of ``plan``'s pairs, as :func:`seqcompare.align.kernels.nw_pairs`."""
    pairs = len(plan)
    out = np.zeros(pairs, dtype=np.int64)
    if pairs == 0:
        return out
    T, m = _padded(t_codes, t_off, plan[:, 0])
    Q, n = _padded(q_codes, q_off, plan[:, 1])
    M, N = T.shape[1], Q.shape[1]
    table = np.asarray(substitution, dtype=np.int64)
    infinite = np.int64(BIG)
    rows = np.arange(pairs)
    ends = m + n
    H_before = np.zeros((pairs, N + 1), np.int64)  # diagonal d - 2 (values indexed by the row i)
    H_last = np.zeros((pairs, N + 1), np.int64)  # diagonal d - 1
    E_last = np.full((pairs, N + 1), infinite)
    F_last = np.full((pairs, N + 1), infinite)
    for d in range(M + N + 1):
        H = np.empty((pairs, N + 1), np.int64)
        E = np.full((pairs, N + 1), infinite)
        F = np.full((pairs, N + 1), infinite)
        first, last = max(1, d - M), min(N, d - 1)  # rows of the cells with i >= 1 and j >= 1
        if first <= last:
            inner = slice(first, last + 1)
            above = slice(first - 1, last)
            E[:, inner] = np.minimum(E_last[:, inner] + ie, H_last[:, inner] + (io + ie))
            F[:, inner] = np.minimum(F_last[:, above] + de, H_last[:, above] + (do + de))
            # Row i meets column j = d - i: target codes d - i - 1, from d - first - 1 down to d - last - 1.
            cost = table[T[:, d - last - 1 : d - first][:, ::-1], Q[:, first - 1 : last]]
            H[:, inner] = np.minimum(H_before[:, above] + cost, np.minimum(E[:, inner], F[:, inner]))
        if d <= M:  # row 0: the target consumed against a gap
            H[:, 0] = 0 if d == 0 else io + d * ie
            E[:, 0] = infinite if d == 0 else io + d * ie
        if 1 <= d <= N:  # column 0: the query against a gap
            H[:, d] = F[:, d] = do + d * de
        finished = ends == d
        if finished.any():
            out[finished] = H[rows[finished], n[finished]]
        H_before, H_last, E_last, F_last = H_last, H, E, F
    return out


@_timed
def dtw_small(t_values, t_off, q_values, q_off, plan: np.ndarray, mode: int, band: int) -> np.ndarray:
    """DTW distances of ``plan``'s pairs, as :func:`seqcompare.align.kernels.dtw_pairs`: int64 (``BIG`` where
    no path exists) for integer signals, the signals' float dtype (infinity there) for floats."""
    pairs = len(plan)
    integer = t_values.dtype.kind in "iu"
    dtype = np.dtype(np.int64) if integer else t_values.dtype
    infinite = dtype.type(BIG if integer else np.inf)
    out = np.full(pairs, infinite, dtype=dtype)
    if pairs == 0:
        return out
    T, m = _padded(t_values.astype(dtype, copy=False), t_off, plan[:, 0])
    Q, n = _padded(q_values.astype(dtype, copy=False), q_off, plan[:, 1])
    M, N = T.shape[1], Q.shape[1]
    rows = np.arange(pairs)
    # The band's reach under (i - j) and over (j - i) the diagonal, per pair; unbounded without a window.
    below = band + np.maximum(0, n - m) if band >= 0 else np.full(pairs, M + N)
    above = band + np.maximum(0, m - n) if band >= 0 else np.full(pairs, M + N)
    zero = dtype.type(0)
    D_before = np.full((pairs, N + 1), infinite)
    D_last = np.full((pairs, N + 1), infinite)
    best_last_row = np.full(pairs, infinite)
    for d in range(M + N + 1):
        D = np.full((pairs, N + 1), infinite)
        first, last = max(1, d - M), min(N, d - 1)
        if first <= last:
            inner = slice(first, last + 1)
            above_cells = slice(first - 1, last)
            best = np.minimum(D_before[:, above_cells], np.minimum(D_last[:, above_cells], D_last[:, inner]))
            with np.errstate(over="ignore"):  # float costs and sums past the range are +inf, as in the kernels
                cost = np.abs(T[:, d - last - 1 : d - first][:, ::-1] - Q[:, first - 1 : last])
                cells = best + cost
            if integer:  # unreachable stays unreachable (as the kernels keep it), never a sum past BIG
                cells[best >= infinite] = infinite
            if band >= 0:
                i = np.arange(first, last + 1)
                step = d - 2 * i  # j - i
                outside = (step[None, :] > above[:, None]) | (-step[None, :] > below[:, None])
                cells[outside] = infinite
            D[:, inner] = cells
        if d <= M:
            D[:, 0] = zero if (d == 0 or mode == 2) else infinite
        if mode == 0:
            finished = (m + n) == d
            if finished.any():
                out[finished] = D[rows[finished], n[finished]]
        else:  # the least over the last row's cells j >= 1
            on_last_row = (n >= 1) & (d - n >= 1) & (d - n <= m)
            if on_last_row.any():
                picked = rows[on_last_row]
                best_last_row[picked] = np.minimum(best_last_row[picked], D[picked, n[picked]])
        D_before, D_last = D_last, D
    if mode != 0:
        out[:] = best_last_row
        empty_query = n == 0
        out[empty_query & ((mode == 2) | (m == 0))] = zero
    return out
