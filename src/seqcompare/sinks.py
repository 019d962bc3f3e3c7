"""Output sinks of the tile engine: each keeps only what its output needs.

Every sink has ``add(tile, block)`` (tiles arrive in any order, each once) and ``finish()``.
"""

from __future__ import annotations

import os

import numpy as np

from .engine import Tile
from .io.output import PendingFile


class MatrixSink:
    """The full ``(n_rows, n_cols)`` matrix, in memory or in an ``.npy`` file on disk.

    For a symmetric problem each off-diagonal tile is written twice (as itself and transposed), so the
    result is the whole square although only the lower triangle was computed.

    Parameters
    ----------
    shape : tuple of int
    symmetric : bool
    dtype : dtype
    path : str, optional
        Write an ``.npy`` memmap here: built in a temporary file (:attr:`temporary_path`, see
        :class:`~seqcompare.io.output.PendingFile`) and put in place by :meth:`finish`, so a failed run leaves
        nothing behind (call :meth:`abort`).
    """

    def __init__(self, shape, symmetric: bool, dtype=np.int32, path: str | os.PathLike | None = None):
        self.symmetric = symmetric
        self.path = None if path is None else os.fspath(path)
        self._pending = None
        if self.path is None:
            self.matrix = np.zeros(shape, dtype=dtype)
        else:
            self._pending = PendingFile(self.path, suffix=".npy")
            self.matrix = np.lib.format.open_memmap(self._pending.path, mode="w+", dtype=dtype, shape=shape)

    @property
    def temporary_path(self) -> str | None:
        """Where the ``.npy`` is being built (None in memory, or once finished): other processes writing tiles
        (Dask workers) open this file."""
        return None if self._pending is None else self._pending.path

    def add(self, tile: Tile, block: np.ndarray) -> None:
        self.matrix[tile.row_start : tile.row_stop, tile.col_start : tile.col_stop] = block
        if self.symmetric and not tile.diagonal:
            self.matrix[tile.col_start : tile.col_stop, tile.row_start : tile.row_stop] = block.T

    def finish(self) -> np.ndarray:
        if self._pending is None:
            return self.matrix
        self.matrix.flush()
        del self.matrix
        # Mapped before it is put in place: the mapping stays valid whether the file is renamed or copied
        # through a link or into a device and then removed.
        result = np.load(self._pending.path, mmap_mode="r")
        self._pending.commit()
        self._pending = None
        return result

    def abort(self) -> None:
        """Remove the partial file of an interrupted run (nothing once finished)."""
        if self._pending is not None:
            self.matrix = None
            self._pending.abort()
            self._pending = None


