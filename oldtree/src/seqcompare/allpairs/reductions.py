"""Reductions: what an all-pairs run keeps of its blocks, each written once for every backend.

A reduction has three steps (the contract of :class:`Reduction`):

- ``reduce(tile, block) -> partial`` runs wherever the block lives: in a CPU thread (NumPy), on a GPU (CuPy: the
  same code, through :func:`array_module`), in a Dask worker. It reads only the reduction's parameters, so a
  reduction travels to workers as those parameters (:meth:`Reduction.__getstate__`). Partials are small host
  objects in global coordinates (a tile's place in the whole problem).
- ``merge(partial)`` runs in the caller, once per partial, in any order.
- ``finish()`` returns the result.

``kind`` names what a reduction computes, so that a backend that does it its own way can say so (the GPU selects
pairs within a distance in its kernels' epilogue): see :attr:`seqcompare.allpairs.Work.native`.
"""

from __future__ import annotations

import os

import numpy as np

from ..io.output import PendingFile
from .plan import Tile

_NO_KEY = np.iinfo(np.int64).max


def array_module(array):
    """NumPy, or CuPy for an array that lives on a GPU (decided by the array's type; imports nothing else)."""
    if type(array).__module__.split(".", 1)[0] == "cupy":
        import cupy

        return cupy
    return np


def to_host(array) -> np.ndarray:
    """A NumPy array of ``array`` (copied from the GPU when it lives there)."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else np.asarray(array)


class Reduction:
    """Base of the reductions: ``reduce`` / ``merge`` / ``finish`` (see the module).

    Subclasses keep their accumulated state in attributes listed in ``state`` (made by :meth:`start`); only the
    other attributes, the parameters, travel to other processes.
    """

    kind = "reduction"
    state: tuple = ()

    @property
    def accepts(self) -> tuple:
        """Kinds of reduction whose partials :meth:`merge` takes: its own kind, and for some the kind they build
        on (clusters merge the partials of ``pairs``), so that a backend's native way of one serves the other."""
        return (self.kind,)

    def reduce(self, tile: Tile, block):
        raise NotImplementedError

    def merge(self, partial) -> None:
        raise NotImplementedError

    def finish(self):
        raise NotImplementedError

    def for_workers(self) -> Reduction:
        """What Dask workers run ``reduce`` with (by default the reduction itself, without its state)."""
        return self

    def collapsed(self, left, right) -> Reduction:
        """The same reduction for the problem of the groups' representatives (:mod:`.duplicates`): ``left`` and
        ``right`` are the rows' and columns' :class:`~.duplicates.Duplicates` (``right`` None: symmetric)."""
        raise NotImplementedError(f"{self.kind} results cannot be expanded from representatives of duplicates")

    def expand(self, result, left, right, self_pairs):
        """This reduction's result for every item, from :meth:`collapsed`'s ``result``. ``self_pairs`` (symmetric
        problems) is ``(groups, block)``: the groups with more than one member and the work's block of each
        one's representative against itself, the value of every pair inside the group."""
        raise NotImplementedError(f"{self.kind} results cannot be expanded from representatives of duplicates")

    def __getstate__(self):
        return {name: value for name, value in vars(self).items() if name not in self.state}


class Combined(Reduction):
    """Several reductions of the same blocks: a partial is the tuple of theirs, the result the tuple of results."""

    kind = "combined"

    def __init__(self, *reductions: Reduction):
        self.reductions = tuple(reductions)

    def reduce(self, tile, block):
        return tuple(r.reduce(tile, block) for r in self.reductions)

    def merge(self, partial) -> None:
        for reduction, part in zip(self.reductions, partial):
            reduction.merge(part)

    def finish(self):
        return tuple(r.finish() for r in self.reductions)

    def for_workers(self) -> Combined:
        return Combined(*(r.for_workers() for r in self.reductions))

    def collapsed(self, left, right) -> Combined:
        return Combined(*(r.collapsed(left, right) for r in self.reductions))

    def expand(self, result, left, right, self_pairs):
        return tuple(r.expand(part, left, right, self_pairs) for r, part in zip(self.reductions, result))


