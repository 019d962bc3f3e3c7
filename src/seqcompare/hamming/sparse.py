"""The ``sparse`` method: close sequences compared through their differences from a consensus.

For every site ``s`` pick a consensus key ``c_s`` (a byte, or a code). With ``d(x, y)`` the difference rule of the
code space (:meth:`~seqcompare.hamming.encoding.CodeSpace.difference_table`) and ``v_a = sum_s d(a_s, c_s)``,

    d(a_s, b_s) = d(a_s, c_s) + d(b_s, c_s) - k_s(a_s, b_s),  k_s(x, y) = d(x, c_s) + d(y, c_s) - d(x, y),

and ``k_s(x, y) = 0`` whenever ``x`` or ``y`` is the consensus itself (``d(c, c) = 0`` in both relations). So

    distance(a, b) = v_a + v_b - sum over the sites where *both* a and b deviate of k_s(a_s, b_s):

exact for any choice of consensus, and only pairs of rows that deviate at the same site cost any work. A site
that ``k`` rows deviate at costs ``k^2 / 2`` such updates against ``n^2 / 2`` pair-sites for bit planes, so each
site goes where it is cheaper: sites that few rows deviate at ("light") are kept as lists of those rows, sorted
by row; the others ("heavy", such as a large clade's defining mutations) are packed as bit planes for the
popcount kernel of :mod:`~seqcompare.hamming.bitpack`. Hamming distances add over sites, so a tile's block is the
planes' count plus the lists' ``v_a + v_b - sum k``. Unrelated sequences make every site heavy, and the method
is then the bitpack kernel on a copy of the columns.

This is the sparse-SNP idea of pairsnp (Tonkin-Hill, github.com/gtonkinhill/pairsnp), generalised to any code
space and combined with bit planes for the common variants.

The consensus is the majority key of about 512 evenly spaced rows (the Boyer-Moore vote): exactness does not
depend on it, only the lists' length.
"""

from __future__ import annotations

import numpy as np

from .._intrinsics import trailing_zeros64
from .._jit import jit

# A site is heavy when (k_left / n_left) * (k_right / n_right) exceeds this: the cost of one update of the lists
# over that of one pair-site of the DNA planes. On 4,000 x 30,000 simulated genomes with 2 threads (a 2-core AMD
# EPYC with AVX2 only) an update took 7.5 ns and a pair-site 16 ps, so 1/470: for a symmetric problem a site is
# heavy once 4.6% of rows deviate. The same share was the best of 1/120-1/10,000 on a 16-core Xeon with AVX-512
# VPOPCNTDQ at 2 and 16 threads (bench/hamming_sparse_probe.py; bench/RESULTS.md, session 33).
HEAVY_PAIR_SHARE = 1 / 470
SAMPLE_ROWS = 512  # rows the consensus is voted from
# An entry is row << 8 | code in 32 bits: sides of more rows keep every site in planes, and so do codes wider
# than a byte (value arrays of more than 255 categories).
MAX_LIST_ROWS = 1 << 24


@jit(reads=("keys",))
def vote_majority(keys, row_step, candidate, votes):
    """Continue the Boyer-Moore majority vote of every column over rows ``0, row_step, 2 row_step, ...``
    (``votes`` int16: at most 32,767 rows are sampled). Written without branches, so that it vectorises."""
    n, m = keys.shape
    one = np.int16(1)
    for i in range(0, n, row_step):
        row = keys[i]
        for s in range(m):
            key = row[s]
            empty = votes[s] == 0
            same = key == candidate[s]
            candidate[s] = key if empty else candidate[s]
            votes[s] = one if empty else (votes[s] + one if same else votes[s] - one)


