"""How much of each signature the reads cover with shared k-mers: breadth and mean depth, for reads shorter
than a signature (150 bp Illumina against a 10 kb virus) or too noisy to hold it whole (nanopore).

Definitions
-----------
A *k-mer hit* is a read window of ``kmer`` bases and a signature window of ``kmer`` bases, both free of N,
that differ in at most ``max_mismatches`` positions. An N carries no evidence, so windows holding one never
count (as k-mer tools skip them), and the signature's N positions are never covered. With ``both_strands``
the signature's reverse complement is searched too, its hits mapped back onto the signature as given.

A read *covers* a signature position when a k-mer hit of that read spans it; the position's *depth* is the
number of reads covering it (a read counts once, however many of its hits span the position). *Breadth* is
the fraction of the signature's positions at depth 1 or more, and the *mean depth* the mean of the depths
over all its positions. A read *carries* a signature when it has at least one k-mer hit with it.

Why no hit is missed
--------------------
A hit has at most ``max_mismatches`` mismatched positions, which cut its ``kmer`` positions into at most
``max_mismatches + 1`` runs of equal bases totalling ``kmer - max_mismatches``; so one run holds at least
``seed = ceil((kmer - max_mismatches) / (max_mismatches + 1))`` bases. The index (:mod:`.index`) holds every
N-free window of ``k_index <= seed`` bases of the signatures, and both windows of a hit are N-free, so that
run's first ``k_index`` read bases are found in the index, on the hit's diagonal (read position minus
signature position), at a read position ``q`` inside the hit. The hit then lies within the read positions
``[q + k_index - kmer, q + kmer)`` of that diagonal, and every such region is walked base by base, testing
each window in it. Regions of one diagonal are merged where they overlap, so each window is tested once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..errors import InputError
from .index import entries_of


@dataclass
class CoverageResult:
    """Breadth and depth of each signature in one sample file's reads (see :mod:`.kmer_coverage`).

    Attributes
    ----------
    source : str
        The sample file.
    signature_names : list of str
    lengths : ndarray of int64
        Each signature's length.
    depth : list of ndarray of int64
        Per signature, the depth at each position.
    carried : ndarray of bool, shape (n_reads, n_signatures)
        Whether each read has a k-mer hit with each signature.
    kmer, max_mismatches : int
    """

    source: str
    signature_names: list
    lengths: np.ndarray
    depth: list
    carried: np.ndarray
    kmer: int
    max_mismatches: int

    @property
    def breadth(self) -> np.ndarray:
        """Fraction of each signature's positions covered by at least one read."""
        return np.array([float(np.count_nonzero(d)) / max(d.size, 1) for d in self.depth])

    @property
    def mean_depth(self) -> np.ndarray:
        """Mean over each signature's positions of the reads covering it."""
        return np.array([float(d.sum()) / max(d.size, 1) for d in self.depth])

    @property
    def reads(self) -> np.ndarray:
        """How many reads carry each signature."""
        return self.carried.sum(axis=0).astype(np.int64)

    @property
    def matched_reads(self) -> np.ndarray:
        """Whether each read carries any signature."""
        return self.carried.any(axis=1)

    def lines(self, *, tsv: bool = False):
        """Yield output lines, one per signature in the signatures' order: ``file: signature (breadth B, mean
        depth D, R reads)``, or with ``tsv`` a header and columns sample_file, signature, length, breadth,
        mean_depth, reads."""
        breadth, depth, reads = self.breadth, self.mean_depth, self.reads
        if tsv:
            yield "sample_file\tsignature\tlength\tbreadth\tmean_depth\treads"
        for s, name in enumerate(self.signature_names):
            if tsv:
                yield f"{self.source}\t{name}\t{self.lengths[s]}\t{breadth[s]:.4f}\t{depth[s]:.3f}\t{reads[s]}"
            else:
                yield f"{self.source}: {name} (breadth {breadth[s]:.4f}, mean depth {depth[s]:.3f}, {reads[s]} reads)"

