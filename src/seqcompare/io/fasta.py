"""FASTA alignments: plain, gzip or stdin, wrapped lines, CRLF, read into one ``(n, m)`` byte matrix.

The scan runs in a compiled kernel over the whole file image (no per-line Python loop), so a 600 MB
alignment parses at memory speed; the file image and the matrix are the only large allocations.
"""

from __future__ import annotations

import gzip
import mmap
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


def read_bytes(path: str | os.PathLike):
    """Return the contents of ``path`` (``"-"`` for stdin) as a byte buffer, gunzipped if it is gzip data.

    Plain files are memory-mapped read-only rather than copied: the kernels read the page cache directly.

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
                head = handle.read(2)
                if head == _GZIP_MAGIC:
                    raw = head + handle.read()
                else:
                    size = os.fstat(handle.fileno()).st_size
                    if size == 0:
                        return b""
                    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
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


def _line_ends(image: np.ndarray) -> np.ndarray:
    """Positions of every newline, plus ``image.size`` when the last line has none."""
    chunk = 1 << 24
    parts = [np.flatnonzero(image[lo : lo + chunk] == 10) + lo for lo in range(0, image.size, chunk)]
    if image.size and image[-1] != 10:
        parts.append(np.array([image.size]))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


@jit
def _line_is_clean(buf, start, stop):
    """True when every byte of ``buf[start:stop]`` is a letter or one of ``-.*?`` (branch-free, vectorised)."""
    bad = 0
    for q in range(start, stop):
        c = buf[np.uint64(q)]
        letter = np.uint8((c | 32) - 97) < 26
        mark = (c == 45) | (c == 46) | (c == 42) | (c == 63)
        bad |= not (letter | mark)
    return bad == 0


@jit
def _sequence_line(buf, start, stop, row, filled, length, allowed, whitespace):
    """Append one sequence line to ``row`` (up to ``length`` bytes) and return the new fill.

    Returns ``-1 - offset`` for an illegal byte at ``offset`` characters into the record's sequence.
    A clean line (the usual case) is one slice copy; lines with embedded whitespace take the byte loop.
    """
    if _line_is_clean(buf, start, stop):
        room = max(0, min(stop - start, length - filled))
        row[filled : filled + room] = buf[start : start + room]
        return filled + (stop - start)
    for q in range(start, stop):
        c = buf[q]
        if whitespace[c] == 1:
            continue
        if allowed[c] == 0:
            return -1 - filled
        if filled < length:
            row[filled] = c
        filled += 1
    return filled


@jit
def _line_bounds(buf, line_ends, k, start):
    """Start and stop of line ``k`` (which begins at ``start``), a trailing carriage return excluded."""
    stop = line_ends[k]
    if stop > start and buf[stop - 1] == 13:
        stop -= 1
    return start, stop


@jit
def _scan_alignment(buf, line_ends, allowed, whitespace):
    """Index and copy every record of a FASTA image into an (n, m) matrix.

    ``line_ends`` holds the position of every newline (plus ``buf.size`` if the last line has none).
    Returns (status, out, header_starts, header_ends, detail_record, detail_a, detail_b).
    """
    n_lines = line_ends.size
    n_records = 0
    start = 0
    for k in range(n_lines):
        if line_ends[k] > start and buf[start] == 62:
            n_records += 1
        start = line_ends[k] + 1
    header_starts = np.empty(n_records, np.int64)
    header_ends = np.empty(n_records, np.int64)
    empty_row = np.empty(0, np.uint8)
    out = np.empty((0, 0), np.uint8)

    # Length of the first record, to size the matrix before the single copying pass.
    length = -1
    record = -1
    start = 0
    for k in range(n_lines):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            if record == 0:
                break
            record = 0
            length = 0
            header_starts[0] = start + 1
            header_ends[0] = stop
        elif record == 0:
            filled = _sequence_line(buf, start, stop, empty_row, length, 0, allowed, whitespace)
            if filled < 0:
                return _ILLEGAL, out, header_starts, header_ends, 0, -1 - filled, 0
            length = filled
        start = line_ends[k] + 1
    if n_records > 0:
        out = np.empty((n_records, length), np.uint8)

    record = -1
    filled = 0
    start = 0
    for k in range(n_lines):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            if record >= 0 and filled != length:
                return _UNEQUAL, out, header_starts, header_ends, record, filled, length
            record += 1
            header_starts[record] = start + 1
            header_ends[record] = stop
            filled = 0
        elif record < 0:
            for q in range(start, stop):
                if whitespace[buf[q]] == 0:
                    return _NOT_FASTA, out, header_starts, header_ends, -1, q, 0
        elif stop > start:
            filled = _sequence_line(buf, start, stop, out[record], filled, length, allowed, whitespace)
            if filled < 0:
                position = -1 - filled
                return _ILLEGAL, out, header_starts, header_ends, record, position, 0
        start = line_ends[k] + 1
    if record >= 0 and filled != length:
        return _UNEQUAL, out, header_starts, header_ends, record, filled, length
    return _OK, out, header_starts, header_ends, 0, 0, 0


def _illegal_byte(image, starts, ends, record, offset) -> int:
    """The byte at sequence offset ``offset`` of ``record`` (only called to word an error message)."""
    stop = starts[record + 1] - 1 if record + 1 < len(starts) else image.size
    sequence = image[ends[record] : stop].tobytes()
    kept = bytes(c for c in sequence if c not in b" \t\r\n\v\f")
    return kept[offset]


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
    line_ends = _line_ends(image)
    status, out, starts, ends, record, a, b = _scan_alignment(image, line_ends, _ALLOWED, _WHITESPACE)

    def name_of(index: int) -> str:
        return _decode_name(image[starts[index] : ends[index]].tobytes())

    if status == _NOT_FASTA:
        raise InputError(f"{source}: not a FASTA file (byte {a + 1} is not part of a '>' record)")
    if status == _ILLEGAL:
        b = _illegal_byte(image, starts, ends, record, a)
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
