"""An order- and decomposition-independent checksum of CCC/DUO results, in the manner of CoMet's.

Each nonzero table entry contributes ``h(q(value) xor w(uid))`` to a sum modulo 2**64: ``q`` is the value in
fixed point (``round(value * 2**40)``, so values up to 2**23 are represented), ``w`` a 64-bit hash of the
entry's identity (the sorted vector indices and the allele bits in that order) and ``h`` the splitmix64 mixer,
so that any change of any value or position changes the sum. Entries that are 0 or fail a threshold count as 0. Addition modulo 2**64 is commutative and associative, so the checksum does not depend on tile
sizes, on the order tiles finish in, on the method or on the device, only on the values, which every method
computes with the same float64 operations (:mod:`seqcompare.ccc.formulas`).
"""

from __future__ import annotations

import numpy as np

FIXED_POINT_BITS = 40
_MASK = (1 << 64) - 1


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def entry_weights(index: np.ndarray, way: int) -> np.ndarray:
    """``w`` of every entry of items ``index`` (``(n, way)``, sorted ascending per row): ``(n, 2**way)``."""
    with np.errstate(over="ignore"):
        h = np.zeros(index.shape[0], dtype=np.uint64)
        for x in range(way):
            h = _splitmix64(h + index[:, x].astype(np.uint64))
        entries = np.arange(1 << way, dtype=np.uint64)
        return _splitmix64(h[:, None] * np.uint64(1 << way) + entries[None, :])


def fixed_point(values: np.ndarray) -> np.ndarray:
    """``round(value * 2**40)`` as uint64 (negative and non-finite values are not produced by CCC)."""
    return np.rint(np.asarray(values, dtype=np.float64) * float(1 << FIXED_POINT_BITS)).astype(np.uint64)


class Checksum:
    """Accumulates the checksum of blocks of entries, in any order."""

    def __init__(self):
        self.total = 0
        self.value_sum = 0.0
        self.entries = 0

    def add(self, index: np.ndarray, values: np.ndarray, way: int, passed: np.ndarray | None = None) -> None:
        """Add items ``index`` (``(n, way)``) with their value tables ``(n, 2, 2(, 2))``; entries where
        ``passed`` is False count as 0."""
        flat = np.asarray(values, dtype=np.float64).reshape(len(index), 1 << way)
        if passed is not None:
            flat = np.where(np.asarray(passed).reshape(flat.shape), flat, 0.0)
        self.add_entries(index, flat, way)

    def add_entries(self, index: np.ndarray, flat_values: np.ndarray, way: int,
                    entry: np.ndarray | None = None) -> None:  # fmt: skip
        """Add single entries: ``flat_values[n]`` of entry number ``entry[n]`` (bits in operand order) of
        item ``index[n]``; or, with ``entry`` None, whole rows of ``2**way`` entries."""
        if len(index) == 0:
            return
        weights = entry_weights(np.asarray(index, dtype=np.int64), way)
        if entry is not None:
            weights = weights[np.arange(len(index)), np.asarray(entry, dtype=np.int64)]
        fixed = fixed_point(flat_values)
        with np.errstate(over="ignore"):
            mixed = np.where(fixed != 0, _splitmix64(fixed ^ weights), np.uint64(0))
            self.total = (self.total + int(np.sum(mixed, dtype=np.uint64))) & _MASK
        self.value_sum += float(np.sum(flat_values, dtype=np.float64))
        self.entries += int(np.count_nonzero(flat_values))

    def merge(self, other: Checksum) -> None:
        """Add another partial checksum (e.g. from another worker)."""
        self.total = (self.total + other.total) & _MASK
        self.value_sum += other.value_sum
        self.entries += other.entries

    def __str__(self) -> str:
        return f"{self.total:016x}"


_LCG_MODULUS = 714025  # CoMet's utils::randomize: (x * 4096 + 150889) mod 714025
_SIXTY_BITS = (1 << 60) - 1


