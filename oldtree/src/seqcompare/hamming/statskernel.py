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
def _flush_lanes(lanes, row, mode, c):
    """Add column ``c``'s three packed words (``lanes[:, c]``) to ``row[mode, :, c]`` and empty them."""
    for word in range(3):
        for lane in range(3):
            row[mode, 3 * word + lane, c] += (lanes[word, c] >> (_LANE_BITS * lane)) & _LANE_MASK
        lanes[word, c] = 0


@jit
def _row_counts(i, col0, stop, left, right, codes_left, columns_right, starts_left, positions_left, site_codes_left,
                starts_right, positions_right, site_codes_right, special, packed_weights, n_codes, lanes, row):  # fmt: skip
    """Counts of the pairs ``(i, j)``, ``j`` in ``col0:stop``, into ``row[mode, quantity, j - col0]``."""
    words = left.shape[1] // 4
    w1 = np.uint64(words)
    w2 = np.uint64(2 * words)
    w3 = np.uint64(3 * words)
    n_modes = row.shape[0]
    scale = 144
    x = left[i]
    for j in range(col0, stop):
        y = right[j]
        sites = 0
        pyrimidines = 0  # sites where both hold C or T
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
            pyrimidines += popcount64((c1 | t1) & (c2 | t2))
            ag += popcount64((a1 & g2) | (g1 & a2))
            ct += popcount64((c1 & t2) | (t1 & c2))
            left_a += popcount64(a1 & v2)
            left_c += popcount64(c1 & v2)
            left_g += popcount64(g1 & v2)
            right_a += popcount64(v1 & a2)
            right_c += popcount64(v1 & c2)
            right_g += popcount64(v1 & g2)
        freq_a = left_a + right_a
        freq_c = left_c + right_c
        freq_g = left_g + right_g
        freq_t = 2 * sites - freq_a - freq_c - freq_g
        # A site holding C or T on one side only is a transversion; every other difference is a transition.
        transversions = freq_c + freq_t - 2 * pyrimidines
        c = j - col0
        for mode in range(n_modes):
            row[mode, 0, c] = scale * sites
            row[mode, 1, c] = scale * (sites - ag - ct - transversions)
            row[mode, 2, c] = scale * ag
            row[mode, 3, c] = scale * ct
            row[mode, 4, c] = scale * freq_a
            row[mode, 5, c] = scale * freq_c
            row[mode, 6, c] = scale * freq_g
            row[mode, 7, c] = scale * freq_t
            row[mode, 8, c] = 0
    # Sites where the left code takes the per-site path, then those where only the right one does. The nine counts
    # of a site travel as three words of three 21-bit lanes (a site adds at most 288 to a count), so a site costs
    # three additions; a column's lanes are emptied before one could overflow. The left row's sites are walked once
    # for the whole row of pairs, reading each site's codes of the right rows from the site-major copy in order: a
    # pair's row of codes is never visited at random.
    row_left = codes_left[i]
    cols = stop - col0
    left_start = starts_left[i]
    left_stop = starts_left[i + 1]
    for mode in range(n_modes):
        table = packed_weights[mode]
        for c in range(cols):
            lanes[0, c] = 0
            lanes[1, c] = 0
            lanes[2, c] = 0
        pending = 0
        for k in range(left_start, left_stop):
            column = columns_right[positions_left[k]]
            base = np.int64(site_codes_left[k]) * n_codes * 3
            for c in range(cols):
                at = base + np.int64(column[col0 + c]) * 3
                lanes[0, c] += table[at]
                lanes[1, c] += table[at + 1]
                lanes[2, c] += table[at + 2]
            pending += 1
            if pending == _LANE_SITES:
                for c in range(cols):
                    _flush_lanes(lanes, row, mode, c)
                pending = 0
        for c in range(cols):
            j = col0 + c
            count = pending
            for k in range(starts_right[j], starts_right[j + 1]):
                code1 = row_left[positions_right[k]]
                if special[code1]:
                    continue  # counted from the left row's list
                at = (np.int64(code1) * n_codes + np.int64(site_codes_right[k])) * 3
                lanes[0, c] += table[at]
                lanes[1, c] += table[at + 1]
                lanes[2, c] += table[at + 2]
                count += 1
                if count == _LANE_SITES:
                    _flush_lanes(lanes, row, mode, c)
                    count = 0
            _flush_lanes(lanes, row, mode, c)


@jit(reads=("left", "right", "codes_left", "columns_right", "starts_left", "positions_left", "site_codes_left",
           "starts_right", "positions_right", "site_codes_right", "special", "weights"))
