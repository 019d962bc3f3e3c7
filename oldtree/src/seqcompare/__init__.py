"""seqcompare: exact all-pairs comparison of sequences and genotype vectors at hardware speed.

Importing the package is cheap: submodules (and Numba, and any GPU or cluster library) load on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Each command's package is also the function users call (``seqcompare.hamming(X)``; see ``_callable``).
_LAZY = {
    "hamming": ("seqcompare.hamming", None),
    "hamming_pairs": ("seqcompare.hamming.api", "hamming_pairs"),
    "hamming_knn": ("seqcompare.hamming.api", "hamming_knn"),
    "model_distances": ("seqcompare.hamming.api", "model_distances"),
    "model_pairs": ("seqcompare.hamming.api", "model_pairs"),
    "clusters": ("seqcompare.hamming.api", "clusters"),
    "duplicates": ("seqcompare.hamming.api", "duplicates"),
    "differing_sites": ("seqcompare.hamming.api", "differing_sites"),
    "read_alignment": ("seqcompare.io.fasta", "read_alignment"),
    "Alignment": ("seqcompare.io.fasta", "Alignment"),
    "InputError": ("seqcompare.errors", "InputError"),
    "scan": ("seqcompare.scan", None),
    "prepare_signatures": ("seqcompare.scan.api", "prepare_signatures"),
    "scan_coverage": ("seqcompare.scan.api", "coverage"),
    "ccc": ("seqcompare.ccc", None),
    "align": ("seqcompare.align", None),
    "dtw": ("seqcompare.align.api", "dtw"),
    "Costs": ("seqcompare.align.costs", "Costs"),
    "Genotypes": ("seqcompare.io.genotypes", "Genotypes"),
    "read_genotypes": ("seqcompare.io.genotypes", "read_genotypes"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'seqcompare' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
