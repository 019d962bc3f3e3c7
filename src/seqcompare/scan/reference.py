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
