"""Plans of all-pairs problems: tiles of the lower triangle (symmetric problems) or of the whole rectangle.

A problem is ``n`` left items against either themselves (symmetric: only the tiles on and below the diagonal
are planned, each computed exactly once) or ``p`` right items (rectangular). A tile's block is
``tile.n_rows x tile.n_cols``; for a diagonal tile of a symmetric problem it is the full symmetric square with a
zero diagonal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import default_threads  # noqa: F401  (the engine's default, re-exported)


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


def default_tile_size(n_rows: int, threads: int) -> int:
    """A tile edge that gives every thread several tiles yet keeps a tile's operands cache-sized."""
    if n_rows <= 64:
        return max(1, n_rows)
    target = int(np.sqrt(n_rows * n_rows / (2 * 8 * max(1, threads))))
    return int(min(128, max(32, (target // 16) * 16 or 16)))


def plan_tiles(n_rows: int, n_cols: int | None = None, tile_size: int = 256, *, row_offset: int = 0,
               col_offset: int = 0) -> list[Tile]:  # fmt: skip
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
    row_offset, col_offset : int
        Where the problem's rows and columns start in a larger one (a Dask worker's region): tiles carry these
        global coordinates. A symmetric problem has one offset (``col_offset`` is ignored).

    Returns
    -------
    list of Tile
        Empty tiles (no row or no column) are left out.
    """
    if tile_size < 1:
        raise ValueError(f"tile_size must be positive, got {tile_size}")
    row_edges = [row_offset + e for e in range(0, n_rows, tile_size)] + [row_offset + n_rows]
    tiles = []
    if n_cols is None:
        for bi in range(len(row_edges) - 1):
            for bj in range(bi + 1):
                tiles.append(
                    Tile(row_edges[bi], row_edges[bi + 1], row_edges[bj], row_edges[bj + 1], bi == bj)
                )
    else:
        col_edges = [col_offset + e for e in range(0, n_cols, tile_size)] + [col_offset + n_cols]
        for bi in range(len(row_edges) - 1):
            for bj in range(len(col_edges) - 1):
                tiles.append(Tile(row_edges[bi], row_edges[bi + 1], col_edges[bj], col_edges[bj + 1]))
    return [t for t in tiles if t.n_rows and t.n_cols]


def region_tile_size(largest: int, regions: int, tiles_per_region: int = 6) -> int:
    """The tile edge that cuts a symmetric problem of ``largest`` items into at least ``tiles_per_region`` tiles
    per region (a Dask worker), so that the last tasks to finish are small (10 per worker measured slower on 2
    GPUs than 6, bench/RESULTS.md), and if a few more blocks allow it, into tiles that the regions can share
    equally."""
    blocks = 1
    while blocks * (blocks + 1) // 2 < tiles_per_region * regions and blocks < largest:
        blocks += 1
    # A triangle of b blocks holds b * b half-tiles (a diagonal tile is one, any other two): with b * b a multiple
    # of the regions, the tiles can be dealt to the workers in equal shares.
    even = next((b for b in range(blocks, blocks + regions) if b * b % regions == 0 and b <= largest), blocks)
    return max(1, -(-largest // even))
