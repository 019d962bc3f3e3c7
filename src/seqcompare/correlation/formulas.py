"""CoMet's CCC and DUO, from exact integer tallies to values: the one implementation every path shares.

Every method (reference loops, CPU BLAS, GPU tensor cores) produces the same integer *products* of allele
counts; this module turns them into 2x2 (2x2x2) tables and then into values with one fixed sequence of
float64 operations, so that values, thresholds and checksums agree bit for bit across methods. (The GPU's
on-device thresholding repeats the same sequence in CUDA with floating-point contraction off.)

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


def values(table: np.ndarray, defined: list, ones: list, metric: Metric) -> np.ndarray:
    """CCC/DUO values (float64) of tables ``[..., 2, 2(, 2)]`` with each operand's marginals.

    Parameters
    ----------
    table : int array
        Exact tallies, entry index = allele bits in operand order.
    defined, ones : lists of int arrays (one per operand, broadcastable to ``table.shape[:-way]``)
        ``c`` (defined fields) and ``s1`` (allele-1 copies over them) of each operand.

    Notes
    -----
    ``value = M * f_xyz * (1 - g f_lo) * (1 - g f_mid) * (1 - g f_hi)``, multiplied left to right, with the
    operands' frequencies sorted ascending (CoMet's rule, which makes values symmetric bit for bit);
    0 where an operand has no defined field or the table is empty.
    """
    way = len(defined)
    table = np.asarray(table, dtype=np.int64)
    batch = table.shape[:-way]
    total = table.reshape(batch + (1 << way,)).sum(axis=-1)
    C = float(metric.counted_bits)
    gamma = float(metric.param)
    out = np.empty(table.shape, dtype=np.float64)
    for bits in product((0, 1), repeat=way):
        frequencies = []
        for x, bit in enumerate(bits):
            c = np.broadcast_to(np.asarray(defined[x], dtype=np.int64), batch)
            s1 = np.broadcast_to(np.asarray(ones[x], dtype=np.int64), batch)
            s = s1 if bit else metric.counted_bits * c - s1
            with np.errstate(divide="ignore", invalid="ignore"):
                frequencies.append(s / (C * c))
        frequencies = _sorted(frequencies)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(metric.multiplier) * (table[(...,) + bits] / total)
        for f in frequencies:
            value = value * (1.0 - gamma * f)
        zero = total == 0
        for x in range(way):
            zero = zero | (np.broadcast_to(np.asarray(defined[x]), batch) == 0)
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
