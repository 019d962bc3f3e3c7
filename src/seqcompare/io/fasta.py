"""FASTA alignments: plain, gzip or stdin, wrapped lines, CRLF, read into one ``(n, m)`` byte matrix.

The scan runs in a compiled kernel over the whole file image (no per-line Python loop), so a 600 MB
alignment parses at memory speed; the file image and the matrix are the only large allocations.
"""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from dataclasses import dataclass

import numpy as np

from .._jit import jit
from ..errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"

# Bytes a sequence line may hold: letters and the usual gap/stop/unknown marks. Whitespace is skipped.
_ALLOWED = np.zeros(256, dtype=np.uint8)
for _c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-.*?":
    _ALLOWED[_c] = 1
_WHITESPACE = np.zeros(256, dtype=np.uint8)
for _c in b" \t\r\n\v\f":
    _WHITESPACE[_c] = 1

# Status codes of the scan kernel.
_OK, _NOT_FASTA, _UNEQUAL, _ILLEGAL = 0, 1, 2, 3


@dataclass(frozen=True)
class Alignment:
    """Aligned sequences as read from a FASTA file.

    Attributes
    ----------
    names : list of str
        Record names: the header up to its first whitespace.
    sequences : ndarray of uint8, shape (n, m)
        The sequence bytes exactly as in the file (case kept, no recoding).
    source : str
        Where the records came from (a path, or ``"-"`` for standard input).
    """

    names: list[str]
    sequences: np.ndarray
    source: str = "<array>"

    @property
    def n_sequences(self) -> int:
        return self.sequences.shape[0]

    @property
    def length(self) -> int:
        return self.sequences.shape[1]


def read_bytes(path: str | os.PathLike) -> bytes:
    """Return the contents of ``path`` (``"-"`` for stdin), gunzipped if it is gzip data.

    Raises
    ------
    InputError
        If the file is missing, a directory, unreadable, or corrupt gzip.
    """
    path = os.fspath(path)
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                raw = handle.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: corrupt or truncated gzip data ({exc})") from None
    return raw


@jit
def _scan_alignment(buf, allowed, whitespace):
    """Index and copy every record of a FASTA image into an (n, m) matrix in one pass.

    Returns (status, out, header_starts, header_ends, detail_record, detail_a, detail_b).
    """
    size = buf.size
    n_records = 0
    for p in range(size):
        if buf[p] == 62 and (p == 0 or buf[p - 1] == 10):
            n_records += 1
    header_starts = np.empty(n_records, np.int64)
    header_ends = np.empty(n_records, np.int64)
    out = np.empty((0, 0), np.uint8)
    if n_records == 0:
        # Anything but whitespace means content that is not FASTA; nothing at all means empty input.
        for p in range(size):
            if whitespace[buf[p]] == 0:
                return _NOT_FASTA, out, header_starts, header_ends, -1, p, 0
        return _OK, out, header_starts, header_ends, 0, 0, 0

    p = 0
    while p < size and whitespace[buf[p]] == 1:
        p += 1
    if buf[p] != 62 or (p > 0 and buf[p - 1] != 10):
        return _NOT_FASTA, out, header_starts, header_ends, -1, p, 0

    length = -1
    record = -1
    first_sequence_start = 0
    while p < size:
        # Header line.
        record += 1
        header_starts[record] = p + 1
        while p < size and buf[p] != 10:
            p += 1
        header_ends[record] = p
        p += 1
        sequence_start = p
        filled = 0
        # Sequence lines, up to the next '>' at a line start.
        while p < size:
            c = buf[p]
            if c == 62 and buf[p - 1] == 10:
                break
            if whitespace[c] == 0:
                if allowed[c] == 0:
                    return _ILLEGAL, out, header_starts, header_ends, record, filled, c
                if record > 0 and filled < length:
                    out[record, filled] = c
                filled += 1
            p += 1
        if record == 0:
            length = filled
            out = np.empty((n_records, length), np.uint8)
            first_sequence_start = sequence_start
        elif filled != length:
            return _UNEQUAL, out, header_starts, header_ends, record, filled, length
    # The first record's length was unknown while it was read; copy it now.
    q = first_sequence_start
    filled = 0
    while filled < length:
        c = buf[q]
        if whitespace[c] == 0:
            out[0, filled] = c
            filled += 1
        q += 1
    return _OK, out, header_starts, header_ends, 0, 0, 0


def _decode_name(header: bytes) -> str:
    header = header.rstrip(b"\r")
    first_word = header.split(None, 1)[0] if header.strip() else b""
    return first_word.decode("utf-8", "surrogateescape")


def read_alignment(path: str | os.PathLike) -> Alignment:
    """Read a FASTA alignment (plain or gzip; ``"-"`` for stdin) into an :class:`Alignment`.

    Parameters
    ----------
    path : str or path-like
        File to read. Gzip input is detected from its magic bytes, whatever the name.

    Returns
    -------
    Alignment
        Names and an ``(n, m)`` uint8 matrix of the raw sequence bytes.

    Raises
    ------
    InputError
        Missing, empty or non-FASTA file; a character that is not a letter or one of ``-.*?``;
        records of unequal length (the message names the record and both lengths).
    """
    source = os.fspath(path)
    image = np.frombuffer(read_bytes(source), dtype=np.uint8)
    status, out, starts, ends, record, a, b = _scan_alignment(image, _ALLOWED, _WHITESPACE)

    def name_of(index: int) -> str:
        return _decode_name(image[starts[index] : ends[index]].tobytes())

    if status == _NOT_FASTA:
        raise InputError(f"{source}: not a FASTA file (byte {a + 1} is not part of a '>' record)")
    if status == _ILLEGAL:
        shown = chr(b) if 32 < b < 127 else f"byte 0x{b:02x}"
        raise InputError(
            f"{source}: record #{record + 1} '{name_of(record)}' has an illegal character "
            f"'{shown}' at position {a + 1}"
        )
    if status == _UNEQUAL:
        raise InputError(
            f"{source}: record #{record + 1} '{name_of(record)}' has length {a} but "
            f"record #1 '{name_of(0)}' has length {b}; all sequences of an alignment must be equally long"
        )
    if out.shape[0] == 0:
        raise InputError(f"{source}: contains no FASTA records")
    names = [name_of(i) for i in range(len(starts))]
    return Alignment(names=names, sequences=out, source=source)


def duplicated_names(names: list[str]) -> list[str]:
    """Names that occur more than once, in order of first repeat."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in names:
        if name in seen:
            repeated[name] = None
        seen.add(name)
    return list(repeated)
