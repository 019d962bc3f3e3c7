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


MODES = ("global", "local", "semi-global", "infix", "prefix")
# Which ends of the alignment are free in each mode: (target start, target end, query start, query end).
_FREE_ENDS = {"global": (False, False, False, False), "local": (True, True, True, True),
              "semi-global": (True, True, True, True), "infix": (True, True, False, False),
              "prefix": (False, True, False, False)}  # fmt: skip


def mode_reference(target, query, scores, gap_open: int, gap_extend: int, mode: str = "global"):
    """Best score of aligning ``query`` (rows i) with ``target`` (columns j) in ``mode``, and where it ends.

    ``scores[a][b]`` scores target code ``a`` against query code ``b`` (sequences are code lists), to maximise.
    A gap of length L scores ``-(gap_open + (L - 1) * gap_extend)`` (parasail's model), by Gotoh's recurrence:
    where ``gap_open < gap_extend`` it may also open a new gap right after one of the same kind. The modes:

    - ``global``: both sequences end to end (Needleman-Wunsch);
    - ``local``: any substring of each (Smith-Waterman; the empty alignment scores 0);
    - ``semi-global``: gaps before and after either sequence are free (parasail's ``sg``);
    - ``infix``: the whole query, anywhere in the target (edlib's HW);
    - ``prefix``: the whole query against a prefix of the target (edlib's SHW).

    Returns ``(score, target_end, query_end)``: 0-based positions of the last characters of each the alignment
    reaches (-1 where none). Ties are broken as parasail breaks them: global ends at both sequences' ends; local
    (among cells of real characters, so an all-negative pair ends at (0, 0) with score 0) at the smallest target end,
    then query end; semi-global at the smallest target end short of the target's end with the whole query, else
    at the target's end with the smallest query end; infix and prefix at the smallest target end.

    ``gap_open >= gap_extend`` in every published scheme; below that, parasail's first row and column charge
    gaps in closed form while this recurrence may re-open them (the API refuses such gaps).
    """
    H, _, _ = _mode_tables(target, query, scores, gap_open, gap_extend, mode)
    n, m = len(target), len(query)
    # The cells an alignment may end in, in the order that breaks ties (the first best one wins): parasail's for
    # global, local and semi-global (cells of real characters only), the leftmost target end for infix and prefix.
    if mode == "global" or (mode != "local" and (m == 0 or n == 0)):
        cells = [(m, n)]
    elif mode == "local":
        cells = [(i, j) for j in range(1, n + 1) for i in range(1, m + 1)]
        if not cells:
            return 0, -1, -1
    elif mode == "semi-global":
        cells = [(m, j) for j in range(1, n)] + [(i, n) for i in range(1, m + 1)]
    else:  # infix, prefix: the whole query, any target end
        cells = [(m, j) for j in range(n + 1)]
    best = max(H[i][j] for i, j in cells)
    i, j = next((i, j) for i, j in cells if H[i][j] == best)
    return int(best), j - 1, i - 1


def _mode_tables(target, query, scores, gap_open, gap_extend, mode):
    """The whole H, E and F tables of :func:`mode_reference` (rows: query, columns: target)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    t, q = list(target), list(query)
    n, m = len(t), len(q)
    free_t_start, _, free_q_start, _ = _FREE_ENDS[mode]
    local = mode == "local"
    ninf = -math.inf

    H = [[ninf] * (n + 1) for _ in range(m + 1)]
    E = [[ninf] * (n + 1) for _ in range(m + 1)]  # ends with a gap in the query (a step along the target)
    F = [[ninf] * (n + 1) for _ in range(m + 1)]  # ends with a gap in the target (a step along the query)
    H[0][0] = 0
    for j in range(1, n + 1):  # leading gaps: free, or by the same recurrence as inside
        E[0][j] = ninf if free_t_start else max(H[0][j - 1] - gap_open, E[0][j - 1] - gap_extend)
        H[0][j] = 0 if free_t_start else E[0][j]
    for i in range(1, m + 1):
        F[i][0] = ninf if free_q_start else max(H[i - 1][0] - gap_open, F[i - 1][0] - gap_extend)
        H[i][0] = 0 if free_q_start else F[i][0]
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(H[i][j - 1] - gap_open, E[i][j - 1] - gap_extend)
            F[i][j] = max(H[i - 1][j] - gap_open, F[i - 1][j] - gap_extend)
            H[i][j] = max(H[i - 1][j - 1] + scores[t[j - 1]][q[i - 1]], E[i][j], F[i][j])
            if local:
                H[i][j] = max(H[i][j], 0)
    return H, E, F


def mode_alignment_reference(target, query, scores, gap_open: int, gap_extend: int, mode: str = "global"):
    """The alignment :func:`mode_reference` scores, traced back through its whole tables.

    From the end cell, the path takes at each cell the diagonal if it gives the cell's score, else the vertical gap
    (a query letter against a gap), else the horizontal one; in a gap it keeps extending unless opening there is
    strictly better; it stops at a free border or, in local mode, at a cell of score 0. These are the preferences
    parasail's ``_stats`` functions apply going forward.

    Returns ``(score, (target_start, target_end, query_start, query_end), (matches, similar, pairs, length),
    cigar)``: positions 0-based and inclusive (an empty alignment starts one past its end); counts as parasail's
    ``_stats`` (``similar``: pairs of positive score; ``length``: columns, except gaps along the first row or
    column); the CIGAR over the whole alignment, leading gaps included (M, I: target letter against a gap, D: query
    letter against a gap).
    """
    score, target_end, query_end = mode_reference(target, query, scores, gap_open, gap_extend, mode)
    H, E, F = _mode_tables(target, query, scores, gap_open, gap_extend, mode)
    t, q = list(target), list(query)
    free_t_start, _, free_q_start, _ = _FREE_ENDS[mode]
    i, j, state = query_end + 1, target_end + 1, "H"
    ops, matches, similar, pairs, length = [], 0, 0, 0, 0
    while True:
        if state == "H":
            if i == 0 or j == 0:
                if not ((i == 0 and free_t_start) or (j == 0 and free_q_start)):
                    ops += ["I"] * j + ["D"] * i  # leading gaps (reversed below): not columns in the counts
                    i = j = 0
                break
            if mode == "local" and H[i][j] <= 0:
                break
            value = scores[t[j - 1]][q[i - 1]]
            if H[i][j] == H[i - 1][j - 1] + value:
                ops.append("M")
                matches += t[j - 1] == q[i - 1]
                similar += value > 0
                pairs += 1
                length += 1
                i, j = i - 1, j - 1
            else:
                state = "F" if H[i][j] == F[i][j] else "E"
        elif state == "F":
            ops.append("D")
            length += 1
            opened = H[i - 1][j] - gap_open > F[i - 1][j] - gap_extend
            state = "H" if opened else "F"
            i -= 1
        else:
            ops.append("I")
            length += 1
            opened = H[i][j - 1] - gap_open > E[i][j - 1] - gap_extend
            state = "H" if opened else "E"
            j -= 1
    cigar = run_length("".join(reversed(ops)))
    return score, (j, target_end, i, query_end), (matches, similar, pairs, length), cigar