@jit(reads=("keys", "consensus"))
def count_deviations(keys, consensus, row_start, row_stop, counts):
    """``counts[s] +=`` the rows of ``row_start:row_stop`` whose key at site ``s`` is not the consensus.

    Counted 255 rows at a time in bytes (32 sites per AVX2 instruction rather than 4 in int64), then added."""
    m = keys.shape[1]
    partial = np.zeros(m, np.uint8)
    for chunk in range(row_start, row_stop, 255):
        for i in range(chunk, min(row_stop, chunk + 255)):
            row = keys[i]
            for s in range(m):
                partial[s] += np.uint8(row[s] != consensus[s])
        for s in range(m):
            counts[s] += partial[s]
            partial[s] = 0


@jit(reads=("keys", "sites"))
def take_columns(keys, sites, row_start, row_stop, out):
    """``out[i] = keys[i, sites]`` for rows ``row_start:row_stop`` (NumPy's fancy indexing is 10x slower)."""
    for i in range(row_start, row_stop):
        row = keys[i]
        for t in range(sites.shape[0]):
            out[i, t] = row[sites[t]]


@jit(reads=("keys", "consensus", "slot", "table", "consensus_codes", "differ"))
def fill_lists(keys, consensus, slot, table, consensus_codes, differ, row_start, row_stop, cursor, entries,
               totals):  # fmt: skip
    """Append rows ``row_start:row_stop``'s deviations at light sites to the site lists.

    ``slot[s]`` is site ``s``'s list (-1 for a heavy site); ``cursor[slot]`` is where this block of rows writes
    next in it, so lists come out sorted by row. An entry is ``row << 8 | code`` (``code = table[key]``), one
    word, because the lists are written all over memory (one cache miss per entry and array). ``totals[i]`` gets
    row ``i``'s sum of ``d(code, consensus code)``. Eight sites are compared at once, and only the deviating
    ones are visited (trailing zeros of the XOR word).
    """
    m = keys.shape[1]
    whole = m - m % 8
    consensus_words = consensus[:whole].view(np.uint64)
    for i in range(row_start, row_stop):
        row = keys[i]
        row_words = row[:whole].view(np.uint64)  # x86 and ARM load words at any byte offset
        total = 0
        high = np.uint32(i) << np.uint32(8)
        for w in range(whole >> 3):
            word = row_words[w] ^ consensus_words[w]
            while word != 0:
                byte = trailing_zeros64(word) >> 3
                word &= ~(np.uint64(0xFF) << np.uint64(8 * byte))
                total += _append(row, w * 8 + byte, high, slot, table, consensus_codes, differ, cursor, entries)
        for s in range(whole, m):
            if row[s] != consensus[s]:
                total += _append(row, s, high, slot, table, consensus_codes, differ, cursor, entries)
        totals[i] = total


@jit(inline="always")
def _append(row, s, high, slot, table, consensus_codes, differ, cursor, entries):
    """Append row ``high >> 8``'s deviation at site ``s`` to its list, if the site is light; its
    ``d(code, consensus code)`` (0 at a heavy site)."""
    list_index = slot[s]
    if list_index < 0:
        return 0
    code = table[row[s]]
    position = cursor[list_index]
    entries[position] = high | np.uint32(code)
    cursor[list_index] = position + 1
    return differ[code, consensus_codes[s]]


@jit
def band_starts(list_starts, entries, band, n_bands, out):
    """``out[b, t]``: the first entry of list ``t`` whose row is at least ``b * band`` (rows are sorted)."""
    n_lists = list_starts.shape[0] - 1
    for t in range(n_lists):
        position = list_starts[t]
        end = list_starts[t + 1]
        for b in range(n_bands + 1):
            limit = np.uint32(b * band)
            while position < end and (entries[position] >> np.uint32(8)) < limit:
                position += 1
            out[b, t] = position


