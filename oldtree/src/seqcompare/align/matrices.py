"""Substitution matrices: the published tables by name, or any file in the NCBI matrix format.

The tables shipped in ``matrices/`` (BLOSUM45/50/62/80/90, PAM250, NUC.4.4) hold the values NCBI distributes
(ftp.ncbi.nih.gov/blast/matrices); the numbers are facts of their publications (Henikoff & Henikoff 1992; Dayhoff,
Schwartz & Orcutt 1978; T. Lowe's NUC.4.4). The NCBI format: lines starting with ``#`` are comments, the first
other line names the columns (one character each), and every following line is a row: its character, then one
integer per column.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

_HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "matrices")
NAMES = ("BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "BLOSUM90", "PAM250", "NUC.4.4")


@dataclass(frozen=True)
class SubstitutionMatrix:
    """Scores of aligning one character with another.

    Attributes
    ----------
    name : str
        The table's name, or the file it was read from.
    letters : str
        The characters of the rows and columns, in order (upper case).
    scores : numpy.ndarray of int64, shape (len(letters), len(letters))
        ``scores[i, j]`` scores letter ``i`` of the first sequence against letter ``j`` of the second.
    """

    name: str
    letters: str
    scores: np.ndarray

    def codes(self) -> np.ndarray:
        """A 256-entry uint8 table from bytes to row indices, both cases, 255 for bytes outside the matrix."""
        table = np.full(256, 255, dtype=np.uint8)
        for index, letter in enumerate(self.letters):
            table[ord(letter.upper())] = table[ord(letter.lower())] = index
        return table

    def score(self, a: str, b: str) -> int:
        """The score of characters ``a`` against ``b`` (either case)."""
        return int(self.scores[self.letters.index(a.upper()), self.letters.index(b.upper())])


def read_matrix(path: str | os.PathLike, name: str | None = None) -> SubstitutionMatrix:
    """Read a matrix in the NCBI format from ``path``.

    Parameters
    ----------
    path : str or path-like
    name : str, optional
        What to call it (default: the path).

    Returns
    -------
    SubstitutionMatrix

    Raises
    ------
    InputError
        The file cannot be parsed: the message names the file and the line.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except UnicodeDecodeError:
        raise InputError(f"{path}: a substitution matrix is ASCII text") from None
    letters, rows = None, []
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = text.split()
        if letters is None:
            if any(len(field) != 1 for field in fields):
                raise InputError(f"{path}, line {number}: the column header names one character per column, got "
                                 f"{text!r}")  # fmt: skip
            letters = "".join(field.upper() for field in fields)
            if len(set(letters)) != len(letters):
                raise InputError(f"{path}, line {number}: a column character appears twice in {text!r}")
            continue
        if len(fields[0]) != 1 or len(fields) != len(letters) + 1:
            raise InputError(f"{path}, line {number}: a row is its character and {len(letters)} integers, got "
                             f"{text!r}")  # fmt: skip
        try:
            values = [int(field) for field in fields[1:]]
        except ValueError:
            raise InputError(f"{path}, line {number}: scores must be integers, got {text!r}") from None
        rows.append((fields[0].upper(), values, number))
    if letters is None or not rows:
        raise InputError(f"{path}: no matrix found (a header line of characters, then one row per character)")
    order = "".join(row[0] for row in rows)
    if order != letters:
        raise InputError(f"{path}, line {rows[0][2]}: rows must name the columns' characters in the same order "
                         f"({letters}), got {order}")  # fmt: skip
    return SubstitutionMatrix(name or path, letters, np.array([row[1] for row in rows], dtype=np.int64))


def substitution_matrix(name_or_path: str | os.PathLike) -> SubstitutionMatrix:
    """A matrix by name (one of :data:`NAMES`, any case; ``NUC44`` for ``NUC.4.4``) or from a file.

    Raises
    ------
    InputError
        Neither a known name nor a readable file; the message lists the names.
    """
    text = os.fspath(name_or_path)
    wanted = text.upper().replace("NUC44", "NUC.4.4")
    if wanted in NAMES:
        return read_matrix(os.path.join(_HERE, wanted), name=wanted)
    if os.path.isfile(text):
        return read_matrix(text)
    raise InputError(f"unknown substitution matrix {text!r}: use one of {', '.join(NAMES)}, or the path of a file "
                     f"in the NCBI matrix format")  # fmt: skip
