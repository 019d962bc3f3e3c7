"""From characters or arbitrary values to small integer codes, one-hot masks and packed bit planes.

Every all-pairs metric sees the same encoded form: a code per site, ``0`` meaning *missing* (never counted),
and a :class:`CodeSpace` that says when two present codes count as a difference:

* ``"equal"``: they differ when the codes differ (snp-dists semantics, ``--all-chars``, categorical data);
* ``"disjoint"``: codes are bit sets (IUPAC: A=1, C=2, G=4, T=8, R=A|G, ...) and they differ when the sets
  share no member, so A vs R is 0 and A vs Y is 1.

Alphabets for sequences
-----------------------
``"acgt"``
    snp-dists 0.8.2: upper-case everything; only A, C, G and T are present, every other character is missing.
``"all"``
    snp-dists ``-a``: every character is a category of its own (after upper-casing); nothing is missing.
``"iupac"``
    IUPAC ambiguity codes stand for the set of bases they name; N matches anything; gaps are missing.

With ``keep_case=True`` nothing is upper-cased: under ``"acgt"`` and ``"iupac"`` lower-case letters are then
missing, under ``"all"`` they are categories distinct from their upper-case forms. Characters listed in
``missing`` are missing whatever the alphabet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ALPHABETS = ("acgt", "all", "iupac")
RELATIONS = ("equal", "disjoint")

_IUPAC_SETS = {
    "A": 1, "C": 2, "G": 4, "T": 8, "U": 8,
    "R": 1 | 4, "Y": 2 | 8, "S": 2 | 4, "W": 1 | 8, "K": 4 | 8, "M": 1 | 2,
    "B": 2 | 4 | 8, "D": 1 | 4 | 8, "H": 1 | 2 | 8, "V": 1 | 2 | 4, "N": 15,
}  # fmt: skip


@dataclass(frozen=True)
class CodeSpace:
    """The codes an encoded matrix may hold and when two of them count as a difference.

    Attributes
    ----------
    relation : {"equal", "disjoint"}
        ``"equal"``: present codes differ when unequal. ``"disjoint"``: codes are bit sets that differ
        when they share no bit.
    n_codes : int
        Codes lie in ``0 .. n_codes - 1``; code 0 is missing.
    labels : tuple
        What each code stands for (a character, a value, or a set of bases), for messages and docs.
    """

    relation: str
    n_codes: int
    labels: tuple = ()

    @property
    def n_value_planes(self) -> int:
        """Bit planes needed to hold any code (the validity plane comes on top)."""
        return max(1, int(self.n_codes - 1).bit_length())

    def difference_table(self) -> np.ndarray:
        """``table[a, b]`` is True when codes ``a`` and ``b`` count as a difference (the oracle's rule)."""
        codes = np.arange(self.n_codes)
        a, b = codes[:, None], codes[None, :]
        present = (a != 0) & (b != 0)
        if self.relation == "equal":
            return present & (a != b)
        return present & ((a & b) == 0)


def _check_alphabet(alphabet: str) -> None:
    if alphabet not in ALPHABETS:
        raise ValueError(f"alphabet must be one of {', '.join(ALPHABETS)}; got {alphabet!r}")


def sequence_code_table(
    alphabet: str = "acgt",
    *,
    keep_case: bool = False,
    missing: str | bytes = "",
    present_bytes: np.ndarray | None = None,
) -> tuple[np.ndarray, CodeSpace]:
    """Build the 256-entry byte-to-code table of a sequence alphabet.

    Parameters
    ----------
    alphabet : {"acgt", "all", "iupac"}
        See the module documentation.
    keep_case : bool
        Do not upper-case before encoding.
    missing : str or bytes
        Extra characters treated as missing.
    present_bytes : ndarray of bool, shape (256,), optional
        Which bytes occur in the data; needed by ``"all"`` to number only the characters present.

    Returns
    -------
    table : ndarray of uint8, shape (256,)
    space : CodeSpace
    """
    _check_alphabet(alphabet)
    table = np.zeros(256, dtype=np.uint8)
    letters = [chr(c) for c in range(256)]
    fold = (lambda ch: ch) if keep_case else (lambda ch: ch.upper() if ch.isascii() else ch)
    if alphabet == "acgt":
        for byte, ch in enumerate(letters):
            table[byte] = "ACGT".find(fold(ch)) + 1 if len(fold(ch)) == 1 else 0
        space = CodeSpace("equal", 5, ("missing", "A", "C", "G", "T"))
    elif alphabet == "iupac":
        for byte, ch in enumerate(letters):
            table[byte] = _IUPAC_SETS.get(fold(ch), 0)
        labels = tuple(
            "missing" if s == 0 else "".join(b for b, bit in zip("ACGT", (1, 2, 4, 8)) if s & bit)
            for s in range(16)
        )
        space = CodeSpace("disjoint", 16, labels)
    else:
        if present_bytes is None:
            present_bytes = np.ones(256, dtype=bool)
        folded = sorted({fold(letters[b]) for b in np.flatnonzero(present_bytes)})
        numbering = {ch: code for code, ch in enumerate(folded, start=1)}
        for byte, ch in enumerate(letters):
            table[byte] = numbering.get(fold(ch), 0)
        space = CodeSpace("equal", len(folded) + 1, ("missing", *folded))
    missing_bytes = missing.encode("latin-1") if isinstance(missing, str) else bytes(missing)
    for byte in missing_bytes:
        ch = chr(byte)
        variants = {ch} if keep_case or not ch.isascii() else {ch, ch.upper(), ch.lower()}
        for variant in variants:
            table[ord(variant)] = 0
    return table, space


def encode_sequences(
    matrices: list[np.ndarray],
    alphabet: str = "acgt",
    *,
    keep_case: bool = False,
    missing: str | bytes = "",
) -> tuple[list[np.ndarray], CodeSpace]:
    """Encode byte matrices (one per alignment, same code space for all) into site codes.

    Parameters
    ----------
    matrices : list of ndarray of uint8, each shape (n_i, m)
        Raw sequence bytes, e.g. :attr:`seqcompare.io.fasta.Alignment.sequences`.
    alphabet, keep_case, missing
        See :func:`sequence_code_table`.

    Returns
    -------
    codes : list of ndarray of uint8
        One code matrix per input, 0 where a site is missing.
    space : CodeSpace
    """
    present = None
    if alphabet == "all":
        present = np.zeros(256, dtype=bool)
        for matrix in matrices:
            present |= np.bincount(matrix.ravel(), minlength=256).astype(bool)
    table, space = sequence_code_table(alphabet, keep_case=keep_case, missing=missing, present_bytes=present)
    return [np.take(table, matrix) for matrix in matrices], space


def encode_categorical(
    matrices: list[np.ndarray], *, missing=None
) -> tuple[list[np.ndarray], CodeSpace]:
    """Encode arbitrary 2-D arrays as categories: every distinct value is a code ("unique values" of the paper).

    Parameters
    ----------
    matrices : list of array_like, each shape (n_i, m)
        Values of any orderable dtype (integers, floats, strings). Float NaN is always missing.
    missing : scalar or sequence of scalars, optional
        Values treated as missing: sites holding them are never counted.

    Returns
    -------
    codes : list of ndarray of unsigned int
        Dense codes ``1..K`` for the K distinct present values, 0 for missing.
    space : CodeSpace
        ``relation="equal"``.
    """
    arrays = [np.asarray(m) for m in matrices]
    for a in arrays:
        if a.ndim != 2:
            raise ValueError(f"expected a 2-D array (items x sites), got shape {a.shape}")
    values = np.unique(np.concatenate([a.ravel() for a in arrays])) if arrays else np.array([])
    missing_values = [] if missing is None else np.atleast_1d(np.asarray(missing)).tolist()
    keep = ~np.isin(values, missing_values)
    if values.dtype.kind == "f":
        keep &= ~np.isnan(values)
    present_values = values[keep]
    n_codes = len(present_values) + 1
    dtype = np.min_scalar_type(n_codes - 1)
    codes = []
    for a in arrays:
        position = np.searchsorted(present_values, a)
        position = np.minimum(position, max(len(present_values) - 1, 0))
        hit = (present_values[position] == a) if len(present_values) else np.zeros(a.shape, dtype=bool)
        codes.append(np.where(hit, position + 1, 0).astype(dtype))
    return codes, CodeSpace("equal", n_codes, ("missing", *present_values.tolist()))


def pack_planes(codes: np.ndarray, space: CodeSpace) -> np.ndarray:
    """Pack codes into bit planes: ``(n, P + 1, W)`` uint64, plane ``p < P`` = bit ``p`` of the code,
    plane ``P`` = validity (code != 0), ``W = ceil(m / 64)``, site ``s`` at bit ``s % 64`` of word ``s // 64``.

    Padding bits beyond ``m`` are zero in every plane, so they never count.
    """
    from ._pack import pack_code_planes

    n, m = codes.shape
    n_planes = space.n_value_planes
    words = (m + 63) // 64
    out = np.zeros((n, n_planes + 1, words), dtype=np.uint64)
    if n and m:
        pack_code_planes(np.ascontiguousarray(codes), n_planes, out)
    return out
