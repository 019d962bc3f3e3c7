"""What a CCC/DUO run keeps: CoMet's thresholds and the reductions of blocks of items, written once for every
backend (CPU threads, the GPU, Dask workers).

A block (:class:`CCCBlock`) is a batch of items (pairs or triples) in global indices, either with every value
(``values``, and the integer ``tables``) or as entries that passed a threshold already (``entry``, ``value``:
the GPU thresholds where it computes). The reductions:

- :class:`Entries`: the entries whose value passes the threshold;
- :class:`Values`: every item's values (and tables);
- :class:`Checksum` and :class:`CometChecksum`: seqcompare's order-independent checksum and CoMet's own, over
  the kept entries;
- :class:`Histogram`: counts of the values per entry class.

Each declares whether thresholded entries are enough for it (``accepts_entries``); a backend that can threshold
where it computes does so only when every reduction of the run says yes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..allpairs import Combined, Reduction
from .checksum import Checksum as ChecksumSum
from .checksum import CometChecksum as CometChecksumSum

CLASS_NAMES = {2: ("LL", "LH", "HH", "LLHH"), 3: ("LLL", "LLH", "LHH", "HHH", "LLLHHH")}


@dataclass(frozen=True)
class Threshold:
    """CoMet's thresholds: an entry is kept when its value is **greater** than the threshold of its class.

    Classes count the entry's allele-1 ("H") bits: LL, LH (both off-diagonal entries), HH for 2-way; LLL, LLH,
    LHH, HHH for 3-way. The optional combined threshold also keeps the all-L and all-H entries of a table when
    both are positive and their sum is greater than it (CoMet's ``tLLHH`` / ``tLLLHHH``).

    As in CoMet, values are compared in single precision: ``float32(value) > t``, and the combined test adds the
    two values as float32. So exactly the entries CoMet writes are kept, including those whose float64 value is
    a hair above ``t`` but rounds to ``t`` or below.
    """

    by_class: tuple
    combined: float | None = None

    @classmethod
    def parse(cls, text, way: int) -> Threshold:
        """A number (every class), or ``way + 2`` comma-separated numbers: the classes, then the combined one.

        Raises
        ------
        ValueError
            If a part is not a finite number, or there are neither 1 nor ``way + 2`` parts.
        """
        if isinstance(text, Threshold):
            return text
        if isinstance(text, str):
            parts = text.split(",")
        elif isinstance(text, bool) or not isinstance(text, (int, float, np.integer, np.floating)):
            raise TypeError(f"threshold must be a number or a string of numbers, not {text!r}")
        else:
            parts = [text]
        values = []
        for part in parts:
            try:
                value = float(part)
            except ValueError:
                raise ValueError(f"{str(part).strip()!r} is not a number") from None
            if not np.isfinite(value):
                raise ValueError(f"{str(part).strip()!r} is not a finite number")
            values.append(value)
        if len(values) == 1:
            return cls((values[0],) * (way + 1))
        if len(values) != way + 2:
            names = ",".join("t" + name for name in CLASS_NAMES[way])
            raise ValueError(f"give one value or {way + 2} ({names}), not {len(values)}")
        return cls(tuple(values[:-1]), values[-1])

    def passed(self, flat_values: np.ndarray, way: int) -> np.ndarray:
        """Boolean ``(n, 2**way)``: which entries of each table are kept (compared as CoMet compares them)."""
        single = np.asarray(flat_values).astype(np.float32)
        high_bits = np.array([bin(e).count("1") for e in range(1 << way)])
        limits = np.asarray(self.by_class, dtype=np.float64)[high_bits]
        keep = single > limits
        if self.combined is not None:
            low, high = single[:, 0], single[:, -1]
            # float32 sum (as CoMet adds them), compared with the threshold in float64: a bare Python float
            # would be cast to float32 for the comparison (NumPy's promotion rules), which CoMet does not do.
            both = (low > 0) & (high > 0) & ((low + high).astype(np.float64) > np.float64(self.combined))
            keep[:, 0] |= both
            keep[:, -1] |= both
        return keep


@dataclass
class CCCBlock:
    """A batch of items: ``index`` ``(n, way)`` int64 (ascending per row, global vector indices) and either
    ``values`` ``(n, 2, 2(, 2))`` float64 with ``tables`` (int64 tallies), both indexed by allele bits in operand
    order, or the entries that passed ``limits`` already: ``entry`` (entry number, the bits read as a binary
    number) and ``value`` per row of ``index``."""

    index: np.ndarray
    values: np.ndarray | None = None
    tables: np.ndarray | None = None
    entry: np.ndarray | None = None
    value: np.ndarray | None = None
    limits: Threshold | None = None
    # Entries by threshold, made once however many reductions of a run read them (entries, checksums).
    _passing: dict = field(default_factory=dict, repr=False, compare=False)

    def entries(self, limits: Threshold | None, way: int):
        """``(index, entry, value)`` of the entries that pass ``limits`` (every entry for None)."""
        if self.values is None:
            if limits != self.limits:
                raise ValueError("a block thresholded on the device serves only its own threshold")
            return self.index, self.entry, self.value
        found = self._passing.get(limits)
        if found is None:
            flat = self.values.reshape(len(self.index), 1 << way)
            if limits is None:
                entry = np.tile(np.arange(1 << way), len(self.index))
                found = np.repeat(self.index, 1 << way, axis=0), entry, flat.reshape(-1)
            else:
                item, entry = np.nonzero(limits.passed(flat, way))
                found = self.index[item], entry, flat[item, entry]
            self._passing[limits] = found
        return found


class CCCReduction(Reduction):
    """Base of CCC's reductions: blocks are :class:`CCCBlock`; ``accepts_entries`` says whether blocks thresholded
    where they were computed will do."""

    kind = "ccc"
    accepts_entries = True

    def __init__(self, way: int, limits: Threshold | None = None):
        self.way = way
        self.limits = limits


class Entries(CCCReduction):
    """The entries that pass the threshold, sorted by item then entry: ``(index, bits, value)``."""

    state = ("parts",)

    def __init__(self, way: int, limits: Threshold | None):
        super().__init__(way, limits)
        self.parts: list = []

    def reduce(self, part, block: CCCBlock):
        return block.entries(self.limits, self.way)

    def merge(self, partial) -> None:
        if len(partial[0]):
            self.parts.append(partial)

    def finish(self):
        way = self.way
        if self.parts:
            index, entry, value = (np.concatenate(column) for column in zip(*self.parts))
        else:
            index, entry, value = np.empty((0, way), np.int64), np.empty(0, np.int64), np.empty(0)
        order = np.lexsort((entry,) + tuple(index[:, x] for x in reversed(range(way))))
        bits = ((entry[order, None] >> np.arange(way - 1, -1, -1)) & 1).astype(np.uint8)
        return index[order], bits, value[order]


class Values(CCCReduction):
    """Every item's values (and integer tables with ``keep_tables``), in lexicographic order of the items:
    ``(index, values (n, 2, 2(, 2)), tables or None)``."""

    accepts_entries = False
    state = ("parts",)

    def __init__(self, way: int, keep_tables: bool = False):
        super().__init__(way)
        self.keep_tables = keep_tables
        self.parts: list = []

    def reduce(self, part, block: CCCBlock):
        if block.values is None:
            raise ValueError("full values need unthresholded blocks")
        return block.index, block.values, block.tables if self.keep_tables else None

    def merge(self, partial) -> None:
        self.parts.append(partial)

    def finish(self):
        way, parts = self.way, self.parts
        shape = (0,) + (2,) * way
        index = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, way), np.int64)
        # Blocks may arrive in any order (a GPU's row blocks, Dask's slabs): lexicographic order, as documented.
        order = np.lexsort(tuple(index[:, x] for x in reversed(range(way))))
        values = (np.concatenate([p[1] for p in parts]) if parts else np.empty(shape))[order]
        tables = None
        if self.keep_tables:
            tables = (np.concatenate([p[2] for p in parts]) if parts else np.empty(shape, np.int64))[order]
        return index[order], values.reshape((-1,) + (2,) * way), tables


class Checksum(CCCReduction):
    """seqcompare's order- and decomposition-independent checksum of the kept entries
    (:class:`~seqcompare.ccc.checksum.Checksum`)."""

    state = ("total",)
    make = ChecksumSum

    def __init__(self, way: int, limits: Threshold | None = None, n_vectors: int = 0):
        super().__init__(way, limits)
        self.n_vectors = n_vectors
        self.total = self.fresh()

    def fresh(self):
        return self.make()

    def reduce(self, part, block: CCCBlock):
        partial = self.fresh()
        if block.values is not None and self.limits is None:  # whole tables
            partial.add_entries(block.index, block.values.reshape(len(block.index), 1 << self.way), self.way)
        else:
            index, entry, value = block.entries(self.limits, self.way)
            partial.add_entries(index, value, self.way, entry)
        return partial

    def merge(self, partial) -> None:
        self.total.merge(partial)

    def finish(self):
        return self.total


class CometChecksum(Checksum):
    """CoMet's "metrics checksum" of the kept entries (:class:`~seqcompare.ccc.checksum.CometChecksum`)."""

    make = CometChecksumSum

    def fresh(self):
        return self.make(self.n_vectors)


class Histogram(CCCReduction):
    """Counts of values per entry class (as CoMet's ``--histograms_file``): ``bins`` equal bins over
    ``[0, upper]``; values above ``upper`` land in the last bin. The last class is the sum of each table's all-L
    and all-H values. Returns ``{"edges", "counts", "classes"}``."""

    accepts_entries = False
    state = ("counts",)

    def __init__(self, way: int, bins: int, upper: float):
        super().__init__(way)
        self.edges = np.linspace(0.0, upper, bins + 1)
        self.counts = np.zeros((way + 2, bins), dtype=np.int64)

    def reduce(self, part, block: CCCBlock):
        if block.values is None:
            raise ValueError("histograms need unthresholded blocks")
        way, bins = self.way, len(self.edges) - 1
        flat = block.values.reshape(len(block.index), 1 << way)
        high_bits = np.array([bin(e).count("1") for e in range(1 << way)])
        counts = np.zeros((way + 2, bins), dtype=np.int64)

        def count(values, row):
            at = np.clip(np.searchsorted(self.edges, values, side="right") - 1, 0, bins - 1)
            counts[row] += np.bincount(at.ravel(), minlength=bins)

        for klass in range(way + 1):
            count(flat[:, high_bits == klass], klass)
        count(flat[:, 0] + flat[:, -1], way + 1)
        return counts

    def merge(self, partial) -> None:
        self.counts += partial

    def finish(self):
        return {"edges": self.edges, "counts": self.counts, "classes": CLASS_NAMES[self.way]}


class Outputs(Combined):
    """The reductions of one CCC run together (what :func:`seqcompare.ccc` asks for), as one CCC reduction: it
    accepts thresholded blocks when every member does, and its threshold is theirs."""

    kind = "ccc"

    def __init__(self, *reductions: CCCReduction, limits: Threshold | None = None):
        super().__init__(*reductions)
        self.limits = limits
        self.accepts_entries = all(r.accepts_entries for r in reductions)

    def for_workers(self) -> Outputs:
        return Outputs(*(r.for_workers() for r in self.reductions), limits=self.limits)
