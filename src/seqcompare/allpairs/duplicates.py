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

__all__ = ["Duplicates", "expand_pairs"]

_HASH_ROWS = 4096  # rows hashed per block: bounds the temporary words to 4096 x m / 8 x 8 bytes


def _hash_weights(words: int) -> np.ndarray:
    """The hash's multipliers, one odd 64-bit number per 8-byte word, fixed so that runs repeat."""
    return np.random.default_rng(0x5EC).integers(1, 1 << 63, words, dtype=np.uint64) | np.uint64(1)


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
        row_bytes = rows.reshape(n, -1).view(np.uint8).reshape(n, -1) if n else rows.reshape(0, 0)
        width = row_bytes.shape[1]
        words = -(-width // 8)
        weights = _hash_weights(words)
        hashes = np.empty(n, dtype=np.uint64)
        padded = np.zeros((min(n, _HASH_ROWS), words * 8), dtype=np.uint8)
        for lo in range(0, n, _HASH_ROWS):
            hi = min(n, lo + _HASH_ROWS)
            block = padded[: hi - lo]
            block[:, :width] = row_bytes[lo:hi] if table is None else table[row_bytes[lo:hi]]
            with np.errstate(over="ignore"):  # arithmetic modulo 2**64 is the point
                hashes[lo:hi] = (block.view(np.uint64) * weights).sum(axis=1, dtype=np.uint64)

        def row(k):
            return row_bytes[k] if table is None else table[row_bytes[k]]

        group = np.arange(n, dtype=np.int64)
        order = np.argsort(hashes, kind="stable")  # equal hashes are adjacent, in input order
        sorted_hashes = hashes[order]
        bounds = np.flatnonzero(np.diff(sorted_hashes)) + 1 if n else np.zeros(0, np.int64)
        run_starts = np.concatenate([[0], bounds]) if n else bounds
        run_stops = np.concatenate([bounds, [n]]) if n else bounds
        shared = run_stops - run_starts > 1
        for lo, hi in zip(run_starts[shared].tolist(), run_stops[shared].tolist()):
            representatives = [int(order[lo])]
            for other in order[lo + 1 : hi].tolist():
                # Verify: only identical rows share a group; a collision of different rows starts its own.
                match = next((rep for rep in representatives if np.array_equal(row(rep), row(other))), None)
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
        step = max(1, (1 << 24) // max(1, columns.size))
        for lo in range(0, self.n, step):
            hi = min(self.n, lo + step)
            out[lo:hi] = np.asarray(collapsed[self.group[lo:hi]])[:, columns]
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
