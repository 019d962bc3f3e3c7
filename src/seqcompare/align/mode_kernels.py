"""The CPU kernels of the alignment modes (:mod:`.modes` describes the model, the tie rules and the paths):
:func:`mode_pairs` (scores, positions and statistics; :func:`mode_pairs_lanes` the same, a vector's lanes of
pairs at a time), :func:`mode_scores` (scores and ends), :func:`mode_strips` (scores and ends of one query
against many targets in SIMD lanes) and :func:`mode_traceback` (a CIGAR)."""

from __future__ import annotations

import numpy as np

from .._intrinsics import sub_narrow
from .._jit import jit
from .._simd import (add, any_greater, constant, lanes_in, lanes_of, load, maximum, splat, splat_as, store,
                     store_bytes, subtract, where_equal, where_greater)
from .kernels import _longest_target

NEG = -(1 << 62)  # below every reachable score; far from overflow when a penalty is subtracted


# A path's statistics and start in three words: (matches << 32) | pairs, (similar << 32) | length, and
# (start row << 32) | start column, each field below 2**31: three words a cell to carry instead of six values, and a
# diagonal step two additions.
_HIGH = np.int64(1) << np.int64(32)


@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q"))
def mode_pairs(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
               scores_out, positions_out, counts_out):  # fmt: skip
    """Score, positions and statistics of pairs ``first:last`` in ``mode`` (a :data:`MODE_CODES` value), in one
    row of each quantity (linear space). ``by_query[b, a]`` is the score of target code ``a`` against query code
    ``b`` (the table transposed, so a query row's scores are contiguous)."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    high = _HIGH
    longest = _longest_target(t_off, pair_t, first, last) + 1
    H = np.empty(longest, np.int64)
    F = np.empty(longest, np.int64)
    # Per column, the path to H and to F (its three words).
    h_pairs = np.empty(longest, np.int64)
    h_length = np.empty(longest, np.int64)
    h_start = np.empty(longest, np.int64)
    f_pairs = np.empty(longest, np.int64)
    f_length = np.empty(longest, np.int64)
    f_start = np.empty(longest, np.int64)
    for p in range(first, last):
        t0 = t_off[pair_t[p]]
        n = t_off[pair_t[p] + 1] - t0
        q0 = q_off[pair_q[p]]
        m = q_off[pair_q[p] + 1] - q0
        H[0] = 0
        h_pairs[0] = h_length[0] = h_start[0] = 0
        for j in range(1, n + 1):
            H[j] = 0 if free_target_start else -(gap_open + (j - 1) * gap_extend)
            F[j] = NEG
            h_pairs[j] = h_length[j] = f_pairs[j] = f_length[j] = f_start[j] = 0
            h_start[j] = j if free_target_start else 0
        best, best_i, best_j = NEG, 0, 0
        best_pairs = best_length = best_start = np.int64(0)
        if local:
            best, best_i, best_j = 0, 1, 1
            best_start = high + 1
        for i in range(1, m + 1):
            diag = H[0]
            diag_pairs, diag_length, diag_start = h_pairs[0], h_length[0], h_start[0]
            H[0] = 0 if free_query_start else -(gap_open + (i - 1) * gap_extend)
            h_pairs[0] = h_length[0] = 0
            h_start[0] = i * high if free_query_start else 0
            west = H[0]
            west_pairs, west_length, west_start = h_pairs[0], h_length[0], h_start[0]
            e = NEG
            e_pairs = e_length = e_start = np.int64(0)
            b = q_codes[q0 + i - 1]
            row = by_query[b]
            for j in range(1, n + 1):
                # Branch-free: every choice below is a select between values already made (the choices follow
                # the data; with branches, and six values a path, the pass ran 0.055 GCUPS a thread on 1.5 kb
                # DNA, now 0.09).
                north = H[j]
                north_pairs, north_length, north_start = h_pairs[j], h_length[j], h_start[j]
                f_open = north - gap_open
                f_extend = F[j] - gap_extend
                f_opened = f_open > f_extend
                f = f_open if f_opened else f_extend
                f_p = north_pairs if f_opened else f_pairs[j]
                f_l = (north_length if f_opened else f_length[j]) + 1
                f_s = north_start if f_opened else f_start[j]
                F[j], f_pairs[j], f_length[j], f_start[j] = f, f_p, f_l, f_s
                e_open = west - gap_open
                e_extend = e - gap_extend
                e_opened = e_open > e_extend
                e = e_open if e_opened else e_extend
                e_pairs = west_pairs if e_opened else e_pairs
                e_length = (west_length if e_opened else e_length) + 1
                e_start = west_start if e_opened else e_start
                a = t_codes[t0 + j - 1]
                substitution = row[a]
                h_diag = diag + substitution
                h = max(h_diag, max(e, f))
                if local:
                    h = max(h, 0)
                from_diag = h == h_diag
                from_f = h == f
                d_p = diag_pairs + (high if a == b else 0) + 1
                d_l = diag_length + (high if substitution > 0 else 0) + 1
                west_pairs = d_p if from_diag else (f_p if from_f else e_pairs)
                west_length = d_l if from_diag else (f_l if from_f else e_length)
                west_start = diag_start if from_diag else (f_s if from_f else e_start)
                if local:
                    reset = h <= 0
                    west_pairs = 0 if reset else west_pairs
                    west_length = 0 if reset else west_length
                    west_start = (i * high + j) if reset else west_start
                diag = north
                diag_pairs, diag_length, diag_start = north_pairs, north_length, north_start
                h_pairs[j], h_length[j], h_start[j] = west_pairs, west_length, west_start
                H[j] = h
                west = h
                if local and (h > best or (h == best and j < best_j)):
                    best, best_i, best_j = h, i, j
                    best_pairs, best_length, best_start = west_pairs, west_length, west_start
            if mode == 2 and n > 0 and H[n] > best:  # semi-global: the last column, smallest row first
                best, best_i, best_j = H[n], i, n
                best_pairs, best_length, best_start = h_pairs[n], h_length[n], h_start[n]
        _finish_path(p, mode, m, n, H, h_pairs, h_length, h_start, 1, 0, best, best_i, best_j, best_pairs, best_length,
                     best_start, scores_out, positions_out, counts_out)  # fmt: skip


@jit(inline="always")
def _finish_path(p, mode, m, n, H, h_pairs, h_length, h_start, stride, offset, best, best_i, best_j, best_pairs,
                 best_length, best_start, scores_out, positions_out, counts_out, packed=False, shift=32):  # fmt: skip
    """Pair ``p``'s end cell and path, written out: for global mode (and empty sides outside local mode) the last
    row's last cell, for semi-global the better of the sweep's ``best`` (its last column) and the last row, for
    infix and prefix the last row's leftmost best, for local the sweep's ``best``. The last row (row ``m``) is
    ``H[j * stride + offset]`` and its paths beside it (:func:`mode_pairs`: one pair, stride 1;
    :func:`mode_pairs_lanes`: a lane of the kept rows); ``packed``: the four counts in the first word; ``shift``:
    where the high field of a start or a count word begins (32, or 15 in int32 lanes)."""
    local = mode == 1
    if mode == 0 or (not local and (m == 0 or n == 0)):
        at = n * stride + offset
        best, best_i, best_j = H[at], m, n
        best_pairs, best_length, best_start = h_pairs[at], h_length[at], h_start[at]
    elif mode == 2:  # then the last row short of the last column: the smallest column wins ties
        for j in range(1, n):
            at = j * stride + offset
            if H[at] > best or (H[at] == best and j < best_j):
                best, best_i, best_j = H[at], m, j
                best_pairs, best_length, best_start = h_pairs[at], h_length[at], h_start[at]
    elif mode == 3 or mode == 4:  # the whole query, the leftmost best target end
        best, best_i, best_j = H[offset], m, 0
        best_pairs, best_length, best_start = h_pairs[offset], h_length[offset], h_start[offset]
        for j in range(1, n + 1):
            at = j * stride + offset
            if H[at] > best:
                best, best_i, best_j = H[at], m, j
                best_pairs, best_length, best_start = h_pairs[at], h_length[at], h_start[at]
    elif local and (m == 0 or n == 0):
        best, best_i, best_j = 0, 0, 0
        best_pairs = best_length = best_start = 0
    low = (np.int64(1) << shift) - 1
    best_start, best_pairs, best_length = np.int64(best_start), np.int64(best_pairs), np.int64(best_length)
    scores_out[p] = best
    positions_out[p, 0] = best_start & low
    positions_out[p, 1] = best_j - 1
    positions_out[p, 2] = best_start >> shift
    positions_out[p, 3] = best_i - 1
    if packed:
        field = np.int64(0xFFFF)
        counts_out[p, 0] = best_pairs >> 48
        counts_out[p, 1] = (best_pairs >> 16) & field
        counts_out[p, 2] = (best_pairs >> 32) & field
        counts_out[p, 3] = best_pairs & field
    else:
        counts_out[p, 0] = best_pairs >> shift
        counts_out[p, 1] = best_length >> shift
        counts_out[p, 2] = best_pairs & low
        counts_out[p, 3] = best_length & low


# Pairs that :func:`mode_pairs_lanes` aligns at once, one a lane: the int64 lanes of one vector, or the int32
# lanes (twice as many) for short pairs (the rule: ``modes.NARROW_PATHS_BELOW``).
PATH_LANES = lanes_of(np.dtype(np.int64))
NARROW_PATH_LANES = lanes_of(np.dtype(np.int32))
NARROW_NEG = -(1 << 30)  # below every score int32 lanes take (scores within 2**29), far from int32's overflow


@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q"))
def mode_pairs_lanes(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend,
                     mode, scores_out, positions_out, counts_out, trace_cells, ops, ops_end, ops_first,
                     equal_scores, packed, lane_type):  # fmt: skip
    """:func:`mode_pairs` of pairs ``first:last``, :data:`PATH_LANES` at a time in lockstep, one pair a lane of
    int64 vectors: the same recurrence, paths and tie rules, cell for cell. A group's rows and columns run to its
    longest query and target; a lane's cells past its own (its padding, code 0) are computed and never read:
    only the rows and columns up to a lane's own lengths choose its end, and no cell depends on a later row or
    column. Pairs of like lengths (sorted by the caller) waste few cells.

    With ``trace_cells`` > 0, the sweep also keeps each cell's direction codes (as :func:`mode_traceback` makes
    them, a byte a cell and lane) for groups whose rows times columns times lanes are at most ``trace_cells``, and
    each of their pairs' alignment is traced back from its end: its operations end at ``ops[ops_end[p]]`` (a slot
    of the pair's query plus target length), and ``ops_first[p]`` is their first index, the start row and the
    start column. A pair not traced (its group too large) gets ``ops_first[p, 0] = -1``.

    ``equal_scores``, ``[match, mismatch]`` where every letter of the pairs scores ``match`` against itself and
    ``mismatch`` against the others (DNA under NUC.4.4 without N, say; else empty): a cell's score is then a
    compare of the two codes and a select, with no table read (the table's reads took half the sweep's time).

    ``packed`` (where every pair's query and target together are shorter than 2**16): a path's four counts share
    one word, ``matches << 48 | pairs << 32 | similar << 16 | length``, and the second word is not kept (a third
    fewer vectors a cell; 16-bit fields hold counts below 2**16, which a path's length bounds).

    ``lane_type``: an array of the lanes' dtype, int64 or int32 (:data:`NARROW_PATH_LANES` lanes, twice as many,
    for pairs whose query and target together are shorter than 2**15 and whose scores stay within 2**29, where
    a start is ``row << 15 | column`` and a count word two 15-bit fields; never packed)."""
    L = lanes_in(lane_type)
    narrow = L > PATH_LANES
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    shift = 15 if narrow else 32
    high = np.int64(1) << shift
    neg = NARROW_NEG if narrow else NEG
    longest = _longest_target(t_off, pair_t, first, last) + 1
    width = longest * L
    lanes_dtype = lane_type.dtype
    H = np.empty(width, lanes_dtype)
    F = np.empty(width, lanes_dtype)
    h_pairs = np.empty(width, lanes_dtype)
    h_length = np.empty(width, lanes_dtype)
    h_start = np.empty(width, lanes_dtype)
    f_pairs = np.empty(width, lanes_dtype)
    f_length = np.empty(width, lanes_dtype)
    f_start = np.empty(width, lanes_dtype)
    substitution = np.empty(width, lanes_dtype)  # a row's scores, one a cell and lane (the gathers out of the sweep)
    target_codes = np.zeros(width, lanes_dtype)
    # Each lane's last row (row m of its own query), kept for the modes that end there.
    kept = np.empty(width, lanes_dtype)
    kept_pairs = np.empty(width, lanes_dtype)
    kept_length = np.empty(width, lanes_dtype)
    kept_start = np.empty(width, lanes_dtype)
    t0 = np.zeros(L, np.int64)
    q0 = np.zeros(L, np.int64)
    n = np.zeros(L, lanes_dtype)
    m = np.zeros(L, lanes_dtype)
    query_codes = np.zeros(L, lanes_dtype)
    query_rows = np.zeros(L, np.int64)  # where each lane's query letter's row starts in the flat table
    alphabet = by_query.shape[1]
    flat_table = by_query.reshape(-1)
    equal = equal_scores.size == 2
    match = splat_as(lane_type, equal_scores[0] if equal else np.int64(0))
    mismatch = splat_as(lane_type, equal_scores[1] if equal else np.int64(0))
    # A lane's best cell (local): value, row, column and path, kept as vectors across a row.
    lane_best = np.empty(6 * L, lanes_dtype)
    zero64 = np.int64(0)
    zero = splat_as(lane_type, zero64)
    one = splat_as(lane_type, 1)
    step = splat_as(lane_type, high + 1)  # a statistic's count and its pair count, up by one each
    # A diagonal step adds to the counts word (and, unpacked, to the length word); a gap step, packed, adds one to
    # the length field of the counts word.
    if packed:  # int64 lanes only (the caller's rule)
        equal_step, other_step = splat_as(lane_type, (1 << 48) + (1 << 32)), splat_as(lane_type, 1 << 32)
        similar_step, dissimilar_step, gap_step = splat_as(lane_type, (1 << 16) + 1), one, one
    else:
        equal_step, other_step, similar_step, dissimilar_step, gap_step = step, one, zero, zero, zero
    go, ge = splat_as(lane_type, gap_open), splat_as(lane_type, gap_extend)
    none = splat_as(lane_type, neg)
    # Direction codes (see mode_traceback): the source in the low two bits, 4 where F opened, 8 where E did.
    two, three = splat_as(lane_type, 2), splat_as(lane_type, 3)
    four, eight = splat_as(lane_type, 4), splat_as(lane_type, 8)
    way = np.empty(0, np.uint8)
    for group in range(first, last, L):
        count = min(L, last - group)
        n_max = 0
        m_max = 0
        for lane in range(L):
            if lane < count:
                p = group + lane
                t0[lane] = t_off[pair_t[p]]
                n[lane] = t_off[pair_t[p] + 1] - t0[lane]
                q0[lane] = q_off[pair_q[p]]
                m[lane] = q_off[pair_q[p] + 1] - q0[lane]
            else:  # an empty lane: no cell of it is read
                t0[lane] = q0[lane] = n[lane] = m[lane] = 0
            n_max = max(n_max, n[lane])
            m_max = max(m_max, m[lane])
        for j in range(1, n_max + 1):
            for lane in range(L):
                target_codes[j * L + lane] = t_codes[t0[lane] + j - 1] if j <= n[lane] else 0
        for lane in range(L):
            H[lane] = 0
            h_pairs[lane] = h_length[lane] = h_start[lane] = 0
        opening = zero64
        for j in range(1, n_max + 1):
            opening = -gap_open if j == 1 else opening - gap_extend
            for lane in range(L):
                at = j * L + lane
                H[at] = 0 if free_target_start else opening
                F[at] = neg
                h_pairs[at] = h_length[at] = f_pairs[at] = f_length[at] = f_start[at] = 0
                h_start[at] = j if free_target_start else 0
        for lane in range(L):
            lane_best[lane] = 0 if local else neg
            lane_best[L + lane] = 1 if local else 0  # row
            lane_best[2 * L + lane] = 1 if local else 0  # column
            lane_best[3 * L + lane] = lane_best[4 * L + lane] = 0
            lane_best[5 * L + lane] = high + 1 if local else 0
            if m[lane] == 0:
                _keep_row(lane, n[lane], L, H, h_pairs, h_length, h_start, kept, kept_pairs, kept_length, kept_start)
        row_stride = n_max + 1
        tracing = 0 < (m_max + 1) * row_stride * L <= trace_cells
        if tracing and way.size < (m_max + 1) * row_stride * L:
            way = np.empty((m_max + 1) * row_stride * L, np.uint8)
        rows, columns = load(m, 0), load(n, 0)
        best, best_i, best_j, best_p, best_l, best_s = _load_best(lane_best, L)
        border = zero64
        for i in range(1, m_max + 1):
            for lane in range(L):
                query_codes[lane] = q_codes[q0[lane] + i - 1] if i <= m[lane] else 0
                query_rows[lane] = query_codes[lane] * alphabet
            if not equal:
                for at in range(L, (n_max + 1) * L):
                    substitution[at] = flat_table[query_rows[at % L] + target_codes[at]]
            border = -gap_open if i == 1 else border - gap_extend
            row = splat_as(lane_type, i)
            diag, diag_p, diag_l, diag_s = load(H, 0), load(h_pairs, 0), load(h_length, 0), load(h_start, 0)
            west = splat_as(lane_type, zero64 if free_query_start else border)
            west_p = west_l = zero
            west_s = splat_as(lane_type, np.int64(i) * high if free_query_start else zero64)
            store(H, 0, west)
            store(h_pairs, 0, zero)
            store(h_length, 0, zero)
            store(h_start, 0, west_s)
            e, e_p, e_l, e_s = none, zero, zero, zero
            query = load(query_codes, 0)
            row_reset = splat_as(lane_type, np.int64(i) * high)
            # Local: a cell can only be a lane's best at or above its best so far, and a tie only left of its
            # column; past the group's rightmost best column, only a cell above a best needs the full test.
            rightmost = 0
            for lane in range(L):
                rightmost = max(rightmost, lane_best[2 * L + lane])
            below = subtract(best, one)
            for j in range(1, n_max + 1):
                at = j * L
                north, north_p, north_s = load(H, at), load(h_pairs, at), load(h_start, at)
                north_l = zero if packed else load(h_length, at)
                f_open = subtract(north, go)
                f_extend = subtract(load(F, at), ge)
                f = maximum(f_open, f_extend)
                f_p = add(where_greater(f_open, f_extend, north_p, load(f_pairs, at)), gap_step)
                f_s = where_greater(f_open, f_extend, north_s, load(f_start, at))
                store(F, at, f)
                store(f_pairs, at, f_p)
                store(f_start, at, f_s)
                f_l = zero
                if not packed:
                    f_l = add(where_greater(f_open, f_extend, north_l, load(f_length, at)), one)
                    store(f_length, at, f_l)
                e_open = subtract(west, go)
                e_extend = subtract(e, ge)
                e_p = add(where_greater(e_open, e_extend, west_p, e_p), gap_step)
                if not packed:
                    e_l = add(where_greater(e_open, e_extend, west_l, e_l), one)
                e_s = where_greater(e_open, e_extend, west_s, e_s)
                e = maximum(e_open, e_extend)
                target = load(target_codes, at)
                score = where_equal(target, query, match, mismatch) if equal else load(substitution, at)
                h_diag = add(diag, score)
                h = maximum(h_diag, maximum(e, f))
                if local:
                    h = maximum(h, zero)
                d_p = add(diag_p, where_equal(target, query, equal_step, other_step))
                if packed:
                    d_p = add(d_p, where_greater(score, zero, similar_step, dissimilar_step))
                w_p = where_equal(h, h_diag, d_p, where_equal(h, f, f_p, e_p))
                w_l = zero
                if not packed:
                    d_l = add(diag_l, where_greater(score, zero, step, one))
                    w_l = where_equal(h, h_diag, d_l, where_equal(h, f, f_l, e_l))
                w_s = where_equal(h, h_diag, diag_s, where_equal(h, f, f_s, e_s))
                if local:
                    w_p = where_greater(h, zero, w_p, zero)
                    if not packed:
                        w_l = where_greater(h, zero, w_l, zero)
                    w_s = where_greater(h, zero, w_s, add(row_reset, splat_as(lane_type, j)))
                    if any_greater(h, below) if j < rightmost else any_greater(h, best):
                        column = splat_as(lane_type, j)
                        # Only a lane's own cells count (its padding rows and columns never become its best).
                        mine = where_greater(column, columns, none, where_greater(row, rows, none, h))
                        tie = where_equal(mine, best, where_greater(best_j, column, one, zero), zero)
                        take = where_greater(mine, best, one, tie)  # 1 where this cell becomes the lane's best
                        best = where_equal(take, one, mine, best)
                        best_i = where_equal(take, one, row, best_i)
                        best_j = where_equal(take, one, column, best_j)
                        best_p = where_equal(take, one, w_p, best_p)
                        best_l = where_equal(take, one, w_l, best_l)
                        best_s = where_equal(take, one, w_s, best_s)
                        below = subtract(best, one)
                if tracing:
                    source = where_equal(h, h_diag, zero, where_equal(h, f, one, two))
                    if local:
                        source = where_greater(h, zero, source, three)
                    f_bit = where_greater(f_open, f_extend, four, zero)
                    code = add(add(f_bit, where_greater(e_open, e_extend, eight, zero)), source)
                    store_bytes(way, (i * row_stride + j) * L, code)
                diag, diag_p, diag_l, diag_s = north, north_p, north_l, north_s
                store(H, at, h)
                store(h_pairs, at, w_p)
                if not packed:
                    store(h_length, at, w_l)
                store(h_start, at, w_s)
                west, west_p, west_l, west_s = h, w_p, w_l, w_s
            if local:
                store(lane_best, 2 * L, best_j)
            if mode == 2:  # semi-global: each lane's last column, smallest row first
                _store_best(lane_best, L, best, best_i, best_j, best_p, best_l, best_s)
                for lane in range(L):
                    at = n[lane] * L + lane
                    if n[lane] > 0 and i <= m[lane] and H[at] > lane_best[lane]:
                        lane_best[lane], lane_best[L + lane], lane_best[2 * L + lane] = H[at], i, n[lane]
                        lane_best[3 * L + lane], lane_best[4 * L + lane] = h_pairs[at], h_length[at]
                        lane_best[5 * L + lane] = h_start[at]
                best, best_i, best_j, best_p, best_l, best_s = _load_best(lane_best, L)
            for lane in range(L):
                if i == m[lane]:
                    _keep_row(lane, n[lane], L, H, h_pairs, h_length, h_start, kept, kept_pairs, kept_length,
                              kept_start)  # fmt: skip
        _store_best(lane_best, L, best, best_i, best_j, best_p, best_l, best_s)
        for lane in range(count):
            p = group + lane
            _finish_path(p, mode, m[lane], n[lane], kept, kept_pairs, kept_length, kept_start, L, lane,
                         lane_best[lane], lane_best[L + lane], lane_best[2 * L + lane], lane_best[3 * L + lane],
                         lane_best[4 * L + lane], lane_best[5 * L + lane], scores_out, positions_out,
                         counts_out, packed, shift)  # fmt: skip
            if trace_cells > 0:
                ops_first[p, 0] = -1
                if tracing:
                    at, start_i, start_j = _backtrack(way, row_stride, L, lane, positions_out[p, 3] + 1,
                                                      positions_out[p, 1] + 1, free_target_start, free_query_start,
                                                      ops, ops_end[p])  # fmt: skip
                    ops_first[p, 0], ops_first[p, 1], ops_first[p, 2] = at, start_i, start_j


@jit(inline="always")
def _load_best(lane_best, L):
    """The lanes' best cells (value, row, column and the path's three words), six vectors of ``L`` lanes from
    ``lane_best``."""
    return (load(lane_best, 0), load(lane_best, L), load(lane_best, 2 * L), load(lane_best, 3 * L),
            load(lane_best, 4 * L), load(lane_best, 5 * L))  # fmt: skip


@jit(inline="always")
def _store_best(lane_best, L, best, best_i, best_j, best_p, best_l, best_s):
    """Store the six vectors :func:`_load_best` reads."""
    store(lane_best, 0, best)
    store(lane_best, L, best_i)
    store(lane_best, 2 * L, best_j)
    store(lane_best, 3 * L, best_p)
    store(lane_best, 4 * L, best_l)
    store(lane_best, 5 * L, best_s)


@jit(inline="always")
def _keep_row(lane, n, L, H, h_pairs, h_length, h_start, kept, kept_pairs, kept_length, kept_start):
    """Copy lane ``lane``'s cells of the current row, columns ``0..n``, to the kept row (``L`` lanes)."""
    for j in range(n + 1):
        at = j * L + lane
        kept[at], kept_pairs[at], kept_length[at], kept_start[at] = H[at], h_pairs[at], h_length[at], h_start[at]


