"""Neighbour-joining trees (Saitou and Nei 1987, in Studier and Keppler's 1988 form) of a distance matrix, and
the matrix in PHYLIP's format.

The join is exact and deterministic: every step follows one fixed order of floating-point operations, so the
same matrix always gives the same tree, bit for bit. Nodes are kept in label order (leaves ``0..n-1``, then each
new node with the next label). At each step, with ``r`` nodes left and ``R_k`` the sum of node ``k``'s distances:

- the pair ``(a, b)`` joined is the first, scanning ``a < b`` in label order, with the least
  ``Q = (r - 2) d(a, b) - R_a - R_b``;
- its branches are ``0.5 d(a, b) + (R_a - R_b) / (2 (r - 2))`` and ``d(a, b)`` minus that;
- the new node ``u`` is ``d(u, k) = 0.5 (d(a, k) + d(b, k) - d(a, b))``, and each ``R_k`` becomes
  ``R_k - d(a, k) - d(b, k) + d(u, k)``.

The last three nodes join at the (unrooted) tree's centre. Branches may be negative, as the method gives them;
they are written as Python writes floats (the shortest text that reads back to the same float64).
"""

from __future__ import annotations

import numpy as np

from .._jit import jit
from ..errors import InputError

_NEWICK_SPECIAL = set(" \t\n()[]':;,")


def newick_name(name: str) -> str:
    """A leaf name as Newick reads it: single-quoted (quotes doubled) when it holds a character Newick uses."""
    if name and not _NEWICK_SPECIAL.intersection(name):
        return name
    return "'" + name.replace("'", "''") + "'"


@jit
def least_q_rows(distances, order, ordered_totals, r, scale, lo, hi, row_bests, row_partners):
    """For nodes ``a`` in ``lo:hi`` (label order), the least ``Q`` over the nodes after it and the first node
    that has it. Rows are independent, so blocks of them run on the CPU's threads."""
    for a in range(lo, hi):
        row = distances[order[a]]
        total_a = ordered_totals[a]
        least = np.inf
        partner = a + 1
        for b in range(a + 1, r):
            q = scale * row[order[b]] - total_a - ordered_totals[b]
            if q < least:
                least = q
                partner = b
        row_bests[a] = least
        row_partners[a] = partner


@jit
def join(distances, order, totals, ordered_totals, labels_of_slots, r, best_a, best_b, next_label, joined, lengths):
    """Join the nodes at places ``best_a < best_b`` of ``order``: their labels into ``joined``, their branches
    into ``lengths``; the new node (label ``next_label``) takes ``best_a``'s slot and goes last in ``order``,
    and ``ordered_totals`` holds the ``r - 1`` nodes' totals in their new order."""
    slot_a = order[best_a]
    slot_b = order[best_b]
    d_ab = distances[slot_a, slot_b]
    branch_a = 0.5 * d_ab + (totals[slot_a] - totals[slot_b]) / (2.0 * (r - 2))
    joined[0] = labels_of_slots[slot_a]
    joined[1] = labels_of_slots[slot_b]
    lengths[0] = branch_a
    lengths[1] = d_ab - branch_a
    for k in range(r):
        slot_k = order[k]
        if slot_k == slot_a or slot_k == slot_b:
            continue
        d_uk = 0.5 * (distances[slot_a, slot_k] + distances[slot_b, slot_k] - d_ab)
        totals[slot_k] = totals[slot_k] - distances[slot_a, slot_k] - distances[slot_b, slot_k] + d_uk
        distances[slot_a, slot_k] = d_uk
        distances[slot_k, slot_a] = d_uk
    new_total = 0.0
    for k in range(r):
        slot_k = order[k]
        if slot_k != slot_a and slot_k != slot_b:
            new_total += distances[slot_a, slot_k]
    distances[slot_a, slot_a] = 0.0
    totals[slot_a] = new_total
    labels_of_slots[slot_a] = next_label
    kept = 0
    for k in range(r):
        if order[k] != slot_a and order[k] != slot_b:
            order[kept] = order[k]
            kept += 1
    order[kept] = slot_a
    for k in range(r - 1):
        ordered_totals[k] = totals[order[k]]


@jit
def row_totals(distances, totals):
    """Each row's sum, left to right."""
    n = distances.shape[0]
    for a in range(n):
        total = 0.0
        for b in range(n):
            total += distances[a, b]
        totals[a] = total


