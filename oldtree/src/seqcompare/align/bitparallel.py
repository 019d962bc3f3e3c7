"""Unit-cost global alignment (edit distance) by Myers' bit-vector algorithm, many pairs at once on the CPU.

Myers (J. ACM 46(3), 1999) encodes a column of the DP matrix by its vertical differences, each -1, 0 or +1,
as two bit-vectors (``Pv``: +1, ``Mv``: -1), one bit per query base, and computes the next column from the
previous one with a dozen word operations. Hyyrö (2003) gave the form used here, with the global boundary (the
top row grows by one per column, so a +1 horizontal difference enters at the top) and words chained for
queries longer than 64: the addition carries, and the horizontal differences shifted into the next word.

Each SIMD lane holds one pair, as the affine kernels do: for every target base, every 64-bit word of every
lane's query is updated by the same instructions, so a vector of lanes advances in lockstep. Lanes may hold
different lengths: rows below a query's end only receive carries from above and never send any back, and each
lane's distance is read when the column reaches its own target's end.

**A band, then a proof.** Only the words of a band around the diagonals are computed (Ukkonen, 1985; edlib
does the same with its block bands). Every value computed is the cost of a real path (a row entering the band
from above takes its neighbour's value plus one, a word entering from below starts as the column-0 vertical
run), so the result ``U`` of a band is never below the distance ``d``. A path through cell ``(i, j)`` of an
``n x m`` matrix costs at least ``|i - j| + |(n - i) - (m - j)|``, so every optimal path lies in the diagonals
``x = i - j`` with ``|x| + |n - m - x| <= d <= U``: when the band holds all of them, ``U`` is exact. The first
pass takes a band ``FIRST_BAND`` diagonals either side of the two corners' diagonals, which proves any
distance up to ``|n - m| + 2 * FIRST_BAND``; a pair it cannot prove is run again in the band its own ``U``
proves, which always holds the answer. So the result is the edit distance, identical to the DP, for any input
(tested against the plain oracle, with bands narrow enough that most pairs take the second pass).
"""

from __future__ import annotations

import numpy as np

from .._intrinsics import popcount64
from .._jit import jit

CODE_BITS = 3  # base codes 0..4 (A, C, G, T, N) in three bits: equal codes match, as Costs.edit()'s table says

# Diagonals either side of the corners' diagonals in the first pass: 4 words a column instead of 16 for 1 kb
# queries, and it proves every distance up to 128 (plus the length difference) at once. Measured with
# bench/edit_cpu.py: 32 and 96 were both slower at 10% divergence.
FIRST_BAND = 64


@jit(reads=("t_codes", "t_off", "q_codes", "q_off", "pair_t", "pair_q", "order", "bands"))
def edit_distance_groups(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, bands, out):
    """Edit distances of the pairs ``order[first:last]`` (target ``pair_t[p]`` against query ``pair_q[p]``),
    ``lanes`` pairs at a time (pairs sorted by shape share a vector with little padding), into ``out[p]``.

    A vector is computed in the widest of its pairs' ``bands[p]``. A distance the band cannot prove is written
    as ``-1 - b``: ``b`` is the band that proves the pair's bound (see :func:`_edit_distance_vector`)."""
    for start in range(first, last, lanes):
        stop = min(start + lanes, last)
        members = order[start:stop]
        band = np.int64(0)  # not the literal 0: Numba would compile the vector kernel once more for it
        for p in members:
            band = max(band, bands[p])
        _edit_distance_vector(t_codes, t_off, q_codes, q_off, pair_t, pair_q, members, lanes, band, out)


