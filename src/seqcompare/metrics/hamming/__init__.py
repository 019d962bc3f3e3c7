"""Hamming / SNP distances (seed 000: Alomairy et al., matrix-based Hamming distance)."""

from .api import METHODS, hamming, hamming_knn, hamming_pairs

__all__ = ["METHODS", "hamming", "hamming_knn", "hamming_pairs"]
