"""CCC/DUO products on the CPU through BLAS: exact integer tallies from floating-point GEMMs.

Allele counts are 0..2, so every product of a GEMM is an integer no larger than ``C**way * n_fields``; float32
holds such sums exactly below 2**24 and float64 below 2**53 (:func:`exact_float`), and the result is rounded
back to int64. BLAS runs on all the cores NumPy's BLAS is allowed.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
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


# Below this many pairs a block's values stay with NumPy (:func:`seqcompare.ccc.formulas.values`), unless Numba
# has already started: its start costs more than NumPy takes for them.
COMPILED_VALUES_MIN_PAIRS = 1_000_000


def values_2way(table: np.ndarray, defined: list, ones: list, metric: Metric) -> np.ndarray:
    """2-way values of ``table`` (int64 ``(n, 2, 2)``), bit for bit those of
    :func:`seqcompare.ccc.formulas.values`, by one compiled pass instead of NumPy's dozens of whole-array
    temporaries (2.2 s of a 4,294-SNP run's 5.6 s on 2 cores); ``defined``/``ones`` are each operand's ``c``
    and ``s1`` per pair. Small blocks, and Numba not yet started, go to NumPy."""
    from .._jit import compiler_started
    from .formulas import values

    n = table.shape[0]
    if n < COMPILED_VALUES_MIN_PAIRS and not (compiler_started() and n >= 10_000):
        return values(table, defined, ones, metric)
    c0, c1, s0, s1 = (np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype=np.int64), (n,)))
                      for x in (defined[0], defined[1], ones[0], ones[1]))  # fmt: skip
    out = np.empty((n, 2, 2), dtype=np.float64)
    _values_2way(np.ascontiguousarray(table, dtype=np.int64).reshape(n, 4), c0, c1, s0, s1, metric.counted_bits,
                 float(metric.multiplier), float(metric.param), metric.sparse, out.reshape(n, 4))  # fmt: skip
    return out


def upper_pair_tables(block: np.ndarray, first_row: int, counted_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """``(index, tables)`` of the pairs ``(i, j)``, ``j > i``, of a block of 2-way products (int64 ``(rows, cols,
    4)`` whose row ``i`` and column ``j`` are both vector ``first_row + i`` / ``first_row + j``), in row-major
    order: ``index`` int64 ``(n, 2)``, ``tables`` int64 ``(n, 2, 2)`` as :func:`seqcompare.ccc.formulas.tables`
    makes them. Large blocks take one compiled pass instead of a mask, a gather and the signed sums in NumPy."""
    from .._jit import compiler_started
    from .formulas import _signs, tables

    rows, cols = block.shape[:2]
    n_pairs = sum(max(0, cols - 1 - i) for i in range(rows))
    if n_pairs < COMPILED_VALUES_MIN_PAIRS and not (compiler_started() and n_pairs >= 10_000):
        i, j = np.nonzero(np.arange(cols)[None, :] > np.arange(rows)[:, None])
        return np.stack([i + first_row, j + first_row], axis=1), tables(block[i, j], 2, counted_bits)
    coefficients = np.zeros((4, 4), dtype=np.int64)
    for entry, terms in enumerate(_signs(2, counted_bits)):
        for coefficient, subset in terms:
            coefficients[entry, subset] += coefficient
    index = np.empty((n_pairs, 2), dtype=np.int64)
    table = np.empty((n_pairs, 2, 2), dtype=np.int64)
    _upper_pair_tables(np.ascontiguousarray(block, dtype=np.int64), first_row, coefficients, index,
                       table.reshape(n_pairs, 4))  # fmt: skip
    return index, table


@jit(reads=("block", "coefficients"))
def _upper_pair_tables(block, first_row, coefficients, index, table):
    p = 0
    for i in range(block.shape[0]):
        for j in range(i + 1, block.shape[1]):
            index[p, 0] = first_row + i
            index[p, 1] = first_row + j
            for entry in range(4):
                total = np.int64(0)
                for subset in range(4):
                    total += coefficients[entry, subset] * block[i, j, subset]
                table[p, entry] = total
            p += 1


# error_model="numpy": a division by zero gives inf or NaN, as in NumPy (such values are then zeroed), instead
# of raising.
@jit(reads=("table", "c0", "c1", "s0", "s1"), error_model="numpy")
def _values_2way(table, c0, c1, s0, s1, counted, multiplier, gamma, sparse, out):
    """Each operation of :func:`seqcompare.ccc.formulas.values` for ``way == 2``, in its order."""
    inv_c = 1.0 / counted
    inv_c_squared = 1.0 / (counted * counted)
    for p in range(table.shape[0]):
        total = table[p, 0] + table[p, 1] + table[p, 2] + table[p, 3]
        if sparse:
            f_ci, f_cj, f_cij = np.float64(c0[p]), np.float64(c1[p]), np.float64(total)
            c_min, c_max = min(f_ci, f_cj), max(f_ci, f_cj)
            recip = 1.0 / (c_min * c_max * f_cij)
            recip_0 = f_cj * f_cij * recip
            recip_1 = f_ci * f_cij * recip
            recip_sum = c_min * c_max * recip
        else:
            recip_0 = 1.0 / c0[p]
            recip_1 = recip_0
            recip_sum = inv_c_squared * recip_0
        zero = (sparse and total == 0) or c0[p] == 0 or c1[p] == 0
        for entry in range(4):
            bit_0, bit_1 = entry >> 1, entry & 1
            f_0 = (inv_c * recip_0) * (s0[p] if bit_0 else counted * c0[p] - s0[p])
            f_1 = (inv_c * recip_1) * (s1[p] if bit_1 else counted * c1[p] - s1[p])
            value = multiplier * (recip_sum * table[p, entry])
            if f_0 != f_0 or f_1 != f_1:  # np.minimum and np.maximum propagate NaN
                low = high = np.nan
            elif f_0 <= f_1:
                low, high = f_0, f_1
            else:
                low, high = f_1, f_0
            value = value * (1.0 - gamma * low)
            value = value * (1.0 - gamma * high)
            out[p, entry] = 0.0 if zero else value
