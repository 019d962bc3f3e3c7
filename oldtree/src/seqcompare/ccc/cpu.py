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


# Below this many items (pairs or triples) in a whole problem, the tables and values of its blocks stay with
# NumPy (:mod:`seqcompare.ccc.formulas`) unless Numba has already started: Numba's start (about 0.4 s) costs
# what NumPy's passes take for about a million items.
COMPILED_MIN_ITEMS = 1_000_000


def compiled_pays(problem_items: int) -> bool:
    """Whether a problem of ``problem_items`` items takes the compiled passes for its blocks."""
    from .._jit import compiler_started

    return problem_items >= COMPILED_MIN_ITEMS or compiler_started()


def _coefficients(way: int, counted_bits: int) -> np.ndarray:
    """``[entry, subset]``: the signed sums of :func:`seqcompare.ccc.formulas.tables` as a matrix."""
    from .formulas import _signs

    out = np.zeros((1 << way, 1 << way), dtype=np.int64)
    for entry, terms in enumerate(_signs(way, counted_bits)):
        for coefficient, subset in terms:
            out[entry, subset] += coefficient
    return out


def block_items(block: np.ndarray, first: int, way: int, counted_bits: int, compiled: bool):
    """``(index, tables)`` of one block of products, in row-major order, as :func:`seqcompare.ccc.formulas.tables`
    makes the tables (int64 ``(n, 2, 2(, 2))``).

    2-way: ``block`` is ``(rows, cols, 4)``, row ``i`` and column ``j`` being vectors ``first + i`` and
    ``first + j``; its items are the pairs ``j > i``. 3-way: ``block`` is pivot ``first``'s ``(size, size, 8)``;
    its items are the triples ``(first, first + 1 + j, first + 1 + k)``, ``j < k``. With ``compiled``, one
    compiled pass writes both, instead of a mask, a gather and the signed sums in NumPy (a third of a 2-way
    run's time on 2 cores)."""
    from .formulas import tables

    rows, cols = block.shape[:2]
    if way == 2:
        m = min(rows, cols)  # rows past the last column have no pairs
        n_items = m * cols - m * (m + 1) // 2
    else:
        n_items = rows * (rows - 1) // 2
    if not compiled:
        if way == 2:
            i, j = np.nonzero(np.arange(cols)[None, :] > np.arange(rows)[:, None])
            return np.stack([i + first, j + first], axis=1), tables(block[i, j], 2, counted_bits)
        j, k = np.triu_indices(rows, 1)
        index = np.stack([np.full(j.size, first), j + first + 1, k + first + 1], axis=1)
        return index, tables(block[j, k], 3, counted_bits)
    index = np.empty((n_items, way), dtype=np.int64)
    table = np.empty((n_items,) + (2,) * way, dtype=np.int64)
    _upper_tables(np.ascontiguousarray(block, dtype=np.int64), first, _coefficients(way, counted_bits), index,
                  table.reshape(n_items, 1 << way))  # fmt: skip
    return index, table


@jit(reads=("block", "coefficients"))
def _upper_tables(block, first, coefficients, index, table):
    """Index and tables of the items ``j > i`` of a block (the layouts of :func:`block_items`): pairs
    ``(first + i, first + j)`` when ``index`` has two columns, triples ``(first, first + 1 + i, first + 1 + j)``
    when it has three."""
    triples = index.shape[1] == 3
    entries = coefficients.shape[0]
    p = 0
    for i in range(block.shape[0]):
        for j in range(i + 1, block.shape[1]):
            if triples:
                index[p, 0] = first
                index[p, 1] = first + 1 + i
                index[p, 2] = first + 1 + j
            else:
                index[p, 0] = first + i
                index[p, 1] = first + j
            for entry in range(entries):
                total = np.int64(0)
                for subset in range(entries):
                    total += coefficients[entry, subset] * block[i, j, subset]
                table[p, entry] = total
            p += 1