def _join_all(distances: np.ndarray, threads: int):
    """Every join: ``(joins, lengths, last)``, the labels joined at each step and their branches, and the last
    three nodes (labels) with theirs."""
    from concurrent.futures import ThreadPoolExecutor

    n = distances.shape[0]
    order = np.arange(n, dtype=np.int64)
    labels = np.arange(n, dtype=np.int64)
    totals = np.zeros(n)
    row_totals(distances, totals)
    ordered_totals = totals.copy()
    row_bests = np.zeros(n)
    row_partners = np.zeros(n, dtype=np.int64)
    joins = np.zeros((max(0, n - 3), 2), dtype=np.int64)
    lengths = np.zeros((max(0, n - 3), 2))
    with ThreadPoolExecutor(threads) as pool:
        for step in range(n - 3):
            r = n - step
            pieces = 1 if r < 512 else threads * 4
            # Blocks of rows with about equal work: row a scans r - a - 1 nodes.
            edges = np.unique((r - np.sqrt(np.linspace(r * r, 1.0, pieces + 1))).astype(np.int64).clip(0, r - 1))
            edges[-1] = r - 1
            blocks = list(zip(edges[:-1].tolist(), edges[1:].tolist()))
            arguments = (distances, order, ordered_totals, r, float(r - 2))
            if len(blocks) == 1:
                least_q_rows(*arguments, 0, r - 1, row_bests, row_partners)
            else:
                list(pool.map(lambda block: least_q_rows(*arguments, *block, row_bests, row_partners), blocks))
            # The first least Q in label order: rows in order, and each row's first least.
            best_a = int(np.argmin(row_bests[: r - 1]))
            best_b = int(row_partners[best_a])
            join(distances, order, totals, ordered_totals, labels, r, best_a, best_b, n + step, joins[step],
                 lengths[step])  # fmt: skip
    a, b, c = order[:3].tolist()
    d_ab, d_ac, d_bc = (float(distances[x, y]) for x, y in ((a, b), (a, c), (b, c)))
    last = [0.5 * (d_ab + d_ac - d_bc), 0.5 * (d_ab + d_bc - d_ac), 0.5 * (d_ac + d_bc - d_ab)]
    return joins, lengths, list(zip(labels[[a, b, c]].tolist(), last))


def nj_tree(matrix, names, threads: int | None = None) -> str:
    """The neighbour-joining tree of a square distance matrix, as a Newick string (see the module).

    Parameters
    ----------
    matrix : array_like, shape (n, n)
        Symmetric distances; every one finite (a missing or saturated distance cannot be joined).
    names : sequence of str
        The leaves' names.
    threads : int, optional
        Threads for the search of each join (default: all available cores); the tree does not depend on them.

    Returns
    -------
    str
        Newick, ending in ``";"``: the last three nodes joined at the centre (two leaves: their distance split
        in halves).

    Examples
    --------
    >>> from seqcompare.hamming.tree import nj_tree
    >>> nj_tree([[0, 2, 4, 4], [2, 0, 4, 4], [4, 4, 0, 2], [4, 4, 2, 0]], ["a", "b", "c", "d"])
    '(c:1.0,d:1.0,(a:1.0,b:1.0):2.0);'
    """
    distances = np.array(matrix, dtype=np.float64)
    n = len(names)
    if distances.shape != (n, n):
        raise ValueError(f"the matrix is {distances.shape}, but there are {n} names")
    bad = ~np.isfinite(distances)
    if bad.any():
        i, j = (int(k) for k in np.argwhere(bad)[0])
        raise InputError(f"a neighbour-joining tree needs every distance, but {int(bad.sum())} are missing or "
                         f"infinite (first: {names[i]!r} and {names[j]!r}); lower --min-overlap or choose a "
                         f"model without saturation")  # fmt: skip
    if not np.array_equal(distances, distances.T):
        raise InputError("a neighbour-joining tree needs a symmetric matrix")
    leaves = [newick_name(name) for name in names]
    if n == 0:
        return ";"
    if n == 1:
        return f"{leaves[0]};"
    if n == 2:
        half = float(0.5 * distances[0, 1])
        return f"({leaves[0]}:{half!r},{leaves[1]}:{half!r});"
    from ..allpairs import default_threads

    joins, lengths, last = _join_all(distances, default_threads() if threads is None else threads)
    text = list(leaves)
    for (a, b), (length_a, length_b) in zip(joins.tolist(), lengths.tolist()):
        text.append(f"({text[a]}:{length_a!r},{text[b]}:{length_b!r})")
    centre = ",".join(f"{text[label]}:{length!r}" for label, length in last)
    return f"({centre});"


def write_phylip(handle, matrix, names) -> None:
    """A square distance matrix in PHYLIP's format: the count, then each name and its row, space-separated
    ("relaxed" PHYLIP: names are written whole, so they must hold no whitespace, which FASTA names never do)."""
    from ..io.tables import float_text

    matrix = np.asarray(matrix)
    if matrix.dtype.kind == "f" and not np.isfinite(matrix).all():
        raise InputError("PHYLIP has no missing value, but some distances are missing or infinite; lower "
                         "--min-overlap or choose a model without saturation")  # fmt: skip
    as_text = float_text if matrix.dtype.kind == "f" else str
    handle.write(f"{len(names)}\n".encode())
    step = max(1, (1 << 20) // max(1, len(names)))
    for lo in range(0, len(names), step):
        rows = np.asarray(matrix[lo : lo + step]).tolist()
        lines = [" ".join([names[lo + k], *map(as_text, row)]) for k, row in enumerate(rows)]
        handle.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
