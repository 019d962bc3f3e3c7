"""The oracle: every (sample, signature, offset) compared base by base, as the course's reference matcher does.

Deliberately plain: no index, no bit tricks, nothing shared with the fast paths except the base codes.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

# The codes' letters (A C G T N, then the other IUPAC codes as ``iupac_codes`` numbers them) and the bases each
# stands for, written out here so that the oracle shares no table with the fast paths.
_LETTERS = "ACGTNRYKMSWBDHV"
_BASES = {"A": "A", "C": "C", "G": "G", "T": "T", "N": "ACGT", "R": "AG", "Y": "CT", "K": "GT", "M": "AC",
          "S": "CG", "W": "AT", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG"}  # fmt: skip
_PAIRS = {"A": "T", "C": "G", "G": "C", "T": "A"}
# _MEET[a, b]: codes a and b share a base.
_MEET = np.array([[bool(set(_BASES[x]) & set(_BASES[y])) for y in _LETTERS] for x in _LETTERS])
_COMPLEMENT = np.array([_LETTERS.index(next(c for c in _LETTERS if set(_BASES[c]) == {_PAIRS[b] for b in _BASES[x]}))
                        for x in _LETTERS], dtype=np.uint8)  # fmt: skip


@jit(reads=("sample", "signature"))
def occurrence_offsets(sample, signature):
    """Every offset where ``signature`` occurs in ``sample`` ('N', code 4, on either side matches anything; IUPAC
    codes match the codes that share a base with them)."""
    n_offsets = sample.size - signature.size + 1
    found = np.zeros(max(n_offsets, 0), np.bool_)
    for o in range(n_offsets):
        ok = True
        for p in range(signature.size):
            if not _MEET[signature[p], sample[o + p]]:
                ok = False
                break
        found[o] = ok
    return np.flatnonzero(found)


@jit(reads=("sample", "signature"))
def mismatch_occurrences(sample, signature, errors):
    """``(offsets, counts)``: every offset where ``signature`` differs from the sample in at most ``errors``
    positions ('N' on either side matches anything), with its count."""
    n_offsets = max(sample.size - signature.size + 1, 0)
    counts = np.empty(n_offsets, np.int64)
    for o in range(n_offsets):
        count = 0
        for p in range(signature.size):
            if not _MEET[signature[p], sample[o + p]]:
                count += 1
        counts[o] = count
    found = np.flatnonzero(counts <= errors)
    return found, counts[found]


@jit(reads=("sample", "signature"))
def edit_occurrences(sample, signature, errors):
    """``(starts, ends, costs)`` of the signature's occurrences within ``errors`` edits: the ends ``e``
    (exclusive) where the cost profile ``D(e)``, the least distance between the whole signature and any
    ``sample[s:e]``, has a local minimum within ``errors``, at the plateau's rightmost end (the nearest
    different cost on each side is higher, or the sample ends). The start is the largest ``s`` reaching
    ``D(e)``. Brute force: for each end on its own, the plain edit distance of the whole signature to every
    substring ending there (one table of the reversed strings); costs above ``errors`` are all read as
    ``errors + 1``, which changes no minimum within ``errors``."""
    n = sample.size
    m = signature.size
    cap = errors + 1
    profile = np.full(n + 1, cap, np.int64)
    first_start = np.full(n + 1, -1, np.int64)
    for e in range(n + 1):
        # The whole signature against every sample[e - t : e] at once: the plain edit-distance table of the two
        # reversed strings, table[i, t] = distance(signature[m - i:], sample[e - t : e]). An alignment within
        # the errors spans at most m + errors sample bases.
        width = min(e, m + errors)
        table = np.zeros((m + 1, width + 1), np.int64)
        for t in range(width + 1):
            table[0, t] = t
        for i in range(1, m + 1):
            table[i, 0] = i
            for t in range(1, width + 1):
                same = _MEET[signature[m - i], sample[e - t]]
                table[i, t] = min(table[i - 1, t - 1] + (0 if same else 1), table[i - 1, t] + 1, table[i, t - 1] + 1)
        for t in range(width + 1):  # the largest start first: the shortest span
            d = table[m, t]
            if d < profile[e]:
                profile[e] = d
                first_start[e] = e - t
    starts = np.empty(n + 1, np.int64)
    ends = np.empty(n + 1, np.int64)
    costs = np.empty(n + 1, np.int64)
    found = 0
    for e in range(n + 1):
        if profile[e] > errors:
            continue
        right = e + 1
        while right <= n and profile[right] == profile[e]:
            right += 1
        if right != e + 1:
            continue  # not the plateau's rightmost end
        if right <= n and profile[right] < profile[e]:
            continue
        left = e - 1
        while left >= 0 and profile[left] == profile[e]:
            left -= 1
        if left < 0 or profile[left] < profile[e]:
            continue
        starts[found] = first_start[e]
        ends[found] = e
        costs[found] = profile[e]
        found += 1
    return starts[:found], ends[:found], costs[:found]


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
    """The reverse complement of base codes (A0 C1 G2 T3; N4 stays N; an IUPAC code becomes the code of its
    bases' complements)."""
    return _COMPLEMENT[np.asarray(codes)][::-1]


def reference_scan(samples, signatures, *, report: str = "first", min_score: float | None = None,
                   both_strands: bool = False, max_mismatches: int | None = None,
                   max_edits: int | None = None) -> list:  # fmt: skip
    """The oracle's report: ``(sample, signature, strand, offset, quality_sum, distance, end)`` rows in output
    order.

    Occurrences are found by :func:`occurrence_offsets` (exact), :func:`mismatch_occurrences` or
    :func:`edit_occurrences`, each spanning the sample's bases ``offset .. end``; one counts when the
    sample's qualities over it sum to at least ``min_score`` times its span. Per (sample, signature):
    ``first`` keeps the one ending leftmost (ties: the signature as given before its reverse complement),
    ``best`` the least distance, then the highest mean quality, then as ``first``; ``all`` keeps every one,
    by end then strand.

    Parameters
    ----------
    samples, signatures : SequenceSet
        Samples with qualities; signatures as given.
    report : {"first", "best", "all"}
    min_score : float, optional
    both_strands : bool
    max_mismatches, max_edits : int or float, optional
        At most one: occurrences within this many mismatches or edits; a float is a fraction of each
        signature's length, rounded down.
    """
    from fractions import Fraction

    rows = []
    for i in range(len(samples)):
        sample = samples.sequence(i)
        quality = np.asarray(samples.quality[samples.offsets[i] : samples.offsets[i + 1]], dtype=np.int64)
        for s in range(len(signatures)):
            forward = signatures.sequence(s)
            strands = [forward, reverse_complement(forward)] if both_strands else [forward]
            allowance = max_mismatches if max_mismatches is not None else max_edits
            if isinstance(allowance, float):
                allowance = int(Fraction(str(allowance)) * forward.size)  # the fraction as written, rounded down
            found = []
            for strand, signature in enumerate(strands):
                signature = np.ascontiguousarray(signature)
                if max_mismatches is not None:
                    offsets, counts = mismatch_occurrences(sample, signature, allowance)
                    spans = [(int(o), int(o) + signature.size, int(c)) for o, c in zip(offsets, counts)]
                elif max_edits is not None:
                    spans = list(zip(*(x.tolist() for x in edit_occurrences(sample, signature, allowance))))
                    spans = [(b, e, c) for b, e, c in spans]
                else:
                    spans = [(int(o), int(o) + signature.size, 0) for o in occurrence_offsets(sample, signature)]
                for begin, end, distance in spans:
                    total = int(quality[begin:end].sum())
                    if min_score is None or total >= min_score * (end - begin):
                        found.append((strand, begin, total, distance, end))
            if not found:
                continue
            if report == "all":
                chosen = sorted(found, key=lambda hit: (hit[4], hit[0]))
            elif report == "first":
                chosen = [min(found, key=lambda hit: (hit[4], hit[0]))]
            else:
                chosen = [min(found, key=lambda hit: (hit[3], -Fraction(hit[2], hit[4] - hit[1]), hit[4], hit[0]))]
            rows.extend((i, s, strand, begin, total, distance, end) for strand, begin, total, distance, end in chosen)
    return rows