def block_values(table: np.ndarray, defined: list, ones: list, metric: Metric, compiled: bool) -> np.ndarray:
    """Values of ``table`` (int64 ``(n, 2, 2(, 2))``), bit for bit those of :func:`seqcompare.ccc.formulas.values`;
    ``defined``/``ones`` are each operand's ``c`` and ``s1`` per item. With ``compiled``, one compiled pass
    instead of NumPy's dozens of whole-array temporaries (2.2 s of a 4,294-SNP 2-way run's 5.6 s on 2 cores)."""
    from .formulas import values

    way = len(defined)
    if not compiled:
        return values(table, defined, ones, metric)
    n = table.shape[0]
    c = np.ascontiguousarray(np.stack([np.broadcast_to(np.asarray(x, dtype=np.int64), (n,)) for x in defined]))
    s = np.ascontiguousarray(np.stack([np.broadcast_to(np.asarray(x, dtype=np.int64), (n,)) for x in ones]))
    out = np.empty(table.shape, dtype=np.float64)
    kernel = _values_2way if way == 2 else _values_3way
    kernel(np.ascontiguousarray(table, dtype=np.int64).reshape(n, 1 << way), c, s, metric.counted_bits,
           float(metric.multiplier), float(metric.param), metric.sparse, out.reshape(n, 1 << way))  # fmt: skip
    return out


@jit
def _nan_min(a, b):
    """``np.minimum`` of two floats: NaN if either is."""
    if a != a or b != b:
        return np.nan
    return a if a <= b else b


@jit
def _nan_max(a, b):
    """``np.maximum`` of two floats: NaN if either is."""
    if a != a or b != b:
        return np.nan
    return a if a >= b else b


# error_model="numpy": a division by zero gives inf or NaN, as in NumPy (such values are then zeroed), instead
# of raising.
@jit(reads=("table", "c", "s"), error_model="numpy")
def _values_2way(table, c, s, counted, multiplier, gamma, sparse, out):
    """Each operation of :func:`seqcompare.ccc.formulas.values` for ``way == 2``, in its order."""
    inv_c = 1.0 / counted
    inv_c_squared = 1.0 / (counted * counted)
    for p in range(table.shape[0]):
        total = table[p, 0] + table[p, 1] + table[p, 2] + table[p, 3]
        if sparse:
            f_ci, f_cj, f_cij = np.float64(c[0, p]), np.float64(c[1, p]), np.float64(total)
            c_min, c_max = min(f_ci, f_cj), max(f_ci, f_cj)
            recip = 1.0 / (c_min * c_max * f_cij)
            recip_0 = f_cj * f_cij * recip
            recip_1 = f_ci * f_cij * recip
            recip_sum = c_min * c_max * recip
        else:
            recip_0 = 1.0 / c[0, p]
            recip_1 = recip_0
            recip_sum = inv_c_squared * recip_0
        zero = (sparse and total == 0) or c[0, p] == 0 or c[1, p] == 0
        for entry in range(4):
            bit_0, bit_1 = entry >> 1, entry & 1
            f_0 = (inv_c * recip_0) * (s[0, p] if bit_0 else counted * c[0, p] - s[0, p])
            f_1 = (inv_c * recip_1) * (s[1, p] if bit_1 else counted * c[1, p] - s[1, p])
            value = multiplier * (recip_sum * table[p, entry])
            value = value * (1.0 - gamma * _nan_min(f_0, f_1))
            value = value * (1.0 - gamma * _nan_max(f_0, f_1))
            out[p, entry] = 0.0 if zero else value


@jit(reads=("table", "c", "s"), error_model="numpy")
def _values_3way(table, c, s, counted, multiplier, gamma, sparse, out):
    """Each operation of :func:`seqcompare.ccc.formulas.values` for ``way == 3``, in its order."""
    inv_c = 1.0 / counted
    inv_c_cubed = 1.0 / (counted * counted * counted)
    recip = np.empty(3, np.float64)
    f = np.empty(3, np.float64)
    for p in range(table.shape[0]):
        total = np.int64(0)
        for entry in range(8):
            total += table[p, entry]
        if sparse:
            for x in range(3):
                recip[x] = 1.0 / c[x, p]
            recip_sum = 1.0 / total
        else:
            recip_m = 1.0 / c[0, p]
            for x in range(3):
                recip[x] = recip_m
            recip_sum = inv_c_cubed * recip_m
        zero = (sparse and total == 0) or c[0, p] == 0 or c[1, p] == 0 or c[2, p] == 0
        for entry in range(8):
            for x in range(3):
                bit = (entry >> (2 - x)) & 1
                f[x] = (inv_c * recip[x]) * (s[x, p] if bit else counted * c[x, p] - s[x, p])
            value = multiplier * (recip_sum * table[p, entry])
            low, high = _nan_min(f[0], f[1]), _nan_max(f[0], f[1])
            value = value * (1.0 - gamma * _nan_min(low, f[2]))
            value = value * (1.0 - gamma * _nan_max(low, _nan_min(high, f[2])))
            value = value * (1.0 - gamma * _nan_max(high, f[2]))
            out[p, entry] = 0.0 if zero else value