@jit
def _edit_distance_vector(t_codes, t_off, q_codes, q_off, pair_t, pair_q, members, L, band, out):
    """One vector of ``L`` lanes (lane ``k`` holds pair ``members[k]``; lanes past ``members`` stay empty),
    computed in ``band`` diagonals either side of its corners' diagonals.

    Writes the distance where the band proves it, else ``-1 - b``, where ``b`` is the band that proves the
    upper bound found (so a second pass in band ``b`` or wider always proves its result)."""
    t_start = np.zeros(L, np.int64)
    t_len = np.zeros(L, np.int64)
    q_start = np.zeros(L, np.int64)
    q_len = np.zeros(L, np.int64)
    for lane in range(members.size):
        p = members[lane]
        t_start[lane] = t_off[pair_t[p]]
        t_len[lane] = t_off[pair_t[p] + 1] - t_start[lane]
        q_start[lane] = q_off[pair_q[p]]
        q_len[lane] = q_off[pair_q[p] + 1] - q_start[lane]
    M = t_len.max()
    N = q_len.max()
    words = max(1, (N + 63) // 64)
    all_ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    zero = np.uint64(0)
    one = np.uint64(1)
    # The band, as diagonals x = i - j of the whole vector: each lane's [min(0, n - m) - band, max(0, n - m) +
    # band], joined. Row i (1-based) of column j is computed when j + low <= i <= j + high, rounded out to words.
    low = 0
    high = 0
    for lane in range(members.size):
        low = min(low, q_len[lane] - t_len[lane])
        high = max(high, q_len[lane] - t_len[lane])
    low -= band
    high += band
    # Both sides transposed first, a row's (or column's) codes of every lane side by side, so that the loops
    # below run across lanes in vector registers (per-lane loops over each sequence would be scalar).
    rows = np.zeros((words * 64, L), np.uint8)
    for lane in range(L):
        for i in range(q_len[lane]):
            rows[i, lane] = q_codes[q_start[lane] + i]
    columns = np.zeros((M, L), np.uint8)
    for lane in range(L):
        for j in range(t_len[lane]):
            columns[j, lane] = t_codes[t_start[lane] + j]
    # The query's codes bit-sliced: bit r of planes[w, b, lane] is bit b of the code of query base 64 * w + r.
    # A target base t then matches the rows where all three planes agree with t's bits: Eq = ~OR(plane ^ t_b).
    # Rows past a lane's query are zero (code A): they only receive carries from above, never send any back.
    planes = np.zeros((words, CODE_BITS, L), np.uint64)
    for w in range(words):
        for r in range(64):
            for b in range(CODE_BITS):
                for lane in range(L):
                    planes[w, b, lane] |= np.uint64((rows[64 * w + r, lane] >> b) & 1) << np.uint64(r)
    pv = np.full((words, L), all_ones, np.uint64)  # column 0: D[i][0] = i, every vertical difference +1
    mv = np.zeros((words, L), np.uint64)
    # bottom[lane]: D at the last row of the band's last word (row 64 * (last_word + 1)), in the current column.
    bottom = np.zeros(L, np.int64)
    last_word = -1  # no word yet: the last row is row 0, and D[0][0] = 0
    distance = np.empty(L, np.int64)
    for lane in range(L):
        distance[lane] = t_len[lane] if q_len[lane] == 0 else q_len[lane]  # the empty sides
    by_end = np.arange(members.size)  # lanes in the order the columns reach their targets' ends (an insertion
    for k in range(1, members.size):  # sort: a few dozen lanes, and far less to compile than np.argsort)
        lane = by_end[k]
        at = k
        while at > 0 and t_len[by_end[at - 1]] > t_len[lane]:
            by_end[at] = by_end[at - 1]
            at -= 1
        by_end[at] = lane
    next_end = 0
    while next_end < members.size and t_len[by_end[next_end]] == 0:
        next_end += 1
    carry = np.empty(L, np.uint64)
    ph_in = np.empty(L, np.uint64)
    mh_in = np.empty(L, np.uint64)
    target_bits = np.empty((CODE_BITS, L), np.uint64)
    for j in range(1, M + 1):
        first_word = (max(1, j + low) - 1) // 64
        stop_word = (min(N, j + high) - 1) // 64 + 1
        for w in range(last_word + 1, stop_word):  # words entering from below: their column-0 vertical run
            for lane in range(L):
                bottom[lane] += 64
        last_word = stop_word - 1
        for lane in range(L):
            code = columns[j - 1, lane]
            for b in range(CODE_BITS):
                target_bits[b, lane] = zero - np.uint64((code >> b) & 1)
            carry[lane] = 0
            ph_in[lane] = 1  # the band's top: the row above takes its left neighbour's value plus one
            mh_in[lane] = 0
        for w in range(first_word, stop_word):
            for lane in range(L):
                eq = ~((planes[w, 0, lane] ^ target_bits[0, lane]) | (planes[w, 1, lane] ^ target_bits[1, lane])
                       | (planes[w, 2, lane] ^ target_bits[2, lane]))  # fmt: skip
                p = pv[w, lane]
                m = mv[w, lane]
                xv = eq | m
                # (eq & p) + p, carried across the words of the column
                partial = (eq & p) + p
                first_carry = np.uint64(partial < p)
                total = partial + carry[lane]
                carry[lane] = first_carry | np.uint64(total < partial)
                xh = (total ^ p) | eq
                ph = m | ~(xh | p)
                mh = p & xh
                shifted_ph = (ph << one) | ph_in[lane]
                shifted_mh = (mh << one) | mh_in[lane]
                ph_in[lane] = ph >> np.uint64(63)
                mh_in[lane] = mh >> np.uint64(63)
                pv[w, lane] = shifted_mh | ~(xv | shifted_ph)
                mv[w, lane] = shifted_ph & xv
        for lane in range(L):  # the last word's horizontal difference at its last row
            bottom[lane] += np.int64(ph_in[lane]) - np.int64(mh_in[lane])
        while next_end < members.size and t_len[by_end[next_end]] == j:
            lane = by_end[next_end]
            next_end += 1
            if q_len[lane] == 0:
                continue
            # D[n][m] = bottom - the vertical differences of rows n + 1 .. the band's last row
            value = bottom[lane]
            row = q_len[lane]  # row n + 1 is bit n % 64 of word n // 64
            for w in range(row // 64, last_word + 1):
                above = all_ones << np.uint64(row % 64) if w == row // 64 else all_ones
                value -= popcount64(pv[w, lane] & above) - popcount64(mv[w, lane] & above)
            distance[lane] = value
    for lane in range(members.size):
        spread = abs(q_len[lane] - t_len[lane])
        if distance[lane] <= spread + 2 * band:
            out[members[lane]] = distance[lane]
        else:  # an upper bound: the band (distance - spread) / 2 wide proves it, or finds the smaller distance
            out[members[lane]] = -1 - (distance[lane] - spread + 1) // 2
