"""A synthetic CCC/DUO problem with results in closed form (CoMet's ``--problem_type analytic`` idea).

The fields are shuffled and dealt into a few groups; within a group every vector is constant, with a code
that depends on the vector and the group through a cheap formula. Any tally is then a sum over groups of
(group size) x (product of per-group counts), computed without looking at the fields: a check of a whole run,
exact, that costs O(groups) per pair or triple instead of O(fields).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .formulas import Metric, counts

GROUPS = 8


def _group_codes(n_vectors: int, metric: Metric) -> np.ndarray:
    """The code of vector ``i`` in group ``g``: a walk through the codes at a vector- and group-dependent
    stride, so that pairs and triples see varied tables."""
    alphabet = {("ccc", True): [0, 1, 3, 2], ("ccc", False): [0, 1, 3, 2], ("duo", True): [0, 1, 2],
                ("duo", False): [0, 1]}[(metric.name, metric.sparse)]  # fmt: skip
    i = np.arange(n_vectors)[:, None]
    g = np.arange(GROUPS)[None, :]
    return np.asarray(alphabet, dtype=np.uint8)[(i * (2 * g + 1) + g * g + i // 3) % len(alphabet)]


def analytic_problem(n_vectors: int, n_fields: int, metric: Metric, seed: int = 0):
    """``(codes, group_of_field)``: codes ``(n_vectors, n_fields)`` uint8 of the analytic problem."""
    group_of_field = np.random.default_rng(seed).permutation(n_fields) % GROUPS
    return _group_codes(n_vectors, metric)[:, group_of_field], group_of_field


def closed_form_products(index: np.ndarray, n_vectors: int, group_of_field: np.ndarray, metric: Metric,
                         way: int) -> np.ndarray:  # fmt: skip
    """Products ``T(S)`` (as :func:`seqcompare.ccc.formulas.tables` takes them) of items ``index``, from the
    group sizes and per-group counts alone."""
    sizes = np.bincount(group_of_field, minlength=GROUPS).astype(np.int64)
    a, d = (x.astype(np.int64) for x in counts(_group_codes(n_vectors, metric), metric))
    out = np.empty((len(index), 1 << way), dtype=np.int64)
    for subset in range(1 << way):
        term = np.broadcast_to(sizes, (len(index), GROUPS)).copy()
        for x in range(way):
            uses_a = (subset >> (way - 1 - x)) & 1
            term *= (a if uses_a else d)[index[:, x]]
        out[:, subset] = term.sum(axis=1)
    return out


def all_items(n_vectors: int, way: int) -> np.ndarray:
    """Every pair (triple) ``i < j (< k)`` in lexicographic order."""
    return np.array(list(combinations(range(n_vectors), way)), dtype=np.int64).reshape(-1, way)
