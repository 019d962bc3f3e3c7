"""NW on explicit SIMD vectors: one pair per lane, eight DP rows per sweep held in registers.

An auto-vectorised lane loop keeps each row's state in arrays, so a cell costs several vector loads and
stores. Here a sweep along the target computes a strip of :data:`ROWS` query rows for one vector of pairs:
each row's left value and horizontal-gap carry stay in registers, and only the strip's top row (values and
vertical-gap carries) goes through memory: three loads and two stores per eight cells.

Lanes hold pairs of different lengths (padded): a pair's score, the cell at its own last row and column, is
taken during the sweep of the strip that holds that row. Cells past a lane's own lengths are computed and may
even wrap around the lane type, harmlessly: no cell of a pair depends on a cell beyond its lengths (the DP only
looks up and left), and the caller bounds every cell within them.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from .._simd import add, load, minimum, splat, store, where_equal

ROWS = 8


@jit(inline="always")
def linear_cell(diag, left, up, e, f, t, q, match, mismatch, io, ie, do, de):
    """Linear gaps: the carries are not needed (returned unchanged)."""
    best_gap = minimum(add(left, ie), add(up, de))
    return minimum(add(diag, where_equal(t, q, match, mismatch)), best_gap), e, f


@jit(inline="always")
def affine_cell(diag, left, up, e, f, t, q, match, mismatch, io, ie, do, de):
    """Gotoh's cell: ``e`` the best ending in a horizontal gap, ``f`` in a vertical one."""
    e = add(minimum(e, add(left, io)), ie)
    f = add(minimum(f, add(up, do)), de)
    return minimum(add(diag, where_equal(t, q, match, mismatch)), minimum(e, f)), e, f


@jit(inline="always")
def _sweep(cell, H, F, t_lanes, lanes, columns, first_row, q, h, diag, steps, capture, ends, result):
    """One strip: rows ``first_row .. first_row + 7`` over every column; ``q`` their query codes and ``h``
    their column-0 values. With ``capture``, lanes whose last cell is in the strip take it into ``result``."""
    match, mismatch, io, ie, do, de, big, none = steps
    q0, q1, q2, q3, q4, q5, q6, q7 = q
    h0, h1, h2, h3, h4, h5, h6, h7 = h
    e0 = e1 = e2 = e3 = e4 = e5 = e6 = e7 = big
    t_end, q_end = ends
    kind = H.dtype.type
    column = splat(kind(0))
    one = splat(kind(1))
    rows = (splat(kind(first_row)), splat(kind(first_row + 1)), splat(kind(first_row + 2)),
            splat(kind(first_row + 3)), splat(kind(first_row + 4)), splat(kind(first_row + 5)),
            splat(kind(first_row + 6)), splat(kind(first_row + 7)))  # fmt: skip
    t_end_v = load(t_end, 0)
    q_end_v = load(q_end, 0)
    for j in range(1, columns + 1):
        at = j * lanes
        up = load(H, at)
        f = load(F, at)
        t = load(t_lanes, at - lanes)
        n0, e0, f = cell(diag, h0, up, e0, f, t, q0, match, mismatch, io, ie, do, de)
        n1, e1, f = cell(h0, h1, n0, e1, f, t, q1, match, mismatch, io, ie, do, de)
        n2, e2, f = cell(h1, h2, n1, e2, f, t, q2, match, mismatch, io, ie, do, de)
        n3, e3, f = cell(h2, h3, n2, e3, f, t, q3, match, mismatch, io, ie, do, de)
        n4, e4, f = cell(h3, h4, n3, e4, f, t, q4, match, mismatch, io, ie, do, de)
        n5, e5, f = cell(h4, h5, n4, e5, f, t, q5, match, mismatch, io, ie, do, de)
        n6, e6, f = cell(h5, h6, n5, e6, f, t, q6, match, mismatch, io, ie, do, de)
        n7, e7, f = cell(h6, h7, n6, e7, f, t, q7, match, mismatch, io, ie, do, de)
        if capture:
            column = add(column, one)
            # The row where a lane ends, in lanes whose last column is this one; elsewhere no row matches.
            ending = where_equal(t_end_v, column, q_end_v, none)
            result = where_equal(ending, rows[0], n0, result)
            result = where_equal(ending, rows[1], n1, result)
            result = where_equal(ending, rows[2], n2, result)
            result = where_equal(ending, rows[3], n3, result)
            result = where_equal(ending, rows[4], n4, result)
            result = where_equal(ending, rows[5], n5, result)
            result = where_equal(ending, rows[6], n6, result)
            result = where_equal(ending, rows[7], n7, result)
        diag = up
        h0, h1, h2, h3, h4, h5, h6, h7 = n0, n1, n2, n3, n4, n5, n6, n7
        store(H, at, n7)
        store(F, at, f)
    return result


