"""An order- and decomposition-independent checksum of CCC/DUO results, in the manner of CoMet's.

Each nonzero table entry contributes ``h(q(value) xor w(uid))`` to a sum modulo 2**64: ``q`` is the value in
fixed point (``round(value * 2**40)``, so values up to 2**23 are represented), ``w`` a 64-bit hash of the
entry's identity (the sorted vector indices and the allele bits in that order) and ``h`` the splitmix64 mixer,
so that any change of any value or position changes the sum. Entries that are 0 or fail a threshold count as 0. Addition modulo 2**64 is commutative and associative, so the checksum does not depend on tile
sizes, on the order tiles finish in, on the method or on the device, only on the values, which every method
computes with the same float64 operations (:mod:`seqcompare.correlation.formulas`).
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
