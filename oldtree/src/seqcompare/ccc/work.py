"""CCC/DUO as a :class:`~seqcompare.allpairs.Work` of the all-pairs engine.

:class:`CCCWork` computes every pair (2-way) or triple (3-way) of a set of genotype vectors, or of a slab of a
larger set (its first row's global index is ``row_offset`` and ``items`` limits which pairs or pivots it makes),
as :class:`~seqcompare.ccc.reductions.CCCBlock`\\ s in global indices: on the CPU in row blocks (2-way) or one
pivot at a time (3-way) through BLAS, on a GPU through its own row-block loop on the 1-bit tensor cores
(:func:`seqcompare.ccc.gpu.run_bitmma`, which also thresholds there when every reduction of the run accepts
thresholded entries), and on Dask workers in slabs of about equal work, the rows placed once.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from ..allpairs import DataBlock, Region, Split, Work
from .formulas import Metric, counts, marginals


@dataclass(frozen=True)
class Slab:
    """Rows ``start:stop`` of a work: 2-way pairs ``(i, j > i)`` with ``i`` in them (``bitmma``: ``(q < r, r)``
    with ``r`` in them), 3-way triples with pivot ``i`` in them; local rows."""

    start: int
    stop: int


def _items(n: int, way: int, method: str, start: int, stop: int) -> int:
    rows = np.arange(start, min(stop, n), dtype=np.int64)
    if way == 3:
        return int(np.sum((n - 1 - rows) * (n - 2 - rows) // 2))
    return int(np.sum(rows if method == "bitmma" else n - 1 - rows))


class CCCWork(Work):
    """Every pair or triple of ``codes`` (CoMet codes, ``(n_rows, n_fields)`` uint8) by ``method``.

    Parameters
    ----------
    codes : ndarray
    metric : Metric
        What the values follow (the tallies may be made the non-sparse way when no genotype is missing).
    way : {2, 3}
    method : {"reference", "blas", "bitmma"}
    row_offset : int
        The global index of the first row (a slab of a larger problem on a Dask worker).
    items : tuple, optional
        ``(first, last)`` local rows whose pairs or pivots this work makes (see :class:`Slab`).
    block_items : int
        Pairs per 2-way CPU block (memory stays flat).
    """

    native = {"cuda": ("ccc",)}
    parallel_parts = False  # each block's GEMMs use every core (BLAS)

    def __init__(self, codes: np.ndarray, metric: Metric, way: int, method: str, *, row_offset: int = 0,
                 items=None, block_items: int = 1 << 22):  # fmt: skip
        self.codes = codes
        self.metric = metric
        self.way = way
        self.method = method
        self.row_offset = row_offset
        n = codes.shape[0]
        self.first, self.last = (0, n) if items is None else (int(items[0]), min(n, int(items[1])))
        self.block_items = block_items
        self.unit = "pair" if way == 2 else "triple"

    @property
    def n(self) -> int:
        return self.codes.shape[0]

    def parts(self, backend: str) -> list:
        n, way = self.n, self.way
        if backend == "cuda" or self.method == "reference":
            return [Slab(self.first, self.last)]
        if way == 2:
            rows_per_block = max(1, self.block_items // max(1, n))
            return [Slab(r0, min(self.last, r0 + rows_per_block)) for r0 in range(self.first, self.last, rows_per_block)]
        return [Slab(i, i + 1) for i in range(self.first, min(self.last, n - 2))]

    def size(self, part: Slab) -> int:
        return _items(self.n, self.way, self.method, part.start, part.stop)

    def cpu_kernel(self, threads: int):
        from .cpu import CpuProducts, block_items, block_values, compiled_pays
        from .reductions import CCCBlock

        way, metric = self.way, self.metric
        # Without any missing genotype the sparse and non-sparse tallies coincide, and the non-sparse ones need
        # one product instead of four; the values still follow the metric asked for.
        sparse_tallies = metric.sparse and bool((self.codes == 2).any())
        tally_metric = metric if sparse_tallies or not metric.sparse else replace(metric, sparse=False)
        a, d = counts(self.codes, tally_metric)
        defined, ones = marginals(a, d)
        n, offset = self.n, self.row_offset

        compiled = compiled_pays(math.comb(n, way))

        def block_of(index, table, compiled=compiled):
            value = block_values(table, [defined[index[:, x]] for x in range(way)],
                                 [ones[index[:, x]] for x in range(way)], metric, compiled)  # fmt: skip
            return CCCBlock(index + offset if offset else index, value, table)  # no copy of a whole-problem index

        if self.method == "reference":
            from .reference import reference_tables

            def reference(part):
                index, table, _, _ = reference_tables(self.codes, way, metric)
                return block_of(index, table, compiled=False)  # NumPy's formulas: nothing compiled

            return reference
        products = CpuProducts(a, d, tally_metric, way)

        def kernel(part: Slab):
            if way == 2:
                r0, r1 = part.start, part.stop
                block = products.pairs(slice(r0, r1), slice(r0, n))
                return block_of(*block_items(block, r0, 2, tally_metric.counted_bits, compiled))
            i = part.start
            return block_of(*block_items(products.pivot(i), i, 3, tally_metric.counted_bits, compiled))

        return kernel

    def run_native(self, backend: str, reduction, resources):
        """The GPU's own loop (:func:`seqcompare.ccc.gpu.run_bitmma`) over row blocks sized by its memory, on the
        first of ``resources``; each block is reduced as it comes back. It thresholds on the device when every
        reduction accepts thresholded entries."""
        from .gpu import run_bitmma

        limits = reduction.limits if reduction.accepts_entries else None
        for size, block in run_bitmma(self.codes, self.metric, self.way, (self.first, self.last), limits,
                                      self.row_offset, resources[0]):  # fmt: skip
            yield size, reduction.reduce(Slab(self.first, self.last), block)

    def split(self, regions: int, tile_size: int | None = None) -> Split:
        """One slab per worker (or ``regions``), of about equal work. Each task builds its operands from every row
        it needs, a cost that more, smaller slabs would repeat (measured: 4 slabs per GPU worker made 2-way CCC
        1.6x slower)."""
        n, way, method = self.n, self.way, self.method
        rows = np.arange(n, dtype=np.float64)
        if way == 3:
            work = (n - 1 - rows) * (n - 2 - rows)
        elif method == "bitmma":
            work = rows
        else:
            work = n - 1 - rows
        align = 1
        if method == "bitmma":
            from .gpu import row_alignment

            align = 2 * row_alignment()
        bounds = _equal_work_cuts(work, regions, align)
        blocks = [DataBlock("codes", a, b, _CopyRows(self.codes, a, b)) for a, b in itertools.pairwise(bounds)]
        region_list = []
        for s, (a, b) in enumerate(itertools.pairwise(bounds)):
            if way == 2 and method == "bitmma":  # pairs (q < r, r) for r in the slab: rows 0..b
                region_list.append(Region(list(range(s + 1)), (0, a, b), _items(n, way, method, a, b)))
            else:  # pairs (i, j > i) or triples with pivot i in the slab: rows a..n
                region_list.append(Region(list(range(s, len(blocks))), (a, 0, b - a), _items(n, way, method, a, b)))
        template = CCCTemplate(self.metric, way, method)
        # A slab's blocks are consecutive rows: workers get them as one array (one mapping where they are shared).
        return Split({"codes": (self.codes.shape, self.codes.dtype)}, blocks, region_list, template,
                     notes={"join_blocks": True})


def _equal_work_cuts(work: np.ndarray, parts: int, align: int) -> list:
    """Boundaries ``0 = b0 < b1 < ... = n`` (multiples of ``align`` inside) with about equal total ``work``."""
    n = len(work)
    total = np.cumsum(work, dtype=np.float64)
    targets = total[-1] * np.arange(1, parts) / parts if n else []
    cuts = [int(np.searchsorted(total, t)) // align * align for t in targets]
    return sorted({0, n, *[c for c in cuts if 0 < c < n]})


class _CopyRows:
    """Fills a placed block with rows ``start:stop`` of the codes."""

    def __init__(self, codes, start: int, stop: int):
        self.codes, self.start, self.stop = codes, start, stop

    def __call__(self, out) -> None:
        from ..allpairs import copy_rows

        copy_rows(out, self.codes[self.start : self.stop])


@dataclass(frozen=True)
class CCCTemplate:
    """What a Dask worker needs besides its blocks to make its slab's :class:`CCCWork`: a slab's spec is
    ``(first row of its blocks, first item row, last item row)``, the item rows local to the blocks."""

    metric: Metric
    way: int
    method: str

    def attach(self, spec: tuple, blocks: list, keys: list, device: str) -> CCCWork:
        offset, first, last = spec
        return CCCWork(np.asarray(blocks[0]), self.metric, self.way, self.method, row_offset=offset, items=(first, last))
