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
    def plane_offset(self) -> int:
        """What is subtracted from a present code before its bits go into planes.

        Under ``"equal"`` present codes ``1..K`` are stored as ``0..K-1`` (validity has its own plane), so
        A, C, G, T take two planes; ``"disjoint"`` codes are bit sets and are stored as they are.
        """
        return 1 if self.relation == "equal" else 0

    @property
    def n_value_planes(self) -> int:
        """Bit planes needed to hold any present code (the validity plane comes on top)."""
        return max(1, int(self.n_codes - 1 - self.plane_offset).bit_length())

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


def sequence_encoding(
    matrices: list[np.ndarray],
    alphabet: str = "acgt",
    *,
    keep_case: bool = False,
    missing: str | bytes = "",
) -> tuple[np.ndarray, CodeSpace]:
    """The byte-to-code table and code space for byte matrices that share one code space.

    Parameters
    ----------
    matrices : list of ndarray of uint8, each shape (n_i, m)
        Raw sequence bytes, e.g. :attr:`seqcompare.io.fasta.Alignment.sequences`; only ``"all"`` reads
        them (to number the characters present).
    alphabet, keep_case, missing
        See :func:`sequence_code_table`.

    Returns
    -------
    table : ndarray of uint8, shape (256,)
        Apply with :func:`apply_code_table`, or hand to :func:`pack_planes`.
    space : CodeSpace
    """
    present = None
    if alphabet == "all":
        present = np.zeros(256, dtype=bool)
        for matrix in matrices:
            present |= np.bincount(matrix.ravel(), minlength=256).astype(bool)
    return sequence_code_table(alphabet, keep_case=keep_case, missing=missing, present_bytes=present)


def translate_codes(table: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``table[matrix]`` for a uint8 matrix and a 256-entry uint8 table through ``bytes.translate`` (a C loop
    over the bytes: twice NumPy's ``take``, which widens every index, and no compiled kernel to load)."""
    data = np.ascontiguousarray(matrix).tobytes().translate(np.ascontiguousarray(table, dtype=np.uint8).tobytes())
    return np.frombuffer(data, dtype=np.uint8).reshape(matrix.shape)


def apply_code_table(table: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``table[matrix]`` for a uint8 matrix, without widening the indices."""
    from .packing import apply_table

    out = np.empty(matrix.shape, dtype=table.dtype)
    if matrix.size:
        apply_table(table, np.ascontiguousarray(matrix), out)
    return out


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


def plane_patterns(space: CodeSpace, table: np.ndarray | None = None) -> np.ndarray:
    """For each input value (a byte through ``table``, or a code when ``table`` is None), the bits it sets
    in the planes of :func:`pack_planes`: the value bits, then the validity bit."""
    codes = np.arange(space.n_codes, dtype=np.int64) if table is None else table.astype(np.int64)
    present = codes != 0
    values = np.where(present, codes - space.plane_offset, 0)
    return (values | (present.astype(np.int64) << space.n_value_planes)).astype(np.uint32)


def pack_planes(matrix: np.ndarray, space: CodeSpace, table: np.ndarray | None = None,
                threads: int = 1, out: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Pack a matrix into bit planes ``(n, P + 1, W)`` uint64, ``W = ceil(m / 64)``.

    Plane ``p < P`` holds bit ``p`` of ``code - space.plane_offset`` at present sites, plane ``P`` the
    validity (code != 0); site ``s`` is bit ``s % 64`` of word ``s // 64``, and padding bits are zero in
    every plane, so they never count. ``matrix`` holds codes, or raw bytes when ``table`` (byte to code)
    is given, in which case the codes are never materialised. ``out``, if given, is filled instead of a new
    array (e.g. page-locked memory that a GPU copies from without staging); every word is written.
    """
    from concurrent.futures import ThreadPoolExecutor

    from .packing import row_packer

    n, m = matrix.shape
    n_planes = space.n_value_planes
    shape = (n, n_planes + 1, (m + 63) // 64)
    if out is None:
        out = np.zeros(shape, dtype=np.uint64)
    elif out.shape != shape or out.dtype != np.uint64:
        raise ValueError(f"out must be uint64 with shape {shape}, got {out.dtype} {out.shape}")
    if n == 0 or m == 0:
        return out
    patterns = plane_patterns(space, table)
    matrix = np.ascontiguousarray(matrix)
    pack_rows = row_packer(matrix, n_planes + 1)
    bounds = np.linspace(0, n, max(1, min(threads, n)) + 1).astype(int)
    with ThreadPoolExecutor(len(bounds) - 1) as pool:
        jobs = [pool.submit(pack_rows, matrix, patterns, n_planes + 1, lo, hi, out)
                for lo, hi in zip(bounds[:-1], bounds[1:])]  # fmt: skip
        for job in jobs:
            job.result()
    return out
