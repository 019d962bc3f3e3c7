"""``seqcompare hamming``: all-pairs Hamming / SNP distances (Alomairy et al., matrix-based Hamming distance).

The package is callable: ``seqcompare.hamming(X, Y=None, ...)`` is :func:`.api.hamming`.

- :mod:`.api`: :func:`hamming`, :func:`hamming_pairs`, :func:`hamming_knn`, :func:`encode_inputs`; the models
  (:func:`model_distances`, :func:`model_pairs`), :func:`clusters` and :func:`duplicates` (every function
  takes ``collapse``: each distinct sequence computed once).
- :mod:`.models`, :mod:`.pairstats`, :mod:`.statskernel`, :mod:`.statsgpu`: per-pair site counts (comparable
  sites, transitions, TN93's terms) and the p / JC69 / K2P / TN93 distances made from them.
- :mod:`.work`: the all-pairs work the engine runs (CPU kernels, GPU session, native GPU pairs, Dask split).
- :mod:`.encoding` (with :mod:`.packing`): alphabets, code spaces, bit planes.
- :mod:`.reference`: the oracles (character-level snp-dists distance, Algorithm 1 on codes).
- :mod:`.matrix`, :mod:`.bitpack`: CPU kernels (Algorithm 2 through BLAS; bit planes and popcount).
- :mod:`.gpu` and ``hamming.cu``: GPU kernels and their host code (the 1-bit GEMM is :mod:`seqcompare.cuda`'s).

Names load on first use, so importing the package (or :mod:`.methods`, for the command line) compiles nothing.
"""

from __future__ import annotations

from .._callable import command_package

_EXPORTS = {
    "hamming": "seqcompare.hamming.api:hamming",
    "hamming_pairs": "seqcompare.hamming.api:hamming_pairs",
    "hamming_knn": "seqcompare.hamming.api:hamming_knn",
    "encode_inputs": "seqcompare.hamming.api:encode_inputs",
    "run_hamming": "seqcompare.hamming.api:run_hamming",
    "model_distances": "seqcompare.hamming.api:model_distances",
    "model_pairs": "seqcompare.hamming.api:model_pairs",
    "clusters": "seqcompare.hamming.api:clusters",
    "duplicates": "seqcompare.hamming.api:duplicates",
    "differing_sites": "seqcompare.hamming.api:differing_sites",
    "run_model": "seqcompare.hamming.api:run_model",
    "Encoded": "seqcompare.hamming.work:Encoded",
    "HammingWork": "seqcompare.hamming.work:HammingWork",
    "distance_dtype": "seqcompare.hamming.work:distance_dtype",
    "METHODS": "seqcompare.hamming.methods:METHODS",
    "resolve_method": "seqcompare.hamming.methods:resolve_method",
}
__all__, __getattr__ = command_package(__name__, "seqcompare.hamming.api:hamming", _EXPORTS)
