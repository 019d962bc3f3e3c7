"""Evolutionary distances from per-pair site counts: p, JC69, K2P and TN93 (as veg/tn93 computes it).

Every model reads the same per-pair counts (:data:`QUANTITIES`), which the kernels of
:mod:`seqcompare.hamming.pairstats` make on any backend. Counts are kept in 144ths, so that the fractional
contributions of ambiguity codes (halves, thirds, quarters and their products) are exact integers:

``sites``
    Comparable sites: both characters present (under TN93's rules: neither is a gap).
``matches``
    Weight on the diagonal of the 4 x 4 base-pair table (identical bases).
``ag``, ``ct``
    Weight of A<->G and C<->T pairs (the two kinds of transition).
``freq_a`` .. ``freq_t``
    Each base's weight over both sequences of the pair, at comparable sites (TN93's per-pair base frequencies).
``resolved``
    Sites whose ambiguity was resolved to a match (``ambiguities="resolve"``), an integer count.

The formulas are written once with :func:`~seqcompare.allpairs.array_module`, so a block of counts becomes
distances where it lives (a CPU thread, a GPU, a Dask worker). TN93 follows veg/tn93 1.0.15 (Pond et al.,
``TN93_shared.cc``): the same per-pair base frequencies, the same order of floating-point operations, the K2P
fallback when a base is absent, 1000 for a pair past saturation, and its ``-a resolve|average|skip|gapmm`` and
``-d`` (resolve fraction) rules.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

MODELS = ("snp", "p", "jc69", "k2p", "tn93")
AMBIGUITIES = ("resolve", "average", "skip", "gapmm")
QUANTITIES = ("sites", "matches", "ag", "ct", "freq_a", "freq_c", "freq_g", "freq_t", "resolved")
SCALE = 144  # lcm of every denominator a contribution can have: 2, 3, 4 and their pairwise products
TN93_SATURATED = 1000.0  # what veg/tn93 reports for a pair past saturation

# veg/tn93's characters, in its code order: A C G T are codes 0..3, then U and the ambiguity codes, "?" and "-".
TN93_CHARACTERS = "ACGTURYSWKMBDHVN?-"
GAP = 17
_BASE_SETS = (1, 2, 4, 8, 8, 5, 10, 6, 9, 12, 3, 14, 13, 11, 7, 15, 15, 0)  # A=1 C=2 G=4 T=8, per code
N_CODES = len(TN93_CHARACTERS)


def tn93_byte_table() -> np.ndarray:
    """Byte to TN93 code (upper and lower case alike, as veg/tn93 upper-cases); 255 for any other byte."""
    table = np.full(256, 255, dtype=np.uint8)
    for code, character in enumerate(TN93_CHARACTERS):
        table[ord(character)] = code
        table[ord(character.lower())] = code
    return table


def special_codes(ambiguities: str) -> np.ndarray:
    """Which codes need the per-site path: ambiguity codes (and U, which veg/tn93 counts apart from T), plus gaps
    under ``gapmm``. Under ``skip`` none: only pairs of resolved bases count."""
    special = np.zeros(N_CODES, dtype=np.bool_)
    if ambiguities != "skip":
        special[4:GAP] = True
        special[GAP] = ambiguities == "gapmm"
    return special


def _bases(code: int) -> list[int]:
    return [b for b in range(4) if _BASE_SETS[code] >> b & 1]


def site_table(code1: int, code2: int, ambiguities: str) -> tuple[list[list[Fraction]], int]:
    """The 4 x 4 base-pair weights one site adds, and whether it counts as resolved, for codes ``code1``,
    ``code2`` in a pair (the rules of veg/tn93's ambiguity handler)."""
    table = [[Fraction(0)] * 4 for _ in range(4)]
    if ambiguities == "gapmm" and (code1 == GAP) != (code2 == GAP):
        code1, code2 = (15 if code1 == GAP else code1), (15 if code2 == GAP else code2)
    if code1 == GAP or code2 == GAP:
        return table, 0
    if code1 < 4 and code2 < 4:
        table[code1][code2] += 1
        return table, 0
    if ambiguities == "skip":
        return table, 0
    set1, set2 = _bases(code1), _bases(code2)
    resolving = ambiguities == "resolve"
    if code1 < 4 or code2 < 4:  # one resolved base against an ambiguity
        base, other = (code1, set2) if code1 < 4 else (code2, set1)
        if resolving and base in other:
            table[base][base] += 1
            return table, 1
        for b in other:
            if code1 < 4:
                table[base][b] += Fraction(1, len(other))
            else:
                table[b][base] += Fraction(1, len(other))
        return table, 0
    if resolving:
        shared = [b for b in set1 if b in set2]
        if shared:
            for b in shared:
                table[b][b] += Fraction(1, len(shared))
            return table, 1
    for b1 in set1:
        for b2 in set2:
            table[b1][b2] += Fraction(1, len(set1) * len(set2))
    return table, 0


def quantities_of(table, resolved: int) -> list[int]:
    """:data:`QUANTITIES` of a 4 x 4 base-pair table (weights in 144ths, ``resolved`` as it is)."""
    scaled = [[int(table[a][b] * SCALE) for b in range(4)] for a in range(4)]
    freqs = [sum(scaled[a]) + sum(scaled[b][a] for b in range(4)) for a in range(4)]
    return [sum(map(sum, scaled)), sum(scaled[a][a] for a in range(4)), scaled[0][2] + scaled[2][0],
            scaled[1][3] + scaled[3][1], *freqs, resolved]  # fmt: skip


def weight_table(ambiguities: str) -> np.ndarray:
    """``(N_CODES, N_CODES, len(QUANTITIES))`` int64: what one site with codes ``(c1, c2)`` adds to each count."""
    weights = np.zeros((N_CODES, N_CODES, len(QUANTITIES)), dtype=np.int64)
    for c1 in range(N_CODES):
        for c2 in range(N_CODES):
            weights[c1, c2] = quantities_of(*site_table(c1, c2, ambiguities))
    return weights


def check_options(model: str, ambiguities: str = "resolve", fraction: float = 1.0, min_overlap: int = 0) -> None:
    """Raise ValueError for an unknown model or ambiguity rule, or a fraction or overlap out of range."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    if ambiguities not in AMBIGUITIES:
        raise ValueError(f"ambiguities must be one of {', '.join(AMBIGUITIES)}; got {ambiguities!r}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must lie in [0, 1]; got {fraction}")
    if min_overlap < 0:
        raise ValueError(f"min_overlap must be at least 0; got {min_overlap}")


def distances(model: str, counts, min_overlap: int = 0, fraction: float = 1.0, fallback=None):
    """Distances of a block of counts (NumPy or CuPy, shape ``(len(QUANTITIES), ...)``), float64.

    Pairs with fewer than ``min_overlap`` comparable sites (or none, for the rates) are NaN. ``snp`` is the count
    of differing comparable sites, as a float. For ``tn93`` under ``resolve`` with ``fraction < 1``, ``fallback``
    holds the same pairs' counts under ``average``, which veg/tn93 uses for pairs where at least that fraction of
    the comparable sites were resolved ambiguities.
    """
    from ..allpairs import array_module

    xp = array_module(counts)
    sites = counts[0] / SCALE  # always a whole number of sites
    missing = sites < min_overlap
    if model != "snp":  # no rate without a comparable site
        missing = missing | (sites == 0)
    if model == "tn93":
        chosen = counts
        if fallback is not None and fraction < 1.0:
            averaged = sites * fraction <= counts[8]
            chosen = xp.where(averaged[None], fallback, counts)
        with np.errstate(divide="ignore", invalid="ignore"):  # pairs without a site are NaN below
            result = _tn93(xp, chosen)
    else:
        differences = (counts[0] - counts[1]) / SCALE
        with np.errstate(divide="ignore", invalid="ignore"):
            p = differences / sites
            if model == "snp":
                result = differences
            elif model == "p":
                result = p
            elif model == "jc69":
                result = -0.75 * xp.log(1.0 - 4.0 / 3.0 * p)
            else:
                transitions = (counts[2] + counts[3]) / SCALE / sites
                transversions = p - transitions
                result = -0.5 * xp.log(1.0 - 2.0 * transitions - transversions) - 0.25 * xp.log(1.0 - 2.0 * transversions)
        result = xp.where(xp.isnan(result), xp.inf, result)  # saturated: 1 - ... <= 0
        result = xp.where(result <= 0.0, 0.0, result)  # no -0.0
    return xp.where(missing, xp.nan, result)


def _tn93(xp, counts):
    """TN93 in veg/tn93's order of operations (``computeTN93``), elementwise."""
    freqs = [counts[4 + b] / SCALE for b in range(4)]
    total = freqs[0] + freqs[1] + freqs[2] + freqs[3]
    scale = 2.0 / total
    inverse = 1.0 / total
    nuc = [f * inverse for f in freqs]
    f_r = nuc[0] + nuc[2]
    f_y = nuc[1] + nuc[3]
    ag = counts[2] / SCALE * scale
    ct = counts[3] / SCALE * scale
    tv = 1.0 - (counts[1] / SCALE * scale + ag + ct)
    use_k2p = (freqs[0] == 0) | (freqs[1] == 0) | (freqs[2] == 0) | (freqs[3] == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ti = ag + ct
        k2p_a = 1.0 - 2.0 * ti - tv
        k2p_b = 1.0 - 2.0 * tv
        k2p = -0.5 * xp.log(k2p_a) - 0.25 * xp.log(k2p_b)
        k2p = xp.where((k2p_a > 0.0) & (k2p_b > 0.0), k2p, TN93_SATURATED)
        k1 = 2.0 * nuc[0] * nuc[2] / f_r
        k2 = 2.0 * nuc[1] * nuc[3] / f_y
        k3 = 2.0 * (f_r * f_y - nuc[0] * nuc[2] * f_y / f_r - nuc[1] * nuc[3] * f_r / f_y)
        term_ag = 1.0 - ag / k1 - 0.5 * tv / f_r
        term_ct = 1.0 - ct / k2 - 0.5 * tv / f_y
        term_tv = 1.0 - 0.5 * tv / f_y / f_r
        tn93 = -k1 * xp.log(term_ag) - k2 * xp.log(term_ct) - k3 * xp.log(term_tv)
        tn93 = xp.where((term_ag > 0.0) & (term_ct > 0.0) & (term_tv > 0.0), tn93, TN93_SATURATED)
    result = xp.where(use_k2p, k2p, tn93)
    return xp.where(result <= 0.0, 0.0, result)
