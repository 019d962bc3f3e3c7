"""Scanning a few short samples in NumPy alone: every window of every sample against each signature at once.

The index (:mod:`.index`) needs Numba's import and compiled kernels, about 0.35 s before the first base is
read. A handful of reads against a few short signatures takes a millisecond compared outright, so such scans
never load the compiler: per signature, one comparison of all the samples' windows (``N`` on either side
matches), windows that cross into the next sample dropped. It is exhaustive by construction, so it needs no
proof beyond the match rule itself.
"""

from __future__ import annotations

import numpy as np

from ..io.sequences import N_CODE

# Scans of at most this many base comparisons (sample bases x signature bases, strands included) and
# signatures take the sweep: a few milliseconds.
SMALL_COMPARISONS = 1 << 22
SMALL_SIGNATURES = 256


def is_small(sample_bases: int, signature_bases: int, signature_rows: int) -> bool:
    """Whether a scan of this size is cheaper compared outright than through the compiled index."""
    return signature_rows <= SMALL_SIGNATURES and sample_bases * signature_bases <= SMALL_COMPARISONS


def sweep_rows(samples, codes: np.ndarray, offsets: np.ndarray, report_all: bool, threshold: float):
    """``(sample, signature row, offset, quality sum)`` of every occurrence of the signature rows
    ``codes``/``offsets`` in ``samples`` (the leftmost per pair unless ``report_all``; an occurrence counts
    when its quality sum reaches ``threshold`` times its length), as the index's ``index_rows`` gives them."""
    bases, starts = samples.codes, samples.offsets
    prefix = np.zeros(bases.size + 1, dtype=np.int64)
    np.cumsum(samples.quality, out=prefix[1:])
    columns = []
    for row in range(offsets.size - 1):
        signature = codes[offsets[row] : offsets[row + 1]]
        length = signature.size
        if length == 0 or length > bases.size:
            continue
        windows = np.lib.stride_tricks.sliding_window_view(bases, length)
        concrete = signature != N_CODE  # an N in the signature matches anything
        facing = windows[:, concrete]
        found = np.flatnonzero(((facing == signature[concrete]) | (facing == N_CODE)).all(axis=1))
        owner = np.searchsorted(starts, found, side="right") - 1
        inside = found + length <= starts[owner + 1]  # not running into the next sample
        found, owner = found[inside], owner[inside]
        totals = prefix[found + length] - prefix[found]
        keep = ~(totals < threshold * length)  # as the kernels compare: the sum against threshold x length
        found, owner, totals = found[keep], owner[keep], totals[keep]
        if not report_all:  # the leftmost of each sample (windows are in order)
            _, first = np.unique(owner, return_index=True)
            found, owner, totals = found[first], owner[first], totals[first]
        columns.append((owner, np.full(owner.size, row, dtype=np.int64), found - starts[owner], totals))
    if not columns:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty, empty
    return tuple(np.concatenate(parts).astype(np.int64) for parts in zip(*columns))
