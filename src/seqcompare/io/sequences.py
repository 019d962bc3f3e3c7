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


class EncodedNames(Sequence):
    """Record names kept as their UTF-8 bytes, decoded only when read: ``blob`` holds them joined by newlines,
    name ``i`` at ``blob[starts[i]:starts[i + 1] - 1]`` (``starts`` has one entry more than there are names).

    A FASTQ file of half a million reads spent 0.1 s making its names into strings and 0.07-0.1 s more in a
    set of them for the duplicate check, on an H200 host whose whole GPU scan took 2 s; a scan shows the names
    of its matched reads only (bench/RESULTS.md, session 39)."""

    def __init__(self, blob: np.ndarray, starts: np.ndarray):
        self.blob = blob
        self.starts = starts
        self._decoded: list | None = None

    def __len__(self) -> int:
        return self.starts.size - 1

    def _name(self, index: int) -> str:
        return self.blob[self.starts[index] : self.starts[index + 1] - 1].tobytes().decode("utf-8", "surrogateescape")

    def __getitem__(self, index):
        if self._decoded is not None:
            return self._decoded[index]
        if isinstance(index, slice):
            return [self._name(i) for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return self._name(index % len(self))

    def __iter__(self):
        return iter(self.decoded())

    def decoded(self) -> list:
        """Every name, as a list of str (made once). Decoding the names joined by newlines gives each name's own
        decoding, since no UTF-8 sequence runs across an ASCII byte."""
        if self._decoded is None:
            self._decoded = self.blob.tobytes().decode("utf-8", "surrogateescape").split("\n") if len(self) else []
        return self._decoded

    def has_duplicates(self) -> bool:
        """Whether a name occurs twice: 64-bit hashes of the names' bytes sorted and compared, and the names
        themselves only where two hashes are equal."""
        hashes = np.empty(len(self), dtype=np.uint64)
        _name_hashes(self.blob, self.starts, hashes)
        hashes.sort()
        if not (hashes[1:] == hashes[:-1]).any():
            return False
        return len(set(self.decoded())) != len(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __getstate__(self):
        return {"blob": self.blob, "starts": self.starts, "_decoded": None}


@jit(reads=("blob", "starts"))
def _name_hashes(blob, starts, out):
    """FNV-1a (64 bits) of each name's bytes."""
    for i in range(starts.size - 1):
        value = np.uint64(14695981039346656037)
        for q in range(starts[i], starts[i + 1] - 1):
            value = (value ^ np.uint64(blob[q])) * np.uint64(1099511628211)
        out[i] = value


# Batches from this many letters up are encoded a megabyte at a time and translated to codes by threads, a piece
# each: one join and one encode of a whole large batch spend most of their time faulting in fresh pages (40 MB:
# 50 ms, against 15 ms in pieces that stay in cache), and bytes.translate runs at 1-2 GB/s on one core.
THREADED_TRANSLATE_BYTES = 16 << 20
ENCODE_PIECE_BYTES = 1 << 20


@jit
def translate_bytes(text, table, out, first, last) -> int:
    """``out[k] = table[text[k]]`` for ``first <= k < last``; the first ``k`` whose code is ``ILLEGAL``, or -1."""
    bad = _translate_run(text[first:last], table, out[first:last])
    return first + bad if bad >= 0 else -1


def _encoded(sequences: list) -> bytes:
    """The letters of ``sequences`` (str or bytes), one byte each (a non-ASCII letter becomes '?')."""
    try:
        return "".join(sequences).encode("ascii")
    except (TypeError, UnicodeEncodeError):  # bytes, or a non-ASCII letter: slower, same error path after
        return b"".join(s.encode("ascii", "replace") if isinstance(s, str) else bytes(s) for s in sequences)


# -- Python strings read where they are -----------------------------------------------------------------------
# CPython keeps the letters of a compact ASCII ``str`` right after the object's header, one byte each
# (``PyASCIIObject``: the length at byte 16, the state bits at byte 32, the letters at ``sys.getsizeof("") - 1``).
# A compiled pass in threads reads them there and writes the codes: no join, no encode and no copy under the GIL,
# which took 32 ms of a 40,000 x 1,000-letter batch (most of a GPU call). The layout is checked once on strings
# made here (:func:`_str_layout`), and each string's own length and state bits again in the pass; anything else
# (another Python, bytes, str subclasses, non-ASCII text) takes the join-and-encode path.
_STATE_COMPACT_ASCII = 0x60  # the state's "compact" and "ascii" bits


class _StrLayout:
    """Byte offsets in a compact ASCII ``str`` of its length, its state bits and its letters."""

    length_at = 16
    state_at = 32

    def __init__(self, letters_at: int):
        self.letters_at = letters_at


def _read_str_header(text: str, layout: _StrLayout) -> tuple:
    import ctypes

    address = id(text)
    return (ctypes.c_ssize_t.from_address(address + layout.length_at).value,
            ctypes.c_uint8.from_address(address + layout.state_at).value,
            ctypes.string_at(address + layout.letters_at, len(text)))  # fmt: skip


_LAYOUT: list = []


def _str_layout() -> _StrLayout | None:
    """The compact ASCII ``str`` layout of this CPython, checked on fresh strings; None where it does not hold."""
    if not _LAYOUT:
        import sys

        layout = None
        if sys.implementation.name == "cpython" and sys.byteorder == "little":
            layout = _StrLayout(sys.getsizeof("") - 1)
            try:
                ascii_text = "".join(["ACGT", "NNAC"] * 40)
                other_text = "".join(["AC", "\u00e9"] * 5)  # compact, not ASCII
                length, state, letters = _read_str_header(ascii_text, layout)
                other_length, other_state, _ = _read_str_header(other_text, layout)
                if not (length == len(ascii_text) and letters == ascii_text.encode()
                        and state & _STATE_COMPACT_ASCII == _STATE_COMPACT_ASCII
                        and other_length == len(other_text) and other_state & _STATE_COMPACT_ASCII == 0x20):  # fmt: skip
                    layout = None
            except (ValueError, OSError):
                layout = None
        _LAYOUT.append(layout)
    return _LAYOUT[0]


def _letters_in_place(sequences: list, lengths: np.ndarray):
    """``(kept, memory, starts)`` for a list of ASCII ``str``: ``memory[starts[k] : starts[k] + lengths[k]]`` are
    the letters of ``kept[k]`` where CPython holds them, ``kept`` the strings, held until the letters are read;
    None where :func:`_str_layout` does not apply."""
    layout = _str_layout()
    if layout is None or not sequences or set(map(type, sequences)) != {str} or not all(map(str.isascii, sequences)):
        return None
    kept = tuple(sequences)  # the strings stay alive whatever happens to the caller's list meanwhile
    headers = np.fromiter(map(id, kept), dtype=np.int64, count=len(kept))
    base = int(headers.min())
    span = int((headers + (layout.letters_at + lengths)).max()) - base
    # A read-only view of the address range the strings lie in (NumPy's array interface: no ctypes type made
    # per call); only their headers and letters are ever read.
    memory = np.asarray(_AddressRange(base, span))
    return kept, memory, headers - base


class _AddressRange:
    """``span`` bytes of this process's memory from address ``base``, as NumPy's array interface describes them."""

    def __init__(self, base: int, span: int):
        self.__array_interface__ = {"data": (base, True), "shape": (span,), "typestr": "|u1", "version": 3}


@jit
def translate_in_place(memory, headers, lengths, length_at, state_at, letters_at, offsets, table, codes, first,
                       last) -> int:  # fmt: skip
    """Codes of strings ``first:last`` read in place (:func:`_letters_in_place`): ``codes[offsets[k] + q] =
    table[letter q of string k]``. Returns the first ``codes`` index whose code is ``ILLEGAL``, -1 if none, or -2
    if a string's header is not that of a compact ASCII string of its length (the caller reads them otherwise)."""
    if not _compact_ascii_headers(memory, headers, lengths, length_at, state_at, first, last):
        return -2
    for k in range(first, last):
        letters = headers[k] + letters_at
        out = offsets[k]
        n = lengths[k]
        bad = _translate_run(memory[letters : letters + n], table, codes[out : out + n])
        if bad >= 0:
            return out + bad
    return -1


@jit
def _compact_ascii_headers(memory, headers, lengths, length_at, state_at, first, last) -> bool:
    """Whether strings ``first:last`` have the headers of compact ASCII strings of ``lengths``."""
    for k in range(first, last):
        header = headers[k]
        length = 0
        for b in range(8):
            length |= np.int64(memory[header + length_at + b]) << (8 * b)
        if length != lengths[k] or memory[header + state_at] & _STATE_COMPACT_ASCII != _STATE_COMPACT_ASCII:
            return False
    return True


@jit(reads=("text", "table"))
def _translate_run(text, table, out) -> int:
    """``out[q] = table[text[q]]``; the first ``q`` whose code is ``ILLEGAL`` (the largest code), or -1. The
    check is a running maximum, so the loop has no exit to keep it from being vectorised (2 GB/s a core, twice
    the rate of a test on every letter)."""
    largest = np.uint8(0)
    for q in range(text.size):
        code = table[text[q]]
        out[q] = code
        largest = max(largest, code)
    if largest == ILLEGAL:
        for q in range(text.size):
            if out[q] == ILLEGAL:
                return q
    return -1


@jit(reads=("text",))
def translate_dna_run(text, out, iupac_as_n) -> int:
    """:func:`_translate_run` with :func:`code_table`'s table (``iupac_as_n`` as given), by arithmetic on the
    letters instead of a table, so that the loop vectorises: 4.5 GB/s a core against 1.6 GB/s for the table's
    lookups. Lower-cased (``| 32``, which maps no other byte onto a letter), a letter's bits 1-2 give A 0, C 1,
    T 2, G 3 (U as T), and one xor swaps G and T. The explicit uint8 casts keep every step in bytes: without
    them Numba widens to int64 and the loop stays scalar; so does an "and" of the checks, where an "or" of the
    failures vectorises."""
    bad = np.uint8(0)
    u1 = np.uint8(1)
    iupac = np.uint8(iupac_as_n)
    for q in range(text.size):
        c = np.uint8(text[q] | np.uint8(32))
        code = np.uint8((c >> u1) & np.uint8(3))
        code = np.uint8(code ^ (code >> u1))
        other = (np.uint8(c == np.uint8(114)) | np.uint8(c == np.uint8(121)) | np.uint8(c == np.uint8(107))  # r y k
                 | np.uint8(c == np.uint8(109)) | np.uint8(c == np.uint8(115)) | np.uint8(c == np.uint8(119))  # m s w
                 | np.uint8(c == np.uint8(98)) | np.uint8(c == np.uint8(100)) | np.uint8(c == np.uint8(104))  # b d h
                 | np.uint8(c == np.uint8(118)))  # v  # fmt: skip
        is_n = np.uint8(np.uint8(c == np.uint8(110)) | np.uint8(other & iupac))
        ok = (np.uint8(c == np.uint8(97)) | np.uint8(c == np.uint8(99)) | np.uint8(c == np.uint8(103))
              | np.uint8(c == np.uint8(116)) | np.uint8(c == np.uint8(117)) | is_n)  # fmt: skip
        out[q] = np.uint8(code + is_n * np.uint8(N_CODE - code))
        bad = np.uint8(bad | (ok ^ u1))
    if bad:
        for q in range(text.size):
            c = text[q] | 32
            allowed = c in (97, 99, 103, 116, 117, 110) or (iupac_as_n and c in (114, 121, 107, 109, 115, 119, 98, 100, 104, 118))
            if not allowed:
                return q
    return -1


def _codes_in_place(sequences: list, offsets: np.ndarray, table: np.ndarray):
    """``(codes, index of the first illegal letter or -1)`` by :func:`translate_in_place` in threads, or None."""
    lengths = np.diff(offsets)
    found = _letters_in_place(sequences, lengths)
    if found is None:
        return None
    kept, memory, headers = found
    layout = _str_layout()
    codes = np.empty(int(offsets[-1]), dtype=np.uint8)
    pieces = min(16, default_threads())
    # Runs of consecutive strings of about equal total length, one a thread.
    cuts = np.searchsorted(offsets, np.linspace(0, offsets[-1], pieces + 1))
    cuts = np.unique(np.concatenate([[0], np.clip(cuts, 0, len(kept)), [len(kept)]])).tolist()

    def translate(first: int, last: int) -> int:
        return translate_in_place(memory, headers, lengths, layout.length_at, layout.state_at, layout.letters_at,
                                  offsets, table, codes, first, last)  # fmt: skip

    with ThreadPoolExecutor(pieces) as pool:
        results = list(pool.map(translate, cuts[:-1], cuts[1:]))
    del kept
    if -2 in results:
        return None
    bad = [k for k in results if k >= 0]
    return codes, (bad[0] if bad else -1)


@jit
def _copy_in_place(memory, headers, lengths, length_at, state_at, letters_at, out, first, last) -> bool:
    """Rows ``first:last`` of ``out``: the letters of the strings read in place; False (nothing to trust) if a
    string's header is not that of a compact ASCII string of its length."""
    if not _compact_ascii_headers(memory, headers, lengths, length_at, state_at, first, last):
        return False
    length = out.shape[1]
    for k in range(first, last):
        letters = headers[k] + letters_at
        row = out[k]
        for q in range(length):
            row[q] = memory[letters + q]
    return True


def letters_matrix(sequences) -> np.ndarray | None:
    """The letters of many ASCII ``str`` of one length as an ``(n, length)`` uint8 matrix, copied by threads from
    where CPython holds them (see :func:`translate_in_place`); None for anything else (other types or lengths,
    non-ASCII text, another Python) and for batches under :data:`THREADED_TRANSLATE_BYTES`, where the caller's
    ``join`` costs less than loading a compiled pass."""
    if not isinstance(sequences, (list, tuple)) or not sequences or set(map(type, sequences)) != {str}:
        return None
    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    if lengths.min() != lengths.max() or int(lengths.sum()) < THREADED_TRANSLATE_BYTES:
        return None
    found = _letters_in_place(sequences, lengths)
    if found is None:
        return None
    kept, memory, headers = found
    layout = _str_layout()
    length = int(lengths[0])
    out = empty_array(len(kept) * length).reshape(len(kept), length)
    pieces = min(16, default_threads())
    cuts = np.linspace(0, len(kept), pieces + 1).astype(np.int64).tolist()

    def copy(first: int, last: int) -> bool:
        return _copy_in_place(memory, headers, lengths, layout.length_at, layout.state_at, layout.letters_at, out,
                              first, last)  # fmt: skip

    with ThreadPoolExecutor(pieces) as pool:
        trusted = all(list(pool.map(copy, cuts[:-1], cuts[1:])))
    del kept
    return out if trusted else None


def _codes_of(sequences: list, offsets: np.ndarray, table: np.ndarray):
    """``(codes, index of the first illegal letter or -1)`` of ``sequences`` laid out by ``offsets``."""
    total = int(offsets[-1])
    if total < THREADED_TRANSLATE_BYTES:
        letters = _encoded(sequences)
        translated = letters.translate(table.tobytes())  # a C loop over the bytes: no compiler to load
        return np.frombuffer(translated, dtype=np.uint8), translated.find(ILLEGAL)
    in_place = _codes_in_place(sequences, offsets, table)
    if in_place is not None:
        return in_place
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
    return codes, (bad[0] if bad else -1)


def _letter_byte(sequence, position: int) -> int:
    """The byte :func:`_encoded` makes of letter ``position`` of ``sequence`` (str: '?' for non-ASCII)."""
    if isinstance(sequence, str):
        return sequence[position].encode("ascii", "replace")[0]
    return bytes(sequence)[position]


@dataclass(frozen=True)
class SequenceSet:
    """Named sequences, concatenated.

    Attributes
    ----------
    names : sequence of str
        Record names (the header up to its first whitespace): a list, or a sequence that makes each name when
        it is read (:class:`EncodedNames` of a large FASTQ file, :class:`NumberedNames`).
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

    def select(self, records: np.ndarray) -> SequenceSet:
        """The set of records ``records`` (indices, in that order): codes and qualities gathered."""
        records = np.asarray(records, dtype=np.int64)
        lengths = self.lengths[records]
        offsets = np.zeros(records.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        codes = _gather_records(self.codes, self.offsets, records, offsets)
        quality = None if self.quality is None else _gather_records(self.quality, self.offsets, records, offsets)
        return SequenceSet(SelectedNames(self.names, records), codes, offsets, quality, self.source, self.alphabet)

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
        codes, first_bad = _codes_of(sequences, offsets, table)
        if first_bad >= 0:
            record = int(np.searchsorted(offsets, first_bad, side="right") - 1)
            position = int(first_bad - offsets[record])
            letter = _letter_byte(sequences[record], position)
            shown = chr(letter) if 32 < letter < 127 else f"byte 0x{letter:02x}"
            raise InputError(illegal_base_message(source, record, names[record], shown, position, allowed))
        quality = None
        if qualities is not None:
            quality = np.concatenate([np.asarray(q, dtype=np.int64) for q in qualities]) if sequences else np.empty(0)
            if quality.size != codes.size or (quality.size and (quality.min() < 0 or quality.max() > 93)):
                raise InputError(f"{source}: qualities must be Phred scores 0..93, one per base")
            quality = quality.astype(np.uint8)
        return cls(names, codes, offsets, quality, source, "dna" if alphabet is None else alphabet.name)


class SelectedNames(Sequence):
    """The names of some records of a set (:meth:`SequenceSet.select`), each read from the set's names when asked
    for."""

    def __init__(self, names, records: np.ndarray):
        self.names = names
        self.records = records

    def __len__(self) -> int:
        return self.records.size

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.names[int(i)] for i in self.records[index]]
        return self.names[int(self.records[index])]

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)


@jit(reads=("values", "offsets", "records", "out_offsets"))
def _gather_into(values, offsets, records, out_offsets, out):
    for i in range(records.size):
        r = records[i]
        out[out_offsets[i] : out_offsets[i + 1]] = values[offsets[r] : offsets[r + 1]]


def _gather_records(values: np.ndarray, offsets: np.ndarray, records: np.ndarray, out_offsets: np.ndarray):
    """``values`` of each of ``records`` end to end, laid out by ``out_offsets``."""
    out = np.empty(int(out_offsets[-1]), dtype=values.dtype)
    _gather_into(values, offsets, records, out_offsets, out)
    return out


def packed_layout(lengths: np.ndarray):
    """``(word0, total_words)``: where each record's words start when records are packed 32 bases a word, each
    from a word boundary (:func:`pack_words`), and how many words that takes."""
    word0 = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum((lengths + 31) >> 5, out=word0[1:])
    return word0[:-1], int(word0[-1])


@jit
def _packed_group(x):
    """``(bases, n bits)`` of 8 codes (0..4) in the bytes of ``x``: three shift-and-mask steps draw the 2-bit
    bases together into 16 bits, and three more the N bits into 8."""
    b = x & np.uint64(0x0303030303030303)
    b = (b | (b >> np.uint64(6))) & np.uint64(0x000F000F000F000F)
    b = (b | (b >> np.uint64(12))) & np.uint64(0x000000FF000000FF)
    b = b | (b >> np.uint64(24))
    n = (x >> np.uint64(2)) & np.uint64(0x0101010101010101)
    n = (n | (n >> np.uint64(7))) & np.uint64(0x0003000300030003)
    n = (n | (n >> np.uint64(14))) & np.uint64(0x0000000F0000000F)
    n = n | (n >> np.uint64(28))
    return np.uint16(b & np.uint64(0xFFFF)), np.uint8(n & np.uint64(0xFF))


@jit
def pack_words(words, length, word, bases16, nmask8):
    """Pack one record of ``length`` codes (0..4), held 8 a word in ``words`` (uint64, little-endian bytes), from
    word ``word`` of the packed arrays on: 2 bits a base (N as 0) and an N bit each, bases past the record's end
    read as N, whatever ``words`` holds there. ``bases16`` and ``nmask8`` are the packed arrays (uint64 bases,
    uint32 N masks) seen as uint16 and uint8: 8 codes make 16 bits of bases and 8 N bits, so each word of codes
    is a lane of its own and the loop over the full words vectorises (about 3.5x the rate of packing one code at
    a time)."""
    fours = np.uint64(0x0404040404040404)
    first = 4 * word
    full = length >> 3
    for g in range(full):
        bases16[first + g], nmask8[first + g] = _packed_group(words[g])
    for g in range(full, ((length + 31) >> 5) << 2):  # the last codes, then N to the end of their 32-base word
        x = fours
        if g == full and length & 7:
            low = (np.uint64(1) << np.uint64(8 * (length & 7))) - np.uint64(1)
            x = (words[g] & low) | (fours & ~low)
        bases16[first + g], nmask8[first + g] = _packed_group(x)


def illegal_base_message(source: str, record: int, name: str, shown: str, position: int,
                         allowed: str | None = None) -> str:  # fmt: skip
    """The one-line error for a letter outside the alphabet; ``allowed`` words the alphabet (default: DNA's)."""
    allowed = allowed or "A, C, G, T or N (--iupac-as-n reads other IUPAC codes as N)"
    return f"{source}: record #{record + 1} '{name}' has '{shown}' at position {position + 1}, which is not {allowed}"


@jit(reads=("codes", "offsets"))
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