@jit(inline="always")
def nw_strips(cell, t_lanes, q_lanes, t_len, q_len, match, mismatch, io, ie, do, de, big, out):
    """Gotoh NW costs of one vector of pairs (``lanes`` = :func:`seqcompare._simd.lanes_of` the dtype).

    ``t_lanes`` ``(M * lanes)`` and ``q_lanes`` ``(N * lanes)`` are codes, lane-interleaved, padded to the
    longest (N a multiple of :data:`ROWS`); ``t_len``, ``q_len`` and ``out`` have one value per lane, all of the
    DP's integer type, whose range the caller has checked. ``cell`` is :func:`linear_cell` or
    :func:`affine_cell`."""
    lanes = out.shape[0]
    columns = t_lanes.shape[0] // lanes
    n_rows = q_lanes.shape[0] // lanes
    kind = out.dtype.type
    H = np.empty((columns + 1) * lanes, out.dtype)
    F = np.empty((columns + 1) * lanes, out.dtype)
    for j in range(columns + 1):
        for lane in range(lanes):
            H[j * lanes + lane] = kind(io + j * ie) if j > 0 else kind(0)
            F[j * lanes + lane] = big
    for lane in range(lanes):
        # Empty sides: the score is a boundary cell, never reached by a sweep.
        if q_len[lane] == 0:
            out[lane] = H[t_len[lane] * lanes + lane]
        elif t_len[lane] == 0:
            out[lane] = kind(do + q_len[lane] * de)
        else:
            out[lane] = big
    steps = (splat(match), splat(mismatch), splat(io), splat(ie), splat(do), splat(de), splat(big), splat(kind(-1)))
    ends = (t_len, q_len)
    result = load(out, 0)
    for first in range(1, n_rows + 1, ROWS):
        capture = False
        for lane in range(lanes):
            if t_len[lane] > 0 and first <= q_len[lane] < first + ROWS:
                capture = True
        at = (first - 1) * lanes
        q = (load(q_lanes, at), load(q_lanes, at + lanes), load(q_lanes, at + 2 * lanes),
             load(q_lanes, at + 3 * lanes), load(q_lanes, at + 4 * lanes), load(q_lanes, at + 5 * lanes),
             load(q_lanes, at + 6 * lanes), load(q_lanes, at + 7 * lanes))  # fmt: skip
        h = (splat(kind(do + first * de)), splat(kind(do + (first + 1) * de)), splat(kind(do + (first + 2) * de)),
             splat(kind(do + (first + 3) * de)), splat(kind(do + (first + 4) * de)),
             splat(kind(do + (first + 5) * de)), splat(kind(do + (first + 6) * de)),
             splat(kind(do + (first + 7) * de)))  # fmt: skip
        diag = load(H, 0)
        store(H, 0, h[7])
        result = _sweep(cell, H, F, t_lanes, lanes, columns, first, q, h, diag, steps, capture, ends, result)
    store(out, 0, result)


@jit
def _interleave(values, off, items, order, first, count, lanes, length, kind):
    """Sequences ``items[order[first + k]]`` for ``k < count``, lane ``k`` of a ``(length * lanes)`` array of
    ``kind`` (zeros beyond each one's end), and their lengths (zero in unused lanes)."""
    packed = np.zeros(length * lanes, kind)
    lengths = np.zeros(lanes, kind)
    for k in range(count):
        item = items[order[first + k]]
        start = off[item]
        lengths[k] = off[item + 1] - start
        for x in range(off[item + 1] - start):
            packed[x * lanes + k] = values[start + x]
    return packed, lengths


@jit(inline="always")
def _nw_groups(cell, t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, match, mismatch,
               io, ie, do, de, big, out):  # fmt: skip
    """Scores of pairs ``order[first:last]`` into ``out`` (by pair), a vector of ``lanes`` pairs at a time
    (``lanes`` = :func:`seqcompare._simd.lanes_of` ``big``'s type); see :func:`nw_strips`."""
    kind = type(big)
    scores = np.empty(lanes, kind)
    for start in range(first, last, lanes):
        count = min(lanes, last - start)
        longest_t = np.int64(0)  # int64, not literals: each literal type compiles _interleave again
        longest_q = np.int64(0)
        for k in range(start, start + count):
            longest_t = max(longest_t, t_off[pair_t[order[k]] + 1] - t_off[pair_t[order[k]]])
            longest_q = max(longest_q, q_off[pair_q[order[k]] + 1] - q_off[pair_q[order[k]]])
        rows = (longest_q + ROWS - 1) // ROWS * ROWS
        t_lanes, t_len = _interleave(t_codes, t_off, pair_t, order, start, count, lanes, longest_t, kind)
        q_lanes, q_len = _interleave(q_codes, q_off, pair_q, order, start, count, lanes, rows, kind)
        nw_strips(cell, t_lanes, q_lanes, t_len, q_len, match, mismatch, io, ie, do, de, big, scores)
        for k in range(count):
            out[order[start + k]] = scores[k]


# The entry points name their cell function instead of taking it as an argument: Numba cannot cache a function
# whose arguments include another compiled function, so that form recompiled on every run (1.8 s for 3 pairs).
@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q", "order"))
def nw_groups_linear(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, match, mismatch,
                     io, ie, do, de, big, out):  # fmt: skip
    """:func:`_nw_groups` with linear gaps (:func:`linear_cell`)."""
    _nw_groups(linear_cell, t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, match,
               mismatch, io, ie, do, de, big, out)  # fmt: skip


@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q", "order"))
def nw_groups_affine(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, match, mismatch,
                     io, ie, do, de, big, out):  # fmt: skip
    """:func:`_nw_groups` with affine gaps (:func:`affine_cell`)."""
    _nw_groups(affine_cell, t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, match,
               mismatch, io, ie, do, de, big, out)  # fmt: skip