def _randomize(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (x * np.uint64(4096) + np.uint64(150889)) % np.uint64(_LCG_MODULUS)


def _exact_sum_of_products(a: np.ndarray, b: np.ndarray) -> int:
    """``sum(a * b)`` as an exact Python integer, for uint64 ``a < 2**40`` and ``b < 2**64``: the products are
    split into 20- and 32-bit pieces whose sums cannot overflow 64 bits."""
    total = 0
    step = 1 << 28
    for lo in range(0, a.size, step):
        a_part, b_part = a[lo : lo + step], b[lo : lo + step]
        pieces_a = (a_part & np.uint64((1 << 20) - 1), a_part >> np.uint64(20))
        pieces_b = (b_part & np.uint64((1 << 32) - 1), b_part >> np.uint64(32))
        for x, piece_a in enumerate(pieces_a):
            for y, piece_b in enumerate(pieces_b):
                product = piece_a * piece_b  # < 2**52
                low = int(np.sum(product & np.uint64(0xFFFFFFFF), dtype=np.uint64))
                high = int(np.sum(product >> np.uint64(32), dtype=np.uint64))
                total += (low + (high << 32)) << (20 * x + 32 * y)
    return total


class CometChecksum:
    """CoMet's "metrics checksum", computed as CoMet's ``checksum.cc`` does, so that a run can be compared with a
    CoMet run of the same input at a glance.

    Each entry contributes ``q(value) * r(uid)``: ``q`` is ``value / 16`` in 60-bit fixed point (truncated), and
    ``r`` mixes the entry's identity with CoMet's linear congruential generator: the item's vectors in
    descending order, ``uid = (k * n + j) * n + i`` (2-way: ``j * n + i``), times the table size plus the entry's
    allele bits (least significant for the smallest vector). The sum is exact; it is printed as CoMet prints it,
    three 60-bit digits ``hi-mid-lo``. Entries that fail a threshold count as 0. The checksum is only defined for
    values up to 16 (CoMet's fixed-point range); larger values make it ``overflow``.

    Parameters
    ----------
    n_vectors : int
        SNPs in the whole problem (CoMet's ``num_vector_active``).
    """

    def __init__(self, n_vectors: int):
        self.n_vectors = int(n_vectors)
        self.total = 0
        self.overflow = False

    def add_entries(self, index: np.ndarray, flat_values: np.ndarray, way: int,
                    entry: np.ndarray | None = None) -> None:  # fmt: skip
        """As :meth:`Checksum.add_entries`: ``flat_values[n]`` of entry number ``entry[n]`` (allele bits in operand
        order) of item ``index[n]`` (ascending vector indices), or whole rows of ``2**way`` entries."""
        if len(index) == 0:
            return
        index = np.asarray(index, dtype=np.uint64)
        values = np.asarray(flat_values, dtype=np.float64)
        if entry is None:
            entries = np.broadcast_to(np.arange(1 << way, dtype=np.uint64), values.shape)
            index = np.repeat(index, 1 << way, axis=0)
            values, entries = values.reshape(-1), entries.reshape(-1)
        else:
            entries = np.asarray(entry, dtype=np.uint64)
        if values.size and values.max() > 16.0:
            self.overflow = True
            return
        n = np.uint64(self.n_vectors)
        # The item's vectors in descending order, and its allele bits reordered to match (smallest vector's bit
        # least significant).
        uid = np.zeros(len(index), dtype=np.uint64)
        permuted = np.zeros(len(index), dtype=np.uint64)
        with np.errstate(over="ignore"):
            for x in range(way - 1, -1, -1):
                uid = uid * n + index[:, x]
                bit = (entries >> np.uint64(way - 1 - x)) & np.uint64(1)
                permuted |= bit << np.uint64(x)
            uid = uid * np.uint64(1 << way) + permuted
            rand_value = (_randomize(uid + np.uint64(956158765))
                          + np.uint64(_LCG_MODULUS) * _randomize(uid + np.uint64(842467637))) & np.uint64(_SIXTY_BITS)
        fixed = (values * float(1 << 56)).astype(np.uint64)  # (value / 16) * 2**60, truncated toward zero
        self.total += _exact_sum_of_products(rand_value, fixed)

    def merge(self, other: CometChecksum) -> None:
        """Add another partial checksum (e.g. from another worker)."""
        self.total += other.total
        self.overflow = self.overflow or other.overflow

    def __str__(self) -> str:
        if self.overflow:
            return "undefined (a value above 16, beyond CoMet's checksum range)"
        return f"{self.total >> 120}-{(self.total >> 60) & _SIXTY_BITS}-{self.total & _SIXTY_BITS}"
