"""Outputs of CCC/DUO: TSV entries with SNP names and alleles, ``.npy`` of every table, CoMet's binary records, and
value histograms."""

from __future__ import annotations

import numpy as np


def _entries(result):
    """``(index, bits, value)`` of every entry the result holds: the thresholded entries, or every entry of every
    table of a full result (items in lexicographic order, entries in bit order)."""
    way = result.way
    if result.entry_index is not None:
        return result.entry_index, result.entry_bits, result.entry_value
    n_items = len(result.index)
    index = np.repeat(result.index, 1 << way, axis=0)
    entry = np.tile(np.arange(1 << way), n_items)
    bits = (entry[:, None] >> np.arange(way - 1, -1, -1)) & 1
    return index, bits, result.values.reshape(-1)


def comet_order(index: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """The order in which a single-process CoMet run writes entries: 2-way pairs ``(i < j)`` by ``j`` then ``i``;
    3-way triples ``(i < j < k)`` by ``j``, then ``k``, then ``i``; within an item, entries in bit order.
    (Read off CoMet's output files, which follow its storage order of metrics.)"""
    way = index.shape[1]
    entry = np.zeros(len(index), dtype=np.int64)
    for x in range(way):
        entry = 2 * entry + bits[:, x]
    if way == 2:
        keys = (entry, index[:, 0], index[:, 1])
    else:
        keys = (entry, index[:, 0], index[:, 2], index[:, 1])
    return np.lexsort(keys)


def write_comet_records(out, result) -> None:
    """CoMet's binary records, in CoMet's order (:func:`comet_order`): per entry ``uint32`` indices
    ``2 * vector + allele bit``, then the value as ``float32`` (little-endian, as CoMet writes on x86)."""
    way = result.way
    index, bits, value = _entries(result)
    order = comet_order(index, bits)
    record = np.empty(len(value), dtype=[(f"i{x}", "<u4") for x in range(way)] + [("value", "<f4")])
    for x in range(way):
        record[f"i{x}"] = 2 * index[order, x] + bits[order, x]
    record["value"] = value[order]
    out.write(record.tobytes())


def write_npy(out, result) -> None:
    """The values of every table, ``(n_items, 2, 2(, 2))`` float64, in the condensed order of the items."""
    np.save(out, result.values)


def write_tsv(out, result, genotypes) -> None:
    """One line per entry: ``snp_i, allele_i, snp_j, allele_j[, snp_k, allele_k], value`` (``repr`` of the
    float64 value, which reads back exactly)."""
    way = result.way
    index, bits, value = _entries(result)
    names, alleles = genotypes.names, genotypes.alleles
    header = "\t".join([f"snp_{c}\tallele_{c}" for c in "ijk"[:way]] + ["value"])
    lines = [header]
    for row in range(len(value)):
        fields = []
        for x in range(way):
            vector = int(index[row, x])
            fields += [names[vector], alleles[vector][int(bits[row, x])]]
        fields.append(repr(float(value[row])))
        lines.append("\t".join(fields))
    out.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))


def write_histogram(out, histogram: dict) -> None:
    """``class, low, high, count`` per bin and entry class."""
    edges, counts = histogram["edges"], histogram["counts"]
    lines = ["class\tlow\thigh\tcount"]
    for name, row in zip(histogram["classes"], counts):
        lines += [f"{name}\t{edges[b]:.6g}\t{edges[b + 1]:.6g}\t{row[b]}" for b in range(len(row))]
    out.write(("\n".join(lines) + "\n").encode())
