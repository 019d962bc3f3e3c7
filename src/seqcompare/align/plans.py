"""The columns of a plan of pairs (target index, query index), recognised once so that the common large plans
(a database against one query; two sides paired in order) need no gather, search or upload of the plan's size."""

from __future__ import annotations

import numpy as np

# Columns are compared a block at a time, against a block made once: a plan of 2^20 pairs then allocates nothing
# of its size (fresh pages cost more than the comparison: on the H200's host the whole-array form took 13 ms of
# a 0.26 s search).
_BLOCK = 1 << 16
_COUNT = np.arange(_BLOCK, dtype=np.int64)


def _all_equal(values: np.ndarray, expected) -> bool:
    """Whether ``values[a:b] == expected(a, b)`` for every block ``a:b``, stopping at the first that differs."""
    for a in range(0, len(values), _BLOCK):
        b = min(a + _BLOCK, len(values))
        if not bool((values[a:b] == expected(a, b)).all()):
            return False
    return True


class PlanColumn:
    """One side's column of a plan: ``"order"`` (pair k takes series k, for every series), ``"fixed"`` (every
    pair takes one series: the query of a search) or ``"listed"``.

    Parameters
    ----------
    values : ndarray
        The column: a series index per pair.
    n_series : int
        The series on that side.
    """

    def __init__(self, values: np.ndarray, n_series: int):
        self.values = values
        if len(values) and values[0] == values[-1] and _all_equal(values, lambda a, b: values[0]):
            self.kind = "fixed"
        elif len(values) == n_series and _all_equal(values, lambda a, b: _COUNT[: b - a] + a):
            self.kind = "order"
        else:
            self.kind = "listed"

    def take(self, lengths: np.ndarray) -> np.ndarray:
        """``lengths[values]``: a view (read-only) for a fixed column or one in order."""
        if self.kind == "fixed":
            return np.broadcast_to(lengths[self.values[:1]], self.values.shape)
        return lengths if self.kind == "order" else lengths[self.values]

    def on_device(self, cupy, listed_dev):
        """The column on the GPU: made there where it is fixed or in order, else the next of ``listed_dev``
        (the listed columns, uploaded)."""
        if self.kind == "fixed":
            return cupy.full(len(self.values), int(self.values[0]), dtype=cupy.int64)
        if self.kind == "order":
            return cupy.arange(len(self.values), dtype=cupy.int64)
        return next(listed_dev)


def uniform_step(offsets: np.ndarray):
    """The one length ``L`` of every series, where ``offsets`` are ``0, L, 2L, ...`` (as from a 2-D array),
    else None."""
    if offsets.size < 2 or offsets[0] != 0:
        return None
    step = int(offsets[1])
    if int(offsets[-1]) != step * (offsets.size - 1):
        return None
    return step if _all_equal(offsets, lambda a, b: (_COUNT[: b - a] + a) * step) else None


def series_lengths(offsets: np.ndarray) -> np.ndarray:
    """``np.diff(offsets)``: as a read-only broadcast of the one length where every series has it (as from a
    2-D array), so that nothing later passes over it."""
    step = uniform_step(offsets)
    if step is None:
        return np.diff(offsets)
    return np.broadcast_to(np.int64(step), (offsets.size - 1,))


def pair_lengths(plan: np.ndarray, t_off: np.ndarray, q_off: np.ndarray) -> tuple:
    """Each pair's target and query lengths (read-only; views where a column is fixed or in order)."""
    return tuple(PlanColumn(plan[:, side], off.size - 1).take(series_lengths(off))
                 for side, off in enumerate((t_off, q_off)))  # fmt: skip


def whole_search_targets(plan: np.ndarray, n_queries: int) -> int:
    """The number of targets T when ``plan`` is a whole search's (:func:`~seqcompare.align.api.every_pair`'s
    layout: query by query, each against targets 0 .. T - 1 in order, all ``n_queries`` queries), else 0."""
    k = len(plan)
    if not n_queries or not k or k % n_queries:
        return 0
    targets = k // n_queries
    grid = plan.reshape(n_queries, targets, 2)
    in_order = np.arange(targets, dtype=np.int64)
    rows = max(1, _BLOCK // targets)  # a block of whole queries at a time: temporaries of about _BLOCK values
    for first in range(0, n_queries, rows):
        block = grid[first : first + rows]
        if not ((block[:, :, 0] == in_order).all() and (block[:, :, 1] == _COUNT[: len(block), None] + first).all()):
            return 0
    return targets