@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q"))
def mode_scores(t_codes, t_off, q_codes, q_off, pair_t, pair_q, first, last, by_query, gap_open, gap_extend, mode,
                scores_out, positions_out):  # fmt: skip
    """:func:`mode_pairs` without the paths: the score and end positions only (start columns left as they are),
    the same cells and ties, several times faster."""
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    longest = _longest_target(t_off, pair_t, first, last) + 1
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


# Traceback directions, one byte a cell: bits 0-1 where H came from, bit 2 F opened here, bit 3 E opened here.
_FROM_DIAGONAL, _FROM_F, _FROM_E, _STOP = 0, 1, 2, 3


@jit(reads=("t", "q"))
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
    return _backtrack(way.reshape(-1), n + 1, 1, 0, m, n, free_target_start, free_query_start, ops, ops.size)


@jit(inline="always")
def _backtrack(way, row_stride, lanes, lane, m, n, free_target_start, free_query_start, ops, at):
    """Follow the direction codes back from cell ``(m, n)``, cell ``(i, j)``'s code at ``way[(i row_stride + j)
    lanes + lane]``, writing the operations backwards into ``ops`` before index ``at``. Returns ``(first op index,
    start row, start column)``."""
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
            source = way[(i * row_stride + j) * lanes + lane] & 3
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
            if way[(i * row_stride + j) * lanes + lane] & 4:
                state = 0
            i -= 1
        else:
            at -= 1
            ops[at] = 1
            if way[(i * row_stride + j) * lanes + lane] & 8:
                state = 0
            j -= 1
    return at, i, j


