"""``seqcompare ccc``: CoMet's Custom Correlation Coefficient (CCC) and DUO between genotype vectors, 2-way and
3-way, bit for bit as CoMet's double-precision build computes them.

The package is callable: ``seqcompare.ccc(genotypes, ...)`` is :func:`.api.ccc`.

- :mod:`.api`: :func:`ccc` and :class:`CCCResult`.
- :mod:`.work`: the all-pairs work the engine runs (CPU blocks through BLAS, the GPU's loop, Dask slabs).
- :mod:`.reductions`: thresholds (:class:`Threshold`) and what a run keeps (entries, values, checksums,
  histogram).
- :mod:`.formulas`: tallies to values with CoMet's operations; :mod:`.checksum`: seqcompare's and CoMet's
  checksums; :mod:`.analytic`: the closed-form test problem.
- :mod:`.reference`: the oracle; :mod:`.cpu`: BLAS products; :mod:`.gpu` and ``ccc.cu``: the GPU path.
"""

from __future__ import annotations

from .._callable import command_package

_EXPORTS = {
    "ccc": "seqcompare.ccc.api:ccc",
    "CCCResult": "seqcompare.ccc.api:CCCResult",
    "METHODS": "seqcompare.ccc.api:METHODS",
    "Threshold": "seqcompare.ccc.reductions:Threshold",
    "Metric": "seqcompare.ccc.formulas:Metric",
    "CCCWork": "seqcompare.ccc.work:CCCWork",
}
__all__, __getattr__ = command_package(__name__, "seqcompare.ccc.api:ccc", _EXPORTS)
