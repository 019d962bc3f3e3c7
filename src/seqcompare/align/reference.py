"""The oracles: plain dynamic programming, cell by cell, exactly as spec/dp.md writes the recurrences."""

from __future__ import annotations

import math

import numpy as np

from .costs import Costs

INF = float("inf")


def nw_reference(target, query, costs: Costs, *, traceback: bool = False):
    """Minimum alignment cost of ``target`` (columns j) against ``query`` (rows i), Gotoh's affine form of the
    seed's recurrence; with ``traceback`` also the CIGAR (M: aligned pair, I: target base against a gap,
    D: query base against a gap; runs in target order)."""
    t, q = list(target), list(query)
    m, n = len(t), len(q)
    io, ie, do, de = costs.insert_open, costs.insert_extend, costs.delete_open, costs.delete_extend
    H = [[INF] * (m + 1) for _ in range(n + 1)]
    E = [[INF] * (m + 1) for _ in range(n + 1)]
    F = [[INF] * (m + 1) for _ in range(n + 1)]
    H[0][0] = 0
    for j in range(1, m + 1):
        H[0][j] = E[0][j] = io + j * ie
    for i in range(1, n + 1):
        H[i][0] = F[i][0] = do + i * de
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            E[i][j] = min(E[i][j - 1] + ie, H[i][j - 1] + io + ie)
            F[i][j] = min(F[i - 1][j] + de, H[i - 1][j] + do + de)
            H[i][j] = min(H[i - 1][j - 1] + int(costs.substitution[t[j - 1], q[i - 1]]), E[i][j], F[i][j])
    if not traceback:
        return H[n][m]
    ops = []
    i, j, state = n, m, "H"
    while i > 0 or j > 0:
        if state == "H":
            if i > 0 and j > 0 and H[i][j] == H[i - 1][j - 1] + int(costs.substitution[t[j - 1], q[i - 1]]):
                ops.append("M")
                i, j = i - 1, j - 1
            else:
                state = "E" if j > 0 and H[i][j] == E[i][j] else "F"
        elif state == "E":  # a gap run in the target direction: extended, or opened from H
            ops.append("I")
            state = "E" if E[i][j] == E[i][j - 1] + ie else "H"
            j -= 1
        else:
            ops.append("D")
            state = "F" if F[i][j] == F[i - 1][j] + de else "H"
            i -= 1
    return H[n][m], run_length("".join(reversed(ops)))


def run_length(ops: str) -> str:
    """``MMMID`` -> ``3M1I1D``."""
    out, at = [], 0
    while at < len(ops):
        end = at
        while end < len(ops) and ops[end] == ops[at]:
            end += 1
        out.append(f"{end - at}{ops[at]}")
        at = end
    return "".join(out)


def cigar_cost(target, query, cigar: str, costs: Costs):
    """Re-score a CIGAR (the check that an alignment is worth its reported cost)."""
    t, q = list(target), list(query)
    i = j = 0
    total = 0
    number = ""
    for char in cigar:
        if char.isdigit():
            number += char
            continue
        length = int(number)
        number = ""
        if char == "M":
            for _ in range(length):
                total += int(costs.substitution[t[j], q[i]])
                i, j = i + 1, j + 1
        elif char == "I":
            total += costs.insert_open + length * costs.insert_extend
            j += length
        elif char == "D":
            total += costs.delete_open + length * costs.delete_extend
            i += length
        else:
            raise ValueError(f"CIGAR operation {char!r}")
    if i != len(q) or j != len(t):
        raise ValueError(f"CIGAR {cigar} covers {j} of {len(t)} target and {i} of {len(q)} query bases")
    return total


def dtw_reference(target, query, *, mode: str = "full", window: int | None = None, float32: bool = False):
    """DTW with |a - b| cost (spec/dp.md): ``full`` M[n][m]; ``open-end`` min over the last row;
    ``subsequence`` free start and end in the target. ``window``: only cells with
    ``-(window + max(0, n - m)) <= j - i <= window + max(0, m - n)`` are allowed (a Sakoe-Chiba band widened
    on the longer side, as dtaidistance's ``window=window + 1``). With ``float32`` every value is a NumPy
    float32 scalar, so each cell is rounded to float32 where it is made (|a - b|, then the sum)."""
    if float32:
        t, q = [np.float32(x) for x in target], [np.float32(x) for x in query]
        infinite, zero = np.float32(INF), np.float32(0)
    else:
        t, q = list(target), list(query)
        infinite, zero = INF, 0
    m, n = len(t), len(q)
    M = [[infinite] * (m + 1) for _ in range(n + 1)]
    M[0][0] = zero
    if mode == "subsequence":
        for j in range(m + 1):
            M[0][j] = zero
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            if window is not None and (i - j > window + max(0, n - m) or j - i > window + max(0, m - n)):
                continue
            best = min(M[i - 1][j - 1], M[i - 1][j], M[i][j - 1])
            M[i][j] = abs(t[j - 1] - q[i - 1]) + best
    if mode == "full":
        return M[n][m]
    if n == 0:
        return zero if mode == "subsequence" or m == 0 else infinite
    return min(M[n][1:]) if m else infinite


def is_integer_valued(values) -> bool:
    return all(not isinstance(v, float) or (math.isfinite(v) and v == int(v)) for v in np.asarray(values).ravel().tolist())