def seed_length(kmer: int, max_mismatches: int) -> int:
    """The exact run every hit must hold: ``ceil((kmer - max_mismatches) / (max_mismatches + 1))``."""
    return -(-(kmer - max_mismatches) // (max_mismatches + 1))

def check_coverage_options(kmer: int, max_mismatches: int) -> None:
    """Refuse a k-mer length or mismatch count the filter cannot serve, in one line."""
    if kmer < 1:
        raise InputError(f"--coverage-kmer must be at least 1, not {kmer}")
    if max_mismatches < 0 or max_mismatches >= kmer or seed_length(kmer, max_mismatches) < 1:
        raise InputError(f"--max-mismatches {max_mismatches} is too large for k-mers of {kmer} bases: at most "
                         f"{kmer - 1}")  # fmt: skip

def coverage_intervals(samples, index, n_forward: int, kmer: int, max_mismatches: int, threads: int, report=None):
    """``(read, signature, start, stop)`` of every read's covered intervals of every signature (merged, in
    the coordinates of the signature as given), from the reads ``samples`` and the CPU index ``index`` of the
    signature rows (the first ``n_forward`` as given, the rest their reverse complements)."""
    n_samples = len(samples)
    cuts = np.searchsorted(samples.offsets, np.linspace(0, samples.offsets[-1], 8 * threads + 1))
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n_samples), [n_samples]]))

    def task(lo_hi):
        lo, hi = (int(x) for x in lo_hi)
        seeds = np.empty((1 << 14, 3), dtype=np.int64)
        out = np.empty((1 << 12, 4), dtype=np.int64)
        parts = []
        first = lo
        while first < hi:
            status, first, written = _cover_reads(samples.codes, samples.offsets, first, hi, index.k, kmer,
                                                  max_mismatches, index.codes, index.offsets, n_forward, index.bitmap,
                                                  index.word_rank, index.key_start, index.entry_sig, index.entry_pos,
                                                  seeds, out)  # fmt: skip
            parts.append(out[:written].copy())
            if status == -1:
                seeds = np.empty((2 * seeds.shape[0], 3), dtype=np.int64)
            elif status == -2:
                out = np.empty((2 * out.shape[0], 4), dtype=np.int64)
        if report is not None:
            report.update(int(samples.offsets[hi] - samples.offsets[lo]))
        return parts

    with ThreadPoolExecutor(threads) as pool:
        pieces = [part for parts in pool.map(task, zip(bounds[:-1], bounds[1:])) for part in parts]
    table = np.concatenate(pieces) if pieces else np.empty((0, 4), dtype=np.int64)
    return tuple(np.ascontiguousarray(table[:, c]) for c in range(4))

@jit(reads=("bases", "sample_offsets", "codes", "offsets", "bitmap", "word_rank", "key_start", "entry_sig",
            "entry_pos"))  # fmt: skip
def _cover_reads(bases, sample_offsets, first, last, k, kmer, max_mismatches, codes, offsets, n_forward, bitmap,
                 word_rank, key_start, entry_sig, entry_pos, seeds, out):  # fmt: skip
    """Covered intervals of reads ``first:last`` into ``out``. Returns ``(status, next read, rows written)``:
    status 0 when done, -1 when a read has more seeds than ``seeds`` holds, -2 when ``out`` is full (then the
    caller grows that buffer and calls again from the read returned; rows of earlier reads are kept)."""
    top = 2 * (k - 1)
    written = np.int64(0)  # not a literal 0: one specialization of _add_interval
    for r in range(first, last):
        base = sample_offsets[r]
        size = sample_offsets[r + 1] - base
        # 1. Seeds (signature row, diagonal, read position) from the read's N-free k-windows.
        n_seeds = 0
        clean = 0
        key = 0
        for q in range(size):
            c = bases[base + q]
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
                if n_seeds == seeds.shape[0]:
                    return -1, r, written
                seeds[n_seeds, 0] = entry_sig[e]
                seeds[n_seeds, 1] = window - entry_pos[e]
                seeds[n_seeds, 2] = window
                n_seeds += 1
        if n_seeds == 0:
            continue
        # 2. Seeds by (row, diagonal); read positions ascend within each (a stable sort keeps their order).
        found = seeds[:n_seeds]
        order = _stable_order(found[:, 0] * (np.int64(1) << 34) + found[:, 1] + (np.int64(1) << 33))
        read_first = written
        i = 0
        while i < n_seeds:
            row = found[order[i], 0]
            diagonal = found[order[i], 1]
            start = offsets[row]
            length = offsets[row + 1] - start
            j = i
            while j < n_seeds and found[order[j], 0] == row and found[order[j], 1] == diagonal:
                j += 1
            # Walk the merged regions [q + k - kmer, q + kmer) of the group's seeds, clipped to the overlap of
            # the read and the signature on this diagonal.
            low = max(0, diagonal)
            high = min(size, diagonal + length)
            g = i
            while g < j:
                lo = max(low, found[order[g], 2] + k - kmer)
                hi = min(high, found[order[g], 2] + kmer)
                g += 1
                while g < j and found[order[g], 2] + k - kmer <= hi:
                    hi = min(high, found[order[g], 2] + kmer)
                    g += 1
                # Sliding window: ``bad`` counts N on either side, ``mismatched`` the other differences.
                bad = 0
                mismatched = 0
                run_start = np.int64(-1)  # int64, not a literal: one specialization of _add_interval
                run_stop = np.int64(-1)
                for q in range(lo, hi):
                    a = codes[start + q - diagonal]
                    b = bases[base + q]
                    if a == 4 or b == 4:
                        bad += 1
                    elif a != b:
                        mismatched += 1
                    if q - kmer >= lo:
                        a = codes[start + q - kmer - diagonal]
                        b = bases[base + q - kmer]
                        if a == 4 or b == 4:
                            bad -= 1
                        elif a != b:
                            mismatched -= 1
                    if q - kmer + 1 >= lo and bad == 0 and mismatched <= max_mismatches:
                        window_start = q - kmer + 1 - diagonal  # in the signature row
                        if run_stop >= window_start:
                            run_stop = window_start + kmer
                        else:
                            if run_start >= 0:
                                written = _add_interval(out, written, r, row, run_start, run_stop, length, n_forward)
                                if written < 0:
                                    return -2, r, read_first
                            run_start = window_start
                            run_stop = window_start + kmer
                if run_start >= 0:
                    written = _add_interval(out, written, r, row, run_start, run_stop, length, n_forward)
                    if written < 0:
                        return -2, r, read_first
            i = j
        written = _merge_read_intervals(out, read_first, written)
    return 0, last, written