class PairsSink:
    """Pairs at distance ``<= max_dist``, as ``(i, j, d)`` arrays sorted by ``(i, j)``.

    Symmetric problems report each unordered pair once with ``i < j``; rectangular ones report
    (left index, right index).
    """

    def __init__(self, max_dist: int, symmetric: bool):
        self.max_dist = max_dist
        self.symmetric = symmetric
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, tile: Tile, block: np.ndarray) -> None:
        hit = block <= self.max_dist
        if tile.diagonal:
            hit &= np.tri(tile.n_rows, k=-1, dtype=bool)
        rows, cols = np.nonzero(hit)
        if rows.size == 0:
            return
        values = block[rows, cols]
        rows = rows + tile.row_start
        cols = cols + tile.col_start
        if self.symmetric:  # lower-triangle tiles: row > col; report (col, row)
            rows, cols = cols, rows
        self._parts.append((rows.astype(np.int64), cols.astype(np.int64), values.astype(np.int64)))

    def add_pairs(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """Pairs already selected elsewhere (e.g. on a GPU), in global indices and final orientation."""
        if len(rows):
            self._parts.append((np.asarray(rows, np.int64), np.asarray(cols, np.int64), np.asarray(values, np.int64)))

    def finish(self):
        if not self._parts:
            empty = np.empty(0, dtype=np.int64)
            return empty, empty.copy(), empty.copy()
        rows, cols, values = (np.concatenate(part) for part in zip(*self._parts))
        order = np.lexsort((cols, rows))
        return rows[order], cols[order], values[order]


class KnnSink:
    """The ``k`` nearest neighbours of every left item (itself excluded in symmetric problems).

    Ties are broken by the smaller neighbour index, so the result does not depend on tile order or size.
    ``finish`` returns ``(indices, distances)``, both ``(n_rows, k')`` with ``k' = min(k, candidates)``.
    """

    def __init__(self, k: int, n_rows: int, n_cols: int | None):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.symmetric = n_cols is None
        candidates = (n_rows - 1) if self.symmetric else n_cols
        self.k = min(k, max(candidates, 0))
        big = np.iinfo(np.int64).max
        self.best_d = np.full((n_rows, self.k), big, dtype=np.int64)
        self.best_i = np.full((n_rows, self.k), big, dtype=np.int64)

    def _merge(self, rows: slice, cand_d: np.ndarray, cand_i: np.ndarray) -> None:
        d = np.concatenate([self.best_d[rows], cand_d], axis=1)
        i = np.concatenate([self.best_i[rows], cand_i], axis=1)
        order = np.lexsort((i, d), axis=1)[:, : self.k]
        self.best_d[rows] = np.take_along_axis(d, order, axis=1)
        self.best_i[rows] = np.take_along_axis(i, order, axis=1)

    def add(self, tile: Tile, block: np.ndarray) -> None:
        if self.k == 0:
            return
        block = block.astype(np.int64)
        rows = slice(tile.row_start, tile.row_stop)
        cols = slice(tile.col_start, tile.col_stop)
        col_ids = np.broadcast_to(np.arange(tile.col_start, tile.col_stop), block.shape)
        if tile.diagonal:
            block = block.copy()
            np.fill_diagonal(block, np.iinfo(np.int64).max)
            col_ids = col_ids.copy()
            np.fill_diagonal(col_ids, np.iinfo(np.int64).max)
        self._merge(rows, block, col_ids)
        if self.symmetric and not tile.diagonal:
            row_ids = np.broadcast_to(np.arange(tile.row_start, tile.row_stop), block.T.shape)
            self._merge(cols, block.T, row_ids)

    def add_candidates(self, tile: Tile, candidates: dict) -> None:
        """Candidates already reduced elsewhere (e.g. on a GPU): ``candidates["rows"]`` holds, per row of
        ``tile``, keys ``distance << 32 | column`` sorted ascending; ``candidates["cols"]`` (symmetric,
        off-diagonal tiles) the same per column with row indices."""
        if self.k == 0:
            return
        for name, span in (("rows", slice(tile.row_start, tile.row_stop)),
                           ("cols", slice(tile.col_start, tile.col_stop))):  # fmt: skip
            keys = candidates.get(name)
            if keys is None:
                continue
            keys = np.asarray(keys, dtype=np.int64)
            distances = keys >> 32
            indices = keys & 0xFFFFFFFF
            sentinel = keys == np.iinfo(np.int64).max
            distances[sentinel] = np.iinfo(np.int64).max
            indices[sentinel] = np.iinfo(np.int64).max
            self._merge(span, distances, indices)

    def finish(self):
        return self.best_i, self.best_d


class LowerTriangleSink:
    """Streams the lower triangle (diagonal included) of a symmetric matrix, one block row at a time.

    A block row is written as soon as its last tile arrives, so memory holds one block row of tiles,
    whatever ``n``. ``write_block(row_start, rows)`` receives the finished rows (``rows`` is
    ``k x row_stop``; row ``i`` uses its first ``i + 1`` values).
    """

    def __init__(self, n: int, write_block, dtype=np.int32):
        self.n = n
        self.write_block = write_block
        self.dtype = dtype
        self._pending: dict[int, list] = {}

    def add(self, tile: Tile, block: np.ndarray) -> None:
        entry = self._pending.get(tile.row_start)
        if entry is None:
            rows = np.zeros((tile.n_rows, tile.row_stop), dtype=self.dtype)
            # Tiles of this block row: one per column block up to and including the diagonal one.
            entry = self._pending[tile.row_start] = [rows, 0]
        rows = entry[0]
        rows[:, tile.col_start : tile.col_stop] = block
        entry[1] += tile.n_cols
        if entry[1] == tile.row_stop:
            self.write_block(tile.row_start, rows)
            del self._pending[tile.row_start]

    def finish(self) -> None:
        if self._pending:
            raise RuntimeError("lower-triangle output is missing tiles")
