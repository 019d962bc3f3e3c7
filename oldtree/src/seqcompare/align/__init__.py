"""``seqcompare align`` and ``seqcompare dtw``: batched Needleman-Wunsch (Gotoh's affine gaps, CIGARs) and dynamic
time warping of many pairs in one call.

The package is callable: ``seqcompare.align(targets, queries, ...)`` is :func:`.api.align`; ``seqcompare.dtw`` is
:func:`.api.dtw`.

- :mod:`.api`: :func:`align`, :func:`dtw`, :class:`PairScores`; :mod:`.costs`: :class:`Costs`.
- :mod:`.work`: the batch work the engine runs on Dask (batches of pairs).
- :mod:`.reference`: the oracles (the recurrences written cell by cell).
- :mod:`.strips` (NW, eight rows per sweep in SIMD registers) and :mod:`.kernels` (DTW lanes, scalar kernels,
  traceback): CPU kernels.
- :mod:`.gpu` and ``dp.cu``: the GPU path (one warp per pair, DPX instructions).
"""

from __future__ import annotations

from .._callable import command_package

_EXPORTS = {
    "align": "seqcompare.align.api:align",
    "dtw": "seqcompare.align.api:dtw",
    "PairScores": "seqcompare.align.api:PairScores",
    "Costs": "seqcompare.align.costs:Costs",
}
__all__, __getattr__ = command_package(__name__, "seqcompare.align.api:align", _EXPORTS)