@jit
def subtract_shared(left_starts, left_entries, left_totals, right_starts, right_entries, right_totals,
                    list_consensus, differ, row_band, col_band, row0, row1, col0, col1, lower, out):  # fmt: skip
    """Add the lists' part of a tile to ``out`` (``row0:row1`` x ``col0:col1``, holding the planes' part).

    ``left_starts`` / ``right_starts`` are :func:`band_starts` of each side at the tile edge, so a list's entries
    in this tile's rows (columns) are those between its band's start and the next band's. When ``lower`` (a
    diagonal tile) only pairs ``j < i`` are counted: in a site's list, the entries before row ``i``'s own.
    ``list_consensus[t]`` is the consensus code of list ``t``'s site.
    """
    n_codes = differ.shape[0]
    shared = np.empty(n_codes, np.int64)
    n_lists = left_starts.shape[1]
    for a in range(row1 - row0):
        total = left_totals[row0 + a]
        stop = a if lower else col1 - col0
        for b in range(stop):
            out[a, b] += total + right_totals[col0 + b]
    for t in range(n_lists):
        first = left_starts[row_band, t]
        last = left_starts[row_band + 1, t]
        if first == last:
            continue
        other_first = right_starts[col_band, t]
        other_last = right_starts[col_band + 1, t]
        if other_first == other_last:
            continue
        consensus = list_consensus[t]
        for p in range(first, last):
            entry = left_entries[p]
            code = entry & np.uint32(0xFF)
            own = differ[code, consensus]
            for y in range(n_codes):  # k(code, y) for every code y of the other row
                shared[y] = own + differ[y, consensus] - differ[code, y]
            out_row = out[(entry >> np.uint32(8)) - row0]
            stop = other_first + (p - first) if lower else other_last
            for q in range(other_first, stop):
                other = right_entries[q]
                out_row[(other >> np.uint32(8)) - col0] -= shared[other & np.uint32(0xFF)]


@jit
def mirror_lower(out):
    """A diagonal tile's block: zero diagonal, upper triangle copied from the lower one."""
    for a in range(out.shape[0]):
        out[a, a] = 0
        for b in range(a):
            out[b, a] = out[a, b]


