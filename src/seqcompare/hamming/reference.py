"""Plain reference implementations: the test oracles every fast path is checked against.

:func:`snp_dists_distance` is the character-level definition (snp-dists 0.8.2 semantics) written as
directly as possible; :func:`vector_tile` is the paper's Algorithm 1 on encoded codes: for each pair,
compare the two rows site by site and count the sites whose codes count as different.
"""

from __future__ import annotations

import numpy as np

from ..allpairs.plan import Tile

_ACGT = frozenset("ACGT")


def snp_dists_distance(a: str, b: str, *, all_chars: bool = False, keep_case: bool = False) -> int:
    """SNP distance of two aligned strings, character by character.

    A site counts when the characters differ and, unless ``all_chars``, both are one of A, C, G, T
    (after upper-casing unless ``keep_case``).
    """
    if len(a) != len(b):
        raise ValueError(f"sequences have lengths {len(a)} and {len(b)}")
    if not keep_case:
        a, b = a.upper(), b.upper()
    distance = 0
    for x, y in zip(a, b):
        if x != y and (all_chars or (x in _ACGT and y in _ACGT)):
            distance += 1
    return distance


def vector_tile(left: np.ndarray, right: np.ndarray, table: np.ndarray, tile: Tile, cap: int) -> np.ndarray:
    """Algorithm 1 (vector-based) on one tile of codes; ``table[a, b]`` says whether codes differ."""
    block = np.zeros((tile.n_rows, tile.n_cols), dtype=np.int64)
    for i in range(tile.row_start, tile.row_stop):
        col_stop = i if tile.diagonal else tile.col_stop
        if col_stop <= tile.col_start:
            continue
        others = right[tile.col_start : col_stop]
        block[i - tile.row_start, : col_stop - tile.col_start] = table[left[i][None, :], others].sum(axis=1)
    if tile.diagonal:
        block = np.tril(block, -1)
        block = block + block.T
    return np.minimum(block, cap)
