"""CoMet's CCC and DUO, from exact integer tallies to values: the one implementation every path shares.

Every method (reference loops, CPU BLAS, GPU tensor cores) produces the same integer *products* of allele
counts; this module turns them into 2x2 (2x2x2) tables and then into values with CoMet's own sequence of
float64 operations (its ``formulas.hh``: reciprocals, then products, in its order), so that values, thresholds
and checksums agree bit for bit across methods and with CoMet's double-precision build. (The GPU's on-device
thresholding repeats the same sequence in CUDA with floating-point contraction off.)

Counts (spec/ccc.md 2.1): a vector's field ``f`` holds ``n1(f)`` copies of allele 1 and ``n0 = C - n1`` of
allele 0, where C (counted bits per element) is 2 for CCC and 1 for DUO. With ``a = n1`` (0 where the field is
missing) and ``d = 1`` where the field is defined (sparse mode; always 1 otherwise), every table entry is a
signed sum of products of ``a`` and ``d``: for 2-way, ``r11 = a.a'``, ``r10 = C a.d' - r11``,
``r01 = C d.a' - r11``, ``r00 = C^2 d.d' - C a.d' - C d.a' + r11``; 3-way likewise over the eight products
``T(S) = sum_f prod_{x in S} a_x prod_{x not in S} d_x``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

METRICS = ("ccc", "duo")
DEFAULT_MULTIPLIERS = {"ccc": 4.5, "duo": 4.0}
DEFAULT_PARAM = 2.0 / 3.0
# The largest exact tally the GPU's 32-bit accumulators hold; CoMet refuses at 2**26 (26-bit packed tallies).
MAX_EXACT_TALLY = 2**31 - 1


@dataclass(frozen=True)
class Metric:
    """Which coefficient, and its constants.

    Parameters
    ----------
    name : {"ccc", "duo"}
        CCC counts both allele bits of a diploid genotype (C = 2); DUO counts one (C = 1).
    sparse : bool
        Code 2 (``10``) is missing data; otherwise it counts as one copy of each allele (CoMet's non-sparse
        mode).
    multiplier : float, optional
        CoMet's ``--ccc_multiplier`` (default 9/2) or ``--duo_multiplier`` (default 4).
    param : float
        CoMet's ``--ccc_param`` gamma (default 2/3), used by both.
    """

    name: str = "ccc"
    sparse: bool = True
    multiplier: float | None = None
    param: float = DEFAULT_PARAM

    def __post_init__(self):
        if self.name not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {self.name!r}")
        if self.multiplier is None:
            object.__setattr__(self, "multiplier", DEFAULT_MULTIPLIERS[self.name])

    @property
    def counted_bits(self) -> int:
        """C: allele copies per field (2 for CCC, 1 for DUO)."""
        return 2 if self.name == "ccc" else 1


def counts(codes: np.ndarray, metric: Metric) -> tuple[np.ndarray, np.ndarray]:
    """``(a, d)`` as uint8 arrays shaped like ``codes``: allele-1 copies (0 where missing) and definedness.

    CCC counts both bits of the 2-bit code (``popcount``: 00 -> 0, 01 -> 1, 11 -> 2, and 10 -> 1 when not
    sparse); DUO counts the low bit. In sparse mode code 2 is missing: ``a = d = 0`` there.
    """
    codes = np.asarray(codes, dtype=np.uint8)
    low = codes & 1
    a = (low + (codes >> 1)).astype(np.uint8) if metric.name == "ccc" else low.astype(np.uint8)
    if not metric.sparse:
        return a, np.ones_like(codes, dtype=np.uint8)
    defined = (codes != 2).astype(np.uint8)
    return a * defined, defined


def marginals(a: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per vector: defined fields ``c`` and allele-1 copies ``s1`` (int64), over all its defined fields."""
    return d.sum(axis=-1, dtype=np.int64), a.sum(axis=-1, dtype=np.int64)


def _signs(way: int, counted_bits: int):
    """For each table entry (bits, allele-1 = 1) the signed products: ``[(coefficient, subset_mask)]``, where
    bit x of subset_mask set means the product uses ``a`` of operand x, else ``d``."""
    entries = []
    for bits in product((0, 1), repeat=way):
        terms = []
        for subset in range(1 << way):
            chosen = [(subset >> (way - 1 - x)) & 1 for x in range(way)]
            if any(bit and not pick for bit, pick in zip(bits, chosen)):
                continue
            # (C d - a) for a 0 bit: choosing a contributes -1, d contributes C.
            coefficient = 1
            for bit, pick in zip(bits, chosen):
                if not bit:
                    coefficient *= -1 if pick else counted_bits
            terms.append((coefficient, subset))
        entries.append(terms)
    return entries


def tables(products: np.ndarray, way: int, counted_bits: int) -> np.ndarray:
    """Tables from products: ``products[..., S]`` is ``T(S)`` (S's bit ``way-1-x`` set = operand x uses
    ``a``); returns int64 ``[..., 2, 2]`` (2-way) or ``[..., 2, 2, 2]``, entry index = allele bits in operand
    order."""
    products = np.asarray(products, dtype=np.int64)
    out = np.zeros(products.shape[:-1] + (1 << way,), dtype=np.int64)
    for entry, terms in enumerate(_signs(way, counted_bits)):
        for coefficient, subset in terms:
            out[..., entry] += coefficient * products[..., subset]
    return out.reshape(products.shape[:-1] + (2,) * way)