# The scores pass of one query against many targets on explicit SIMD vectors (seqcompare._simd), one target a
# lane, eight query rows a sweep held in registers, as strips.py holds them for NW: a column costs two loads and
# two stores (the row above and below the strip) and the eight rows' profile vectors. (An auto-vectorised form,
# every cell's state in arrays, ran at 2.2 GCUPS a thread; this one's int16 kernel at 11.4 local, 16.7 global.)
STRIP = 8


@jit(inline="always")
def _cell(diag, left, up, e, f, score, go, ge, floor):
    """A cell (maximised): ``e`` the best ending in a horizontal gap, ``f`` in a vertical one, then H."""
    e = maximum(subtract(e, ge), subtract(left, go))
    f = maximum(subtract(f, ge), subtract(up, go))
    return maximum(maximum(add(diag, score), maximum(e, f)), floor), e, f


@jit
def _own_query_scores(own, flat, code_numbers, letters, stride, x, pad_scores, lanes):
    """One strip row's scores when every lane has its own query: each lane's letter (``own``) picks its row of the
    targets' profile, one compare and select per letter the queries hold (``letters``; no gather)."""
    scores = pad_scores
    for c in letters:
        scores = where_equal(own, load(code_numbers, c * lanes), load(flat, c * stride + x), scores)
    return scores


