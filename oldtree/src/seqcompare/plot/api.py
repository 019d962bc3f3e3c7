"""Heatmaps of distance matrices: reading the matrix outputs, ordering by single linkage, drawing.

matplotlib is imported only to draw, through its object interface (a ``Figure`` on the Agg canvas: no pyplot
and no global state), so reading and ordering work without it.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError

__all__ = ["heatmap", "read_matrix", "single_linkage_order"]


def single_linkage_order(matrix) -> np.ndarray:
    """The leaf order of the single-linkage dendrogram of a square distance matrix.

    Single linkage is the minimum spanning tree's hierarchy, so the order is built from it: Prim's algorithm
    (O(n^2), missing distances as the farthest), then its edges from the shortest (ties by the smaller pair) join
    groups, the group holding the earlier first item going first. Every cluster of ``--clusters D`` is then one
    contiguous run.

    Parameters
    ----------
    matrix : array_like, shape (n, n)

    Returns
    -------
    ndarray of int64, shape (n,)
        A permutation of ``0..n-1``.
    """
    distances = np.asarray(matrix, dtype=np.float64)
    n = distances.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    distances = np.where(np.isnan(distances), np.inf, distances)
    # Prim: each item's nearest distance to the tree and through which item.
    in_tree = np.zeros(n, dtype=bool)
    nearest = np.full(n, np.inf)
    through = np.zeros(n, dtype=np.int64)
    edges = []
    current = 0
    for _ in range(n - 1):
        in_tree[current] = True
        closer = distances[current] < nearest
        nearest[closer] = distances[current][closer]
        through[closer] = current
        candidates = np.where(in_tree, np.nan, nearest)
        if np.all(np.isnan(candidates)):
            break
        following = int(np.nanargmin(np.where(np.isinf(candidates), np.finfo(np.float64).max, candidates)))
        edges.append((nearest[following], min(following, through[following]), max(following, through[following])))
        current = following
    # Join along the tree's edges, shortest first; each group a linked list of its items in drawing order.
    group = np.arange(n)
    size = np.ones(n, dtype=np.int64)
    head = np.arange(n)
    tail = np.arange(n)
    following = np.full(n, -1)
    members = {k: [k] for k in range(n)}  # for relabelling the smaller group (union by size)
    for _, a, b in sorted(edges):
        first, second = group[a], group[b]
        if head[first] > head[second]:  # the group whose first item comes first goes first
            first, second = second, first
        following[tail[first]] = head[second]
        tail[first] = tail[second]
        keep, gone = (first, second) if size[first] >= size[second] else (second, first)
        group[members[gone]] = keep
        members[keep].extend(members.pop(gone))
        size[keep] += size[gone]
        head[keep], tail[keep] = head[first], tail[first]
    order = []
    for g in sorted(members, key=lambda g: head[g]):
        item = head[g]
        while item >= 0:
            order.append(item)
            item = following[item]
    return np.array(order, dtype=np.int64)


def read_matrix(path, names_path=None):
    """A distance matrix and its names from an output of ``seqcompare hamming``.

    Parameters
    ----------
    path : str or path-like
        ``.npy`` (names from ``names_path`` or ``PATH.names.tsv``, as ``--npy`` writes them), PHYLIP (a first line
        holding only the count), or a table with a header line of names (tab- or comma-separated, snp-dists'
        layout; ``NA`` is missing).
    names_path : str or path-like, optional
        For ``.npy``: the names file (``--npy``'s, or one name per line).

    Returns
    -------
    matrix : ndarray, shape (n, p)
    row_names, column_names : list of str
    """
    path = os.fspath(path)
    if path.endswith(".npy"):
        try:
            matrix = np.load(path, mmap_mode="r")
        except (OSError, ValueError) as error:
            raise InputError(f"{path}: not a .npy matrix ({error})") from None
        if matrix.ndim != 2:
            raise InputError(f"{path}: expected a 2-D matrix, got shape {matrix.shape}")
        names_path = os.fspath(names_path) if names_path is not None else path + ".names.tsv"
        rows, columns = _read_names(names_path, matrix.shape) if os.path.exists(names_path) else (None, None)
        if rows is None:
            rows = [str(k + 1) for k in range(matrix.shape[0])]
            columns = [str(k + 1) for k in range(matrix.shape[1])]
        return np.asarray(matrix), rows, columns
    from ..io.fasta import read_bytes

    text = bytes(read_bytes(path)).decode("utf-8", "surrogateescape")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise InputError(f"{path}: empty matrix file")
    if lines[0].strip().isdigit():
        return _read_phylip(path, lines)
    separator = "\t" if "\t" in lines[0] else ","
    columns = [cell.strip('"') for cell in lines[0].split(separator)[1:]]
    rows, values = [], []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(separator)
        if len(cells) != len(columns) + 1:
            raise InputError(f"{path}: line {number} has {len(cells) - 1} values but the header names "
                             f"{len(columns)} columns")  # fmt: skip
        rows.append(cells[0].strip('"'))
        values.append(_numbers(path, number, cells[1:]))
    return np.array(values, dtype=np.float64).reshape(len(rows), len(columns)), rows, columns


def _numbers(path, number, cells):
    try:
        return [np.nan if cell in ("NA", "nan", "") else float(cell) for cell in cells]
    except ValueError:
        bad = next(cell for cell in cells if cell not in ("NA", "nan", "") and not _is_float(cell))
        raise InputError(f"{path}: line {number}: {bad!r} is not a number") from None


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_phylip(path, lines):
    n = int(lines[0].strip())
    if len(lines) - 1 != n:
        raise InputError(f"{path}: PHYLIP says {n} sequences but has {len(lines) - 1} rows")
    names, values = [], []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split()
        if len(cells) != n + 1:
            raise InputError(f"{path}: line {number} has {len(cells) - 1} values, expected {n} (square PHYLIP)")
        names.append(cells[0])
        values.append(_numbers(path, number, cells[1:]))
    return np.array(values, dtype=np.float64).reshape(n, n), names, names


def _read_names(path, shape):
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        lines = handle.read().splitlines()
    if lines and lines[0] == "axis\tindex\tname":  # --npy's names file
        rows = [line.split("\t", 2)[2] for line in lines[1:] if line.startswith("row\t")]
        columns = [line.split("\t", 2)[2] for line in lines[1:] if line.startswith("column\t")] or rows
    else:
        rows = columns = lines
    if len(rows) != shape[0] or len(columns) != shape[1]:
        raise InputError(f"{path}: {len(rows)} x {len(columns)} names for a {shape[0]} x {shape[1]} matrix")
    return rows, columns


def heatmap(matrix, names, out, *, column_names=None, order="cluster", title=None, label="distance",
            max_labels=80, file_format=None, vmax=None):  # fmt: skip
    """Draw a distance matrix as a heatmap (PNG, SVG or PDF).

    Parameters
    ----------
    matrix : array_like, shape (n, p)
        Distances; NaN (missing) is drawn grey.
    names : sequence of str
        Row names (and column names for a square matrix).
    out : str, path-like or binary file
        Where to write; its suffix gives the format unless ``file_format`` does.
    column_names : sequence of str, optional
        For a rectangular matrix.
    order : {"cluster", "input"}
        ``cluster``: rows and columns in :func:`single_linkage_order` (square matrices), so clusters show as
        blocks on the diagonal; ``input``: as given.
    title, label : str
        The title (default: the size) and the colour bar's label.
    max_labels : int
        Names are written beside the rows and columns up to this many (and never smaller than 4 points).
    file_format : str, optional
        ``png``, ``svg`` or ``pdf``.
    vmax : float, optional
        The distance at the top of the colour scale (default: the largest).

    Returns
    -------
    ndarray of int64
        The order the rows were drawn in.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'seqcompare[plot]'") from None
    import matplotlib

    matrix = np.asarray(matrix, dtype=np.float64)
    n_rows, n_cols = matrix.shape
    column_names = list(names) if column_names is None else list(column_names)
    square = n_rows == n_cols and column_names == list(names)
    if order not in ("cluster", "input"):
        raise ValueError(f"order must be 'cluster' or 'input', got {order!r}")
    rows = single_linkage_order(matrix) if order == "cluster" and square else np.arange(n_rows)
    cols = rows if square else np.arange(n_cols)
    shown = matrix[np.ix_(rows, cols)]
    labelled = max(n_rows, n_cols) <= max_labels
    font = max(4.0, min(9.0, 520.0 / max(1, max(n_rows, n_cols))))
    longest = max((len(name) for name in [*names, *column_names]), default=0) if labelled else 0
    margin = 0.6 + (longest * font * 0.55 / 72.0 if labelled else 0.0)  # inches for the names
    side = 6.5
    figure = Figure(figsize=(side + margin + 1.4, side * n_rows / max(n_rows, n_cols) + margin + 0.9),
                    layout="constrained")  # fmt: skip
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    colours = matplotlib.colormaps["viridis_r"].with_extremes(bad="#d0d0d0")
    finite = shown[np.isfinite(shown)]
    top = vmax if vmax is not None else (float(finite.max()) if finite.size else 1.0)
    image = axes.imshow(np.ma.masked_invalid(shown), cmap=colours, vmin=0.0, vmax=max(top, 1e-12),
                        interpolation="nearest" if max(n_rows, n_cols) <= 1000 else "antialiased", aspect="equal")  # fmt: skip
    if labelled:
        axes.set_xticks(range(n_cols), [column_names[k] for k in cols], rotation=90, fontsize=font)
        axes.set_yticks(range(n_rows), [names[k] for k in rows], fontsize=font)
    else:
        axes.set_xticks([])
        axes.set_yticks([])
        axes.set_xlabel(f"{n_cols} sequences" + (" (single-linkage order)" if order == "cluster" and square else ""))
        axes.set_ylabel(f"{n_rows} sequences")
    axes.tick_params(length=0)
    bar = figure.colorbar(image, ax=axes, shrink=0.8, pad=0.02)
    bar.set_label(label)
    axes.set_title(title if title is not None else f"{n_rows} x {n_cols} distances", fontsize=11)
    if np.isnan(shown).any():
        axes.text(1.0, -0.01, "grey: missing", transform=axes.transAxes, ha="right", va="top", fontsize=8)
    figure.savefig(out, dpi=150, format=file_format)
    return rows
