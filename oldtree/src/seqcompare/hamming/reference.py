"""Plain reference implementations: the test oracles every fast path is checked against.

:func:`snp_dists_distance` is the character-level definition (snp-dists 0.8.2 semantics) written as
directly as possible; :func:`vector_tile` is the paper's Algorithm 1 on encoded codes: for each pair,
compare the two rows site by site and count the sites whose codes count as different.
"""

from __future__ import annotations

import numpy as np

from ..allpairs.plan import Tile

_ACGT = frozenset("ACGT")


def snp_dists_distance(a: str, b: str, *, all_chars: bool = False, keep_case: bool = False) -> int:
    """SNP distance of two aligned strings, character by character.

    A site counts when the characters differ and, unless ``all_chars``, both are one of A, C, G, T
    (after upper-casing unless ``keep_case``).
    """
    if len(a) != len(b):
        raise ValueError(f"sequences have lengths {len(a)} and {len(b)}")
    if not keep_case:
        a, b = a.upper(), b.upper()
    distance = 0
    for x, y in zip(a, b):
        if x != y and (all_chars or (x in _ACGT and y in _ACGT)):
            distance += 1
    return distance


def vector_tile(left: np.ndarray, right: np.ndarray, table: np.ndarray, tile: Tile, cap: int) -> np.ndarray:
    """Algorithm 1 (vector-based) on one tile of codes; ``table[a, b]`` says whether codes differ."""
    block = np.zeros((tile.n_rows, tile.n_cols), dtype=np.int64)
    for i in range(tile.row_start, tile.row_stop):
        col_stop = i if tile.diagonal else tile.col_stop
        if col_stop <= tile.col_start:
            continue
        others = right[tile.col_start : col_stop]
        block[i - tile.row_start, : col_stop - tile.col_start] = table[left[i][None, :], others].sum(axis=1)
    if tile.diagonal:
        block = np.tril(block, -1)
        block = block + block.T
    return np.minimum(block, cap)


_TN93_SETS = {"A": "A", "C": "C", "G": "G", "T": "T", "U": "T", "R": "AG", "Y": "CT", "S": "CG", "W": "AT",
              "K": "GT", "M": "AC", "B": "CGT", "D": "AGT", "H": "ACT", "V": "ACG", "N": "ACGT", "?": "ACGT"}  # fmt: skip


def model_distance_reference(a: str, b: str, model: str, *, ambiguities: str = "resolve", fraction: float = 1.0,
                             min_overlap: int = 0) -> float:  # fmt: skip
    """One pair's model distance, site by site with exact fractions (the oracle of the model kernels).

    ``snp``, ``p``, ``jc69`` and ``k2p`` count only sites where both characters are A, C, G or T (case-insensitive),
    as snp-dists does. ``tn93`` reads veg/tn93's characters and applies its ambiguity rules as its documentation
    and ``computeTN93`` describe: ``resolve`` counts an ambiguity that can be the other base as that base (and two
    overlapping ambiguities as their shared bases), ``average`` spreads every ambiguity over its bases, ``skip``
    drops sites with one, ``gapmm`` averages and reads a gap against a base as N. NaN: fewer than ``min_overlap``
    (or no) comparable sites.
    """
    from fractions import Fraction
    from math import log

    a, b = a.upper(), b.upper()
    if model != "tn93":
        sites = same = transitions = 0
        for x, y in zip(a, b):
            if x in "ACGT" and y in "ACGT":
                sites += 1
                same += x == y
                transitions += {x, y} in ({"A", "G"}, {"C", "T"})
        if sites == 0 or sites < min_overlap:
            return float("nan")
        if model == "snp":
            return float(sites - same)
        p = (sites - same) / sites
        if model == "p":
            return p
        try:
            if model == "jc69":
                value = -0.75 * log(1 - 4 / 3 * p)
            else:
                ts, tv = transitions / sites, p - transitions / sites
                value = -0.5 * log(1 - 2 * ts - tv) - 0.25 * log(1 - 2 * tv)
        except ValueError:
            return float("inf")
        return max(value, 0.0)

    table, resolved = _pair_table(a, b, ambiguities)
    sites = sum(table.values())
    if sites == 0 or sites < min_overlap:
        return float("nan")
    if ambiguities == "resolve" and fraction < 1 and float(sites) * fraction <= resolved:
        table, _ = _pair_table(a, b, "average")
    f = {z: float(sum(table[z, w] + table[w, z] for w in "ACGT")) for z in "ACGT"}
    total = f["A"] + f["C"] + f["G"] + f["T"]
    pi = {z: f[z] / total for z in "ACGT"}
    ag = float(table["A", "G"] + table["G", "A"]) * 2 / total
    ct = float(table["C", "T"] + table["T", "C"]) * 2 / total
    tv = 1 - (float(sum(table[z, z] for z in "ACGT")) * 2 / total + ag + ct)
    try:
        if min(f.values()) == 0:
            value = -0.5 * log(1 - 2 * (ag + ct) - tv) - 0.25 * log(1 - 2 * tv)
        else:
            pr, py = pi["A"] + pi["G"], pi["C"] + pi["T"]
            k1 = 2 * pi["A"] * pi["G"] / pr
            k2 = 2 * pi["C"] * pi["T"] / py
            k3 = 2 * (pr * py - pi["A"] * pi["G"] * py / pr - pi["C"] * pi["T"] * pr / py)
            value = (-k1 * log(1 - ag / k1 - tv / (2 * pr)) - k2 * log(1 - ct / k2 - tv / (2 * py))
                     - k3 * log(1 - tv / (2 * py * pr)))  # fmt: skip
    except (ValueError, ZeroDivisionError):
        return 1000.0
    return max(value, 0.0)