@jit
def mode_strips(profile, q, m, t_len, gap_open, gap_extend, negative, mode, scores_out, t_end_out, q_end_out,
                lane_rows, letters, q_len, equal_letters):  # fmt: skip
    """:func:`mode_scores` of one query ``q`` against ``L`` targets at once, one per SIMD lane, in the profile's
    integer type (int16 or int32; ``gap_open``, ``gap_extend`` and ``negative``, the unreachable value, of the same
    type; the caller bounds every value, the padding's sums included, within it); or of ``L`` pairs that each have
    their own query (``lane_rows`` not empty).

    ``profile[b, j, lane]`` is the score of lane ``lane``'s target letter at column ``j + 1`` against query code
    ``b``, ``L`` the lanes of one vector of its type (:func:`seqcompare._simd.lanes_of`): with the query shared by
    the lanes a row's scores are one vector load a column, with no gather. The padding code (the last) scores
    :data:`LANE_PAD` against everything; ``q`` holds the query's ``m`` codes, padded with it to whole strips of
    :data:`STRIP` rows, and targets shorter than the longest are padded with it too. Padded cells are computed
    but never chosen: their values come from real cells by adding the padding's score or subtracting gaps, so
    they are lower than a real cell or equal to one of a smaller row or column, which the tie rules prefer. The
    other modes' end cells are read from each lane's own last column and the query's last row.

    Pairs with a query each (pairs by order, where no two share a query): ``lane_rows[i L + lane]`` (the profile's
    type) is the lane's own query code at row ``i + 1``, rows padded to ``q.size`` with the padding's code (``q``
    itself is then only that padding); ``letters`` the codes those queries hold (the padding's not among them);
    ``q_len`` each lane's query length, ``m`` their largest. Each lane's letter picks its row of the profile by a
    compare and select per letter (a DNA group: four, whatever the matrix's alphabet), and each lane's ends come
    from its own last row. With one query shared (``lane_rows`` and ``letters`` empty), ``q_len`` is ``m`` in every
    lane.

    Pairs with a query each, scored ``match`` between equal letters and ``mismatch`` between others (DNA under
    NUC.4.4, say): ``equal_letters`` is ``[match, mismatch, the padding's score, the padding's code]`` and
    ``profile`` (shape ``(1, n, L)``) holds the targets' codes, the padding's in padded columns. A cell's score is
    then one compare of the lane's query code with its target code, and one select between the column's two
    scores (the padding's in a padded column, which keeps a local best out of it); a padded row of a lane's query
    scores match or mismatch as a real row would, and no real cell depends on it (the lane's ends are read above
    it). Otherwise ``equal_letters`` is empty."""
    codes, n_max, L = profile.shape
    kind = profile.dtype
    flat = profile.reshape(-1)
    per_lane = lane_rows.size > 0
    equal = equal_letters.size > 0
    if equal:
        match, mismatch = splat(equal_letters[0]), splat(equal_letters[1])
        pad_score, pad_code = splat(equal_letters[2]), splat(equal_letters[3])
    else:  # unused, but typed alike on both branches for Numba
        match = mismatch = pad_score = pad_code = splat(gap_open)
    code_numbers = np.empty(codes * L, kind)  # code c in every lane: what each lane's own query letter is matched with
    for c in range(codes):
        for lane in range(L):
            code_numbers[c * L + lane] = c
    stride = n_max * L  # one code's profile
    last_at_lanes = np.full(L, -1, kind)
    last_rows = load(last_at_lanes, 0)
    # Row r of a strip in every lane: what each lane's last row, and a column's first best row, is matched with.
    r0, r1, r2, r3 = constant(last_rows, 0), constant(last_rows, 1), constant(last_rows, 2), constant(last_rows, 3)
    r4, r5, r6, r7 = constant(last_rows, 4), constant(last_rows, 5), constant(last_rows, 6), constant(last_rows, 7)
    local = mode == 1
    free_target_start = mode == 1 or mode == 2 or mode == 3
    free_query_start = mode == 1 or mode == 2
    zero = sub_narrow(gap_open, gap_open)
    H = np.empty((n_max + 1) * L, kind)
    F = np.empty((n_max + 1) * L, kind)
    last_row = np.empty((n_max + 1) * L, kind)  # row m, for the modes that end there
    column_values = np.empty(STRIP * L, kind)  # semi-global: each row's cell at each lane's last column
    ends_at = np.zeros(n_max + 1, np.bool_)  # semi-global: the columns where some lane's target ends
    for lane in range(L):
        ends_at[t_len[lane]] = True
    strip_best = np.empty(3 * L, kind)  # local: a strip's best cell in each lane, its column and its row
    rows_left = np.zeros(L, kind)  # local: each lane's query rows from a strip's first on (its padding is masked)
    best = np.empty(L, kind)
    best_i = np.zeros(L, np.int64)
    best_j = np.zeros(L, np.int64)
    lengths = np.empty(L, kind)
    ones = np.ones(L, kind)
    for lane in range(L):
        best[lane] = zero if local else negative
        lengths[lane] = t_len[lane]
        if local:
            best_i[lane] = 1
            best_j[lane] = 1
    opening = zero
    for j in range(n_max + 1):
        if j == 1:
            opening = sub_narrow(zero, gap_open)
        elif j > 1:
            opening = sub_narrow(opening, gap_extend)
        for lane in range(L):
            H[j * L + lane] = zero if free_target_start else opening
            F[j * L + lane] = negative
            last_row[j * L + lane] = zero if free_target_start else opening
    go, ge, floor = splat(gap_open), splat(gap_extend), splat(zero if local else negative)
    none = splat(negative)
    ends = load(lengths, 0)
    one = load(ones, 0)
    border = zero
    for first in range(0, q.size, STRIP):
        # Column 0 of the strip's rows (leading gaps in the narrow type, one subtraction at a time).
        h = np.empty(STRIP, kind)
        for r in range(STRIP):
            i = first + r + 1
            border = sub_narrow(zero, gap_open) if i == 1 else sub_narrow(border, gap_extend)
            h[r] = zero if free_query_start else border
        h0, h1, h2, h3, h4, h5, h6, h7 = (splat(h[0]), splat(h[1]), splat(h[2]), splat(h[3]), splat(h[4]),
                                          splat(h[5]), splat(h[6]), splat(h[7]))  # fmt: skip
        e0 = e1 = e2 = e3 = e4 = e5 = e6 = e7 = none
        # Local: the strip's best cell so far in each lane, the first column that reached it, and the first of
        # its rows there. Three vectors, not two a row, so the column loop keeps its rows' state in registers.
        # It starts one below the lane's best of the strips above: only a cell that ties or beats that can
        # matter (a tie, where its column is smaller), so the loop's branch is taken in a few columns of a
        # strip (where a related pair's path crosses it), not at every rise of the strip's own maximum.
        best_value, best_column, best_row = subtract(load(best, 0), one), splat(zero), splat(zero)
        if local:
            for lane in range(L):
                rows_left[lane] = min(max(q_len[lane] - first, 0), STRIP)
        left = load(rows_left, 0)
        if mode == 2:
            for r in range(STRIP):
                store(column_values, r * L, none)
        rows = (q[first] * n_max, q[first + 1] * n_max, q[first + 2] * n_max, q[first + 3] * n_max,
                q[first + 4] * n_max, q[first + 5] * n_max, q[first + 6] * n_max, q[first + 7] * n_max)  # fmt: skip
        diag = load(H, 0)
        store(H, 0, h7)
        keep_last = first < m <= first + STRIP
        last_at = m - first - 1
        if per_lane:  # each lane's own last row, where it falls in this strip (else -1, matching no row)
            keep_last = False
            for lane in range(L):
                at_row = q_len[lane] - first - 1
                inside = 0 <= at_row < STRIP
                keep_last = keep_last or inside
                last_at_lanes[lane] = at_row if inside else -1
                if inside:
                    last_row[lane] = h[at_row]
            last_rows = load(last_at_lanes, 0)
        elif keep_last:
            store(last_row, 0, splat(h[last_at]))
        column = splat(zero)
        own0 = own1 = own2 = own3 = own4 = own5 = own6 = own7 = none  # the strip's query codes, lane by lane
        if per_lane:  # loaded once a strip: the column loop's stores could alias them, so LLVM would not hoist them
            own_at = first * L
            own0, own1, own2, own3 = (load(lane_rows, own_at), load(lane_rows, own_at + L),
                                      load(lane_rows, own_at + 2 * L), load(lane_rows, own_at + 3 * L))  # fmt: skip
            own4, own5, own6, own7 = (load(lane_rows, own_at + 4 * L), load(lane_rows, own_at + 5 * L),
                                      load(lane_rows, own_at + 6 * L), load(lane_rows, own_at + 7 * L))  # fmt: skip
        for j in range(1, n_max + 1):
            at = j * L
            up = load(H, at)
            f = load(F, at)
            column = add(column, one)
            x = (j - 1) * L
            if equal:
                target = load(flat, x)
                hit = match  # a real letter never equals the padding's code, so a padded column takes `miss`
                miss = where_equal(target, pad_code, pad_score, mismatch)
                s0 = where_equal(own0, target, hit, miss)
                s1 = where_equal(own1, target, hit, miss)
                s2 = where_equal(own2, target, hit, miss)
                s3 = where_equal(own3, target, hit, miss)
                s4 = where_equal(own4, target, hit, miss)
                s5 = where_equal(own5, target, hit, miss)
                s6 = where_equal(own6, target, hit, miss)
                s7 = where_equal(own7, target, hit, miss)
            elif per_lane:
                pad = load(flat, (codes - 1) * stride + x)
                s0 = _own_query_scores(own0, flat, code_numbers, letters, stride, x, pad, L)
                s1 = _own_query_scores(own1, flat, code_numbers, letters, stride, x, pad, L)
                s2 = _own_query_scores(own2, flat, code_numbers, letters, stride, x, pad, L)
                s3 = _own_query_scores(own3, flat, code_numbers, letters, stride, x, pad, L)
                s4 = _own_query_scores(own4, flat, code_numbers, letters, stride, x, pad, L)
                s5 = _own_query_scores(own5, flat, code_numbers, letters, stride, x, pad, L)
                s6 = _own_query_scores(own6, flat, code_numbers, letters, stride, x, pad, L)
                s7 = _own_query_scores(own7, flat, code_numbers, letters, stride, x, pad, L)
            else:
                s0, s1, s2, s3 = (load(flat, rows[0] * L + x), load(flat, rows[1] * L + x), load(flat, rows[2] * L + x),
                                  load(flat, rows[3] * L + x))  # fmt: skip
                s4, s5, s6, s7 = (load(flat, rows[4] * L + x), load(flat, rows[5] * L + x), load(flat, rows[6] * L + x),
                                  load(flat, rows[7] * L + x))  # fmt: skip
            n0, e0, f = _cell(diag, h0, up, e0, f, s0, go, ge, floor)
            n1, e1, f = _cell(h0, h1, n0, e1, f, s1, go, ge, floor)
            n2, e2, f = _cell(h1, h2, n1, e2, f, s2, go, ge, floor)
            n3, e3, f = _cell(h2, h3, n2, e3, f, s3, go, ge, floor)
            n4, e4, f = _cell(h3, h4, n3, e4, f, s4, go, ge, floor)
            n5, e5, f = _cell(h4, h5, n4, e5, f, s5, go, ge, floor)
            n6, e6, f = _cell(h5, h6, n5, e6, f, s6, go, ge, floor)
            n7, e7, f = _cell(h6, h7, n6, e7, f, s7, go, ge, floor)
            if local:
                top = maximum(maximum(maximum(n0, n1), maximum(n2, n3)), maximum(maximum(n4, n5), maximum(n6, n7)))
                if any_greater(top, best_value):  # a few columns of a strip: a new best in some lane
                    # A lane's rows past its query hold no cell of its pair.
                    m0, m1 = where_greater(left, r0, n0, none), where_greater(left, r1, n1, none)
                    m2, m3 = where_greater(left, r2, n2, none), where_greater(left, r3, n3, none)
                    m4, m5 = where_greater(left, r4, n4, none), where_greater(left, r5, n5, none)
                    m6, m7 = where_greater(left, r6, n6, none), where_greater(left, r7, n7, none)
                    top = maximum(maximum(maximum(m0, m1), maximum(m2, m3)), maximum(maximum(m4, m5), maximum(m6, m7)))
                    row = r7  # the first row holding the column's maximum
                    row = where_equal(m6, top, r6, row)
                    row = where_equal(m5, top, r5, row)
                    row = where_equal(m4, top, r4, row)
                    row = where_equal(m3, top, r3, row)
                    row = where_equal(m2, top, r2, row)
                    row = where_equal(m1, top, r1, row)
                    row = where_equal(m0, top, r0, row)
                    best_row = where_greater(top, best_value, row, best_row)
                    best_column = where_greater(top, best_value, column, best_column)
                    best_value = maximum(top, best_value)
            elif mode == 2 and ends_at[j]:  # each row's cell at each lane's last column: a few columns of a group
                store(column_values, 0, where_equal(ends, column, n0, load(column_values, 0)))
                store(column_values, L, where_equal(ends, column, n1, load(column_values, L)))
                store(column_values, 2 * L, where_equal(ends, column, n2, load(column_values, 2 * L)))
                store(column_values, 3 * L, where_equal(ends, column, n3, load(column_values, 3 * L)))
                store(column_values, 4 * L, where_equal(ends, column, n4, load(column_values, 4 * L)))
                store(column_values, 5 * L, where_equal(ends, column, n5, load(column_values, 5 * L)))
                store(column_values, 6 * L, where_equal(ends, column, n6, load(column_values, 6 * L)))
                store(column_values, 7 * L, where_equal(ends, column, n7, load(column_values, 7 * L)))
            if keep_last and per_lane:
                picked = load(last_row, at)
                picked = where_equal(last_rows, r0, n0, picked)
                picked = where_equal(last_rows, r1, n1, picked)
                picked = where_equal(last_rows, r2, n2, picked)
                picked = where_equal(last_rows, r3, n3, picked)
                picked = where_equal(last_rows, r4, n4, picked)
                picked = where_equal(last_rows, r5, n5, picked)
                picked = where_equal(last_rows, r6, n6, picked)
                picked = where_equal(last_rows, r7, n7, picked)
                store(last_row, at, picked)
            elif keep_last:
                picked = n0
                picked = n1 if last_at == 1 else picked
                picked = n2 if last_at == 2 else picked
                picked = n3 if last_at == 3 else picked
                picked = n4 if last_at == 4 else picked
                picked = n5 if last_at == 5 else picked
                picked = n6 if last_at == 6 else picked
                picked = n7 if last_at == 7 else picked
                store(last_row, at, picked)
            diag = up
            h0, h1, h2, h3, h4, h5, h6, h7 = n0, n1, n2, n3, n4, n5, n6, n7
            store(H, at, n7)
            store(F, at, f)
        if local:  # the strip's best against the earlier strips': the higher, then the smaller column
            store(strip_best, 0, best_value)
            store(strip_best, L, best_column)
            store(strip_best, 2 * L, best_row)
            for lane in range(L):
                value, j = strip_best[lane], np.int64(strip_best[L + lane])
                if value > best[lane] or (value == best[lane] and j < best_j[lane]):
                    best[lane], best_i[lane], best_j[lane] = value, first + np.int64(strip_best[2 * L + lane]) + 1, j
        elif mode == 2:
            for r in range(STRIP):
                for lane in range(L):
                    n = t_len[lane]
                    if first + r < q_len[lane] and n > 0 and column_values[r * L + lane] > best[lane]:
                        best[lane], best_i[lane], best_j[lane] = column_values[r * L + lane], first + r + 1, n
    for lane in range(L):
        n = t_len[lane]
        m = q_len[lane]
        if local:
            if m == 0 or n == 0:
                best[lane], best_i[lane], best_j[lane] = zero, 0, 0
        elif mode == 0 or m == 0 or n == 0:
            best[lane], best_i[lane], best_j[lane] = last_row[n * L + lane], m, n
        elif mode == 2:
            for j in range(1, n):
                value = last_row[j * L + lane]
                if value > best[lane] or (value == best[lane] and j < best_j[lane]):
                    best[lane], best_i[lane], best_j[lane] = value, m, j
        else:
            best[lane], best_i[lane], best_j[lane] = last_row[lane], m, 0
            for j in range(1, n + 1):
                if last_row[j * L + lane] > best[lane]:
                    best[lane], best_i[lane], best_j[lane] = last_row[j * L + lane], m, j
        scores_out[lane] = best[lane]
        t_end_out[lane] = best_j[lane] - 1
        q_end_out[lane] = best_i[lane] - 1
