"""Hamming / SNP distances (seed 000: Alomairy et al., matrix-based Hamming distance)."""

from __future__ import annotations

import importlib

from .methods import METHODS

__all__ = ["METHODS", "hamming", "hamming_knn", "hamming_pairs"]


def __getattr__(name: str):
    if name in ("hamming", "hamming_knn", "hamming_pairs"):
        return getattr(importlib.import_module(".api", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
