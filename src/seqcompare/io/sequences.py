"""Unaligned nucleotide sequences as one concatenated code array: the form the scan kernels read.

Bases are coded ``A=0, C=1, G=2, T=3, N=4`` (case-insensitive), so two bits hold a base and the N test is one
compare. Other IUPAC ambiguity codes are an input error unless ``iupac_as_n`` asks to read them as N.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..validation import default_threads

N_CODE = 4
ILLEGAL = 255
BASES = b"ACGTN"
# IUPAC codes other than A, C, G, T and N (U is RNA's T, and reads as T).
_OTHER_IUPAC = b"RYKMSWBDHV"


# With ``iupac_codes()``, the other IUPAC codes keep codes of their own, 5..14 in this order, and match as the
# sets of bases they stand for. Bit masks of each code's bases (A 1, C 2, G 4, T 8): codes match when their
# masks meet, so N (all four) matches anything, as it does in the plain codes.
BASE_MASKS = np.array([1, 2, 4, 8, 15, 5, 10, 12, 3, 6, 9, 14, 13, 11, 7], dtype=np.uint8)
# Each code's complement (Cornish-Bowden 1985): A-T, C-G, N, R-Y, K-M, S, W, B-V, D-H.
COMPLEMENT_CODES = np.array([3, 2, 1, 0, 4, 6, 5, 8, 7, 9, 10, 14, 13, 12, 11], dtype=np.uint8)


@dataclass(frozen=True)
class CodeTable:
    """A byte-to-code table for the readers' ``alphabet`` arguments (see :func:`iupac_codes`)."""

    name: str
    table: np.ndarray
    allowed: str


def iupac_codes() -> CodeTable:
    """A, C, G, T, N as 0..4 (U as T), and R, Y, K, M, S, W, B, D, H, V as 5..14, either case: the codes whose
    bases :data:`BASE_MASKS` gives, for matching ambiguity codes as base sets."""
    table = code_table()
    for code, base in enumerate(_OTHER_IUPAC, start=5):
        table[base] = table[base + 32] = code
    return CodeTable("dna", table, "A, C, G, T, N or an IUPAC code")


# Arrays from this size up are mapped with transparent huge pages: a fresh 400 MB array costs 0.6 s of page faults
# on its first touch in 4 KB pages on the lent machines, 0.04 s in 2 MB pages.
HUGE_PAGE_BYTES = 64 << 20


def empty_array(count: int, dtype=np.uint8) -> np.ndarray:
    """``np.empty(count, dtype)``, in memory mapped with huge pages (``MADV_HUGEPAGE``) when it is large."""
    import mmap

    size = int(count) * np.dtype(dtype).itemsize
    if size < HUGE_PAGE_BYTES or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.empty(count, dtype=dtype)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(memory, dtype=dtype, count=count)


def code_table(iupac_as_n: bool = False) -> np.ndarray:
    """The 256-entry byte-to-code table: ``A C G T N`` (either case) to 0..4, everything else ``ILLEGAL``,
    except the other IUPAC codes, which become N when ``iupac_as_n``."""
    table = np.full(256, ILLEGAL, dtype=np.uint8)
    for code, base in enumerate(BASES):
        table[base] = table[base + 32] = code
    table[ord("U")] = table[ord("u")] = 3
    if iupac_as_n:
        for base in _OTHER_IUPAC:
            table[base] = table[base + 32] = N_CODE
    return table


class NumberedNames(Sequence):
    """The names ``prefix1, prefix2, ...`` of ``count`` unnamed records, made only when one is read (a list of
    a million f-strings costs more than encoding the sequences)."""

    def __init__(self, prefix: str, count: int):
        self.prefix = prefix
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [f"{self.prefix}{i + 1}" for i in range(*index.indices(self.count))]
        if not -self.count <= index < self.count:
            raise IndexError(index)
        return f"{self.prefix}{index % self.count + 1}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


# Batches from this many letters up are encoded a megabyte at a time and translated to codes by threads, a piece
# each: one join and one encode of a whole large batch spend most of their time faulting in fresh pages (40 MB:
# 50 ms, against 15 ms in pieces that stay in cache), and bytes.translate runs at 1-2 GB/s on one core.
THREADED_TRANSLATE_BYTES = 16 << 20
ENCODE_PIECE_BYTES = 1 << 20


@jit
def translate_bytes(text, table, out, first, last) -> int:
    """``out[k] = table[text[k]]`` for ``first <= k < last``; the first ``k`` whose code is ``ILLEGAL``, or -1."""
    bad = -1
    for k in range(first, last):
        code = table[text[k]]
        out[k] = code
        if code == ILLEGAL and bad < 0:
            bad = k
    return bad


def _encoded(sequences: list) -> bytes:
    """The letters of ``sequences`` (str or bytes), one byte each (a non-ASCII letter becomes '?')."""
    try:
        return "".join(sequences).encode("ascii")
    except (TypeError, UnicodeEncodeError):  # bytes, or a non-ASCII letter: slower, same error path after
        return b"".join(s.encode("ascii", "replace") if isinstance(s, str) else bytes(s) for s in sequences)


