"""Exact signature scanning through a k-mer index, with a proven-complete fallback (CPU, Numba).

Why it is exact
---------------
Call a window of ``k`` bases *clean* when it holds no N. If a signature occurs at offset ``o`` of a sample and
the signature's window at ``p`` and the sample's window at ``o + p`` are both clean, the two windows are equal
(N is the only wildcard). So every occurrence that has such a doubly clean window at some ``p`` is found by
looking up the sample's clean windows in an index of all clean signature windows: the lookup yields
``(signature, p)`` and the candidate ``o``, which is then verified base by base.

An occurrence is *uncovered* when no such ``p`` exists: every clean window of the signature lands on a sample
window holding an N. The fallback finds a superset of the uncovered offsets exactly and verifies each of them
by brute force. A clean run ``[a, a + len)`` of the signature (no N, ``len >= k``) covers offset ``o`` iff the
sample has a clean window starting in ``[o + a, o + a + len - k]``. With ``D_W`` the bitset of sample
positions that have a clean window starting within the next ``W`` positions (``D_1`` = clean window starts,
``D_{a+b} = D_a | (D_b >> a)``), offset ``o`` is uncovered iff ``D_W[o + a] == 0`` for every run, with
``W = len - k + 1``. Using a smaller ``W`` from a fixed ladder only adds offsets (more brute force, never a
miss). Per 64 offsets this is a few ANDs of shifted words, longest runs first, stopping at zero.

With N rates of real data (and the course's 10%) the uncovered sets are nearly always empty and the index
yields few random candidates (about one per ten sample windows at ``k = 12``); at high N rates the fallback
does more brute force and the result stays exact. A signature with no clean window (shorter than ``k``, or all
N) has no runs: every offset is brute-forced.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._intrinsics import popcount64
from .._jit import jit
from .common import DEFAULT_K, LADDER, LADDER_RECIPE, MAX_K, lookup_tables  # noqa: F401  (re-exported)



class SignatureIndex:
    """Clean k-windows of a set of signatures, and their clean runs, ready for :func:`scan_sample`.

    Lookup of a k-mer ``key`` (2 bits a base, the window's first base lowest): present iff bit ``key % 64`` of
    ``bitmap[key // 64]``; then its rank among present keys is ``word_rank[key // 64]`` plus the set bits
    below it in that word, and its entries (signature, position) are ``key_start[rank]:key_start[rank + 1]``.
    A few MB whatever ``k``, instead of a ``4**k`` table. ``xp`` (NumPy or CuPy) is where the tables are built.
    """

    def __init__(self, codes: np.ndarray, offsets: np.ndarray, k: int = DEFAULT_K, xp=np):
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be in 1..{MAX_K}, got {k}")
        self.k = k
        self.codes = codes
        self.offsets = offsets
        self.lengths = np.diff(offsets)
        keys, entry_sig, entry_pos = window_keys(codes, offsets, k)
        self.bitmap, self.word_rank, self.key_start, self.entry_sig, self.entry_pos = lookup_tables(
            xp.asarray(keys), xp.asarray(entry_sig), xp.asarray(entry_pos), k, xp
        )
        self.run_offsets, self.run_starts, self.run_levels = clean_runs(codes, offsets, k)
        self.max_level = int(self.run_levels.max()) if self.run_levels.size else 0

    def __len__(self) -> int:
        return self.lengths.size


def window_keys(codes: np.ndarray, offsets: np.ndarray, k: int, allocate=np.empty):
    """``(keys, entry_sig, entry_pos)`` of every clean (N-free) k-window of the signatures, in signature and
    position order; ``allocate(shape, dtype)`` makes the arrays."""
    n_windows = _count_clean_windows(codes, offsets, k)
    keys = allocate((n_windows,), np.int64)
    entry_sig = allocate((n_windows,), np.int32)
    entry_pos = allocate((n_windows,), np.int32)
    _clean_windows(codes, offsets, k, keys, entry_sig, entry_pos)
    return keys, entry_sig, entry_pos


@jit(reads=("codes", "offsets"))
def _count_clean_windows(codes, offsets, k):
    total = 0
    for s in range(offsets.size - 1):
        clean = 0
        for q in range(offsets[s], offsets[s + 1]):
            clean = 0 if codes[q] == 4 else clean + 1
            if clean >= k:
                total += 1
    return total


@jit(reads=("codes", "offsets"))
def _clean_windows(codes, offsets, k, keys, entry_sig, entry_pos):
    top = 2 * (k - 1)  # keys hold a window's first base in their lowest bits, as the GPU's packed words do
    at = 0
    for s in range(offsets.size - 1):
        clean = 0
        key = 0
        start = offsets[s]
        for q in range(start, offsets[s + 1]):
            c = codes[q]
            if c == 4:
                clean = 0
            else:
                clean += 1
                key = (key >> 2) | (np.int64(c) << top)
            if clean >= k:
                keys[at] = key
                entry_sig[at] = s
                entry_pos[at] = q - start - k + 1
                at += 1


def clean_runs(codes, offsets, k):
    """Per signature, its clean runs of at least ``k`` bases, longest first: start and ladder level."""
    run_offsets, starts, lengths = _runs(codes, offsets, k)
    # Each signature's longest run first, ties leftmost first: one sort of all runs, signature major. (Sorting in
    # the kernel compiled an argsort and a checked gather into it: 6 of a cold scan's 20 s of compiling.)
    signature = np.repeat(np.arange(run_offsets.size - 1), np.diff(run_offsets))
    order = np.lexsort((starts, -lengths, signature))
    starts, lengths = starts[order], lengths[order]
    levels = np.searchsorted(LADDER, lengths - k + 1, side="right") - 1
    return run_offsets, starts, levels.astype(np.int64)


@jit(reads=("codes", "offsets"))
def _runs(codes, offsets, k):
    """Clean runs of every signature (``run_offsets`` per signature), in order of their starts."""
    n_sig = offsets.size - 1
    run_offsets = np.zeros(n_sig + 1, np.int64)
    for s in range(n_sig):
        count = 0
        clean = 0
        for q in range(offsets[s], offsets[s + 1] + 1):
            if q < offsets[s + 1] and codes[q] != 4:
                clean += 1
            else:
                if clean >= k:
                    count += 1
                clean = 0
        run_offsets[s + 1] = run_offsets[s] + count
    starts = np.empty(run_offsets[-1], np.int64)
    lengths = np.empty(run_offsets[-1], np.int64)
    for s in range(n_sig):
        at = run_offsets[s]
        clean = 0
        for q in range(offsets[s], offsets[s + 1] + 1):
            if q < offsets[s + 1] and codes[q] != 4:
                clean += 1
            else:
                if clean >= k:
                    starts[at] = q - clean - offsets[s]
                    lengths[at] = clean
                    at += 1
                clean = 0
    return run_offsets, starts, lengths


@jit
def _bits_at(words, bit):
    """The 64 bits of ``words`` starting at bit ``bit`` (bit ``bit`` becomes bit 0); zeros past the end."""
    w = bit >> 6
    r = bit & 63
    if w >= words.size:
        return np.uint64(0)
    low = words[w] >> np.uint64(r)
    if r != 0 and w + 1 < words.size:
        low |= words[w + 1] << np.uint64(64 - r)
    return low


@jit
def _first_pass(uncovered, count, words, start_a, bit_a, start_b, bit_b):
    """``uncovered[w] = ~(bits of run a) & ~(bits of run b)`` for ``w < count`` (as :func:`_and_not_shifted`);
    returns how many words are non-zero."""
    first_a = start_a + (bit_a >> 6)
    right_a = np.uint64(bit_a & 63)
    left_a = np.uint64(63) - right_a
    first_b = start_b + (bit_b >> 6)
    right_b = np.uint64(bit_b & 63)
    left_b = np.uint64(63) - right_b
    nonzero = 0
    for w in range(count):
        a = (words[first_a + w] >> right_a) | ((words[first_a + w + 1] << np.uint64(1)) << left_a)
        b = (words[first_b + w] >> right_b) | ((words[first_b + w + 1] << np.uint64(1)) << left_b)
        value = ~(a | b)
        uncovered[w] = value
        nonzero += np.int64(value != 0)
    return nonzero


@jit
def _and_not_shifted(uncovered, count, words, start, bit):
    """``uncovered[w] &= ~(bits of words[start:] from bit 64 w + bit)`` for ``w < count``: one vector loop
    (``words`` is flat and 1-D so that LLVM sees unit stride; a zero word pads every row); returns how many
    words stay non-zero."""
    first = start + (bit >> 6)
    right = np.uint64(bit & 63)
    left = np.uint64(63) - right
    nonzero = 0
    for w in range(count):
        value = uncovered[w] & ~((words[first + w] >> right) | ((words[first + w + 1] << np.uint64(1)) << left))
        uncovered[w] = value
        nonzero += np.int64(value != 0)
    return nonzero


@jit
def _lowest_bit(word):
    bit = 0
    while (word & np.uint64(1)) == 0:
        word >>= np.uint64(1)
        bit += 1
    return bit


@jit
def _append_row(out_sig, out_offset, out_sum, n_out, signature, offset, total):
    """Append an occurrence; returns the new row count, or -2 when the outputs are full."""
    if n_out == out_sig.size:
        return -2
    out_sig[n_out] = signature
    out_offset[n_out] = offset
    out_sum[n_out] = total
    return n_out + 1


@jit
def _verify(sample, o, codes, start, length):
    for p in range(length):
        a = codes[start + p]
        b = sample[o + p]
        if a != b and a != 4 and b != 4:
            return False
    return True


@jit
def _occurrence_total(sample, prefix, codes, start, length, o, min_score):
    """The sample's quality sum over the signature at ``codes[start:start + length]`` laid at offset ``o``, or -1
    when it does not occur there or its mean quality is below ``min_score`` (sums are never negative)."""
    total = prefix[o + length] - prefix[o]
    if total < min_score * length or not _verify(sample, o, codes, start, length):
        return -1
    return total


@jit
def entries_of(key, bitmap, word_rank, key_start):
    """``(first, stop)``: the index entries of k-mer ``key`` (see :class:`SignatureIndex`); empty when absent."""
    word = bitmap[key >> 6]
    bit = np.uint64(key & 63)
    if not (word >> bit) & np.uint64(1):
        return 0, 0
    rank = word_rank[key >> 6] + popcount64(word & ((np.uint64(1) << bit) - np.uint64(1)))
    return key_start[rank], key_start[rank + 1]


@jit
def _sort_keys(keys):
    """Sort ``keys`` in place (heapsort).

    Numba's own ``sort`` compiles its generic quicksort, four functions that cost about 1.4 s of a first run on a
    cold cache; these two loops compile in about 0.6 s. Heapsort is 1.6-1.8x slower than that quicksort from
    1,000 to 100,000 keys, which does not show in a scan: a sample's candidates are few."""
    n = keys.size
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(keys, start, n)
    for end in range(n - 1, 0, -1):
        top = keys[0]
        keys[0] = keys[end]
        keys[end] = top
        _sift_down(keys, np.int64(0), end)  # a literal 0 would compile a second specialization


@jit
def _sift_down(keys, root, end):
    """Move ``keys[root]`` down the max-heap ``keys[:end]`` to where both its children are no larger."""
    value = keys[root]
    while True:
        child = 2 * root + 1
        if child >= end:
            break
        if child + 1 < end and keys[child + 1] > keys[child]:
            child += 1
        if keys[child] <= value:
            break
        keys[root] = keys[child]
        root = child
    keys[root] = value


@jit
def _dilation_ladder(sample, k, max_level, recipe, levels):
    """``levels[l]``: bit ``q`` set when a clean k-window of ``sample`` starts in ``[q, q + LADDER[l])``."""
    n_words = levels.shape[1]
    levels[0, :] = 0
    clean = 0
    for q in range(sample.size):
        clean = 0 if sample[q] == 4 else clean + 1
        if clean >= k:
            start = q - k + 1
            levels[0, start >> 6] |= np.uint64(1) << np.uint64(start & 63)
    for level in range(1, max_level + 1):
        first, second, shift = recipe[level, 0], recipe[level, 1], recipe[level, 2]
        for w in range(n_words):
            levels[level, w] = levels[first, w] | _bits_at(levels[second], w * 64 + shift)


@jit
def _brute_force_runless(sample, prefix, codes, offsets, lengths, run_offsets, report_all, min_score, first, n_out,
                         out_sig, out_offset, out_sum):  # fmt: skip
    """The fallback of an N-free sample: every offset of each signature without a clean run, left to right."""
    size = sample.size
    for s in range(lengths.size):
        length = lengths[s]
        if run_offsets[s + 1] > run_offsets[s] or length > size:
            continue
        limit = size - length + 1
        if not report_all and first[s] >= 0:
            limit = first[s]
        for o in range(limit):
            total = _occurrence_total(sample, prefix, codes, offsets[s], length, o, min_score)
            if total < 0:
                continue
            if report_all:
                n_out = _append_row(out_sig, out_offset, out_sum, n_out, s, o, total)
                if n_out < 0:
                    return n_out
            else:
                first[s] = o
                break
    return n_out


@jit
def _fallback(sample, prefix, codes, offsets, lengths, k, run_offsets, run_starts, run_levels, max_level, recipe,
              report_all, min_score, first, n_out, out_sig, out_offset, out_sum):  # fmt: skip
    """Step 2 of :func:`scan_sample`: every offset no clean window pair covers, verified base by base.
    Updates ``first`` (leftmost occurrences) or appends to the ``out_*`` rows; returns the row count (or -2)."""
    size = sample.size
    n_sig = lengths.size
    n_free = True
    for q in range(size):
        if sample[q] == 4:
            n_free = False
            break
    if n_free:
        # Every window of an N-free sample is clean, so every offset is covered for a signature with a clean run
        # (offset o + run start + k <= o + length <= size): only signatures without one are left, all offsets.
        return _brute_force_runless(sample, prefix, codes, offsets, lengths, run_offsets, report_all, min_score, first,
                                    n_out, out_sig, out_offset, out_sum)  # fmt: skip
    n_words = (size >> 6) + 2
    levels = np.zeros((max_level + 2, n_words + 1), np.uint64)  # the last row stays zero: "no run"
    _dilation_ladder(sample, k, max_level, recipe, levels)
    flat = levels.reshape(-1)
    row = levels.shape[1]
    zero_row = (max_level + 1) * row
    uncovered = np.empty(n_words, np.uint64)
    for s in range(n_sig):
        length = lengths[s]
        if length > size:
            continue
        limit = size - length + 1
        if not report_all and first[s] >= 0:
            limit = first[s]  # only an earlier occurrence could change the answer
        if limit <= 0:
            continue
        n_live = (limit + 63) >> 6
        # Dense passes (one vector loop over every word; the first takes the two longest runs at once) while
        # more than 1/64 of the words hold uncovered offsets, then word by word with an early exit.
        r = run_offsets[s]
        stop = run_offsets[s + 1]
        first_row = run_levels[r] * row if r < stop else zero_row
        second_row = run_levels[r + 1] * row if r + 1 < stop else zero_row
        nonzero = _first_pass(uncovered, n_live, flat, first_row, run_starts[r] if r < stop else 0, second_row,
                              run_starts[r + 1] if r + 1 < stop else 0)  # fmt: skip
        if limit & 63:
            uncovered[n_live - 1] &= (np.uint64(1) << np.uint64(limit & 63)) - np.uint64(1)
        r = min(r + 2, stop)
        while r < stop and 64 * nonzero >= n_live:
            nonzero = _and_not_shifted(uncovered, n_live, flat, run_levels[r] * row, run_starts[r])
            r += 1
        if nonzero == 0:
            continue
        for w in range(n_live):
            acc = uncovered[w]
            if acc == 0:
                continue
            base = w * 64
            for rr in range(r, stop):
                acc &= ~_bits_at(levels[run_levels[rr]], base + run_starts[rr])
                if acc == 0:
                    break
            while acc != 0:
                bit = _lowest_bit(acc)
                acc &= acc - np.uint64(1)
                o = base + bit
                if o >= limit:
                    break
                total = _occurrence_total(sample, prefix, codes, offsets[s], length, o, min_score)
                if total < 0:
                    continue
                if report_all:
                    n_out = _append_row(out_sig, out_offset, out_sum, n_out, s, o, total)
                    if n_out < 0:
                        return n_out
                else:
                    first[s] = o
                    limit = o
                    acc = np.uint64(0)
            if not report_all and first[s] >= 0 and first[s] < base + 64:
                break
    return n_out


@jit(reads=("sample", "quality", "codes", "offsets", "lengths", "bitmap", "word_rank", "key_start", "entry_sig",
            "entry_pos", "run_offsets", "run_starts", "run_levels", "recipe"))  # fmt: skip
def scan_sample(sample, quality, codes, offsets, lengths, k, bitmap, word_rank, key_start, entry_sig, entry_pos,
                run_offsets, run_starts, run_levels, max_level, recipe, report_all, min_score,
                candidates, out_sig, out_offset, out_sum):  # fmt: skip
    """Occurrences of every signature in one sample.

    ``report_all`` False: the first occurrence per signature; True: every occurrence. Only occurrences with
    mean quality ``>= min_score`` count. Writes ``(signature, offset, quality sum)`` rows to the ``out_*``
    arrays and returns their number, or ``-1`` when ``candidates`` or ``-2`` when the outputs are too small
    (the caller grows them and calls again).
    """
    size = sample.size
    n_sig = lengths.size
    prefix = np.zeros(size + 1, np.int64)
    for q in range(size):
        prefix[q + 1] = prefix[q] + quality[q]

    # 1. Candidates from the index: clean sample windows that equal a clean signature window.
    top = 2 * (k - 1)  # keys hold a window's first base in their lowest bits, as the GPU's packed words do
    n_candidates = 0
    clean = 0
    key = 0
    for q in range(size):
        c = sample[q]
        if c == 4:
            clean = 0
            continue
        clean += 1
        key = (key >> 2) | (np.int64(c) << top)
        if clean < k:
            continue
        window = q - k + 1
        first_entry, stop_entry = entries_of(key, bitmap, word_rank, key_start)
        for e in range(first_entry, stop_entry):
            s = entry_sig[e]
            o = window - entry_pos[e]
            if o >= 0 and o + lengths[s] <= size:
                if n_candidates == candidates.size:
                    return -1
                candidates[n_candidates] = (np.int64(s) << 32) | o
                n_candidates += 1
    found = candidates[:n_candidates]
    _sort_keys(found)

    first = np.full(n_sig, -1, np.int64)
    # int64 from the start: a literal 0 would compile _fallback (and what it calls) twice, once for
    # Literal[int](0) and once for int64, two entries of one cache file that other runs rewrite.
    n_out = np.int64(0)
    previous = -1
    for key in found:
        if key == previous:
            continue
        previous = key
        s = key >> 32
        o = key & 0xFFFFFFFF
        if not report_all and first[s] >= 0:
            continue
        length = lengths[s]
        total = _occurrence_total(sample, prefix, codes, offsets[s], length, o, min_score)
        if total < 0:
            continue
        if report_all:
            n_out = _append_row(out_sig, out_offset, out_sum, n_out, s, o, total)
            if n_out < 0:
                return n_out
        else:
            first[s] = o

    # 2. Fallback: brute force over every offset that no clean window pair covers.
    n_out = _fallback(sample, prefix, codes, offsets, lengths, k, run_offsets, run_starts, run_levels, max_level,
                      recipe, report_all, min_score, first, n_out, out_sig, out_offset, out_sum)  # fmt: skip
    if n_out < 0:
        return n_out
    if not report_all:
        for s in range(n_sig):
            if first[s] >= 0:
                total = prefix[first[s] + lengths[s]] - prefix[first[s]]
                n_out = _append_row(out_sig, out_offset, out_sum, n_out, s, first[s], total)
                if n_out < 0:
                    return n_out
    return n_out


@jit(reads=("sample_codes", "sample_offsets", "sample_quality", "codes", "offsets", "lengths", "bitmap", "word_rank",
            "key_start", "entry_sig", "entry_pos", "run_offsets", "run_starts", "run_levels", "recipe"))  # fmt: skip
def scan_samples(sample_codes, sample_offsets, sample_quality, first, last, codes, offsets, lengths, k, bitmap,
                 word_rank, key_start, entry_sig, entry_pos, run_offsets, run_starts, run_levels, max_level, recipe,
                 report_all, min_score, candidates, out_sample, out_sig, out_offset, out_sum):  # fmt: skip
    """:func:`scan_sample` over samples ``first:last`` in one call (a call from Python per sample cost more than
    the scan of a 2 kb read), rows ``(sample, signature, offset, quality sum)`` into the ``out_*`` arrays.

    Returns ``(rows written, next sample, status)``: status 0 when every sample is done; -1 (``candidates``) or
    -2 (the outputs) when one is too small for sample ``next sample``, whose rows are not written; the caller
    grows it and calls again from there."""
    n_out = np.int64(0)  # not a literal 0: one specialization of the slices below
    for i in range(first, last):
        start = sample_offsets[i]
        stop = sample_offsets[i + 1]
        count = scan_sample(sample_codes[start:stop], sample_quality[start:stop], codes, offsets, lengths, k, bitmap,
                            word_rank, key_start, entry_sig, entry_pos, run_offsets, run_starts, run_levels, max_level,
                            recipe, report_all, min_score, candidates, out_sig[n_out:], out_offset[n_out:],
                            out_sum[n_out:])  # fmt: skip
        if count < 0:
            return n_out, i, count
        for row in range(n_out, n_out + count):
            out_sample[row] = i
        n_out += count
    return n_out, last, 0


def index_rows(samples, index: SignatureIndex, report_all: bool, threshold: float, threads: int, report=None):
    """``(sample, signature row, offset, quality sum)`` of every occurrence the index finds in ``samples`` (a
    :class:`~seqcompare.io.sequences.SequenceSet` with qualities; the first occurrence per pair unless
    ``report_all``; ``threshold``: the least mean quality, -1 for none), threads over chunks of samples, each
    chunk's bases reported to ``report.update`` when it is done."""
    k = index.k
    n_samples = len(samples)
    # Tasks of consecutive samples of about equal total length.
    cuts = np.searchsorted(samples.offsets, np.linspace(0, samples.offsets[-1], 8 * threads + 1))
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_samples), [n_samples]]))

    def task(lo_hi):
        lo, hi = lo_hi
        parts = []
        candidates = np.empty(1 << 16, dtype=np.int64)
        out = [np.empty(max(64, 2 * len(index)), dtype=np.int64) for _ in range(4)]
        while lo < hi:
            count, lo, status = scan_samples(samples.codes, samples.offsets, samples.quality, lo, hi, index.codes,
                                             index.offsets, index.lengths, k, index.bitmap, index.word_rank,
                                             index.key_start, index.entry_sig, index.entry_pos, index.run_offsets,
                                             index.run_starts, index.run_levels, index.max_level, LADDER_RECIPE,
                                             report_all, threshold, candidates, *out)  # fmt: skip
            if count:
                parts.append(tuple(column[:count].copy() for column in out))
            if status == -1:
                candidates = np.empty(2 * candidates.size, dtype=np.int64)
            elif status == -2 and count == 0:  # one sample's rows do not fit
                out = [np.empty(2 * out[0].size, dtype=np.int64) for _ in range(4)]
        if report is not None:
            report.update(int(samples.offsets[hi] - samples.offsets[lo_hi[0]]))
        return parts

    with ThreadPoolExecutor(threads) as pool:
        pieces = [part for parts in pool.map(task, zip(bounds[:-1], bounds[1:])) for part in parts]
    if not pieces:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty
    return tuple(np.concatenate(column) for column in zip(*pieces))