def stats_tile(left, right, row0, row1, col0, col1, diagonal, codes_left, columns_right, starts_left, positions_left,
               site_codes_left, starts_right, positions_right, site_codes_right, special, weights, out):  # fmt: skip
    """Counts of every pair of the tile into ``out[mode, quantity, i - row0, j - col0]`` (int64, 144ths).

    ``left``/``right`` are one-hot planes viewed as rows of ``4 * W`` words; ``weights[mode, c1, c2]`` is what a
    site of codes ``(c1, c2)`` adds under each mode. ``codes_left`` holds the left rows' codes, ``columns_right``
    the right rows' codes site-major (``(sites, rows)``), and ``site_codes_*[k]`` the code at ``positions_*[k]``.
    A diagonal tile computes ``j <= i`` and mirrors it (every count is symmetric in the pair).
    """
    n_modes, n_codes, n_quantities = weights.shape[0], weights.shape[1], weights.shape[3]
    packed_weights = pack_lanes(weights)
    lanes = np.zeros((3, col1 - col0), dtype=np.int64)
    row = np.zeros((n_modes, n_quantities, col1 - col0), dtype=np.int64)
    for i in range(row0, row1):
        stop = i + 1 if diagonal else col1
        _row_counts(i, col0, stop, left, right, codes_left, columns_right, starts_left, positions_left,
                    site_codes_left, starts_right, positions_right, site_codes_right, special, packed_weights, n_codes,
                    lanes, row)  # fmt: skip
        # Element by element: a slice assignment compiles Numba's shape-mismatch error path (7 s on a cold cache).
        for mode in range(n_modes):
            for q in range(n_quantities):
                for j in range(stop - col0):
                    out[mode, q, i - row0, j] = row[mode, q, j]
    if diagonal:
        for i in range(row0, row1):
            for j in range(row0, i):
                for mode in range(n_modes):
                    for q in range(n_quantities):
                        out[mode, q, j - row0, i - row0] = out[mode, q, i - row0, j - row0]


@jit(reads=("left", "right", "codes_left", "columns_right", "starts_left", "positions_left", "site_codes_left",
           "starts_right", "positions_right", "site_codes_right", "special", "weights"))
def stats_tile_tn93(left, right, row0, row1, col0, col1, diagonal, codes_left, columns_right, starts_left,
                    positions_left, site_codes_left, starts_right, positions_right, site_codes_right, special, weights,
                    fraction, min_overlap, bound, distances, sites, near_index, near_counts):  # fmt: skip
    """TN93 of every pair of the tile into ``distances`` (and the comparable sites into ``sites``, if it has the
    tile's shape), made in one pass from each row's counts (:func:`tn93_of`), for a reduction that keeps pairs
    within a threshold. Pairs at most ``bound`` away are listed with their exact counts: ``near_index`` (flat
    index in the tile) and ``near_counts`` (``(k, modes * 9)``), to be made again with NumPy. Returns how many
    pairs that is, even past the lists' room (the caller then runs the tile again with more). A diagonal tile
    computes ``j <= i`` and mirrors it."""
    n_modes, n_codes, n_quantities = weights.shape[0], weights.shape[1], weights.shape[3]
    packed_weights = pack_lanes(weights)
    lanes = np.zeros((3, col1 - col0), dtype=np.int64)
    row = np.zeros((n_modes, n_quantities, col1 - col0), dtype=np.int64)
    n_cols = col1 - col0
    capacity = near_index.shape[0]
    with_sites = sites.shape[0] > 0
    found = 0
    for i in range(row0, row1):
        stop = i + 1 if diagonal else col1
        _row_counts(i, col0, stop, left, right, codes_left, columns_right, starts_left, positions_left,
                    site_codes_left, starts_right, positions_right, site_codes_right, special, packed_weights, n_codes,
                    lanes, row)  # fmt: skip
        r = i - row0
        for c in range(stop - col0):
            d = tn93_of(row, c, fraction, min_overlap)
            distances[r, c] = d
            if with_sites:
                sites[r, c] = row[0, 0, c] // 144
            if d <= bound:
                if found < capacity:
                    near_index[found] = r * n_cols + c
                    for mode in range(n_modes):
                        for q in range(n_quantities):
                            near_counts[found, mode * n_quantities + q] = row[mode, q, c]
                found += 1
    if diagonal:
        for r in range(row1 - row0):
            for c in range(r):
                distances[c, r] = distances[r, c]
                if with_sites:
                    sites[c, r] = sites[r, c]
    return found


@jit(reads=("matrix", "table"))
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
def code_histogram(codes, items, lo, hi, out):
    """``out[k, c]``: how many sites of row ``items[k]`` hold code ``c``, for ``k`` in ``lo:hi``."""
    m = codes.shape[1]
    for k in range(lo, hi):
        row = codes[items[k]]
        for s in range(m):
            out[k, row[s]] += 1


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
def tn93_of(counts, c, fraction, min_overlap):
    """TN93 of the pair in column ``c`` of ``counts (modes, 9, cols)``: veg/tn93's formula in the order of
    :func:`~seqcompare.hamming.models._tn93`. Numba's ``log`` may differ from NumPy's in the last bit, so this
    serves the screen of pairs within a threshold only (pairs near it are made again with NumPy)."""
    scale_144 = 144.0
    sites = counts[0, 0, c] / scale_144
    if sites < min_overlap or sites == 0.0:
        return np.nan
    mode = 0
    if counts.shape[0] > 1 and fraction < 1.0 and sites * fraction <= counts[0, 8, c]:
        mode = 1
    f0 = counts[mode, 4, c] / scale_144
    f1 = counts[mode, 5, c] / scale_144
    f2 = counts[mode, 6, c] / scale_144
    f3 = counts[mode, 7, c] / scale_144
    total = f0 + f1 + f2 + f3
    scale = 2.0 / total
    inverse = 1.0 / total
    n0 = f0 * inverse
    n1 = f1 * inverse
    n2 = f2 * inverse
    n3 = f3 * inverse
    f_r = n0 + n2
    f_y = n1 + n3
    ag = counts[mode, 2, c] / scale_144 * scale
    ct = counts[mode, 3, c] / scale_144 * scale
    tv = 1.0 - (counts[mode, 1, c] / scale_144 * scale + ag + ct)
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
    return 0.0 if result <= 0.0 else result