def _codes_of(sequences: list, offsets: np.ndarray, table: np.ndarray):
    """``(letters, codes, index of the first illegal letter or -1)`` of ``sequences`` laid out by ``offsets``."""
    total = int(offsets[-1])
    if total < THREADED_TRANSLATE_BYTES:
        letters = _encoded(sequences)
        translated = letters.translate(table.tobytes())  # a C loop over the bytes: no compiler to load
        return letters, np.frombuffer(translated, dtype=np.uint8), translated.find(ILLEGAL)
    letters = np.empty(total, dtype=np.uint8)
    step = max(1, len(sequences) * ENCODE_PIECE_BYTES // total)
    for first in range(0, len(sequences), step):
        piece = _encoded(sequences[first : first + step])
        letters[offsets[first] : offsets[first] + len(piece)] = np.frombuffer(piece, dtype=np.uint8)
    codes = np.empty(total, dtype=np.uint8)
    pieces = min(16, default_threads())
    cuts = np.linspace(0, total, pieces + 1).astype(np.int64).tolist()
    with ThreadPoolExecutor(pieces) as pool:
        found = list(pool.map(lambda a, b: translate_bytes(letters, table, codes, a, b), cuts[:-1], cuts[1:]))
    bad = [k for k in found if k >= 0]
    return letters, codes, (bad[0] if bad else -1)


@dataclass(frozen=True)
class SequenceSet:
    """Named sequences, concatenated.

    Attributes
    ----------
    names : list of str
        Record names (the header up to its first whitespace).
    codes : ndarray of uint8
        All bases, coded ``A=0, C=1, G=2, T=3, N=4``; record ``i`` is ``codes[offsets[i]:offsets[i + 1]]``.
    offsets : ndarray of int64, shape (n + 1,)
    quality : ndarray of uint8 or None
        Phred scores (FASTQ input), laid out as ``codes``.
    source : str
        Where the records came from.
    alphabet : str
        The codes' alphabet: ``dna`` (the codes above), or another's name (protein, a matrix, bytes).
    """

    names: list[str]
    codes: np.ndarray
    offsets: np.ndarray
    quality: np.ndarray | None = None
    source: str = "<array>"
    alphabet: str = "dna"

    def __len__(self) -> int:
        return len(self.names)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def sequence(self, index: int) -> np.ndarray:
        return self.codes[self.offsets[index] : self.offsets[index + 1]]

    def text(self, index: int) -> str:
        """Record ``index`` as a string of ``ACGTN``."""
        return np.frombuffer(BASES, dtype=np.uint8)[self.sequence(index)].tobytes().decode()

    @classmethod
    def from_strings(cls, sequences, names=None, qualities=None, *, iupac_as_n: bool = False,
                     source: str = "<array>", alphabet=None) -> SequenceSet:  # fmt: skip
        """Build a set from Python strings (and optional Phred score lists), mostly for tests and notebooks.

        ``alphabet`` (an :class:`~seqcompare.align.alphabets.Alphabet`, or anything with its ``name``, ``table``
        and ``allowed``) replaces the DNA codes."""
        from ..errors import InputError

        sequences = list(sequences)
        if names is None:
            names = [f"seq{i + 1}" for i in range(len(sequences))]
        elif not isinstance(names, NumberedNames):  # a NumberedNames is kept as it is: names made when read
            names = list(names)
        offsets = np.zeros(len(sequences) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences)), out=offsets[1:])
        table = code_table(iupac_as_n) if alphabet is None else alphabet.table
        allowed = None if alphabet is None else alphabet.allowed
        letters, codes, first_bad = _codes_of(sequences, offsets, table)
        if first_bad >= 0:
            record = int(np.searchsorted(offsets, first_bad, side="right") - 1)
            position = int(first_bad - offsets[record])
            letter = letters[first_bad]
            shown = chr(letter) if 32 < letter < 127 else f"byte 0x{letter:02x}"
            raise InputError(illegal_base_message(source, record, names[record], shown, position, allowed))
        quality = None
        if qualities is not None:
            quality = np.concatenate([np.asarray(q, dtype=np.int64) for q in qualities]) if sequences else np.empty(0)
            if quality.size != codes.size or (quality.size and (quality.min() < 0 or quality.max() > 93)):
                raise InputError(f"{source}: qualities must be Phred scores 0..93, one per base")
            quality = quality.astype(np.uint8)
        return cls(names, codes, offsets, quality, source, "dna" if alphabet is None else alphabet.name)


def illegal_base_message(source: str, record: int, name: str, shown: str, position: int,
                         allowed: str | None = None) -> str:  # fmt: skip
    """The one-line error for a letter outside the alphabet; ``allowed`` words the alphabet (default: DNA's)."""
    allowed = allowed or "A, C, G, T or N (--iupac-as-n reads other IUPAC codes as N)"
    return f"{source}: record #{record + 1} '{name}' has '{shown}' at position {position + 1}, which is not {allowed}"


@jit
def reverse_complement(codes, offsets, out):
    """Reverse complement of every record (N stays N; IUPAC codes 5..14 become their complements), into ``out``
    laid out as ``codes``."""
    for r in range(offsets.size - 1):
        lo, hi = offsets[r], offsets[r + 1]
        for q in range(lo, hi):
            out[lo + hi - 1 - q] = COMPLEMENT_CODES[codes[q]]


@jit
def record_sums(values, offsets):
    """Per record, the sum of ``values`` over it (int64)."""
    sums = np.zeros(offsets.size - 1, np.int64)
    for r in range(offsets.size - 1):
        total = 0
        for q in range(offsets[r], offsets[r + 1]):
            total += values[q]
        sums[r] = total
    return sums