def vector_frequencies(defined: np.ndarray, ones: np.ndarray, metric: Metric, way: int):
    """The per-vector parts of CoMet's values: ``(freq, recip_sum)``.

    ``freq[v, b]`` is vector ``v``'s frequency of allele ``b``, ``f = ((1 / C) * recip_c) * s_b`` with
    ``s_1 = ones``, ``s_0 = C c - ones`` and ``recip_c = 1 / c`` (non-sparse: ``1 / m``), exactly as CoMet's
    ``formulas.hh`` computes it; NaN where ``c = 0``. ``recip_sum`` is the factor that turns a tally into the
    joint frequency where it does not depend on the item: ``(1 / C**way) * (1 / m)`` in non-sparse mode; None in
    sparse mode (it is then per item, see :func:`values`). 2-way sparse frequencies are per pair instead (CoMet
    derives both reciprocals from one shared division): ``freq`` is None there.
    """
    c = np.asarray(defined, dtype=np.int64)
    s1 = np.asarray(ones, dtype=np.int64)
    counted = metric.counted_bits
    inv_c = 1.0 / counted
    with np.errstate(divide="ignore", invalid="ignore"):
        recip_c = 1.0 / c
        if metric.sparse and way == 2:
            return None, None
        freq = np.stack([(inv_c * recip_c) * (counted * c - s1), (inv_c * recip_c) * s1], axis=-1)
        if metric.sparse:
            return freq, None
        recip_m = recip_c.flat[0] if c.size else 0.0  # non-sparse: every vector has m defined fields
        return freq, (1.0 / counted**way) * recip_m


def values(table: np.ndarray, defined: list, ones: list, metric: Metric) -> np.ndarray:
    """CCC/DUO values (float64) of tables ``[..., 2, 2(, 2)]`` with each operand's marginals, bit for bit as
    CoMet's double-precision build computes them.

    Parameters
    ----------
    table : int array
        Exact tallies, entry index = allele bits in operand order.
    defined, ones : lists of int arrays (one per operand, broadcastable to ``table.shape[:-way]``)
        ``c`` (defined fields; ``m`` for every vector in non-sparse mode) and ``s1`` (allele-1 copies over them)
        of each operand.

    Notes
    -----
    ``value = M * f_xyz * (1 - g f_lo) * (1 - g f_mid) * (1 - g f_hi)``, multiplied left to right, with the
    operands' frequencies sorted ascending (CoMet's rule, which makes values symmetric bit for bit); 0 where an
    operand has no defined field or the table is empty. The frequencies use CoMet's reciprocals
    (``formulas.hh``): ``f_x = ((1 / C) * recip_x) * s_x`` and ``f_xyz = recip_sum * r``, where

    - 2-way sparse: one division per pair, ``recip = 1 / (c_min * c_max * total)``, then
      ``recip_i = c_j * total * recip``, ``recip_j = c_i * total * recip``, ``recip_sum = c_min * c_max * recip``;
    - 3-way sparse: ``recip_x = 1 / c_x`` and ``recip_sum = 1 / total``;
    - non-sparse: ``recip_x = 1 / m`` and ``recip_sum = (1 / C**way) * (1 / m)``.
    """
    way = len(defined)
    table = np.asarray(table, dtype=np.int64)
    batch = table.shape[:-way]
    total = table.reshape(batch + (1 << way,)).sum(axis=-1)
    counted = metric.counted_bits
    inv_c = 1.0 / counted
    gamma = float(metric.param)
    c = [np.broadcast_to(np.asarray(defined[x], dtype=np.int64), batch) for x in range(way)]
    s1 = [np.broadcast_to(np.asarray(ones[x], dtype=np.int64), batch) for x in range(way)]
    with np.errstate(divide="ignore", invalid="ignore"):
        if metric.sparse and way == 2:
            f_ci, f_cj, f_cij = c[0].astype(np.float64), c[1].astype(np.float64), total.astype(np.float64)
            c_min, c_max = np.minimum(f_ci, f_cj), np.maximum(f_ci, f_cj)
            recip = 1.0 / (c_min * c_max * f_cij)
            recip_c = [f_cj * f_cij * recip, f_ci * f_cij * recip]
            recip_sum = c_min * c_max * recip
        elif metric.sparse:
            recip_c = [1.0 / c[x] for x in range(way)]
            recip_sum = 1.0 / total
        else:
            recip_m = 1.0 / c[0]
            recip_c = [recip_m] * way
            recip_sum = (1.0 / counted**way) * recip_m
        zero = total == 0 if metric.sparse else np.zeros(batch, dtype=bool)
        for x in range(way):
            zero = zero | (c[x] == 0)
        out = np.empty(table.shape, dtype=np.float64)
        for bits in product((0, 1), repeat=way):
            frequencies = [(inv_c * recip_c[x]) * (s1[x] if bit else counted * c[x] - s1[x])
                           for x, bit in enumerate(bits)]  # fmt: skip
            value = float(metric.multiplier) * (recip_sum * table[(...,) + bits])
            for f in _sorted(frequencies):
                value = value * (1.0 - gamma * f)
            out[(...,) + bits] = np.where(zero, 0.0, value)
    return out


def _sorted(frequencies: list) -> list:
    """Ascending order, element-wise, without arithmetic (so the values are the operands themselves)."""
    if len(frequencies) == 2:
        a, b = frequencies
        return [np.minimum(a, b), np.maximum(a, b)]
    a, b, c = frequencies
    low, high = np.minimum(a, b), np.maximum(a, b)
    return [np.minimum(low, c), np.maximum(low, np.minimum(high, c)), np.maximum(high, c)]


def max_tally(n_fields: int, way: int, metric: Metric) -> int:
    """The largest value any tally or product can take: ``C**way * n_fields``."""
    return metric.counted_bits**way * n_fields
