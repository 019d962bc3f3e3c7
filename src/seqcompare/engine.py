"""The tile engine shared by every all-pairs metric.

A problem is ``n`` left items against either themselves (symmetric: only the lower triangle of tiles is
planned, each tile computed exactly once) or ``p`` right items (rectangular). The engine

1. plans tiles (:func:`plan_tiles`),
2. runs a per-tile kernel on them through an executor (:class:`SerialExecutor`, :class:`ThreadExecutor`;
   GPU and Dask executors plug in the same way), and
3. hands every finished tile to a sink (:mod:`seqcompare.sinks`), which keeps only what the output needs.

A kernel is a callable ``kernel(tile) -> ndarray`` returning the tile's block, ``tile.rows x tile.cols``.
For a diagonal tile of a symmetric problem the block is the full symmetric square with a zero diagonal.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, order=True)
class Tile:
    """A block of the output: rows ``row_start:row_stop`` against columns ``col_start:col_stop``."""

    row_start: int
    row_stop: int
    col_start: int
    col_stop: int
    diagonal: bool = False

    @property
    def n_rows(self) -> int:
        return self.row_stop - self.row_start

    @property
    def n_cols(self) -> int:
        return self.col_stop - self.col_start

    @property
    def n_pairs(self) -> int:
        """Distinct pairs this tile computes (a diagonal tile computes only its strict lower triangle)."""
        if self.diagonal:
            return self.n_rows * (self.n_rows - 1) // 2
        return self.n_rows * self.n_cols


def default_threads() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def default_tile_size(n_rows: int, threads: int) -> int:
    """A tile edge that gives every thread several tiles yet keeps a tile's operands cache-sized."""
    if n_rows <= 64:
        return max(1, n_rows)
    target = int(np.sqrt(n_rows * n_rows / (2 * 8 * max(1, threads))))
    return int(min(128, max(32, (target // 16) * 16 or 16)))


def plan_tiles(n_rows: int, n_cols: int | None = None, tile_size: int = 256) -> list[Tile]:
    """Plan the tiles of an all-pairs problem, in block-row order.

    Parameters
    ----------
    n_rows : int
        Left items.
    n_cols : int, optional
        Right items; ``None`` for a symmetric problem (left against itself), which plans only the tiles
        on and below the diagonal.
    tile_size : int
        Tile edge (rows and columns).

    Returns
    -------
    list of Tile
    """
    if tile_size < 1:
        raise ValueError(f"tile_size must be positive, got {tile_size}")
    row_edges = list(range(0, n_rows, tile_size)) + [n_rows]
    tiles = []
    if n_cols is None:
        for bi in range(len(row_edges) - 1):
            for bj in range(bi + 1):
                tiles.append(
                    Tile(row_edges[bi], row_edges[bi + 1], row_edges[bj], row_edges[bj + 1], bi == bj)
                )
        return tiles
    col_edges = list(range(0, n_cols, tile_size)) + [n_cols]
    for bi in range(len(row_edges) - 1):
        for bj in range(len(col_edges) - 1):
            tiles.append(Tile(row_edges[bi], row_edges[bi + 1], col_edges[bj], col_edges[bj + 1]))
    return tiles


class SerialExecutor:
    """Runs tiles one after another in the calling thread."""

    def map(self, kernel: Callable, tiles: Iterable[Tile]) -> Iterator[tuple[Tile, np.ndarray]]:
        for tile in tiles:
            yield tile, kernel(tile)


class ThreadExecutor:
    """Runs tiles on a pool of threads; kernels must release the GIL (Numba ``nogil``, BLAS) to scale.

    Results come back in submission order, with a bounded number of tiles in flight, so memory stays
    flat however many tiles there are.
    """

    def __init__(self, threads: int | None = None):
        self.threads = threads or default_threads()

    def map(self, kernel: Callable, tiles: Iterable[Tile]) -> Iterator[tuple[Tile, np.ndarray]]:
        if self.threads == 1:
            yield from SerialExecutor().map(kernel, tiles)
            return
        yield from windowed_map(kernel, tiles, self.threads, 4 * self.threads)


def windowed_map(function: Callable, tiles: Iterable[Tile], workers: int, window: int,
                 name: str = "seqcompare") -> Iterator[tuple[Tile, object]]:  # fmt: skip
    """``(tile, function(tile))`` in submission order from a pool of ``workers`` threads, with at most
    ``window`` tiles in flight (memory stays flat however many tiles there are)."""
    with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
        pending: deque = deque()
        for tile in tiles:
            pending.append((tile, pool.submit(function, tile)))
            if len(pending) >= window:
                done_tile, future = pending.popleft()
                yield done_tile, future.result()
        while pending:
            done_tile, future = pending.popleft()
            yield done_tile, future.result()


def run_tiles(kernel, tiles, executor, sink, progress=None):
    """Run ``kernel`` on every tile through ``executor``, feed each block to ``sink``, return ``sink.finish()``.

    ``progress``, if given, is called with the number of pairs each finished tile covered.
    """
    for tile, block in executor.map(kernel, tiles):
        sink.add(tile, block)
        if progress is not None:
            progress(tile.n_pairs)
    return sink.finish()
