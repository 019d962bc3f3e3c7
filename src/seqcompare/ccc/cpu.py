"""CCC/DUO products on the CPU through BLAS: exact integer tallies from floating-point GEMMs.

Allele counts are 0..2, so every product of a GEMM is an integer no larger than ``C**way * n_fields``; float32
holds such sums exactly below 2**24 and float64 below 2**53 (:func:`exact_float`), and the result is rounded
back to int64. BLAS runs on all the cores NumPy's BLAS is allowed.
"""

from __future__ import annotations

import numpy as np

from .formulas import Metric, max_tally


def exact_float(n_fields: int, way: int, metric: Metric):
    """The narrowest float type whose GEMMs are exact for these products."""
    largest = max_tally(n_fields, way, metric)
    if largest < 2**24:
        return np.float32
    if largest < 2**53:
        return np.float64
    raise ValueError(f"{n_fields} fields: tallies up to {largest} are beyond exact floating-point GEMMs")


def _gemm(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return np.rint(left @ right.T).astype(np.int64)


class CpuProducts:
    """Products ``T(S)`` of row blocks (2-way) or pivots (3-way); operands converted to floats once."""

    def __init__(self, a: np.ndarray, d: np.ndarray, metric: Metric, way: int):
        self.metric = metric
        self.way = way
        n_fields = a.shape[1]
        dtype = exact_float(n_fields, way, metric)
        self.a = a.astype(dtype)
        self.d = d.astype(dtype) if metric.sparse else None
        self.n_fields = n_fields
        self.ones = a.sum(axis=1, dtype=np.int64)
        self._pair_aa = None

    def pairs(self, rows: slice, cols: slice) -> np.ndarray:
        """``(len(rows), len(cols), 4)`` int64: products dd, da, ad, aa (S bit 1: the row uses ``a``)."""
        a, d = self.a, self.d
        aa = _gemm(a[rows], a[cols])
        out = np.empty(aa.shape + (4,), dtype=np.int64)
        out[..., 3] = aa
        if d is None:
            out[..., 0] = self.n_fields
            out[..., 1] = self.ones[cols][None, :]
            out[..., 2] = self.ones[rows][:, None]
        else:
            out[..., 0] = _gemm(d[rows], d[cols])
            out[..., 1] = _gemm(d[rows], a[cols])
            out[..., 2] = _gemm(a[rows], d[cols])
        return out

    def pivot(self, i: int) -> np.ndarray:
        """``(n - i - 1, n - i - 1, 8)`` int64 products of triples ``(i, j, k)`` for ``j, k > i`` (all of
        the block; callers keep ``j < k``). S bits: 4 = ``i`` uses ``a``, 2 = ``j``, 1 = ``k``."""
        a, d = self.a, self.d
        rest = slice(i + 1, a.shape[0])
        size = a.shape[0] - i - 1
        out = np.empty((size, size, 8), dtype=np.int64)
        if d is None:
            if self._pair_aa is None:
                self._pair_aa = _gemm(a, a)
            aa = self._pair_aa
            out[..., 7] = _gemm(a[rest] * a[i], a[rest])
            out[..., 6] = aa[i, rest][:, None]  # a_i a_j d_k
            out[..., 5] = aa[i, rest][None, :]  # a_i d_j a_k
            out[..., 3] = aa[rest, rest]  # d_i a_j a_k
            out[..., 4] = self.ones[i]
            out[..., 2] = self.ones[rest][:, None]
            out[..., 1] = self.ones[rest][None, :]
            out[..., 0] = self.n_fields
            return out
        for first_bit, first in ((4, a[i]), (0, d[i])):
            for second_bit, second in ((2, a[rest]), (0, d[rest])):
                left = second * first
                out[..., first_bit | second_bit | 1] = _gemm(left, a[rest])
                out[..., first_bit | second_bit] = _gemm(left, d[rest])
        return out
