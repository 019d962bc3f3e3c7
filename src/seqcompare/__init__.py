"""seqcompare: exact all-pairs comparison of sequences and genotype vectors at hardware speed.

Importing the package is cheap: submodules (and Numba, and any GPU or cluster library) load on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "hamming": ("seqcompare.metrics.hamming.api", "hamming"),
    "hamming_pairs": ("seqcompare.metrics.hamming.api", "hamming_pairs"),
    "hamming_knn": ("seqcompare.metrics.hamming.api", "hamming_knn"),
    "read_alignment": ("seqcompare.io.fasta", "read_alignment"),
    "Alignment": ("seqcompare.io.fasta", "Alignment"),
    "InputError": ("seqcompare.errors", "InputError"),
    "scan": ("seqcompare.signatures.api", "scan"),
    "prepare_signatures": ("seqcompare.signatures.api", "prepare_signatures"),
    "ccc": ("seqcompare.correlation.api", "ccc"),
    "align": ("seqcompare.dp.api", "align"),
    "dtw": ("seqcompare.dp.api", "dtw"),
    "Costs": ("seqcompare.dp.costs", "Costs"),
    "Genotypes": ("seqcompare.io.genotypes", "Genotypes"),
    "read_genotypes": ("seqcompare.io.genotypes", "read_genotypes"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'seqcompare' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
