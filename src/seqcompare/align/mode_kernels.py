"""The CPU kernels of the alignment modes (:mod:`.modes` describes the model, the tie rules and the paths):
:func:`mode_pairs` (scores, positions and statistics), :func:`mode_scores` (scores and ends), :func:`mode_lanes`
(scores and ends of one query against many targets in SIMD lanes) and :func:`mode_traceback` (a CIGAR)."""

from __future__ import annotations

import numpy as np

from .._intrinsics import add_narrow, max_narrow, sub_narrow
from .._jit import jit

NEG = -(1 << 62)  # below every reachable score; far from overflow when a penalty is subtracted


@jit
def _longest(offsets, index, first, last):
    longest = 0
    for p in range(first, last):
        longest = max(longest, offsets[index[p] + 1] - offsets[index[p]])
    return longest


@jit
def mode_pairs(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
               scores_out, positions_out, counts_out):  # fmt: skip
    """Score, positions and statistics of pairs ``first:last`` in ``mode`` (a :data:`MODE_CODES` value), in one
    row of each quantity (linear space). ``by_query[b, a]`` is the score of target code ``a`` against query code
    ``b`` (the table transposed, so a query row's scores are contiguous)."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    longest = _longest(t_off, pair_t, first, last) + 1
    H = np.empty(longest, np.int64)
    F = np.empty(longest, np.int64)
    # Per column, the statistics and start of the path to H (h_*) and to F (f_*): matches, similar, pairs,
    # length, start row, start column.
    h_stats = np.empty((longest, 6), np.int64)
    f_stats = np.empty((longest, 6), np.int64)
    west = np.empty(6, np.int64)
    diag_stats = np.empty(6, np.int64)
    e_stats = np.empty(6, np.int64)
    best_stats = np.empty(6, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        n = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        m = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        h_stats[0, :] = 0
        for j in range(1, n + 1):
            H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
            F[j] = NEG
            h_stats[j, :] = 0
            f_stats[j, :] = 0
            if free_target_start:
                h_stats[j, 5] = j
        best = NEG
        best_i = 0
        best_j = 0
        best_stats[:] = 0
        if local:
            best = 0
            best_i = 1
            best_j = 1
            best_stats[4] = 1
            best_stats[5] = 1
        for i in range(1, m + 1):
            diag = H[0]
            diag_stats[:] = h_stats[0]
            H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
            h_stats[0, :] = 0
            if free_query_start:
                h_stats[0, 4] = i
            west_h = H[0]
            west[:] = h_stats[0]
            e = NEG
            e_stats[:] = 0
            b = q_codes[q0 + i - 1]
            row = by_query[b]
            for j in range(1, n + 1):
                north = H[j]
                f_open = north - gap_open
                f_extend = F[j] - gap_extend
                if f_open > f_extend:
                    F[j] = f_open
                    f_stats[j, :] = h_stats[j]
                else:
                    F[j] = f_extend
                f_stats[j, 3] += 1
                e_open = west_h - gap_open
                e_extend = e - gap_extend
                if e_open > e_extend:
                    e = e_open
                    e_stats[:] = west
                else:
                    e = e_extend
                e_stats[3] += 1
                a = t_codes[t0 + j - 1]
                substitution = row[a]
                h_diag = diag + substitution
                h = max(h_diag, max(e, F[j]))
                if local and h < 0:
                    h = 0
                # The cell's path: its statistics replace the northern cell's, which becomes the next diagonal.
                diag = north
                if h == h_diag:
                    for k in range(6):
                        west[k] = diag_stats[k]
                    west[0] += a == b
                    west[1] += substitution > 0
                    west[2] += 1
                    west[3] += 1
                elif h == F[j]:
                    for k in range(6):
                        west[k] = f_stats[j, k]
                else:
                    for k in range(6):
                        west[k] = e_stats[k]
                if local and h <= 0:
                    west[:4] = 0
                    west[4] = i
                    west[5] = j
                for k in range(6):
                    diag_stats[k] = h_stats[j, k]
                    h_stats[j, k] = west[k]
                H[j] = h
                west_h = h
                if local and (h > best or (h == best and j < best_j)):
                    best, best_i, best_j = h, i, j
                    best_stats[:] = west
            if mode == 2 and n > 0 and H[n] > best:  # semi-global: the last column, smallest row first
                best, best_i, best_j = H[n], i, n
                best_stats[:] = h_stats[n]
        if mode == 0 or (not local and (m == 0 or n == 0)):
            best, best_i, best_j = H[n], m, n
            best_stats[:] = h_stats[n]
        elif mode == 2:  # then the last row short of the last column: the smallest column wins ties
            for j in range(1, n):
                if H[j] > best or (H[j] == best and j < best_j):
                    best, best_i, best_j = H[j], m, j
                    best_stats[:] = h_stats[j]
        elif mode == 3 or mode == 4:  # the whole query, the leftmost best target end
            best, best_i, best_j = H[0], m, 0
            best_stats[:] = h_stats[0]
            for j in range(1, n + 1):
                if H[j] > best:
                    best, best_i, best_j = H[j], m, j
                    best_stats[:] = h_stats[j]
        elif local and (m == 0 or n == 0):
            best, best_i, best_j = 0, 0, 0
            best_stats[:] = 0
        scores_out[p] = best
        positions_out[p, 0] = best_stats[5]
        positions_out[p, 1] = best_j - 1
        positions_out[p, 2] = best_stats[4]
        positions_out[p, 3] = best_i - 1
        for k in range(4):
            counts_out[p, k] = best_stats[k]


@jit
def mode_scores(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
                scores_out, positions_out):  # fmt: skip
    """:func:`mode_pairs` without the paths: the score and end positions only (start columns left as they are),
    the same cells and ties, several times faster."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    longest = _longest(t_off, pair_t, first, last) + 1
    H = np.empty(longest, np.int64)
    F = np.empty(longest, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        n = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        m = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        for j in range(1, n + 1):
            H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
            F[j] = NEG
        best, best_i, best_j = NEG, 0, 0
        if local:
            best, best_i, best_j = 0, 1, 1
        for i in range(1, m + 1):
            diag = H[0]
            H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
            west = H[0]
            e = NEG
            row = by_query[q_codes[q0 + i - 1]]
            for j in range(1, n + 1):
                north = H[j]
                f = max(north - gap_open, F[j] - gap_extend)
                e = max(west - gap_open, e - gap_extend)
                h = max(diag + row[t_codes[t0 + j - 1]], max(e, f))
                if local:
                    h = max(h, 0)
                    if h > best or (h == best and j < best_j):
                        best, best_i, best_j = h, i, j
                diag = north
                F[j] = f
                H[j] = h
                west = h
            if mode == 2 and n > 0 and H[n] > best:
                best, best_i, best_j = H[n], i, n
        if mode == 0 or (not local and (m == 0 or n == 0)):
            best, best_i, best_j = H[n], m, n
        elif mode == 2:
            for j in range(1, n):
                if H[j] > best or (H[j] == best and j < best_j):
                    best, best_i, best_j = H[j], m, j
        elif mode == 3 or mode == 4:
            best, best_i, best_j = H[0], m, 0
            for j in range(1, n + 1):
                if H[j] > best:
                    best, best_i, best_j = H[j], m, j
        elif local and (m == 0 or n == 0):
            best, best_i, best_j = 0, 0, 0
        scores_out[p] = best
        positions_out[p, 1] = best_j - 1
        positions_out[p, 3] = best_i - 1


LANE_PAD = -(1 << 28)  # the score of the padding code, beyond a lane's sequences: far below any real cell
LANE_PAD_16 = -(1 << 13)  # the same in int16 lanes, for groups whose values stay within +-2**13
LANE_LIMIT = 1 << 27  # the lanes' 32-bit cells hold scores of magnitude below this (with the padding's, below 2**30)


@jit
def mode_lanes(profile, q, t_len, gap_open, gap_extend, negative, mode, scores_out, t_end_out, q_end_out):
    """:func:`mode_scores` of one query ``q`` against ``L`` targets at once, one per SIMD lane, in the profile's
    integer type (int16 or int32; ``gap_open``, ``gap_extend`` and ``negative``, the unreachable value, of the
    same type; the caller bounds every value, the padding's sums included, within it).

    ``profile[b, j, lane]`` is the score of lane ``lane``'s target letter at column ``j + 1`` against query code
    ``b``: with the query shared by the lanes, a row's scores are one contiguous vector a column, and the loops
    vectorise with no gather. Columns past a lane's target hold :data:`LANE_PAD`; those cells are computed but
    never chosen: their values come from the lane's real cells by adding the padding's score or subtracting
    gaps, so they are lower than a real cell or equal to one of a smaller column, which the tie rules prefer.
    The other modes' end cells are read from each lane's own last column and the last row."""
    _, n_max, L = profile.shape
    m = q.size
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    kind = profile.dtype
    go, ge = gap_open, gap_extend
    zero = sub_narrow(go, go)
    floor = zero if local else negative  # local cells stop at 0; elsewhere this maximum changes nothing
    H = np.empty((n_max + 1, L), kind)
    F = np.empty((n_max + 1, L), kind)
    E = np.empty(L, kind)
    west = np.empty(L, kind)
    diag = np.empty(L, kind)
    best = np.empty(L, kind)
    row_best = np.empty(L, kind)  # the maximum of the row being computed (local)
    best_i = np.zeros(L, np.int32)
    best_j = np.zeros(L, np.int32)
    for lane in range(L):
        best[lane] = zero if local else negative
        row_best[lane] = zero
        if local:
            best_i[lane] = 1
            best_j[lane] = 1
    # Leading gaps in the narrow type: -(open + (k - 1) extend), one subtraction at a time.
    opening = zero
    for j in range(n_max + 1):
        if j == 1:
            opening = sub_narrow(zero, go)
        elif j > 1:
            opening = sub_narrow(opening, ge)
        for lane in range(L):
            H[j, lane] = zero if free_target_start else opening
            F[j, lane] = negative
    border = zero
    for i in range(1, m + 1):
        border = sub_narrow(zero, go) if i == 1 else sub_narrow(border, ge)
        for lane in range(L):
            diag[lane] = H[0, lane]
            H[0, lane] = zero if free_query_start else border
            west[lane] = zero if free_query_start else border
            E[lane] = negative
        scores = profile[q[i - 1]]
        for j in range(1, n_max + 1):
            column_scores = scores[j - 1]
            row = H[j]
            gaps = F[j]
            for lane in range(L):
                north = row[lane]
                f = max_narrow(sub_narrow(north, go), sub_narrow(gaps[lane], ge))
                e = max_narrow(sub_narrow(west[lane], go), sub_narrow(E[lane], ge))
                h = max_narrow(max_narrow(add_narrow(diag[lane], column_scores[lane]), max_narrow(e, f)), floor)
                diag[lane] = north
                row[lane] = h
                gaps[lane] = f
                E[lane] = e
                west[lane] = h
                row_best[lane] = max_narrow(row_best[lane], h)
        if local:
            # The best cell: higher, or as high in a smaller column (rows come in order). A row is searched for
            # the first column of its maximum only in the lanes where that maximum reaches the best so far.
            for lane in range(L):
                top = row_best[lane]
                row_best[lane] = zero
                if top < best[lane]:
                    continue
                for j in range(1, n_max + 1):
                    if H[j, lane] == top:
                        if top > best[lane] or j < best_j[lane]:
                            best[lane], best_i[lane], best_j[lane] = top, i, j
                        break
        if mode == 2:  # semi-global: each lane's last column, the smallest row first
            for lane in range(L):
                n = t_len[lane]
                if n > 0 and H[n, lane] > best[lane]:
                    best[lane], best_i[lane], best_j[lane] = H[n, lane], i, n
    for lane in range(L):
        n = t_len[lane]
        if local:
            if m == 0 or n == 0:
                best[lane], best_i[lane], best_j[lane] = 0, 0, 0
        elif mode == 0 or m == 0 or n == 0:
            best[lane], best_i[lane], best_j[lane] = H[n, lane], m, n
        elif mode == 2:  # then the last row short of the last column: the smallest column wins ties
            for j in range(1, n):
                if H[j, lane] > best[lane] or (H[j, lane] == best[lane] and j < best_j[lane]):
                    best[lane], best_i[lane], best_j[lane] = H[j, lane], m, j
        else:  # infix, prefix: the whole query, the leftmost best target end
            best[lane], best_i[lane], best_j[lane] = H[0, lane], m, 0
            for j in range(1, n + 1):
                if H[j, lane] > best[lane]:
                    best[lane], best_i[lane], best_j[lane] = H[j, lane], m, j
        scores_out[lane] = best[lane]
        t_end_out[lane] = best_j[lane] - 1
        q_end_out[lane] = best_i[lane] - 1


# Traceback directions, one byte a cell: bits 0-1 where H came from, bit 2 F opened here, bit 3 E opened here.
_FROM_DIAGONAL, _FROM_F, _FROM_E, _STOP = 0, 1, 2, 3


@jit
def mode_traceback(t, q, by_query, gap_open, gap_extend, mode, end_i, end_j, ops):
    """The alignment of one pair ending at cell ``(end_i, end_j)`` (1-based rows of ``q``, columns of ``t``),
    along the path :func:`mode_pairs` follows: operation codes (0 M, 1 I: target letter against a gap, 2 D: query
    letter against a gap) at the end of ``ops``. Returns ``(first op index, start row, start column)``."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    m, n = end_i, end_j
    way = np.zeros((m + 1, n + 1), np.uint8)
    H = np.empty(n + 1, np.int64)
    F = np.empty(n + 1, np.int64)
    H[0] = 0
    for j in range(1, n + 1):
        H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
        F[j] = NEG
    for i in range(1, m + 1):
        diag = H[0]
        H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
        west_h = H[0]
        e = NEG
        row = by_query[q[i - 1]]
        for j in range(1, n + 1):
            north = H[j]
            code = 0
            f_open = north - gap_open
            f_extend = F[j] - gap_extend
            if f_open > f_extend:
                F[j] = f_open
                code |= 4
            else:
                F[j] = f_extend
            e_open = west_h - gap_open
            e_extend = e - gap_extend
            if e_open > e_extend:
                e = e_open
                code |= 8
            else:
                e = e_extend
            h_diag = diag + row[t[j - 1]]
            h = max(h_diag, max(e, F[j]))
            if local and h < 0:
                h = 0
            if local and h <= 0:
                code |= _STOP
            elif h == h_diag:
                code |= _FROM_DIAGONAL
            elif h == F[j]:
                code |= _FROM_F
            else:
                code |= _FROM_E
            way[i, j] = code
            diag = north
            H[j] = h
            west_h = h
    at = ops.size
    i, j, state = m, n, 0  # state 0 H, 1 F, 2 E
    while True:
        if state == 0:
            if i == 0 or j == 0:
                if (i == 0 and free_target_start) or (j == 0 and free_query_start):
                    break
                while j > 0:  # leading gaps along the first row or column
                    at -= 1
                    ops[at] = 1
                    j -= 1
                while i > 0:
                    at -= 1
                    ops[at] = 2
                    i -= 1
                break
            source = way[i, j] & 3
            if source == _STOP:
                break
            if source == _FROM_DIAGONAL:
                at -= 1
                ops[at] = 0
                i -= 1
                j -= 1
            else:
                state = 1 if source == _FROM_F else 2
        elif state == 1:
            at -= 1
            ops[at] = 2
            if way[i, j] & 4:
                state = 0
            i -= 1
        else:
            at -= 1
            ops[at] = 1
            if way[i, j] & 8:
                state = 0
            j -= 1
    return at, i, j
