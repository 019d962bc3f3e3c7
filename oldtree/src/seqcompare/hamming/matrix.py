"""Algorithm 2 of the paper (matrix-based): ``H = sum over codes c of D_c(X) . B_c(Y)^T``.

``B_c`` is the one-hot mask of code ``c`` and ``D_c`` the mask of sites that count as different from ``c``
(the paper's complement ``B^c``, restricted to present sites). The products run through BLAS in float32,
which is exact while every partial sum stays below 2**24; longer alignments are cut into chunks of sites
below that bound and the chunk results are summed as integers.
"""

from __future__ import annotations

import numpy as np

from .encoding import CodeSpace
from ..allpairs.plan import Tile

FLOAT32_EXACT_LIMIT = 2**24 - 1


def _exact_product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``left @ right.T`` of 0/1 float32 matrices, exact for any number of sites."""
    sites = left.shape[1]
    if sites <= FLOAT32_EXACT_LIMIT:
        return (left @ right.T).astype(np.int64)
    total = np.zeros((left.shape[0], right.shape[0]), dtype=np.int64)
    for start in range(0, sites, FLOAT32_EXACT_LIMIT):
        stop = start + FLOAT32_EXACT_LIMIT
        total += (left[:, start:stop] @ right[:, start:stop].T).astype(np.int64)
    return total


def masked_gemm_block(left: np.ndarray, right: np.ndarray, space: CodeSpace) -> np.ndarray:
    """Distances between the rows of two code blocks, by one GEMM per code present in ``right``."""
    table = space.difference_table()
    block = np.zeros((left.shape[0], right.shape[0]), dtype=np.int64)
    present = np.unique(right)
    for code in present[present != 0]:
        right_mask = (right == code).astype(np.float32)
        differs_from_code = np.take(table[code], left).astype(np.float32)
        block += _exact_product(differs_from_code, right_mask)
    return block


def tiled_tile(left, right, space: CodeSpace, tile: Tile, cap: int) -> np.ndarray:
    """The paper's asynchronous variant: masks built per tile, only lower-triangle tiles planned."""
    block = masked_gemm_block(
        left[tile.row_start : tile.row_stop], right[tile.col_start : tile.col_stop], space
    )
    if tile.diagonal:
        np.fill_diagonal(block, 0)
    return np.minimum(block, cap)