def _pair_table(a: str, b: str, rule: str):
    """The 4 x 4 base-pair table of a pair under a TN93 ambiguity rule (exact fractions), and how many sites
    resolved an ambiguity."""
    from fractions import Fraction

    table = {(x, y): Fraction(0) for x in "ACGT" for y in "ACGT"}
    resolved = 0
    for x, y in zip(a, b):
        if rule == "gapmm" and (x == "-") != (y == "-"):
            x, y = ("N" if x == "-" else x), ("N" if y == "-" else y)
        if x == "-" or y == "-":
            continue
        if x in "ACGT" and y in "ACGT":
            table[x, y] += 1
            continue
        if rule == "skip":
            continue
        sx, sy = _TN93_SETS[x], _TN93_SETS[y]
        if rule == "resolve":
            if x in "ACGT" and x in sy:
                table[x, x] += 1
                resolved += 1
                continue
            if y in "ACGT" and y in sx:
                table[y, y] += 1
                resolved += 1
                continue
            shared = [z for z in "ACGT" if z in sx and z in sy]
            if x not in "ACGT" and y not in "ACGT" and shared:
                for z in shared:
                    table[z, z] += Fraction(1, len(shared))
                resolved += 1
                continue
        for p in sx:
            for q in sy:
                table[p, q] += Fraction(1, len(sx) * len(sy))
    return table, resolved


def model_counts_reference(a: str, b: str, ambiguities: str = "skip") -> list[int]:
    """The per-pair counts of :data:`seqcompare.hamming.models.QUANTITIES` in 144ths (``resolved`` as a count):
    comparable sites, matches, A<->G, C<->T, and each base's weight over both sequences. ``skip`` with only
    A/C/G/T read is what the snp-dists-alphabet models count."""
    table, resolved = _pair_table(a.upper(), b.upper(), ambiguities)
    scaled = {key: value * 144 for key, value in table.items()}
    for value in scaled.values():
        assert value.denominator == 1
    freqs = [int(sum(scaled[z, w] + scaled[w, z] for w in "ACGT")) for z in "ACGT"]
    return [int(sum(scaled.values())), int(sum(scaled[z, z] for z in "ACGT")), int(scaled["A", "G"] + scaled["G", "A"]),
            int(scaled["C", "T"] + scaled["T", "C"]), *freqs, resolved]  # fmt: skip


def nj_reference(matrix, names) -> str:
    """Neighbour joining written plainly (the oracle of :func:`seqcompare.hamming.tree.nj_tree`): distances in a
    dict keyed by label pairs, nodes in a list by label, the same operations in the same order, and the Newick
    built as nested tuples."""
    n = len(names)

    def leaf(name):
        return name if name and not set(" \t\n()[]':;,") & set(name) else "'" + name.replace("'", "''") + "'"

    if n == 1:
        return leaf(names[0]) + ";"
    if n == 2:
        half = 0.5 * float(matrix[0][1])
        return f"({leaf(names[0])}:{half!r},{leaf(names[1])}:{half!r});"
    d = {(a, b): float(matrix[a][b]) for a in range(n) for b in range(n)}
    nodes = list(range(n))
    text = {k: leaf(names[k]) for k in range(n)}
    total = {a: sum((d[a, b] for b in range(n)), 0.0) for a in range(n)}
    label = n
    while len(nodes) > 3:
        r = len(nodes)
        candidates = [((r - 2) * d[a, b] - total[a] - total[b], x, y)
                      for x, a in enumerate(nodes) for y, b in enumerate(nodes) if y > x]  # fmt: skip
        best = min(q for q, _, _ in candidates)
        _, x, y = next(c for c in candidates if c[0] == best)
        a, b = nodes[x], nodes[y]
        branch_a = 0.5 * d[a, b] + (total[a] - total[b]) / (2.0 * (r - 2))
        branch_b = d[a, b] - branch_a
        rest = [k for k in nodes if k not in (a, b)]
        for k in rest:
            d[label, k] = d[k, label] = 0.5 * (d[a, k] + d[b, k] - d[a, b])
            total[k] = total[k] - d[a, k] - d[b, k] + d[label, k]
        total[label] = 0.0
        for k in rest:
            total[label] += d[label, k]
        text[label] = f"({text[a]}:{branch_a!r},{text[b]}:{branch_b!r})"
        nodes = rest + [label]
        label += 1
    a, b, c = nodes
    lengths = (0.5 * (d[a, b] + d[a, c] - d[b, c]), 0.5 * (d[a, b] + d[b, c] - d[a, c]),
               0.5 * (d[a, c] + d[b, c] - d[a, b]))  # fmt: skip
    return "(" + ",".join(f"{text[k]}:{length!r}" for k, length in zip(nodes, lengths)) + ");"
