"""Host passes around a GPU scan (compiled CPU code): records packed at 3 bits a base (the only form of the
samples and signatures that crosses to the GPU), the host's share of the device index, and the scores of the
occurrences the device finds (the qualities never travel)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import jit
from ..io.sequences import pack_words, packed_layout
from .index import clean_runs, window_keys


@jit(reads=("codes", "offsets", "word0"))
def _pack(codes, offsets, word0, first, last, bases16, nmask8, scratch, scratch_words):
    """Pack records ``first:last``, each from its word ``word0[r]`` (:func:`~seqcompare.io.sequences.pack_words`),
    its codes copied first into ``scratch`` (``scratch_words`` as bytes: records start anywhere in ``codes``)."""
    for r in range(first, last):
        start = offsets[r]
        for q in range(offsets[r + 1] - start):
            scratch[q] = codes[start + q]
        pack_words(scratch_words, offsets[r + 1] - start, word0[r], bases16, nmask8)


def pack_records(codes: np.ndarray, offsets: np.ndarray, threads: int = 1, allocate=np.empty):
    """``(bases, nmask, word0)``: records packed from 32-base word boundaries
    (:func:`~seqcompare.io.sequences.packed_layout`), plus one spare word. ``allocate(shape, dtype)`` makes the
    outputs (e.g. in page-locked memory)."""
    lengths = np.diff(offsets)
    word0, total = packed_layout(lengths)
    bases = allocate((total + 1,), np.uint64)
    nmask = allocate((total + 1,), np.uint32)
    bases[total] = 0
    nmask[total] = 0xFFFFFFFF
    bounds = np.unique(np.searchsorted(offsets, np.linspace(0, offsets[-1], 4 * threads + 1)).clip(0, lengths.size))
    bounds = np.unique(np.concatenate([[0], bounds, [lengths.size]]))

    def pack(first: int, last: int) -> None:
        scratch_words = np.empty((int(lengths[first:last].max(initial=0)) + 7) // 8 + 1, dtype=np.uint64)
        _pack(codes, offsets, word0, first, last, bases.view(np.uint16), nmask.view(np.uint8),
              scratch_words.view(np.uint8), scratch_words)  # fmt: skip

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda lo_hi: pack(int(lo_hi[0]), int(lo_hi[1])), zip(bounds[:-1], bounds[1:])))
    return bases, nmask, word0


def index_host_parts(codes: np.ndarray, offsets: np.ndarray, k: int, allocate=np.empty) -> dict:
    """The host's share of a :class:`DeviceIndex` (compiled CPU passes): window keys and entries, clean runs
    and the packed signatures; ``allocate(shape, dtype)`` makes the large arrays."""
    keys, entry_sig, entry_pos = window_keys(codes, offsets, k, allocate)
    run_offsets, run_starts, run_levels = clean_runs(codes, offsets, k)
    sig_bases, sig_nmask, sig_word0 = pack_records(codes, offsets, allocate=allocate)
    return {"keys": keys, "entry_sig": entry_sig, "entry_pos": entry_pos, "sig_bases": sig_bases,
            "sig_nmask": sig_nmask, "sig_word0": sig_word0, "sig_length": np.diff(offsets).astype(np.int32),
            "run_offsets": run_offsets, "run_starts": run_starts.astype(np.int32),
            "run_levels": run_levels.astype(np.int32)}  # fmt: skip


@jit
def window_sums(quality, offsets, sample, offset, length):
    """Sum of each row's sample qualities over ``[offset, offset + length)``."""
    out = np.empty(sample.size, np.int64)
    for row in range(sample.size):
        start = offsets[sample[row]] + offset[row]
        total = 0
        for q in range(start, start + length[row]):
            total += quality[q]
        out[row] = total
    return out


def host_rows(samples, signature_lengths: np.ndarray, sample, signature, offset, report_all: bool, threshold: float):
    """``(sample, signature, offset, quality sum)`` rows from the device's occurrences: scores are summed on
    the host (the qualities never travel); with a threshold, occurrences below it are dropped and, unless
    ``report_all``, the first remaining one per pair is kept."""
    lengths = signature_lengths[signature]
    total = window_sums(samples.quality, samples.offsets, sample, offset, lengths)
    if threshold >= 0:
        keep = total >= threshold * lengths
        sample, signature, offset, total = sample[keep], signature[keep], offset[keep], total[keep]
        if not report_all:
            order = np.lexsort((offset, signature, sample))
            pair = sample[order] * (signature_lengths.size + 1) + signature[order]
            first = order[np.r_[True, pair[1:] != pair[:-1]]] if order.size else order
            sample, signature, offset, total = sample[first], signature[first], offset[first], total[first]
    return sample, signature, offset, total
