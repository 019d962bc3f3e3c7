"""The one launcher of the shared 1-bit tensor-core GEMM (``bitgemm.cuh``), used by Hamming and CCC.

``out[r][c] = sum over words w of popcount(left[r][w] & right[c][w])`` for the micro tiles asked for, with the
shared epilogue writing either a block of the matrix (:class:`MatrixOutput`, optionally mirrored for symmetric
problems) or the pairs under a threshold (:class:`PairsOutput`, appended with one atomic per warp). Every
argument reaches the kernel with the exact C type of its parameter (CuPy packs a bare Python int as int64).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .runtime import module

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bitgemm.cu")

# Kernel shapes: block rows, block cols, warp rows, warp cols, pipeline stages, 16-byte chunks per row and stage
# (4: 512 bits, 8: 1024 bits). 1024-bit stages beat 512-bit ones by 12% (docs/DEVELOPING.md).
CONFIGS = {
    "128x128x4": (128, 128, 64, 64, 4, 4),
    "128x128x3k8": (128, 128, 64, 64, 3, 8),
    "128x128x4k8": (128, 128, 64, 64, 4, 8),
    "256x128x3": (256, 128, 64, 64, 3, 4),
}
MATRIX_CONFIG = "128x128x3k8"
PAIRS_CONFIG = "128x128x3k8"
TILE = 128  # block edge of the matrix configuration (square, so symmetric blocks can be mirrored)
ROW_PAD = 256  # operand rows are padded to this, the largest block edge
ROW_WORDS_MULTIPLE = 16  # 1024 bits: the deepest pipeline stage


def kernel_name(config: str) -> str:
    return "bitgemm<{},{},{},{},{},{}>".format(*CONFIGS[config])


def _module():
    return module(_SOURCE, tuple(kernel_name(c) for c in CONFIGS))


def load(config: str = PAIRS_CONFIG) -> None:
    """Load the GEMM of ``config`` on the current device (compiled on first use, then read from CuPy's cache),
    as a warm-up before the first :func:`launch`."""
    _module().get_function(kernel_name(config))


_NULL = np.uint64(0)  # a null pointer argument


@dataclass(frozen=True)
class MatrixOutput:
    """Write ``out[(r - row0) * ld + (c - col0)] = value`` (int32, on the device) for every cell computed."""

    out: object
    ld: int
    row0: int = 0
    col0: int = 0

    def kernel_args(self) -> tuple:
        """The trailing parameters of a kernel with the shared epilogue (``OUTPUT_PARAMS`` in bitgemm.cuh)."""
        return (np.int32(1), np.uint32(0), _NULL, _NULL, _NULL, _NULL, np.uint64(0), self.out, np.int64(self.ld),
                np.int32(self.row0), np.int32(self.col0))  # fmt: skip


@dataclass(frozen=True)
class PairsOutput:
    """Append ``(i, j, value)`` (uint32 arrays on the device) for cells with ``value <= max_dist``; ``count``
    (uint64, one element) counts every such cell even past the arrays' capacity. Symmetric problems keep only
    ``c < r`` and write it as ``(c, r)``."""

    max_dist: int
    i: object
    j: object
    d: object
    count: object

    def kernel_args(self) -> tuple:
        """As :meth:`MatrixOutput.kernel_args`."""
        return (np.int32(0), np.uint32(self.max_dist), self.i, self.j, self.d, self.count, np.uint64(self.i.size),
                _NULL, np.int64(0), np.int32(0), np.int32(0))  # fmt: skip


def launch(left, right, tiles, *, n_left: int, n_right: int, symmetric: bool, output, mirror: bool = False,
           config: str = MATRIX_CONFIG) -> None:  # fmt: skip
    """Run the GEMM on the current device and stream.

    Parameters
    ----------
    left, right : cupy.ndarray of uint64, shape (rows, row_words)
        Operands, rows padded to the configuration's block edges, ``row_words`` a multiple of
        :data:`ROW_WORDS_MULTIPLE`.
    tiles : cupy.ndarray of int32, shape (T, 2)
        Micro tiles: (block row, block column) pairs, from :func:`micro_tiles`.
    n_left, n_right : int
        Real rows of each side (cells beyond them are not output).
    symmetric : bool
        Left and right are the same rows: pairs keep ``c < r`` only.
    output : MatrixOutput or PairsOutput
    mirror : bool
        Matrix output: also write the transposed cell of tiles off the diagonal.
    config : str
        A key of :data:`CONFIGS`.
    """
    if len(tiles) == 0:
        return
    row_words = left.shape[1]
    if right.shape[1] != row_words or row_words % ROW_WORDS_MULTIPLE:
        raise ValueError(f"operand rows must be equally long, a multiple of {ROW_WORDS_MULTIPLE} words")
    if max(n_left, n_right) >= 2**31:
        raise ValueError("the GEMM indexes rows with 32-bit integers")
    rows, cols, warp_rows, warp_cols, stages, chunks = CONFIGS[config]
    kernel = _module().get_function(kernel_name(config))
    shared = stages * (rows + cols) * chunks * 16
    kernel.max_dynamic_shared_size_bytes = shared
    threads = (rows // warp_rows) * (cols // warp_cols) * 32
    kernel((len(tiles),), (threads,),
           (left, right, np.int32(row_words), tiles, np.int32(n_left), np.int32(n_right), np.int32(bool(symmetric)),
            np.int32(bool(mirror)), *output.kernel_args()),
           shared_mem=shared)  # fmt: skip


def micro_tiles(row_blocks, col_blocks, symmetric: bool, row_edge: int = 1, col_edge: int = 1) -> np.ndarray:
    """``(T, 2)`` int32 (block row, block col) pairs: all of ``row_blocks x col_blocks``, or for a symmetric
    problem (``col_blocks`` ignored) the blocks that reach on or below the diagonal, for blocks of
    ``row_edge x col_edge`` items. Sorted by block row as ``row_blocks`` is."""
    rows = np.asarray(list(row_blocks), dtype=np.int64)
    if symmetric:
        counts = ((rows + 1) * row_edge - 1) // col_edge + 1
        starts = np.cumsum(counts) - counts
        cols = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
    else:
        col_list = np.asarray(list(col_blocks), dtype=np.int64)
        counts = np.full(rows.size, col_list.size, dtype=np.int64)
        cols = np.tile(col_list, rows.size)
    tiles = np.stack([np.repeat(rows, counts), cols], axis=1).astype(np.int32)
    return np.ascontiguousarray(tiles.reshape(-1, 2))