class MatrixReduction(Reduction):
    """The full ``(n_rows, n_cols)`` matrix, in memory or in an ``.npy`` file.

    For a symmetric problem each off-diagonal tile is written twice (as itself and transposed), so the result is
    the whole square although only the lower triangle was computed. With ``path`` the matrix is built in a
    temporary file (:class:`~seqcompare.io.output.PendingFile`) and put in place by :meth:`finish`, so a failed
    run leaves nothing (call :meth:`abort`); Dask workers then write their tiles into that file themselves
    (:meth:`for_workers`), and the path must be one they all reach.

    Parameters
    ----------
    shape : tuple of int
    symmetric : bool
    dtype : dtype
    path : str, optional
    """

    kind = "matrix"
    state = ("matrix", "pending")

    def __init__(self, shape, symmetric: bool, dtype=np.int32, path: str | os.PathLike | None = None):
        self.shape = tuple(shape)
        self.symmetric = symmetric
        self.dtype = np.dtype(dtype)
        self.path = None if path is None else os.fspath(path)
        self.in_place = None  # the file Dask workers write tiles into (set by for_workers)
        self.pending = None
        if self.path is None:
            self.matrix = np.zeros(self.shape, dtype=self.dtype)
        else:
            self.pending = PendingFile(self.path, suffix=".npy")
            self.matrix = np.lib.format.open_memmap(self.pending.path, mode="w+", dtype=self.dtype, shape=self.shape)

    def reduce(self, tile, block):
        if self.in_place is None:
            return tile, to_host(block)
        matrix = np.load(self.in_place, mmap_mode="r+")
        self._write(matrix, tile, to_host(block))
        matrix.flush()
        return None

    def _write(self, matrix, tile, block) -> None:
        matrix[tile.row_start : tile.row_stop, tile.col_start : tile.col_stop] = block
        if self.symmetric and not tile.diagonal:
            matrix[tile.col_start : tile.col_stop, tile.row_start : tile.row_stop] = block.T

    def merge(self, partial) -> None:
        if partial is not None:
            self._write(self.matrix, *partial)

    def for_workers(self) -> MatrixReduction:
        if self.pending is None:
            return self
        self.matrix.flush()
        workers = object.__new__(MatrixReduction)
        workers.__dict__.update(self.__getstate__())
        workers.in_place = self.pending.path
        return workers

    def collapsed(self, left, right) -> MatrixReduction:
        return MatrixReduction((left.n_groups, (left if right is None else right).n_groups), self.symmetric,
                               self.dtype)  # fmt: skip

    def expand(self, result, left, right, self_pairs) -> np.ndarray:
        # The representatives' diagonal holds each group's self pair, so indexing gives every cell.
        left.expand_matrix(result, right, out=self.matrix)
        return self.finish()

    def finish(self) -> np.ndarray:
        if self.pending is None:
            return self.matrix
        self.matrix.flush()
        del self.matrix
        # Mapped before it is put in place: the mapping stays valid whether the file is renamed or copied through
        # a link or into a device and then removed.
        result = np.load(self.pending.path, mmap_mode="r")
        self.pending.commit()
        self.pending = None
        return result

    def abort(self) -> None:
        """Remove the partial file of an interrupted run (nothing once finished)."""
        if self.pending is not None:
            self.matrix = None
            self.pending.abort()
            self.pending = None


