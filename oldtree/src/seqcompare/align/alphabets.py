"""Alphabets of the alignment modes: which bytes a sequence may hold, and the code each becomes.

- ``dna``: A, C, G, T, N (U reads as T), the other IUPAC codes read as N, codes 0..4 (the DNA engine's codes).
  With a nucleotide matrix such as NUC.4.4 the alphabet is the matrix's own letters, so each IUPAC code keeps its
  own scores.
- ``protein``: the 20 amino acids plus B, Z, X and ``*`` (the NCBI matrices' order), or a matrix's letters.
- ``bytes``: any byte but 0xFF (which marks a refused byte inside the readers), case-sensitive, its own code;
  scored by match and mismatch.

Letters are read in either case except in ``bytes``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..io.sequences import ILLEGAL, code_table

KINDS = ("dna", "protein", "bytes")
PROTEIN_LETTERS = "ARNDCQEGHILKMFPSTWYVBZX*"
# IUPAC complements (Cornish-Bowden 1985): the reverse strand of an ambiguity code is the code of the complements.
_COMPLEMENT = dict(zip("ACGTURYKMSWBDHVN", "TGCAAYRMKSWVHDBN"))


@dataclass(frozen=True)
class Alphabet:
    """A byte-to-code table and how errors word it.

    Attributes
    ----------
    name : str
        ``dna``, ``protein``, ``bytes``, or the name of the matrix whose letters it is.
    letters : str
        The letter of each code, in code order (empty for ``bytes``: codes are the bytes themselves).
    table : numpy.ndarray of uint8, shape (256,)
        Each byte's code; 255 for bytes outside the alphabet.
    allowed : str
        The alphabet in words, for one-line errors.
    """

    name: str
    letters: str
    table: np.ndarray
    allowed: str

    @property
    def size(self) -> int:
        """Number of codes (256 for ``bytes``)."""
        return len(self.letters) if self.letters else 256

    def complement(self) -> np.ndarray | None:
        """Each code's complement code (a nucleotide alphabet), or None when a letter has no complement."""
        if not self.letters:
            return None
        out = np.empty(len(self.letters), dtype=np.uint8)
        for code, letter in enumerate(self.letters):
            partner = _COMPLEMENT.get(letter)
            if partner is None or self.table[ord(partner)] == ILLEGAL:
                return None
            out[code] = self.table[ord(partner)]
        return out


def dna() -> Alphabet:
    """A, C, G, T, N (codes 0..4; U reads as T, the other IUPAC codes as N)."""
    return Alphabet("dna", "ACGTN", code_table(iupac_as_n=True), "A, C, G, T, N or an IUPAC code")


def protein() -> Alphabet:
    """The 20 amino acids plus B, Z, X and ``*``."""
    return from_letters("protein", PROTEIN_LETTERS)


def byte_alphabet() -> Alphabet:
    """Every byte but 0xFF, each its own code (case-sensitive)."""
    table = np.arange(256, dtype=np.uint8)
    table[255] = ILLEGAL
    return Alphabet("bytes", "", table, "a byte other than 0xff")


def from_letters(name: str, letters: str) -> Alphabet:
    """The alphabet of a matrix's letters (either case); U reads as T in a nucleotide matrix (one whose letters
    are all IUPAC nucleotide codes) without U."""
    table = np.full(256, ILLEGAL, dtype=np.uint8)
    for code, letter in enumerate(letters):
        table[ord(letter.upper())] = table[ord(letter.lower())] = code
    if "U" not in letters and set("ACGT") <= set(letters) <= set(_COMPLEMENT):  # a nucleotide matrix
        table[ord("U")] = table[ord("u")] = letters.index("T")
    shown = ", ".join(letters)
    return Alphabet(name, letters, table, f"a letter of {name} ({shown})")


def named(kind: str) -> Alphabet:
    """The alphabet called ``kind`` (one of :data:`KINDS`)."""
    if kind not in KINDS:
        raise InputError(f"unknown alphabet {kind!r}: use one of {', '.join(KINDS)}")
    return {"dna": dna, "protein": protein, "bytes": byte_alphabet}[kind]()
