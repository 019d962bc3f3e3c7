"""The oracle: CCC/DUO tables by direct loops over fields, straight from spec/ccc.md section 2.2.

Slow (Python over vectors, NumPy over fields) and obviously right; every fast path is tested against it.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .formulas import Metric


def allele_copies(code: np.ndarray, metric: Metric) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per field of one vector: copies of allele 0, copies of allele 1, and whether the field is defined."""
    code = np.asarray(code, dtype=np.int64)
    if metric.name == "ccc":
        ones = (code & 1) + ((code >> 1) & 1)
    else:
        ones = code & 1
    zeros = metric.counted_bits - ones
    defined = code != 2 if metric.sparse else np.ones(code.shape, dtype=bool)
    return zeros, ones, defined


def reference_tables(codes: np.ndarray, way: int, metric: Metric):
    """``(index, tables, defined, ones)`` for every pair (triple) ``i < j (< k)`` in lexicographic order.

    ``index`` is int64 ``(n_items, way)``; ``tables`` int64 ``(n_items, 2, 2(, 2))``; ``defined`` and
    ``ones`` the per-vector marginals ``c`` and ``s1`` (over all of a vector's defined fields).
    """
    codes = np.asarray(codes)
    per_vector = [allele_copies(row, metric) for row in codes]
    defined = np.array([int(v[2].sum()) for v in per_vector], dtype=np.int64)
    ones = np.array([int(v[1][v[2]].sum()) for v in per_vector], dtype=np.int64)
    items = list(combinations(range(codes.shape[0]), way))
    tables = np.zeros((len(items),) + (2,) * way, dtype=np.int64)
    for item, members in enumerate(items):
        joint = np.logical_and.reduce([per_vector[x][2] for x in members])
        for bits in np.ndindex(*(2,) * way):
            term = joint.astype(np.int64)
            for x, bit in zip(members, bits):
                term = term * per_vector[x][bit]
            tables[(item,) + bits] = int(term.sum())
    index = np.array(items, dtype=np.int64).reshape(-1, way)
    return index, tables, defined, ones
