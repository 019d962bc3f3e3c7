"""Which sites differ: for chosen pairs, every column where the two sequences count as different, and the bases.

A site is listed exactly when it adds to the pair's distance under the same rules, so a pair's number of listed
sites is its SNP distance: under snp-dists' alphabet both characters are A, C, G or T and differ; with
``alphabet="all"`` any two different characters (never a ``missing`` one); with ``"iupac"`` two base sets that
share no base. Under a model: ``snp``, ``p``, ``jc69`` and ``k2p`` read A/C/G/T as snp-dists does; ``tn93`` lists
the comparable sites whose weight is not all on matching bases under its ``ambiguities`` rule (an ``R`` against
an ``A`` is listed under ``average``, not under ``resolve``).

The rules become one 256 x 256 table of byte pairs (:func:`byte_difference_table`), so listing the sites of a
batch of pairs is one look-up per site (:func:`differing_sites`).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

_CELLS_PER_BATCH = 1 << 24  # pairs x sites looked up at once


def byte_difference_table(*, model=None, alphabet="acgt", ambiguities="resolve", keep_case=False,
                          missing="") -> np.ndarray:  # fmt: skip
    """``table[a, b]``: whether bytes ``a`` and ``b`` at one site count as a difference (see the module).

    ``model`` None is :func:`~seqcompare.hamming.api.hamming`'s rules under ``alphabet``; a model other than
    ``tn93`` reads snp-dists' alphabet whatever ``alphabet`` says, as :func:`~.api.model_distances` does.
    """
    from . import models
    from .encoding import sequence_code_table

    if model != "tn93":
        if model is not None:
            models.check_options(model)
            alphabet = "acgt"
        every_byte = np.ones(256, dtype=bool)  # "all" numbers the characters present: let every byte be
        table, space = sequence_code_table(alphabet, keep_case=keep_case, missing=missing, present_bytes=every_byte)
        return space.difference_table()[table[:, None], table[None, :]]
    models.check_options(model, ambiguities)
    codes = models.tn93_byte_table()
    for character in missing:
        codes[ord(character.upper())] = codes[ord(character.lower())] = models.GAP
    weights = models.weight_table(ambiguities)
    sites, matches = weights[..., 0], weights[..., 1]
    by_code = (sites > 0) & (matches < sites)
    known = codes != 255
    table = np.zeros((256, 256), dtype=bool)
    table[np.ix_(known, known)] = by_code[codes[known][:, None], codes[known][None, :]]
    return table


def differing_sites(left: np.ndarray, right: np.ndarray, rows, cols, table: np.ndarray):
    """The differing sites of pairs ``(left[rows[k]], right[cols[k]])``.

    Returns
    -------
    pair, column : ndarray of int64
        One entry per differing site: the pair's index ``k`` and the site's 0-based column, ordered by pair,
        then column.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    m = left.shape[1]
    step = max(1, _CELLS_PER_BATCH // max(1, m))
    pairs, columns = [], []
    for lo in range(0, rows.size, step):
        hi = min(rows.size, lo + step)
        differs = table[left[rows[lo:hi]], right[cols[lo:hi]]]
        pair, column = np.nonzero(differs)
        pairs.append(pair + lo)
        columns.append(column)
    if not pairs:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(pairs).astype(np.int64), np.concatenate(columns).astype(np.int64)


def read_pairs(path: str, left_names, right_names) -> tuple[np.ndarray, np.ndarray]:
    """Pairs named in a table: the first two fields of each line (tab-separated, or comma-separated when the
    line has no tab), so the pairs output of ``seqcompare hamming`` and veg/tn93's CSV both serve. A first line
    that does not name two sequences is a header; blank lines and lines starting with ``#`` are skipped. An
    unknown name is an error naming the file and line."""
    from ..io.fasta import read_bytes

    left_index = {name: k for k, name in reversed(list(enumerate(left_names)))}
    right_index = {name: k for k, name in reversed(list(enumerate(right_names)))}
    text = bytes(read_bytes(path)).decode("utf-8", "surrogateescape")
    rows, cols = [], []
    first = True
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t") if "\t" in line else line.split(",")
        names = [field.strip().strip('"') for field in fields[:2]]
        known = len(names) == 2 and names[0] in left_index and names[1] in right_index
        if first and not known:
            first = False
            continue  # a header
        first = False
        if len(names) < 2:
            shown = line if len(line) <= 60 else line[:57] + "..."
            raise InputError(f"{path}: line {number}: expected two sequence names, got {shown!r}")
        for name, index, side in ((names[0], left_index, "first"), (names[1], right_index, "second")):
            if name not in index:
                raise InputError(f"{path}: line {number}: {side} name {name!r} is not a sequence of the alignment")
        rows.append(left_index[names[0]])
        cols.append(right_index[names[1]])
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def write_differing_sites(handle, left: np.ndarray, right: np.ndarray, rows, cols, table: np.ndarray,
                          left_names, right_names, separator: str) -> int:  # fmt: skip
    """Write ``sequence_1, sequence_2, column, base_1, base_2`` (a header, then one line per differing site,
    columns 1-based) for the pairs ``rows``, ``cols``; returns the number of sites written."""
    from ..io.tables import csv_field

    handle.write(separator.join(["sequence_1", "sequence_2", "column", "base_1", "base_2"]).encode() + b"\n")
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    left_text = [csv_field(name, separator) for name in left_names]
    right_text = left_text if right_names is left_names else [csv_field(name, separator) for name in right_names]
    written = 0
    step = max(1, _CELLS_PER_BATCH // max(1, left.shape[1]))
    for lo in range(0, rows.size, step):
        hi = min(rows.size, lo + step)
        pair, column = differing_sites(left, right, rows[lo:hi], cols[lo:hi], table)
        i, j = rows[lo:hi][pair], cols[lo:hi][pair]
        base_1 = left[i, column].tobytes().decode("latin-1")
        base_2 = right[j, column].tobytes().decode("latin-1")
        lines = [f"{left_text[a]}{separator}{right_text[b]}{separator}{c + 1}{separator}{x}{separator}{y}"
                 for a, b, c, x, y in zip(i.tolist(), j.tolist(), column.tolist(), base_1, base_2)]  # fmt: skip
        if lines:
            handle.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        written += len(lines)
    return written
