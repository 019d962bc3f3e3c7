"""Batched alignment and DTW as a :class:`~seqcompare.allpairs.Work` of the engine: parts are batches of pairs.

In one process the pairs are scored as one batch, spread by the scorer over every thread and SIMD lane, which
reports its progress as it goes (cut into smaller batches, a batch of a few long pairs leaves lanes empty: 20
pairs of 10,000 took 10x longer in 16 batches), or all at once on the GPU (the work's native
``concatenation``). On a Dask cluster each worker scores batches of about equal cells, the sequences (or
signals) placed once. The engine's :class:`~seqcompare.allpairs.Concatenation` puts the batches' scores back in
pair order, so the result is byte-identical whatever ran it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..allpairs import DataBlock, Region, Split, Work
from ..progress import SILENT

_BATCHES_PER_WORKER = 4


@dataclass(frozen=True)
class PairBatch:
    """Pairs ``start:stop`` of the plan."""

    start: int
    stop: int


def _cuts(weights: np.ndarray, parts: int) -> list:
    """Boundaries of ``parts`` runs of pairs of about equal total ``weights``."""
    n = len(weights)
    if n == 0:
        return [0, 0]
    total = np.cumsum(weights, dtype=np.float64)
    cuts = np.searchsorted(total, total[-1] * np.arange(1, parts) / parts)
    return sorted({0, n, *[int(c) for c in cuts if 0 < c < n]})


class PairWork(Work):
    """The pairs of ``plan`` (target index, query index) scored by ``scorer``
    (:class:`~seqcompare.align.batch.NWScorer` or :class:`~seqcompare.align.batch.DTWScorer`); ``pair_offset``
    is the first pair's index in the whole plan (a worker's batch)."""

    unit = "pair"
    native = {"cuda": ("concatenation",)}
    reports_progress = True

    def __init__(self, scorer, plan: np.ndarray, *, pair_offset: int = 0):
        self.scorer = scorer
        self.plan = plan
        self.pair_offset = pair_offset

    def _cells(self) -> np.ndarray:
        t_len = np.diff(self.scorer_offsets("t"))[self.plan[:, 0]]
        q_len = np.diff(self.scorer_offsets("q"))[self.plan[:, 1]]
        return t_len * np.maximum(q_len, 1) + 1

    def scorer_offsets(self, side: str) -> np.ndarray:
        return getattr(self.scorer, f"{side}_off")

    def parts(self, backend: str) -> list:
        return [PairBatch(self.pair_offset, self.pair_offset + len(self.plan))]

    def size(self, part: PairBatch) -> int:
        return part.stop - part.start

    def cpu_kernel(self, threads: int, report=None):
        def kernel(part: PairBatch):
            plan = self.plan[part.start - self.pair_offset : part.stop - self.pair_offset]
            return self.scorer.cpu(plan, threads, report or SILENT)

        return kernel

    def run_native(self, backend: str, reduction, resources):
        part = self.parts(backend)[0]
        yield self.size(part), reduction.reduce(part, self.scorer.gpu(self.plan))

    def split(self, regions: int, tile_size: int | None = None) -> Split:
        scorer = self.scorer
        names = [name for name in ("t_codes", "t_values", "q_codes", "q_values") if hasattr(scorer, name)]
        shared = getattr(scorer, names[0]) is getattr(scorer, names[-1])  # all-vs-all: one set of sequences
        arrays, blocks = {}, []
        for name in names[:1] if shared else names:
            values = getattr(scorer, name)
            arrays[name] = (values.shape, values.dtype)
            blocks.append(DataBlock(name, 0, values.shape[0], _Copy(values)))
        bounds = _cuts(self._cells(), regions * _BATCHES_PER_WORKER)
        region_list = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            spec = (self.pair_offset + a, self.plan[a:b])
            region_list.append(Region(list(range(len(blocks))), spec, b - a))
        template = PairTemplate(replace(scorer, **{name: None for name in names}), tuple(names), shared)
        return Split(arrays, blocks, region_list, template)


class _Copy:
    def __init__(self, values):
        self.values = values

    def __call__(self, out) -> None:
        out[...] = self.values


@dataclass(frozen=True)
class PairTemplate:
    """What a Dask worker needs besides its blocks to make its batch's :class:`PairWork`: the scorer without its
    sequences (``names``, in block order; one shared block for all-vs-all runs). A batch's spec is ``(first
    pair, its plan rows)``."""

    scorer: object
    names: tuple
    shared: bool

    def attach(self, spec: tuple, blocks: list, keys: list, device: str) -> PairWork:
        first, plan = spec
        arrays = [np.asarray(b) for b in blocks]
        if self.shared:
            arrays = arrays * len(self.names)
        scorer = replace(self.scorer, **dict(zip(self.names, arrays)))
        return PairWork(scorer, plan, pair_offset=first)
