"""The columns of a plan of pairs (target index, query index), recognised once so that the common large plans
(a database against one query; two sides paired in order) need no gather, search or upload of the plan's size."""

from __future__ import annotations

import numpy as np


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
        if len(values) and values[0] == values[-1] and (values == values[0]).all():
            self.kind = "fixed"
        elif len(values) == n_series and bool(np.array_equal(values, np.arange(n_series))):
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
