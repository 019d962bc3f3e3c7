"""The oracle: every (sample, signature, offset) compared base by base, as the course's reference matcher does.

Deliberately plain: no index, no bit tricks, nothing shared with the fast paths except the base codes.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit


@jit
def occurrence_offsets(sample, signature):
    """Every offset where ``signature`` occurs in ``sample`` ('N', code 4, on either side matches anything)."""
    n_offsets = sample.size - signature.size + 1
    found = np.zeros(max(n_offsets, 0), np.bool_)
    for o in range(n_offsets):
        ok = True
        for p in range(signature.size):
            a = signature[p]
            b = sample[o + p]
            if a != b and a != 4 and b != 4:
                ok = False
                break
        found[o] = ok
    return np.flatnonzero(found)


def reference_occurrences(samples, signatures):
    """All occurrences of every signature (forward strand) in every sample.

    Returns
    -------
    sample, signature, offset : ndarray of int64
        Sorted by sample, then signature, then offset.
    """
    rows = []
    for i in range(len(samples)):
        x = samples.sequence(i)
        for s in range(len(signatures)):
            for o in occurrence_offsets(x, signatures.sequence(s)):
                rows.append((i, s, int(o)))
    table = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return table[:, 0], table[:, 1], table[:, 2]


def reverse_complement(codes: np.ndarray) -> np.ndarray:
    """The reverse complement of base codes (A0 C1 G2 T3; N4 stays N)."""
    codes = np.asarray(codes)
    return np.where(codes < 4, 3 - codes, codes)[::-1]


def reference_scan(samples, signatures, *, report: str = "first", min_score: float | None = None,
                   both_strands: bool = False) -> list:  # fmt: skip
    """The oracle's report: ``(sample, signature, strand, offset, quality_sum)`` rows in output order.

    Every occurrence is found by :func:`occurrence_offsets`; an occurrence counts when the sample's qualities
    over it sum to at least ``min_score`` times its length (its mean reaches ``min_score``). Per (sample,
    signature), in that order: ``first`` keeps the leftmost (ties: the signature as given before its reverse
    complement), ``best`` the highest quality sum (ties: leftmost, then as given), ``all`` every occurrence
    by offset then strand.

    Parameters
    ----------
    samples, signatures : SequenceSet
        Samples with qualities; signatures as given.
    report : {"first", "best", "all"}
    min_score : float, optional
    both_strands : bool
    """
    rows = []
    for i in range(len(samples)):
        sample = samples.sequence(i)
        quality = np.asarray(samples.quality[samples.offsets[i] : samples.offsets[i + 1]], dtype=np.int64)
        for s in range(len(signatures)):
            forward = signatures.sequence(s)
            strands = [forward, reverse_complement(forward)] if both_strands else [forward]
            found = []
            for strand, signature in enumerate(strands):
                for offset in occurrence_offsets(sample, np.ascontiguousarray(signature)):
                    total = int(quality[offset : offset + signature.size].sum())
                    if min_score is None or total >= min_score * signature.size:
                        found.append((strand, int(offset), total))
            if not found:
                continue
            if report == "all":
                chosen = sorted(found, key=lambda hit: (hit[1], hit[0]))
            elif report == "first":
                chosen = [min(found, key=lambda hit: (hit[1], hit[0]))]
            else:
                chosen = [min(found, key=lambda hit: (-hit[2], hit[1], hit[0]))]
            rows.extend((i, s, strand, offset, total) for strand, offset, total in chosen)
    return rows
