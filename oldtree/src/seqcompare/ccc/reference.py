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


def reference_values(table, defined: list, ones: list, metric: Metric) -> list:
    """One item's values, scalar by scalar, as CoMet's double-precision build computes them (spec/ccc.md 2.3).

    Written apart from :mod:`.formulas` (plain Python floats, one entry at a time) so that it can judge the fast
    paths: it must agree with them bit for bit.

    Parameters
    ----------
    table : array of int, shape (2, 2) or (2, 2, 2)
    defined, ones : list of int
        Each operand's defined fields ``c`` and allele-1 copies ``s1`` over them.
    metric : Metric
        Only its constants are read.

    Returns
    -------
    list of float
        The ``2**way`` values, entries in allele-bit order (``[00, 01, 10, 11]``...).
    """
    way = len(defined)
    flat = [int(x) for x in np.asarray(table).reshape(-1)]
    total = sum(flat)
    counted = 2 if metric.name == "ccc" else 1
    c = [int(x) for x in defined]
    s1 = [int(x) for x in ones]
    if any(x == 0 for x in c) or (metric.sparse and total == 0):
        return [0.0] * len(flat)
    if metric.sparse and way == 2:
        # One division per pair; both per-vector reciprocals and the joint one derive from it.
        ci, cj, cij = float(c[0]), float(c[1]), float(total)
        low, high = min(ci, cj), max(ci, cj)
        shared = 1.0 / (low * high * cij)
        recips = [cj * cij * shared, ci * cij * shared]
        joint = low * high * shared
    elif metric.sparse:
        recips = [1.0 / x for x in c]
        joint = 1.0 / total
    else:
        recips = [1.0 / c[0]] * way
        joint = (1.0 / counted**way) * (1.0 / c[0])
    out = []
    for entry, tally in enumerate(flat):
        bits = [(entry >> (way - 1 - x)) & 1 for x in range(way)]
        freqs = []
        for x, bit in enumerate(bits):
            copies = s1[x] if bit else counted * c[x] - s1[x]
            freqs.append(((1.0 / counted) * recips[x]) * copies)
        value = float(metric.multiplier) * (joint * tally)
        for f in sorted(freqs):
            value = value * (1.0 - float(metric.param) * f)
        out.append(value)
    return out


def reference_ccc(codes: np.ndarray, way: int, metric: Metric):
    """The oracle's full result: ``(index, tables, values)`` for every item, from :func:`reference_tables` and
    :func:`reference_values` (``values`` float64 ``(n_items, 2, 2(, 2))``)."""
    index, tables, defined, ones = reference_tables(codes, way, metric)
    values = np.array([reference_values(t, [defined[x] for x in item], [ones[x] for x in item], metric)
                       for item, t in zip(index.tolist(), tables)], dtype=np.float64)  # fmt: skip
    return index, tables, values.reshape(tables.shape)


def reference_entries(index: np.ndarray, values: np.ndarray, way: int, by_class, combined=None):
    """The entries CoMet would keep: ``(index, bits, value)`` sorted by item then entry.

    An entry passes when its value, rounded to single precision, is greater than the threshold of its class
    (how many allele-1 bits it has); the combined threshold also keeps an item's all-0 and all-1 entries when
    both are positive and their single-precision sum is greater than it.
    """
    kept_index, kept_bits, kept_value = [], [], []
    for item, item_values in zip(np.asarray(index).tolist(), np.asarray(values).reshape(len(index), -1).tolist()):
        single = [np.float32(v) for v in item_values]
        low, high = single[0], single[-1]
        both = combined is not None and low > 0 and high > 0 and float(np.float32(low + high)) > combined
        for entry, value in enumerate(item_values):
            bits = [(entry >> (way - 1 - x)) & 1 for x in range(way)]
            passes = float(single[entry]) > by_class[sum(bits)]
            if both and entry in (0, len(item_values) - 1):
                passes = True
            if passes:
                kept_index.append(item)
                kept_bits.append(bits)
                kept_value.append(value)
    return (np.array(kept_index, dtype=np.int64).reshape(-1, way), np.array(kept_bits, dtype=np.int64).reshape(-1, way),
            np.array(kept_value, dtype=np.float64))  # fmt: skip
