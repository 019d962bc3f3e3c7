"""Identical items, computed once: find the groups (hash, then verify), run the engine on one representative of
each, and expand what the reductions finished with back to every item.

Two items whose rows are identical after encoding have the same value against every third item, so the all-pairs
problem of the representatives holds every value of the whole one except the pairs inside a group. Those are
each group's self pair ``(r, r)``, which the work supplies (:meth:`~seqcompare.allpairs.Work.self_pairs`): 0 for
a count of differences, the model's value of a sequence against itself for distances made from counts (a TN93
ambiguity resolved against itself, for instance, is not always 0).

The expansions are exact: :meth:`Duplicates.expand_matrix` indexes, :meth:`Duplicates.expand_pairs` and
:meth:`Duplicates.expand_labels` give the pairs and clusters, in the order and numbering the uncollapsed run
gives them.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

__all__ = ["Duplicates", "expand_pairs"]

def _hash_parameters() -> tuple[int, int]:
    """The hash's start value and multiplier: FNV-1's 64-bit offset basis and prime (a test sets a zero
    multiplier, so that every row's hash is the same and only the verification tells rows apart)."""
    return 0xCBF29CE484222325, 0x100000001B3


def _hash_all(row_bytes: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """:func:`hash_rows` over every row, in blocks of rows on the CPU's threads (the kernel holds no GIL)."""
    from .executors import over_row_blocks

    seed, multiplier = (np.uint64(value) for value in _hash_parameters())
    over_row_blocks(hash_rows, row_bytes.shape[0], (row_bytes, table), (seed, multiplier, out))


@jit(reads=("row_bytes", "table"))
def hash_rows(row_bytes, table, start, stop, seed, multiplier, out):
    """``out[i]``: a 64-bit hash of ``table[row_bytes[i]]`` for rows ``start:stop``, eight mapped bytes at a time
    (each word is xor-ed in and the state multiplied and folded, FNV-1a over words)."""
    m = row_bytes.shape[1]
    whole = m - m % 8
    for i in range(start, stop):
        state = seed
        for s in range(0, whole, 8):
            word = np.uint64(0)
            for k in range(8):
                word |= np.uint64(table[row_bytes[i, s + k]]) << np.uint64(8 * k)
            state = (state ^ word) * multiplier
            state ^= state >> np.uint64(29)
        word = np.uint64(0)
        for s in range(whole, m):
            word |= np.uint64(table[row_bytes[i, s]]) << np.uint64(8 * (s - whole))
        out[i] = ((state ^ word) * multiplier) ^ np.uint64(m)


class Duplicates:
    """Groups of identical rows.

    Parameters
    ----------
    group : ndarray of int64, shape (n,)
        Each row's group. Groups are numbered 0, 1, ... by their first member, so ``representatives`` (each
        group's first member) ascend.

    Attributes
    ----------
    representatives : ndarray of int64, shape (n_groups,)
    sizes : ndarray of int64, shape (n_groups,)
    """

    def __init__(self, group: np.ndarray):
        self.group = np.asarray(group, dtype=np.int64)
        n_groups = int(self.group.max()) + 1 if self.group.size else 0
        self.sizes = np.bincount(self.group, minlength=n_groups).astype(np.int64)
        first = np.full(n_groups, self.group.size, dtype=np.int64)
        np.minimum.at(first, self.group, np.arange(self.group.size, dtype=np.int64))
        self.representatives = first
        # Members of each group in ascending order, as CSR: members[starts[g]:starts[g + 1]].
        self.members = np.argsort(self.group, kind="stable").astype(np.int64)
        self.starts = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(self.sizes, out=self.starts[1:])

    @classmethod
    def of_rows(cls, rows: np.ndarray, table: np.ndarray | None = None) -> Duplicates:
        """Groups of identical rows of a 2-D array (after ``table``, a 256-entry byte map, when given).

        Every row gets a 64-bit polynomial hash of its 8-byte words; rows with equal hashes are then compared
        in full, so a hash collision can never merge two different rows.
        """
        rows = np.asarray(rows)
        n = rows.shape[0]
        row_bytes = np.ascontiguousarray(rows).reshape(n, -1).view(np.uint8) if n else np.zeros((0, 0), np.uint8)
        if table is None:
            table = np.arange(256, dtype=np.uint8)
        table = np.ascontiguousarray(table, dtype=np.uint8)
        hashes = np.empty(n, dtype=np.uint64)
        if n:
            _hash_all(row_bytes, table, hashes)

        def same_rows(a: int, b: int) -> bool:
            first, second = row_bytes[a], row_bytes[b]
            return bool(np.array_equal(first, second) or np.array_equal(table[first], table[second]))

        group = np.arange(n, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")  # equal hashes are adjacent, in input order
        bounds = np.flatnonzero(np.diff(hashes[order])) + 1
        run_starts = np.concatenate([[0], bounds]) if n else bounds
        run_stops = np.concatenate([bounds, [n]]) if n else bounds
        shared = run_stops - run_starts > 1
        for lo, hi in zip(run_starts[shared].tolist(), run_stops[shared].tolist()):
            representatives = [int(order[lo])]
            for other in order[lo + 1 : hi].tolist():
                # Verify: only identical rows share a group; a collision of different rows starts its own.
                match = next((rep for rep in representatives if same_rows(rep, other)), None)
                if match is None:
                    representatives.append(other)
                else:
                    group[other] = group[match]
        # Number groups by first member.
        _, first_index, inverse = np.unique(group, return_index=True, return_inverse=True)
        rank = np.empty(first_index.size, dtype=np.int64)
        rank[np.argsort(first_index, kind="stable")] = np.arange(first_index.size)
        return cls(rank[inverse.ravel()])

    @property
    def n(self) -> int:
        return int(self.group.size)

    @property
    def n_groups(self) -> int:
        return int(self.sizes.size)

    @property
    def any(self) -> bool:
        """Whether any row has a duplicate."""
        return self.n_groups < self.n

    def representative_of(self) -> np.ndarray:
        """Each row's representative (the first row identical to it), int64 of length ``n``."""
        return self.representatives[self.group]

    def expand_matrix(self, collapsed, right: Duplicates | None = None, out=None) -> np.ndarray:
        """The ``(n, n_right)`` matrix of every item from the representatives' ``collapsed`` matrix.

        ``right`` are the column items' groups (None: this one's, a symmetric problem). ``out`` (an array or
        memmap of the full shape) is filled row block by row block; otherwise a new array is returned.
        """
        columns = (self if right is None else right).group
        if out is None:
            out = np.empty((self.n, columns.size), dtype=collapsed.dtype)
        if self.n and columns.size:
            gather(np.ascontiguousarray(collapsed), self.group, columns, out)
        return out

    def expand_labels(self, labels: np.ndarray, self_linked: np.ndarray) -> np.ndarray:
        """Clusters of every item from the representatives' cluster ``labels``.

        A group joins its representative's cluster; its members link to each other when ``self_linked[g]`` (their
        self pair is within the threshold), so a group that does not and whose representative is alone splits into
        singletons. Clusters are renumbered by first member in input order, as :class:`ClusterReduction` numbers.
        """
        labels = np.asarray(labels, dtype=np.int64)
        keys = labels[self.group].copy()
        alone = np.bincount(labels, minlength=labels.max() + 1 if labels.size else 0)[labels] == 1
        split = np.flatnonzero(alone & ~np.asarray(self_linked, dtype=bool) & (self.sizes > 1))
        if split.size:
            splitting = np.isin(self.group, split)
            # Members of a split group other than its first take keys of their own, past every label.
            others = splitting & (np.arange(self.n) != self.representatives[self.group])
            keys[others] = labels.size + np.arange(int(others.sum()))
        _, first_index, inverse = np.unique(keys, return_index=True, return_inverse=True)
        rank = np.empty(first_index.size, dtype=np.int64)
        rank[np.argsort(first_index, kind="stable")] = np.arange(first_index.size)
        return rank[inverse.ravel()]

    def within_group_pairs(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pair ``i < j`` of members of each group in ``groups``: ``(i, j, group)``."""
        groups = np.asarray(groups, dtype=np.int64)
        sizes = self.sizes[groups]
        # Member p (0-based within its group of size s) pairs with the s - 1 - p members after it.
        owner = np.repeat(groups, sizes)
        position = np.arange(owner.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        partners = self.sizes[owner] - 1 - position
        first = np.repeat(self.starts[owner] + position, partners)
        run_start = np.repeat(np.cumsum(partners) - partners, partners)
        offset = np.arange(first.size) - run_start + 1
        return self.members[first], self.members[first + offset], np.repeat(owner, partners)


def expand_pairs(left: Duplicates, right: Duplicates | None, pairs, self_pairs=None):
    """Every item's pairs from the representatives' ``pairs`` ``(i, j, value, *extra)`` (sorted by ``(i, j)``).

    ``right`` None is a symmetric problem: each collapsed pair ``a < b`` becomes the pairs of the two groups'
    members, each written ``i < j``, and ``self_pairs`` ``(groups, value, *extra)`` are the groups whose self pair
    is within the threshold, whose members are then pairs too. The result is sorted by ``(i, j)`` like
    :class:`~seqcompare.allpairs.PairsReduction`'s.
    """
    rows, cols, *columns = pairs
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    right_groups = left if right is None else right
    a, b = rows, cols  # the representatives' problem numbers its items by group
    size_b = right_groups.sizes[b]
    repeats = left.sizes[a] * size_b
    pair = np.repeat(np.arange(rows.size), repeats)
    k = np.arange(pair.size) - np.repeat(np.cumsum(repeats) - repeats, repeats)
    i = left.members[left.starts[a][pair] + k // size_b[pair]]
    j = right_groups.members[right_groups.starts[b][pair] + k % size_b[pair]]
    values = [np.asarray(c)[pair] for c in columns]
    if right is None:
        i, j = np.minimum(i, j), np.maximum(i, j)
        if self_pairs is not None and len(self_pairs[0]):
            groups, *self_columns = self_pairs
            si, sj, owner = left.within_group_pairs(groups)
            where = np.searchsorted(groups, owner)
            i, j = np.concatenate([i, si]), np.concatenate([j, sj])
            values = [np.concatenate([v, np.asarray(s)[where]]) for v, s in zip(values, self_columns, strict=True)]
    order = np.lexsort((j, i))
    return (i[order], j[order], *[v[order] for v in values])


@jit
def gather(collapsed, rows, columns, out):
    """``out[i, j] = collapsed[rows[i], columns[j]]`` (two fancy indexings in NumPy, and one pass here)."""
    for i in range(rows.size):
        source = collapsed[rows[i]]
        target = out[i]
        for j in range(columns.size):
            target[j] = source[columns[j]]