class LowerTriangleReduction(Reduction):
    """Streams the lower triangle (diagonal included) of a symmetric matrix, one block row at a time.

    A block row goes to ``write_block(row_start, rows)`` as soon as its last tile arrives (``rows`` is
    ``k x row_stop``; row ``i`` uses its first ``i + 1`` values), so memory holds the block rows still
    incomplete, whatever ``n``.
    """

    kind = "lower_triangle"
    state = ("write_block", "pending_rows")

    def __init__(self, n: int, write_block, dtype=np.int32):
        self.n = n
        self.dtype = np.dtype(dtype)
        self.write_block = write_block
        self.pending_rows: dict[int, list] = {}

    def reduce(self, tile, block):
        return tile, to_host(block)

    def merge(self, partial) -> None:
        tile, block = partial
        entry = self.pending_rows.get(tile.row_start)
        if entry is None:
            # Tiles of this block row: one per column block up to and including the diagonal one.
            entry = self.pending_rows[tile.row_start] = [np.zeros((tile.n_rows, tile.row_stop), self.dtype), 0]
        entry[0][:, tile.col_start : tile.col_stop] = block
        entry[1] += tile.n_cols
        if entry[1] == tile.row_stop:
            self.write_block(tile.row_start, entry[0])
            del self.pending_rows[tile.row_start]

    def finish(self) -> None:
        if self.pending_rows:
            raise RuntimeError("lower-triangle output is missing tiles")

    def collapsed(self, left, right) -> MatrixReduction:
        return MatrixReduction((left.n_groups, left.n_groups), True, self.dtype)

    def expand(self, result, left, right, self_pairs) -> None:
        step = max(1, (1 << 22) // max(1, self.n))
        for start in range(0, self.n, step):
            stop = min(self.n, start + step)
            self.write_block(start, result[left.group[start:stop]][:, left.group[:stop]])


def _in_order(rows: np.ndarray, cols: np.ndarray) -> bool:
    """Whether the pairs ``(rows[k], cols[k])`` are in strictly increasing ``(row, col)`` order."""
    later_row = rows[1:] > rows[:-1]
    return bool(np.all(later_row | ((rows[1:] == rows[:-1]) & (cols[1:] > cols[:-1]))))


class PairsReduction(Reduction):
    """Pairs at distance ``<= max_dist``, as ``(i, j, d)`` arrays sorted by ``(i, j)`` (``i``, ``j`` int64; ``d``
    int64 for integer blocks, float64 for float ones, where NaN, a missing distance, is never within reach).

    Symmetric problems report each unordered pair once with ``i < j``; rectangular ones report (left index, right
    index). ``value_cap`` reports ``min(d, value_cap)`` for the pairs chosen by their true distance. A block that
    is a tuple ``(distances, extra, ...)`` selects on the distances and carries each extra array's values of the
    same pairs as further columns: ``(i, j, d, extra, ...)``; ``extras`` says how many, so that a run without a
    pair has its (empty, int64) columns too.
    """

    kind = "pairs"
    state = ("parts",)

    def __init__(self, max_dist, symmetric: bool, value_cap: int | None = None, extras: int = 0):
        self.max_dist = max_dist if isinstance(max_dist, float) else int(max_dist)
        self.symmetric = symmetric
        self.value_cap = value_cap
        self.extras = extras
        self.parts: list = []

    def reduce(self, tile, block):
        extras = ()
        if isinstance(block, tuple):
            block, *extras = block
        xp = array_module(block)
        hit = block <= self.max_dist
        if tile.diagonal:
            hit &= xp.tri(tile.n_rows, k=-1, dtype=bool)
        rows, cols = xp.nonzero(hit)
        columns = [to_host(array[rows, cols]) for array in (block, *extras)]
        columns = [c.astype(np.float64 if c.dtype.kind == "f" else np.int64) for c in columns]
        rows, cols = to_host(rows).astype(np.int64) + tile.row_start, to_host(cols).astype(np.int64) + tile.col_start
        if self.symmetric:  # lower-triangle tiles: row > col; report (col, row)
            rows, cols = cols, rows
        return (rows, cols, *columns)

    def merge(self, partial) -> None:
        if len(partial[0]):
            self.parts.append(partial)

    def finish(self):
        if not self.parts:
            empty = np.empty(0, dtype=np.int64)
            dtype = np.float64 if isinstance(self.max_dist, float) else np.int64
            return (empty, empty.copy(), np.empty(0, dtype=dtype), *(empty.copy() for _ in range(self.extras)))
        rows, cols, *values = (np.concatenate(part) for part in zip(*self.parts))
        if not _in_order(rows, cols):  # a GPU's pairs come sorted already (lexsort: 26 ms for 132,509 pairs)
            order = np.lexsort((cols, rows))
            rows, cols, values = rows[order], cols[order], [v[order] for v in values]
        if self.value_cap is not None:
            values[0] = np.minimum(values[0], self.value_cap)
        return (rows, cols, *values)

    def collapsed(self, left, right) -> PairsReduction:
        return PairsReduction(self.max_dist, self.symmetric, self.value_cap, self.extras)

    def within(self, block) -> tuple[np.ndarray, list]:
        """Which entries of a 1-D ``block`` (or tuple of them) are within reach, and the columns of those."""
        extras = ()
        if isinstance(block, tuple):
            block, *extras = block
        block = to_host(block)
        hit = block <= self.max_dist
        columns = [to_host(array)[hit] for array in (block, *extras)]
        columns = [c.astype(np.float64 if c.dtype.kind == "f" else np.int64) for c in columns]
        if self.value_cap is not None:
            columns[0] = np.minimum(columns[0], self.value_cap)
        return hit, columns

    def expand(self, result, left, right, self_pairs):
        from .duplicates import expand_pairs

        inside = None
        if self_pairs is not None:
            groups, block = self_pairs
            hit, columns = self.within(block)
            inside = (groups[hit], *columns)
        return expand_pairs(left, right, result, inside)


class Field(Reduction):
    """``reduction`` of one member of tuple blocks (``block[index]``): a matrix of the comparable sites beside a
    matrix of the distances, for instance, through :class:`Combined`."""

    def __init__(self, reduction: Reduction, index: int):
        self.reduction = reduction
        self.index = index
        self.kind = f"field:{reduction.kind}"

    def reduce(self, tile, block):
        return self.reduction.reduce(tile, block[self.index])

    def merge(self, partial) -> None:
        self.reduction.merge(partial)

    def finish(self):
        return self.reduction.finish()

    def for_workers(self) -> Field:
        return Field(self.reduction.for_workers(), self.index)

    def collapsed(self, left, right) -> Field:
        return Field(self.reduction.collapsed(left, right), self.index)

    def expand(self, result, left, right, self_pairs):
        if self_pairs is not None:
            self_pairs = (self_pairs[0], self_pairs[1][self.index])
        return self.reduction.expand(result, left, right, self_pairs)

    def abort(self) -> None:
        abort = getattr(self.reduction, "abort", None)
        if abort is not None:
            abort()


class ClusterReduction(Reduction):
    """Single-linkage clusters at distance ``<= max_dist``: the connected components of the graph of pairs within
    reach, of ``n`` items (a symmetric problem).

    ``reduce`` selects a tile's pairs as :class:`PairsReduction` does, and ``merge`` joins them into a forest at
    once (each item points to a smaller one of its component; roots are each component's first item), so memory
    is ``n`` indices however many pairs there are, and a backend that selects pairs its own way (the GPU's
    epilogue) feeds it directly: it accepts the partials of ``pairs``. ``finish`` returns ``labels``, int64 of
    length ``n``: clusters numbered 0, 1, ... by their first member in input order, singletons included.
    """

    kind = "clusters"
    accepts = ("clusters", "pairs")
    state = ("parent",)

    def __init__(self, max_dist, n: int):
        self.pairs = PairsReduction(max_dist, True)
        self.max_dist = self.pairs.max_dist
        self.symmetric = True
        self.n = n
        self.parent = np.arange(n, dtype=np.int64)

    def reduce(self, tile, block):
        rows, cols = self.pairs.reduce(tile, block)[:2]
        return rows, cols

    def _roots(self, items: np.ndarray) -> np.ndarray:
        parent = self.parent
        roots = parent[items]
        while True:
            up = parent[roots]
            if np.array_equal(up, roots):
                return roots
            roots = up

    def merge(self, partial) -> None:
        left, right = partial[0], partial[1]
        while len(left):
            a, b = self._roots(left), self._roots(right)
            apart = a != b
            if not apart.any():
                break
            a, b = a[apart], b[apart]
            # Hook the larger root under the smaller: parent[x] <= x always, so no cycle can form.
            np.minimum.at(self.parent, np.maximum(a, b), np.minimum(a, b))
            left, right = left[apart], right[apart]
        # Point every item at its root, so the next merge starts from short paths.
        while True:
            up = self.parent[self.parent]
            if np.array_equal(up, self.parent):
                break
            self.parent = up

    def finish(self) -> np.ndarray:
        _, labels = np.unique(self._roots(np.arange(self.n)), return_inverse=True)
        return labels.astype(np.int64)

    def collapsed(self, left, right) -> ClusterReduction:
        return ClusterReduction(self.max_dist, left.n_groups)

    def expand(self, result, left, right, self_pairs) -> np.ndarray:
        linked = np.zeros(left.n_groups, dtype=bool)
        if self_pairs is not None:
            groups, block = self_pairs
            linked[groups] = self.pairs.within(block)[0]
        return left.expand_labels(result, linked)


class KnnReduction(Reduction):
    """The ``k`` nearest neighbours of every left item (itself excluded in symmetric problems).

    Ties go to the smaller neighbour index, so the result depends on neither tile order nor size. ``reduce`` keeps
    each row's (and, off the diagonal of a symmetric problem, each column's) ``k`` best keys
    ``distance << 32 | index`` of the tile, found where the block is (a GPU sorts them there). ``finish`` returns
    ``(indices, distances)``, both ``(n_rows, k')`` int64 with ``k' = min(k, candidates)``.
    """

    kind = "knn"
    state = ("best",)

    def __init__(self, k: int, n_rows: int, n_cols: int | None):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.symmetric = n_cols is None
        candidates = (n_rows - 1) if self.symmetric else n_cols
        self.k = min(k, max(candidates, 0))
        self.n_rows = n_rows
        self.best = np.full((n_rows, self.k), _NO_KEY, dtype=np.int64)

    def reduce(self, tile, block):
        if self.k == 0:
            return tile, None, None
        xp = array_module(block)
        block = block.astype(xp.int64)
        cols = xp.arange(tile.col_start, tile.col_stop, dtype=xp.int64)
        keys = (block << 32) | cols[None, :]
        if tile.diagonal:
            keys[xp.arange(tile.n_rows), xp.arange(tile.n_rows)] = _NO_KEY
        by_row = to_host(xp.sort(keys, axis=1)[:, : min(self.k, keys.shape[1])])
        by_col = None
        if self.symmetric and not tile.diagonal:
            rows = xp.arange(tile.row_start, tile.row_stop, dtype=xp.int64)
            keys_t = (block.T << 32) | rows[None, :]
            by_col = to_host(xp.sort(keys_t, axis=1)[:, : min(self.k, keys_t.shape[1])])
        return tile, by_row, by_col

    def _merge_rows(self, span: slice, keys: np.ndarray) -> None:
        both = np.concatenate([self.best[span], keys], axis=1)
        both.sort(axis=1)
        self.best[span] = both[:, : self.k]

    def merge(self, partial) -> None:
        tile, by_row, by_col = partial
        if by_row is not None:
            self._merge_rows(slice(tile.row_start, tile.row_stop), by_row)
        if by_col is not None:
            self._merge_rows(slice(tile.col_start, tile.col_stop), by_col)

    def finish(self):
        distances = self.best >> 32
        indices = self.best & 0xFFFFFFFF
        missing = self.best == _NO_KEY
        distances[missing] = _NO_KEY
        indices[missing] = _NO_KEY
        return indices, distances


class Concatenation(Reduction):
    """Blocks that are pieces of one result (rows of a table, scores of pairs): the pieces are put back in part
    order and concatenated. A part is anything with a ``start`` (its first row); a block an array or a tuple of
    arrays of the same length."""

    kind = "concatenation"
    state = ("pieces",)

    def __init__(self):
        self.pieces: dict = {}

    def reduce(self, part, block):
        return part.start, block

    def merge(self, partial) -> None:
        start, block = partial
        self.pieces[start] = block

    def finish(self):
        ordered = [self.pieces[start] for start in sorted(self.pieces)]
        if len(ordered) == 1:  # one piece is the whole result (a GPU's run): no copy
            return ordered[0]
        if ordered and isinstance(ordered[0], tuple):
            return tuple(np.concatenate(column) for column in zip(*ordered))
        return np.concatenate(ordered) if ordered else np.empty(0)