class SiteLists:
    """One side's rows as deviation lists at the light sites (see the module), with their band starts.

    Attributes
    ----------
    starts : ndarray of int64, shape (n_lists + 1,)
        List ``t`` is entries ``starts[t]:starts[t + 1]``.
    entries : ndarray of uint32
        ``row << 8 | code``, sorted by row in a list.
    totals : ndarray of int64, shape (n,)
        ``v`` of every row over the light sites.
    """

    def __init__(self, starts, entries, totals):
        self.starts, self.entries, self.totals = starts, entries, totals
        self._band_starts = {}

    def band_starts(self, band: int) -> np.ndarray:
        """:func:`band_starts` at tile edge ``band`` (computed once per edge)."""
        if band not in self._band_starts:
            n_bands = -(-self.totals.shape[0] // band)
            out = np.empty((n_bands + 1, self.starts.shape[0] - 1), dtype=np.int64)
            band_starts(self.starts, self.entries, band, n_bands, out)
            self._band_starts[band] = out
        return self._band_starts[band]


class SparseOperands:
    """Both sides of a problem split into heavy sites (bit planes) and light ones (:class:`SiteLists`).

    Parameters
    ----------
    sides : list of ndarray
        The left rows, and the right rows of a rectangular problem: raw bytes (with ``table``) or codes.
    space : CodeSpace
    table : ndarray of uint8, optional
        Byte to code.
    threads : int
        Threads for the passes over the rows.
    """

    def __init__(self, sides: list, space, table, threads: int = 1):
        from concurrent.futures import ThreadPoolExecutor

        from .encoding import pack_planes

        self.differ = space.difference_table().astype(np.uint8)
        keys = [np.ascontiguousarray(side) for side in sides]
        n_sites = keys[0].shape[1]
        lists_possible = all(k.dtype == np.uint8 for k in keys) and max(k.shape[0] for k in keys) <= MAX_LIST_ROWS
        key_codes = np.arange(256, dtype=np.uint8) if table is None else table  # codes are their own keys
        consensus = np.zeros(n_sites, dtype=keys[0].dtype)
        with ThreadPoolExecutor(max(1, threads)) as pool:
            if lists_possible and n_sites and all(k.shape[0] for k in keys):
                votes = np.zeros(n_sites, dtype=np.int16)
                step = max(1, sum(k.shape[0] for k in keys) // SAMPLE_ROWS)
                for side_keys in keys:
                    vote_majority(side_keys, step, consensus, votes)
                blocks = [_row_blocks(k.shape[0], threads, n_sites) for k in keys]
                counts = [np.zeros((len(b) - 1, n_sites), dtype=np.int32) for b in blocks]
                for side_keys, edges, side_counts in zip(keys, blocks, counts):
                    _run(pool, count_deviations, [(side_keys, consensus, lo, hi, side_counts[t])
                                                  for t, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))])  # fmt: skip
                share = np.ones(n_sites)
                for side_keys, side_counts in zip(keys, counts):
                    share *= side_counts.sum(axis=0) / side_keys.shape[0]
                if len(keys) == 1:
                    share = share * share
                heavy = share > HEAVY_PAIR_SHARE
            else:
                heavy = np.ones(n_sites, dtype=bool)
            self.heavy_sites = np.flatnonzero(heavy)
            light_sites = np.flatnonzero(~heavy)
            self.planes = []
            for side_keys in keys:
                columns = side_keys
                if 0 < self.heavy_sites.size < n_sites:
                    columns = np.empty((side_keys.shape[0], self.heavy_sites.size), dtype=side_keys.dtype)
                    edges = _row_blocks(side_keys.shape[0], threads)
                    _run(pool, take_columns, [(side_keys, self.heavy_sites, lo, hi, columns)
                                              for lo, hi in zip(edges[:-1], edges[1:])])  # fmt: skip
                planes = pack_planes(columns, space, table, threads=threads) if self.heavy_sites.size else None
                self.planes.append(planes)
            self.lists = []
            if not light_sites.size:
                return
            slot = np.full(n_sites, -1, dtype=np.int64)
            slot[light_sites] = np.arange(light_sites.size)
            consensus_codes = key_codes[consensus]
            for side_keys, edges, side_counts in zip(keys, blocks, counts):
                light_counts = side_counts[:, light_sites]
                starts = np.zeros(light_sites.size + 1, dtype=np.int64)
                np.cumsum(light_counts.sum(axis=0), out=starts[1:])
                # Block t of rows writes each list after the entries of blocks 0..t-1. (A row of `cursors` can be
                # strided; passed contiguous, every call shares one compiled specialization.)
                cursors = starts[:-1] + np.cumsum(light_counts, axis=0) - light_counts
                entries = np.empty(int(starts[-1]), dtype=np.uint32)
                totals = np.zeros(side_keys.shape[0], dtype=np.int64)
                _run(pool, fill_lists, [(side_keys, consensus, slot, key_codes, consensus_codes, self.differ, lo, hi,
                                         np.ascontiguousarray(cursors[t]), entries, totals)
                                        for t, (lo, hi) in enumerate(zip(edges[:-1], edges[1:]))])  # fmt: skip
                self.lists.append(SiteLists(starts, entries, totals))
            self.list_consensus = consensus_codes[light_sites]

    def side(self, index: int):
        """The planes and lists of side ``index`` (0 left, 1 right; a symmetric problem has only side 0)."""
        index = min(index, len(self.planes) - 1)
        return self.planes[index], (self.lists[index] if self.lists else None)


_BLOCK_COUNT_BYTES = 64 << 20  # the per-block site counts (and list cursors) of one side stay within this


def _row_blocks(n: int, threads: int, n_sites: int = 0) -> np.ndarray:
    """Row edges of the blocks the passes run over: a few per thread, so that uneven rows even out, but fewer
    when each block's count of every site would take too much memory (bacterial alignments of millions of
    sites)."""
    pieces = min(n, 4 * threads, max(1, _BLOCK_COUNT_BYTES // max(1, 12 * n_sites)))
    return np.unique(np.linspace(0, n, max(1, pieces) + 1).astype(np.int64))


def _run(pool, kernel, calls) -> None:
    for job in [pool.submit(kernel, *args) for args in calls]:
        job.result()
