"""The CPU kernel of per-pair site counts (:mod:`seqcompare.hamming.pairstats`): Numba, one tile per call, GIL
released so tiles run in threads.

Pairs of resolved bases are counted 64 sites at a time on one-hot planes (A, C, G, T; a site holding anything
else has no bit in any plane): 10 popcounts a word give the comparable sites, the matches, the A<->G and C<->T
pairs and each side's base counts. Sites where either sequence holds a code of the per-site path (ambiguity codes;
gaps under ``gapmm``) are then visited from each row's list of them, and each adds its row of the weight table: nine
counts packed in three words of 21-bit lanes, so three additions a site (2x the nine separate sums, measured). A
left row's list is walked once for its whole row of pairs, over a site-major copy of the right codes: visiting
each pair's right row at the left row's sites missed the cache at every site (1.9 us of a 2.1 us pair, measured). Word indices are unsigned so that the word loop vectorises (see :mod:`.bitpack`).
"""

import numpy as np

from .._intrinsics import popcount64
from .._jit import jit


_LANE_BITS = 21
_LANE_MASK = (1 << _LANE_BITS) - 1
_LANE_SITES = _LANE_MASK // 288  # sites a lane can sum before it could overflow (a site adds at most 288)


@jit
def pack_lanes(weights):
    """``weights (modes, codes, codes, 9)`` as ``(modes, codes * codes * 3)``: counts 3w, 3w+1, 3w+2 of a pair of
    codes in the 21-bit lanes of word w."""
    n_modes, n_codes = weights.shape[0], weights.shape[1]
    packed = np.zeros((n_modes, n_codes * n_codes * 3), dtype=np.int64)
    for mode in range(n_modes):
        for a in range(n_codes):
            for b in range(n_codes):
                for q in range(9):
                    packed[mode, (a * n_codes + b) * 3 + q // 3] |= weights[mode, a, b, q] << (_LANE_BITS * (q % 3))
    return packed


@jit
def _flush_lanes(w0, w1, w2, out, mode, r, c):
    """Add column ``c``'s three packed words to ``out[mode, :, r, c]`` and empty them."""
    for lane in range(3):
        shift = _LANE_BITS * lane
        out[mode, lane, r, c] += (w0[c] >> shift) & _LANE_MASK
        out[mode, 3 + lane, r, c] += (w1[c] >> shift) & _LANE_MASK
        out[mode, 6 + lane, r, c] += (w2[c] >> shift) & _LANE_MASK
    w0[c] = 0
    w1[c] = 0
    w2[c] = 0


@jit
def stats_tile(left, right, row0, row1, col0, col1, diagonal, codes_left, columns_right, starts_left, positions_left,
               site_codes_left, starts_right, positions_right, site_codes_right, special, weights, out):  # fmt: skip
    """Counts of every pair of the tile into ``out[mode, quantity, i - row0, j - col0]`` (int64, 144ths).

    ``left``/``right`` are one-hot planes viewed as rows of ``4 * W`` words; ``weights[mode, c1, c2]`` is what a
    site of codes ``(c1, c2)`` adds under each mode. ``codes_left`` holds the left rows' codes, ``columns_right``
    the right rows' codes site-major (``(sites, rows)``), and ``site_codes_*[k]`` the code at ``positions_*[k]``.
    A diagonal tile computes ``j <= i`` and mirrors it (every count is symmetric in the pair).
    """
    words = left.shape[1] // 4
    w1 = np.uint64(words)
    w2 = np.uint64(2 * words)
    w3 = np.uint64(3 * words)
    n_modes = weights.shape[0]
    n_quantities = weights.shape[3]  # 9: the unrolled sums below
    n_codes = weights.shape[1]
    packed_weights = pack_lanes(weights)
    n_cols = col1 - col0
    lane_w0 = np.zeros(n_cols, dtype=np.int64)
    lane_w1 = np.zeros(n_cols, dtype=np.int64)
    lane_w2 = np.zeros(n_cols, dtype=np.int64)
    scale = 144
    for i in range(row0, row1):
        x = left[i]
        stop = i + 1 if diagonal else col1
        r = i - row0
        for j in range(col0, stop):
            y = right[j]
            sites = 0
            matches = 0
            ag = 0
            ct = 0
            left_a = 0
            left_c = 0
            left_g = 0
            right_a = 0
            right_c = 0
            right_g = 0
            for word in range(words):
                w = np.uint64(word)
                a1 = x[w]
                c1 = x[w1 + w]
                g1 = x[w2 + w]
                t1 = x[w3 + w]
                a2 = y[w]
                c2 = y[w1 + w]
                g2 = y[w2 + w]
                t2 = y[w3 + w]
                v1 = a1 | c1 | g1 | t1
                v2 = a2 | c2 | g2 | t2
                sites += popcount64(v1 & v2)
                matches += popcount64((a1 & a2) | (c1 & c2) | (g1 & g2) | (t1 & t2))
                ag += popcount64((a1 & g2) | (g1 & a2))
                ct += popcount64((c1 & t2) | (t1 & c2))
                left_a += popcount64(a1 & v2)
                left_c += popcount64(c1 & v2)
                left_g += popcount64(g1 & v2)
                right_a += popcount64(v1 & a2)
                right_c += popcount64(v1 & c2)
                right_g += popcount64(v1 & g2)
            left_t = sites - left_a - left_c - left_g
            right_t = sites - right_a - right_c - right_g
            c = j - col0
            for mode in range(n_modes):
                out[mode, 0, r, c] = scale * sites
                out[mode, 1, r, c] = scale * matches
                out[mode, 2, r, c] = scale * ag
                out[mode, 3, r, c] = scale * ct
                out[mode, 4, r, c] = scale * (left_a + right_a)
                out[mode, 5, r, c] = scale * (left_c + right_c)
                out[mode, 6, r, c] = scale * (left_g + right_g)
                out[mode, 7, r, c] = scale * (left_t + right_t)
                out[mode, 8, r, c] = 0
        # Sites where the left code takes the per-site path, then those where only the right one does. The nine
        # counts of a site travel as three words of three 21-bit lanes (a site adds at most 288 to a count), so a
        # site costs three additions; a column's lanes are emptied into ``out`` before one could overflow. The
        # left row's sites are walked once for the whole row of pairs, reading each site's codes of the right
        # rows from the site-major copy in order: a pair's row of codes is never visited at random.
        row_left = codes_left[i]
        cols = stop - col0
        left_start = starts_left[i]
        left_stop = starts_left[i + 1]
        for mode in range(n_modes):
            table = packed_weights[mode]
            for c in range(cols):
                lane_w0[c] = 0
                lane_w1[c] = 0
                lane_w2[c] = 0
            pending = 0
            for k in range(left_start, left_stop):
                column = columns_right[positions_left[k]]
                base = np.int64(site_codes_left[k]) * n_codes * 3
                for c in range(cols):
                    at = base + np.int64(column[col0 + c]) * 3
                    lane_w0[c] += table[at]
                    lane_w1[c] += table[at + 1]
                    lane_w2[c] += table[at + 2]
                pending += 1
                if pending == _LANE_SITES:
                    for c in range(cols):
                        _flush_lanes(lane_w0, lane_w1, lane_w2, out, mode, r, c)
                    pending = 0
            for c in range(cols):
                j = col0 + c
                count = pending
                for k in range(starts_right[j], starts_right[j + 1]):
                    code1 = row_left[positions_right[k]]
                    if special[code1]:
                        continue  # counted from the left row's list
                    at = (np.int64(code1) * n_codes + np.int64(site_codes_right[k])) * 3
                    lane_w0[c] += table[at]
                    lane_w1[c] += table[at + 1]
                    lane_w2[c] += table[at + 2]
                    count += 1
                    if count == _LANE_SITES:
                        _flush_lanes(lane_w0, lane_w1, lane_w2, out, mode, r, c)
                        count = 0
                _flush_lanes(lane_w0, lane_w1, lane_w2, out, mode, r, c)
    if diagonal:
        for i in range(row0, row1):
            for j in range(row0, i):
                for mode in range(n_modes):
                    for q in range(n_quantities):
                        out[mode, q, j - row0, i - row0] = out[mode, q, i - row0, j - row0]


@jit
def map_rows(matrix, table, lo, hi, out):
    """``out[i] = table[matrix[i]]`` for rows ``lo:hi``; returns the flat index of the first byte the table maps
    to 255 (not a character of the alphabet), or -1."""
    m = matrix.shape[1]
    first_bad = -1
    for i in range(lo, hi):
        for s in range(m):
            code = table[matrix[i, s]]
            out[i, s] = code
            if code == 255 and first_bad < 0:
                first_bad = i * m + s
    return first_bad


@jit
def count_special(codes, special, lo, hi, counts):
    """``counts[i]``: how many sites of row ``i`` (``lo:hi``) hold a code of the per-site path."""
    m = codes.shape[1]
    for i in range(lo, hi):
        total = 0
        for s in range(m):
            total += special[codes[i, s]]
        counts[i] = total


@jit
def list_special(codes, special, lo, hi, starts, positions, site_codes):
    """Each row's special sites (``lo:hi``) into ``positions[starts[i]:starts[i + 1]]``, ascending, and their
    codes into ``site_codes`` alongside."""
    m = codes.shape[1]
    for i in range(lo, hi):
        k = starts[i]
        for s in range(m):
            code = codes[i, s]
            if special[code]:
                positions[k] = s
                site_codes[k] = code
                k += 1


@jit
def transpose_rows(codes, lo, hi, out):
    """``out[:, lo:hi] = codes[lo:hi].T`` in cache-sized squares (the site-major copy of a code matrix)."""
    m = codes.shape[1]
    block = 64
    for i0 in range(lo, hi, block):
        i1 = min(hi, i0 + block)
        for s0 in range(0, m, block):
            s1 = min(m, s0 + block)
            for s in range(s0, s1):
                for i in range(i0, i1):
                    out[s, i] = codes[i, s]


@jit
def tn93_approximate(counts, fraction, min_overlap, out):
    """TN93 of a tile's counts ``(modes, 9, rows, cols)`` into ``out`` (float64), in one pass: veg/tn93's formula
    in the order of :func:`~seqcompare.hamming.models._tn93`. Numba's ``log`` may differ from NumPy's in the last
    bit, so this serves the screen of pairs within a threshold only (pairs near it are made again with NumPy)."""
    n_modes = counts.shape[0]
    rows, cols = out.shape
    scale_144 = 144.0
    for r in range(rows):
        for c in range(cols):
            sites = counts[0, 0, r, c] / scale_144
            if sites < min_overlap or sites == 0.0:
                out[r, c] = np.nan
                continue
            mode = 0
            if n_modes > 1 and fraction < 1.0 and sites * fraction <= counts[0, 8, r, c]:
                mode = 1
            f0 = counts[mode, 4, r, c] / scale_144
            f1 = counts[mode, 5, r, c] / scale_144
            f2 = counts[mode, 6, r, c] / scale_144
            f3 = counts[mode, 7, r, c] / scale_144
            total = f0 + f1 + f2 + f3
            scale = 2.0 / total
            inverse = 1.0 / total
            n0 = f0 * inverse
            n1 = f1 * inverse
            n2 = f2 * inverse
            n3 = f3 * inverse
            f_r = n0 + n2
            f_y = n1 + n3
            ag = counts[mode, 2, r, c] / scale_144 * scale
            ct = counts[mode, 3, r, c] / scale_144 * scale
            tv = 1.0 - (counts[mode, 1, r, c] / scale_144 * scale + ag + ct)
            if f0 == 0.0 or f1 == 0.0 or f2 == 0.0 or f3 == 0.0:
                a = 1.0 - 2.0 * (ag + ct) - tv
                b = 1.0 - 2.0 * tv
                result = -0.5 * np.log(a) - 0.25 * np.log(b) if a > 0.0 and b > 0.0 else 1000.0
            else:
                k1 = 2.0 * n0 * n2 / f_r
                k2 = 2.0 * n1 * n3 / f_y
                k3 = 2.0 * (f_r * f_y - n0 * n2 * f_y / f_r - n1 * n3 * f_r / f_y)
                t_ag = 1.0 - ag / k1 - 0.5 * tv / f_r
                t_ct = 1.0 - ct / k2 - 0.5 * tv / f_y
                t_tv = 1.0 - 0.5 * tv / f_y / f_r
                if t_ag > 0.0 and t_ct > 0.0 and t_tv > 0.0:
                    result = -k1 * np.log(t_ag) - k2 * np.log(t_ct) - k3 * np.log(t_tv)
                else:
                    result = 1000.0
            out[r, c] = 0.0 if result <= 0.0 else result
