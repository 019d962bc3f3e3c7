"""Unit-cost global alignment (edit distance) by Myers' bit-vector algorithm, many pairs at once on the CPU.

Myers (J. ACM 46(3), 1999) encodes a column of the DP matrix by its vertical differences, each -1, 0 or +1,
as two bit-vectors (``Pv``: +1, ``Mv``: -1), one bit per query base, and computes the next column from the
previous one with a dozen word operations. Hyyrö (2003) gave the form used here, with the global boundary (the
top row grows by one per column, so a +1 horizontal difference enters at the top) and words chained for
queries longer than 64: the addition carries, and the horizontal differences shifted into the next word.

Each SIMD lane holds one pair, as the affine kernels do: for every target base, every 64-bit word of every
lane's query is updated by the same instructions, so a vector of lanes advances in lockstep. Lanes may hold
different lengths: rows below a query's end only receive carries from above and never send any back, and each
lane's score is read at its own last row and updated only while the column is within its own target.

A pair costs ``ceil(n / 64) * m`` word steps instead of ``n * m`` cells. Exact for any lengths: the result is
the edit distance, identical to the DP (tested against the plain oracle).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

CODE_BITS = 3  # base codes 0..4 (A, C, G, T, N) in three bits: equal codes match, as Costs.edit()'s table says


@jit
def edit_distance_groups(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order, first, last, lanes, out):
    """Edit distances of the pairs ``order[first:last]`` (target ``pair_t[p]`` against query ``pair_q[p]``),
    ``lanes`` pairs at a time (pairs sorted by shape share a vector with little padding), into ``out[p]``."""
    for start in range(first, last, lanes):
        stop = min(start + lanes, last)
        _edit_distance_vector(t_codes, t_off, q_codes, q_off, pair_t, pair_q, order[start:stop], lanes, out)


@jit
def _edit_distance_vector(t_codes, t_off, q_codes, q_off, pair_t, pair_q, members, L, out):
    """One vector of ``L`` lanes: lane ``k`` holds pair ``members[k]`` (lanes past ``members`` stay empty)."""
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
    # The query's codes bit-sliced: bit r of planes[w, b, lane] is bit b of the code of query base 64 * w + r.
    # A target base t then matches the rows where all three planes agree with t's bits: Eq = ~OR(plane ^ t_b).
    # Rows past a lane's query are zero (code A): they only receive carries from above, never send any back.
    planes = np.zeros((words, CODE_BITS, L), np.uint64)
    for lane in range(L):
        for i in range(q_len[lane]):
            code = q_codes[q_start[lane] + i]
            bit = one << np.uint64(i % 64)
            for b in range(CODE_BITS):
                if (code >> b) & 1:
                    planes[i // 64, b, lane] |= bit
    pv = np.full((words, L), all_ones, np.uint64)  # column 0: D[i][0] = i, every vertical difference +1
    mv = np.zeros((words, L), np.uint64)
    score = np.empty(L, np.int64)
    last_word = np.empty(L, np.int64)  # where each lane's last query row sits
    last_bit = np.empty(L, np.uint64)
    for lane in range(L):
        score[lane] = q_len[lane]
        row = max(q_len[lane] - 1, 0)
        last_word[lane] = row // 64
        last_bit[lane] = np.uint64(row % 64)
    carry = np.empty(L, np.uint64)
    ph_in = np.empty(L, np.uint64)
    mh_in = np.empty(L, np.uint64)
    ph_words = np.zeros((words, L), np.uint64)  # the column's horizontal differences, read at each lane's end
    mh_words = np.zeros((words, L), np.uint64)
    # Per column, each bit of each lane's target code as an all-ones or all-zeros word: Eq is then a few XORs
    # and ORs of whole vectors (a per-lane table lookup would be a gather, four times slower here).
    target_bits = np.empty((CODE_BITS, L), np.uint64)
    for j in range(M):
        for lane in range(L):
            code = t_codes[t_start[lane] + j] if j < t_len[lane] else 0
            for b in range(CODE_BITS):
                target_bits[b, lane] = all_ones if (code >> b) & 1 else zero
            carry[lane] = 0
            ph_in[lane] = 1  # the top row: D[0][j] = j, a +1 horizontal difference enters every column
            mh_in[lane] = 0
        for w in range(words):
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
                ph_words[w, lane] = ph
                mh_words[w, lane] = mh
                shifted_ph = (ph << one) | ph_in[lane]
                shifted_mh = (mh << one) | mh_in[lane]
                ph_in[lane] = ph >> np.uint64(63)
                mh_in[lane] = mh >> np.uint64(63)
                pv[w, lane] = shifted_mh | ~(xv | shifted_ph)
                mv[w, lane] = shifted_ph & xv
        for lane in range(L):  # the last row's difference along this column: D[n][j] - D[n][j - 1]
            if j < t_len[lane] and q_len[lane] > 0:
                score[lane] += np.int64((ph_words[last_word[lane], lane] >> last_bit[lane]) & one)
                score[lane] -= np.int64((mh_words[last_word[lane], lane] >> last_bit[lane]) & one)
    for lane in range(members.size):
        out[members[lane]] = t_len[lane] if q_len[lane] == 0 else score[lane]