@jit
def _add_interval(out, written, read, row, start, stop, length, n_forward):
    """Append ``[start, stop)`` of signature row ``row``, mapped onto the signature as given; -1 when full."""
    if written == out.shape[0]:
        return -1
    if row >= n_forward:  # a reverse complement: position p is the forward signature's length - 1 - p
        row -= n_forward
        start, stop = length - stop, length - start
    out[written, 0] = read
    out[written, 1] = row
    out[written, 2] = start
    out[written, 3] = stop
    return written + 1

@jit
def _stable_order(keys):
    """The stable ascending order of ``keys``, as ``np.argsort(keys, kind="mergesort")`` gives it.

    A bottom-up merge sort of plain loops: Numba's own merge sort took 3 s of a cold start to compile.
    """
    n = keys.size
    order = np.empty(n, np.int64)
    for i in range(n):
        order[i] = i
    spare = np.empty(n, np.int64)
    width = 1
    while width < n:
        for low in range(0, n, 2 * width):
            middle = min(low + width, n)
            high = min(low + 2 * width, n)
            a, b = low, middle
            for at in range(low, high):
                # Ties take the left run first: that keeps equal keys in their input order.
                if b >= high or (a < middle and keys[order[a]] <= keys[order[b]]):
                    spare[at] = order[a]
                    a += 1
                else:
                    spare[at] = order[b]
                    b += 1
        order, spare = spare, order
        width *= 2
    return order


@jit
def _merge_read_intervals(out, first, last):
    """Sort one read's intervals ``out[first:last]`` by signature and start and merge those that overlap or
    touch, in place; returns the new end of the rows."""
    if last - first <= 1:
        return last
    rows = out[first:last].copy()
    order = _stable_order(rows[:, 1] * (np.int64(1) << 32) + rows[:, 2])
    at = first
    for i in range(order.size):
        row = rows[order[i]]
        if at > first and out[at - 1, 1] == row[1] and row[2] <= out[at - 1, 3]:
            if row[3] > out[at - 1, 3]:
                out[at - 1, 3] = row[3]
            continue
        out[at, 0] = row[0]
        out[at, 1] = row[1]
        out[at, 2] = row[2]
        out[at, 3] = row[3]
        at += 1
    return at

def depth_from_intervals(signature, start, stop, lengths) -> list:
    """Per signature, the number of intervals spanning each position (each read's intervals are disjoint)."""
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    steps = np.zeros(int(offsets[-1]) + lengths.size, dtype=np.int64)
    base = offsets[:-1] + np.arange(lengths.size)  # one extra slot per signature for its closing steps
    np.add.at(steps, base[signature] + start, 1)
    np.add.at(steps, base[signature] + stop, -1)
    return [np.cumsum(steps[b : b + n]) for b, n in zip(base.tolist(), lengths.tolist())]
