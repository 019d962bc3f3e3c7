"""FASTA alignments: plain, gzip or stdin, wrapped lines, CRLF, read into one ``(n, m)`` byte matrix.

The scan runs in compiled kernels over the file image (no per-line Python loop). A large image is cut at
record starts into pieces that threads index and copy at once, straight into the one output matrix, so a
multi-gigabyte alignment parses at several GB/s; the file image and the matrix are the only large allocations.
"""

from __future__ import annotations

import contextlib
import gzip
import mmap
import os
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._jit import compiler_started, jit
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
    sequences : ndarray of uint8, shape (n, m), or FileRows
        The sequence bytes exactly as in the file (case kept, no recoding); rows left where they lie in the file
        (:class:`FileRows`) where :func:`read_alignment` was asked to (``in_place=True``).
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


class FileRows:
    """An alignment's sequences where the reader found them: ``n`` rows of ``length`` bytes, row ``i`` at byte
    ``starts[i]`` of a file mapped read-only (:func:`read_alignment` with ``in_place=True``).

    A GPU run uploads the bytes that hold the rows straight from the page cache and gathers the rows on the
    device, so a large alignment is never copied on the host: on an H200 host, copying 1 GB of rows into shared
    memory took a command 0.24-0.28 s, and 32,768 x 30,000 from FASTA to pairs went from 0.99-1.02 s to
    0.80 s (bench/RESULTS.md, session 32). Anything else reads it as an array: ``np.asarray(rows)`` (and
    indexing) makes the ``(n, length)`` copy.

    It pickles as the file's path, identity and row offsets: a process on the same host (a forked GPU helper,
    say) maps the same file again, and refuses one that has changed since it was read.
    """

    dtype = np.dtype(np.uint8)
    ndim = 2

    def __init__(self, image: np.ndarray, starts: np.ndarray, length: int, path: str, identity: tuple):
        self.image = image
        self.starts = np.ascontiguousarray(starts, dtype=np.int64)
        self.length = int(length)
        self.path = path
        self.identity = identity

    @property
    def shape(self) -> tuple[int, int]:
        return (self.starts.size, self.length)

    @property
    def size(self) -> int:
        return self.starts.size * self.length

    @property
    def nbytes(self) -> int:
        return self.size

    def __len__(self) -> int:
        return self.starts.size

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """``(low, high)``: the bytes of the file from row ``start``'s first to row ``stop - 1``'s last."""
        if stop <= start:
            return 0, 0
        return int(self.starts[start]), int(self.starts[stop - 1]) + self.length

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("rows read in place are not an array: reading them as one is a copy")
        out = np.empty(self.shape, np.uint8)
        for a, b in _equal_stride_runs_flat(self.starts):
            out[a:b] = _rows_view(self.image, self.starts, a, b, self.length)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, key):
        return np.asarray(self)[key]

    def __reduce__(self):
        return _map_rows, (self.path, self.identity, self.starts, self.length)


def in_memory(sequences):
    """``sequences`` as an array: rows read in place (:class:`FileRows`) copied, anything else as it is."""
    return np.asarray(sequences) if isinstance(sequences, FileRows) else sequences


def _map_rows(path: str, identity: tuple, starts: np.ndarray, length: int) -> FileRows:
    """A :class:`FileRows` unpickled: the file mapped again, provided it is still the one that was read."""
    try:
        with open(path, "rb") as handle:
            if _identity_of(handle.fileno()) != identity:
                raise InputError(f"{path}: the file changed while it was being read")
            image = np.frombuffer(_map_shared(handle.fileno()), np.uint8)
    except FileNotFoundError:
        raise InputError(f"{path}: the file was removed while it was being read") from None
    return FileRows(image, starts, length, path, identity)


def _rows_view(image: np.ndarray, starts: np.ndarray, a: int, b: int, length: int) -> np.ndarray:
    """Rows ``a .. b`` of ``image`` (which lie an equal number of bytes apart), as one read-only strided view."""
    stride = int(starts[a + 1] - starts[a]) if b - a > 1 else length
    return np.lib.stride_tricks.as_strided(image[int(starts[a]) :], (b - a, length), (stride, 1), writeable=False)


def _equal_stride_runs_flat(starts: np.ndarray) -> list[tuple[int, int]]:
    """Runs ``[a, b)`` of rows that lie an equal number of bytes apart."""
    return [run for group in _equal_stride_runs(starts, 1) for run in group]


def read_bytes(path: str | os.PathLike):
    """Return the contents of ``path`` (``"-"`` for stdin) as a byte buffer, gunzipped if it is gzip data.

    Plain files are memory-mapped read-only rather than copied: the kernels read the page cache directly.

    Raises
    ------
    InputError
        If the file is missing, a directory, unreadable, or corrupt gzip.
    """
    path = os.fspath(path)
    identity = None
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                head = handle.read(2)
                if head == _GZIP_MAGIC:
                    kept = _KEPT.get(path)
                    identity = _identity_of(handle.fileno())
                    if kept is not None and kept[0] == identity:
                        return kept[1]
                    raw = head + handle.read()
                else:
                    size = os.fstat(handle.fileno()).st_size
                    if size == 0:
                        return b""
                    return _map_file(handle.fileno())
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:2] == _GZIP_MAGIC:
        try:
            blocks = _bgzf_blocks(raw)
            raw = gzip.decompress(raw) if blocks is None else _inflate_blocks(raw, blocks)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: corrupt or truncated gzip data ({exc})") from None
        if identity is not None and path in _KEPT:
            _KEPT[path] = (identity, raw)
    return raw


# Gzip files whose contents read_bytes keeps for the next read of the same path (see keeping_contents).
_KEPT: dict = {}


def _identity_of(descriptor: int) -> tuple:
    """The file's device, inode, size and modification time: a kept copy stands for the file while they hold."""
    status = os.fstat(descriptor)
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


@contextlib.contextmanager
def keeping_contents(path):
    """Within the block, :func:`read_bytes` inflates a gzip ``path`` once and hands its contents to every later
    read of it (scan's read selection copies records from the samples it has just scanned: a second pass of
    zlib over a large file would cost as long as the first). Plain files need nothing: they are mapped."""
    path = os.fspath(path)
    _KEPT[path] = None
    try:
        yield
    finally:
        _KEPT.pop(path, None)


# BGZF (bgzip, htslib; also what Illumina's bcl2fastq writes): gzip members of at most 64 KB, each saying its
# own compressed size in a 'BC' extra field, so the members can be found without inflating them and inflated by
# threads (zlib releases the GIL as it works). Any other gzip file is inflated in one pass.
_BGZF_HEADER = b"\x1f\x8b\x08\x04"
_BGZF_THREADS_FROM = 4 << 20  # compressed bytes; below this one thread inflates it as fast


def _bgzf_blocks(raw) -> list | None:
    """``[(start, stop)]`` of every member of ``raw`` when it is BGZF from end to end, else None."""
    size = len(raw)
    if size < _BGZF_THREADS_FROM or raw[:4] != _BGZF_HEADER:
        return None
    blocks = []
    at = 0
    while at < size:
        # ID1 ID2 CM FLG (FEXTRA), MTIME, XFL, OS, XLEN = 6, then the subfield B C, SLEN = 2, BSIZE.
        if raw[at : at + 4] != _BGZF_HEADER or raw[at + 10 : at + 16] != b"\x06\x00BC\x02\x00":
            return None
        stop = at + int.from_bytes(raw[at + 16 : at + 18], "little") + 1
        if stop > size or stop - at < 26:
            return None  # truncated: the one-pass reader says so
        blocks.append((at, stop))
        at = stop
    return blocks


def _inflate_blocks(raw, blocks: list) -> bytearray:
    """The data of BGZF ``blocks`` of ``raw``, inflated by threads and checked against each member's CRC-32 and
    length, as gzip would."""
    from ..validation import default_threads

    view = memoryview(raw)
    lengths = [int.from_bytes(view[stop - 4 : stop], "little") for _, stop in blocks]
    starts = [0]
    for length in lengths:
        starts.append(starts[-1] + length)
    out = bytearray(starts[-1])

    def inflate(first: int, last: int) -> None:
        target = memoryview(out)
        for b in range(first, last):
            start, stop = blocks[b]
            data = zlib.decompress(view[start + 18 : stop - 8], wbits=-15)
            if len(data) != lengths[b] or zlib.crc32(data) != int.from_bytes(view[stop - 8 : stop - 4], "little"):
                raise zlib.error(f"BGZF block at byte {start} fails its length or CRC-32 check")
            target[starts[b] : starts[b + 1]] = data

    threads = min(default_threads(), 16)
    cuts = [len(blocks) * k // (4 * threads) for k in range(4 * threads + 1)]
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(inflate, cuts[:-1], cuts[1:]))
    return out


def _map_in_place(path: str):
    """``(mapping, (path, identity))`` of a plain file large enough for the regular-layout parse; None for
    anything else (stdin, gzip, a small or unreadable file: :func:`read_bytes` then reads, or reports, it)."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as handle:
            identity = _identity_of(handle.fileno())
            if identity[2] <= REGULAR_BYTES or handle.read(2) == _GZIP_MAGIC:
                return None
            return _map_shared(handle.fileno()), (os.path.abspath(path), identity)
    except OSError:
        return None


def _map_shared(descriptor: int):
    """The whole file mapped read-only and shared (the page cache's own pages), populated at once where Linux
    allows. A private mapping would do for reading, but CUDA took 0.43 s to page-lock a private mapping of a 1 GB
    FASTA in a command on an H200 host, against 0.038-0.054 s for a shared one (bench/RESULTS.md, session 32)."""
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    return mmap.mmap(descriptor, 0, flags=flags, prot=mmap.PROT_READ)


def _map_file(descriptor: int):
    """The whole file, memory-mapped read-only; on Linux its pages are mapped at once (``MAP_POPULATE``: one
    system call instead of a page fault every 4 KB as the parser first touches them)."""
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if populate:
        return mmap.mmap(descriptor, 0, flags=mmap.MAP_PRIVATE | populate, prot=mmap.PROT_READ)
    return mmap.mmap(descriptor, 0, access=mmap.ACCESS_READ)


def _line_ends(image: np.ndarray, pool=None) -> np.ndarray:
    """Positions of every newline, plus ``image.size`` when the last line has none; the 16 MB chunks are searched
    by the threads of ``pool`` when one is given (NumPy releases the GIL)."""
    chunk = 1 << 24

    def newlines(lo: int) -> np.ndarray:
        return np.flatnonzero(image[lo : lo + chunk] == 10) + lo

    parts = list((pool.map if pool is not None else map)(newlines, range(0, image.size, chunk)))
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
        # A loop, not a slice assignment: LLVM makes it the same copy, and Numba does not compile its
        # shape-mismatch error path for it (6 s on a cold cache).
        for k in range(room):
            row[filled + k] = buf[start + k]
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
def _record_headers(buf, line_ends):
    """Start (after the '>') and stop of every header line of a FASTA image."""
    n_records = 0
    start = 0
    for k in range(line_ends.size):
        if line_ends[k] > start and buf[start] == 62:
            n_records += 1
        start = line_ends[k] + 1
    header_starts = np.empty(n_records, np.int64)
    header_ends = np.empty(n_records, np.int64)
    record = 0
    start = np.int64(0)  # not the literal 0: Numba would compile _line_bounds once more for it
    for k in range(line_ends.size):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            header_starts[record] = start + 1
            header_ends[record] = stop
            record += 1
        start = line_ends[k] + 1
    return header_starts, header_ends


@jit
def _first_record_length(buf, line_ends, allowed, whitespace):
    """Sequence length of the first record, which sizes the matrix: ``(status, length, offset)``."""
    empty_row = np.empty(0, np.uint8)
    length = np.int64(-1)  # int64, not literals: each literal type would compile the callees once more
    start = np.int64(0)
    for k in range(line_ends.size):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            if length >= 0:
                break
            length = 0
        elif length >= 0:
            filled = _sequence_line(buf, start, stop, empty_row, length, np.int64(0), allowed, whitespace)
            if filled < 0:
                return _ILLEGAL, length, -1 - filled
            length = filled
        start = line_ends[k] + 1
    return _OK, length, 0


@jit
def _copy_records(buf, line_ends, out, length, allowed, whitespace):
    """Copy the records of a FASTA image (or of a piece of one that starts at a record) into ``out``.

    Returns ``(status, record, a, b)``: for an error, the record (counted within ``buf``) and the detail the
    message needs (offset of an illegal byte or of text before the first record; lengths of an unequal one).
    """
    record = -1
    filled = np.int64(0)  # int64, not literals: each literal type would compile the callees once more
    start = np.int64(0)
    for k in range(line_ends.size):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            if record >= 0 and filled != length:
                return _UNEQUAL, record, filled, length
            record += 1
            filled = 0
        elif record < 0:
            for q in range(start, stop):
                if whitespace[buf[q]] == 0:
                    return _NOT_FASTA, -1, q, 0
        elif stop > start:
            filled = _sequence_line(buf, start, stop, out[record], filled, length, allowed, whitespace)
            if filled < 0:
                return _ILLEGAL, record, -1 - filled, 0
        start = line_ends[k] + 1
    if record >= 0 and filled != length:
        return _UNEQUAL, record, filled, length
    return _OK, 0, 0, 0


# Inputs smaller than this are read by one thread: below it, thread start-up costs more than it saves.
_PIECE_BYTES = 16 << 20


def _piece_starts(raw, size: int, pieces: int, boundary: bytes = b"\n>") -> list[int]:
    """Byte offsets that split an image into about ``pieces`` parts, each after the first starting just after
    the newline of a ``boundary`` (default: at a FASTA record, a '>' that begins a line)."""
    starts = [0]
    for k in range(1, pieces):
        at = raw.find(boundary, max(starts[-1], k * size // pieces))
        if at < 0:
            break
        if at + 1 > starts[-1]:
            starts.append(at + 1)
    return starts


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


def header_words(image: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> list[str]:
    """The names of many headers at once (``_decode_name`` of each ``image[starts[r]:stops[r]]``): their first
    words gathered by compiled passes (:func:`header_names`) and decoded in one call, where a Python call per
    header costs about 2 us (a second for half a million reads). Decoding the words joined by a newline gives
    each word's own decoding, since no UTF-8 sequence runs across an ASCII byte."""
    return header_names(image, starts, stops).decoded()


def header_names(image: np.ndarray, starts: np.ndarray, stops: np.ndarray, pool=None, pieces: int = 1):
    """:func:`header_words` as an :class:`~seqcompare.io.sequences.EncodedNames`, decoded only when read; the
    words are found and gathered in ``pieces`` runs of headers on ``pool``'s threads when one is given (one
    thread took 0.07-0.09 s for 500,000 reads of 2 kb, one memory page apart)."""
    from .sequences import EncodedNames

    starts = np.ascontiguousarray(starts, dtype=np.int64)
    stops = np.ascontiguousarray(stops, dtype=np.int64)
    n = starts.size
    word_start, word_stop = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    cuts = np.linspace(0, n, max(1, min(pieces, n)) + 1).astype(np.int64).tolist()
    runs = [(a, b) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    run = pool.map if pool is not None else map
    list(run(lambda ab: _word_spans(image, starts, stops, ab[0], ab[1], word_start, word_stop), runs))
    bounds = np.zeros(n + 1, dtype=np.int64)  # name i at blob[bounds[i]:bounds[i + 1] - 1], then its newline
    np.cumsum(word_stop - word_start + 1, out=bounds[1:])
    blob = np.empty(max(int(bounds[-1]) - 1, 0), dtype=np.uint8)
    list(run(lambda ab: _gather_words(image, word_start, word_stop, bounds, ab[0], ab[1], blob), runs))
    return EncodedNames(blob, bounds)


@jit(reads=("buf", "starts", "stops"))
def _word_spans(buf, starts, stops, first, last, word_start, word_stop):
    """Where the first whitespace-delimited word of each header ``first:last`` starts and stops (as
    ``bytes.split`` finds it: space, tab, LF, VT, FF, CR)."""
    for r in range(first, last):
        a = starts[r]
        b = stops[r]
        while a < b and (buf[a] == 32 or 9 <= buf[a] <= 13):
            a += 1
        e = a
        while e < b and not (buf[e] == 32 or 9 <= buf[e] <= 13):
            e += 1
        word_start[r] = a
        word_stop[r] = e


@jit(reads=("buf", "word_start", "word_stop", "bounds"))
def _gather_words(buf, word_start, word_stop, bounds, first, last, blob):
    """The words of headers ``first:last`` into ``blob`` at ``bounds``, each followed by a newline but the last."""
    for r in range(first, last):
        at = bounds[r]
        for q in range(word_start[r], word_stop[r]):
            blob[at] = buf[q]
            at += 1
        if at < blob.size:
            blob[at] = 10


# Inputs up to this size that are well formed (no whitespace inside lines, nothing illegal, equal lengths) are
# parsed by NumPy alone: a small alignment then costs no compiled kernel, nor Numba's start-up (~0.3 s). Anything
# else goes to the compiled scan, which also words every error.
SMALL_BYTES = 16 << 20


def _line_spans(image: np.ndarray):
    """``(ends, starts, stops)`` of every line of a non-empty image: where its newline is (``image.size`` for a
    last line without one), where it starts, and where its content stops (before a CR)."""
    ends = _line_ends(image)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    stops = ends - ((image[np.maximum(ends - 1, 0)] == 13) & (ends > starts))  # a CR is not content
    return ends, starts, stops


# Bytes of lines a thread masks, copies and translates at a time in the well-formed parse: near a core's L2 cache.
_LINES_BYTES = 1 << 22


def _well_formed_lines(image: np.ndarray, translate: np.ndarray | None = None):
    """The lines of a FASTA image by NumPy alone: ``(starts, stops, headers, lines, sequence)``, line bounds
    without line ends or CRs, the indices of the header and sequence lines (empty lines dropped), and every
    sequence byte in order (through ``translate`` when given; then None where it maps a byte to 255). None
    where the image does not open with a record."""
    size = image.size
    if size == 0 or image[0] != 62:
        return None
    ends, starts, stops = _line_spans(image)
    content = stops - starts
    header = (content > 0) & (image[np.minimum(starts, size - 1)] == 62)
    # Each line is a run of content bytes, then its CR and newline: the sequence bytes are the content runs of
    # the lines that are not headers, picked by a mask repeated from the runs, in pieces of whole lines that
    # threads take (no Python loop over records; NumPy releases the GIL).
    runs = np.empty(2 * ends.size, dtype=np.int64)
    runs[0::2] = content
    runs[1::2] = ends - stops + (ends < size)
    kept = np.zeros(2 * ends.size, dtype=bool)
    kept[0::2] = (content > 0) & ~header
    cuts = np.unique(np.r_[np.searchsorted(starts, np.arange(0, size, _LINES_BYTES)), ends.size])
    filled = np.r_[0, np.cumsum(np.where(kept[0::2], content, 0))][cuts]
    sequence = np.empty(int(filled[-1]), dtype=np.uint8)

    def piece(k: int) -> bool:
        a, b = int(cuts[k]), int(cuts[k + 1])
        if a == b:
            return True
        first, last = int(starts[a]), int(min(ends[b - 1] + 1, size))
        picked = image[first:last][np.repeat(kept[2 * a : 2 * b], runs[2 * a : 2 * b])]
        out = sequence[filled[k] : filled[k + 1]]
        if translate is None:
            out[:] = picked
            return True
        np.take(translate, picked, out=out)
        return not (out == 255).any()

    pieces = len(cuts) - 1
    if pieces > 1:
        with ThreadPoolExecutor(min(pieces, os.cpu_count() or 1)) as pool:
            clean = all(list(pool.map(piece, range(pieces))))
    else:
        clean = all(piece(k) for k in range(pieces))
    keep = content > 0  # empty lines are skipped
    starts, stops, header = starts[keep], stops[keep], header[keep]
    return starts, stops, np.flatnonzero(header), np.flatnonzero(~header), sequence if clean else None


def _record_lengths(starts, stops, headers, lines) -> np.ndarray:
    record_of_line = np.searchsorted(headers, lines) - 1
    lengths = np.bincount(record_of_line, weights=stops[lines] - starts[lines], minlength=headers.size)
    return lengths.astype(np.int64)


def _header_names(image, starts, stops, headers) -> list[str]:
    """:func:`_decode_name` of each header line ``image[starts[h] + 1 : stops[h]]`` (its first word) by NumPy:
    each line cut at its first whitespace, the words joined by newlines and decoded in one call, which gives
    each word's own decoding since no UTF-8 sequence runs across an ASCII byte. A line that opens with
    whitespace sends every header through :func:`_decode_name`."""
    first = starts[headers] + 1
    lengths = np.maximum(stops[headers] - first, 0)
    if headers.size and int(lengths.sum()) < (1 << 28):
        line_bytes = _gather_runs(image, first, lengths)
        # bytes.split's whitespace: space, tab, LF, VT, FF, CR
        where = np.flatnonzero((line_bytes == 32) | ((line_bytes >= 9) & (line_bytes <= 13)))
        at = np.cumsum(lengths) - lengths
        owners, first_space = np.unique(np.searchsorted(at, where, side="right") - 1, return_index=True)
        cut = where[first_space] - at[owners]
        if not (cut == 0).any():  # no line opens with whitespace
            lengths = lengths.copy()
            lengths[owners] = cut
            words = _gather_runs(image, first, lengths, separator=10)
            return words[:-1].tobytes().decode("utf-8", "surrogateescape").split("\n")
    return [_decode_name(image[a:b].tobytes()) for a, b in zip(first.tolist(), stops[headers].tolist())]


def _gather_runs(image, first, lengths, separator=None) -> np.ndarray:
    """``image[first[r] : first[r] + lengths[r]]`` of every run r, concatenated (each followed by
    ``separator`` when one is given)."""
    total = int(lengths.sum())
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    picked = image[np.repeat(first, lengths) + within]
    if separator is None:
        return picked
    out = np.full(total + lengths.size, separator, dtype=np.uint8)
    out[np.repeat(np.cumsum(lengths + 1) - (lengths + 1), lengths) + within] = picked
    return out


def _parse_well_formed(image: np.ndarray):
    """``(names, sequences)`` of a well-formed FASTA image by NumPy alone, or None for the compiled scan (any
    irregularity: text before the first record, whitespace or an illegal byte inside a sequence line, records of
    unequal length, no record)."""
    found = _well_formed_lines(image)
    if found is None:
        return None
    starts, stops, headers, lines, sequence = found
    if not _all_allowed(sequence):
        return None  # whitespace inside a line, or an illegal byte: the compiled scan words the error
    lengths = _record_lengths(starts, stops, headers, lines)
    length = int(lengths[0]) if lengths.size else 0
    if not np.all(lengths == length):
        return None
    return _header_names(image, starts, stops, headers), sequence.reshape(headers.size, length)


def _parse_sequences_well_formed(image: np.ndarray, translate: np.ndarray):
    """``(names, codes, offsets)`` of a well-formed FASTA image of unaligned sequences by NumPy alone, or None
    for the compiled scan (text before the first record, whitespace inside a line, a byte ``translate`` refuses,
    no record): that scan words every error."""
    found = _well_formed_lines(image, translate)
    if found is None:
        return None
    starts, stops, headers, lines, codes = found
    if headers.size == 0 or codes is None:
        return None
    offsets = np.zeros(headers.size + 1, dtype=np.int64)
    np.cumsum(_record_lengths(starts, stops, headers, lines), out=offsets[1:])
    return _header_names(image, starts, stops, headers), codes, offsets


# Larger inputs first try the regular-layout parse (every record the same lines of the same widths), which copies
# whole lines with NumPy and checks the bytes in cache-sized chunks; smaller ones try the well-formed parse above.
REGULAR_BYTES = SMALL_BYTES

# Bytes checked at a time by the regular-layout parse: within a core's L2 cache or near it, in few NumPy calls.
_CHECK_BYTES = 1 << 22


def _all_allowed(rows: np.ndarray) -> bool:
    """True when every byte of ``rows`` is a letter or one of ``-.*?`` (what :data:`_ALLOWED` admits)."""
    flat = rows.reshape(-1)
    folded = np.empty(min(flat.size, _CHECK_BYTES), np.uint8)
    letter = np.empty(folded.size, bool)
    return all(_chunk_allowed(flat[lo : lo + _CHECK_BYTES], folded, letter) for lo in range(0, flat.size, _CHECK_BYTES))


def _rows_allowed(rows: np.ndarray) -> bool:
    """:func:`_all_allowed` of a 2-D view whose rows need not be contiguous with each other (rows where they lie
    in the file), checked a block of rows at a time without a copy."""
    per_block = max(1, min(rows.shape[0], _CHECK_BYTES // max(1, rows.shape[1])))
    folded = np.empty((per_block, rows.shape[1]), np.uint8)
    letter = np.empty(folded.shape, bool)
    return all(_chunk_allowed(rows[lo : lo + per_block], folded, letter) for lo in range(0, rows.shape[0], per_block))


def _chunk_allowed(chunk: np.ndarray, folded: np.ndarray, letter: np.ndarray) -> bool:
    """Whether every byte of ``chunk`` is allowed, with ``folded`` and ``letter`` (at least as many leading
    items as ``chunk``) as scratch."""
    folded, letter = folded[: len(chunk)], letter[: len(chunk)]
    # (c | 32) - 97 < 26 (as uint8) holds exactly for the 52 ASCII letters.
    np.bitwise_or(chunk, 32, out=folded)
    np.subtract(folded, 97, out=folded)
    np.less(folded, 26, out=letter)
    if letter.all():
        return True
    # Only the bytes that are not letters are looked up: a table lookup of every byte ran at 0.6 GB/s, and
    # a real alignment has a gap or an ambiguity code in almost every chunk (120 MB with 0.4% gaps: 0.20 s
    # of checks before, 0.04 s after, one thread of this 2-core EPYC).
    np.logical_not(letter, out=letter)
    return bool(_ALLOWED[chunk[letter]].all())


def _equal_stride_runs(first_line: np.ndarray, pieces: int) -> list[list[tuple[int, int]]]:
    """Runs of records ``[a, b)`` whose sequences lie an equal number of bytes apart (records whose names have
    the same length), each copied as one strided view, in about ``pieces`` groups of consecutive records for
    threads: a group's bytes are checked at once (names of varying length make runs of a few records, and a
    check per run cost 7 s for 100,000 records on 16 threads)."""
    n = first_line.size
    step = np.diff(first_line)
    changes = np.flatnonzero(step[1:] != step[:-1]) + 1 if step.size > 1 else np.empty(0, np.int64)
    edges = [0, *changes.tolist(), n]
    most = max(1, -(-n // pieces))
    groups, group, size = [], [], 0
    for a, b in zip(edges[:-1], edges[1:]):
        for lo in range(a, b, most):
            hi = min(b, lo + most)
            group.append((lo, hi))
            size += hi - lo
            if size >= most:
                groups.append(group)
                group, size = [], 0
    if group:
        groups.append(group)
    return groups


def _regular_layout(image: np.ndarray, threads: int, allocate=np.empty, in_place=None):
    """``(names, sequences)`` of a FASTA image whose records all have the same layout (a header line, then the
    same number of sequence lines of the same widths: wrapped at one width ``w``, the last line 1 to ``w`` long),
    by strided copies of whole lines; None for the compiled scan (any other layout, CRs, a byte that is not
    allowed). Few, large NumPy calls: the threads seldom need the GIL, which a background start of CUDA holds.

    With ``in_place`` (``(path, identity)`` of the mapped file ``image`` is) and one line per sequence, the
    sequences are checked where they lie and returned as :class:`FileRows`, not copied."""
    if image.size == 0 or image[0] != 62:
        return None
    with ThreadPoolExecutor(max(1, threads)) as pool:
        line_ends = _line_ends(image, pool)
        line_starts = np.empty_like(line_ends)
        line_starts[0] = 0
        line_starts[1:] = line_ends[:-1] + 1
        if line_ends.size < 2 or image[line_starts[1]] == 62:
            return None
        following_header = np.flatnonzero(image[line_starts[1:]] == 62)
        lines_per_record = int(following_header[0]) + 1 if following_header.size else line_ends.size
        n_records, leftover = divmod(line_ends.size, lines_per_record)
        if leftover:
            return None
        starts = line_starts.reshape(n_records, lines_per_record)
        widths = (line_ends.reshape(n_records, lines_per_record) - starts)[:, 1:]
        # A '>' that opens a line where this layout expects sequence is refused by the byte check below.
        if not (image[starts[:, 0]] == 62).all():
            return None
        pattern = widths[0]
        full, last = int(pattern[0]), int(pattern[-1])
        if not (widths == pattern).all() or not (pattern[:-1] == full).all() or not 1 <= last <= full:
            return None
        wrapped = lines_per_record - 2  # full-width lines before the last one
        length = wrapped * full + last
        first_line = starts[:, 1]
        if in_place is not None and not wrapped:
            # A bad byte sends the whole file to the compiled scan, whose message names the record.
            groups = _equal_stride_runs(first_line, 4 * max(1, threads))
            checks = pool.map(lambda group: all(_rows_allowed(_rows_view(image, first_line, a, b, length))
                                                for a, b in group), groups)  # fmt: skip
            if not all(list(checks)):
                return None
            headers = np.arange(0, line_ends.size, lines_per_record)
            rows = FileRows(image, first_line, length, *in_place)
            return _header_names(image, line_starts, line_ends, headers), rows
        sequences = allocate((n_records, length), np.uint8)
        strided = np.lib.stride_tricks.as_strided

        def copy(group: list[tuple[int, int]]) -> bool:
            for a, b in group:
                at = int(first_line[a])
                stride = int(first_line[a + 1] - first_line[a]) if b - a > 1 else 1
                source = image[at:]
                if wrapped:
                    lines = strided(source, (b - a, wrapped, full), (stride, full + 1, 1), writeable=False)
                    sequences[a:b, : wrapped * full].reshape(b - a, wrapped, full)[:] = lines
                tail = source[wrapped * (full + 1) :]
                sequences[a:b, wrapped * full :] = strided(tail, (b - a, last), (stride, 1), writeable=False)
            return _all_allowed(sequences[group[0][0] : group[-1][1]])

        if not all(pool.map(copy, _equal_stride_runs(first_line, 4 * max(1, threads)))):
            return None
    headers = np.arange(0, line_ends.size, lines_per_record)
    return _header_names(image, line_starts, line_ends, headers), sequences


def read_alignment(path: str | os.PathLike, threads: int | None = None, allocate=None,
                   in_place: bool = False) -> Alignment:  # fmt: skip
    """Read a FASTA alignment (plain or gzip; ``"-"`` for stdin) into an :class:`Alignment`.

    Parameters
    ----------
    path : str or path-like
        File to read. Gzip input is detected from its magic bytes, whatever the name.
    threads : int, optional
        Threads that scan pieces of a large input at once (default: all available cores). The result and any
        error message do not depend on it.
    allocate : callable, optional
        Makes the sequence matrix, as ``allocate(shape, dtype)`` (default ``np.empty``): a command's GPU helper
        process reads it where it lies (:meth:`seqcompare.cuda.helper.GpuHelper.empty`).
    in_place : bool
        Where the file is a large plain FASTA file with one line per sequence, leave the sequences where they
        lie: ``sequences`` is then a :class:`FileRows` over the mapped file, which a GPU run uploads from the
        page cache (anything else reads it with ``np.asarray``, a copy). Other inputs are read as usual.

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
    from ..validation import default_threads

    source = os.fspath(path)
    mapped = _map_in_place(source) if in_place else None
    raw = read_bytes(source) if mapped is None else mapped[0]
    image = np.frombuffer(raw, dtype=np.uint8)
    threads = threads or default_threads()
    if image.size <= SMALL_BYTES:
        parsed = _parse_well_formed(image)
        if parsed is not None:
            sequences = parsed[1]
            if allocate is not None:
                sequences = allocate(sequences.shape, sequences.dtype)
                sequences[...] = parsed[1]
            return Alignment(names=parsed[0], sequences=sequences, source=source)
    if image.size > REGULAR_BYTES:
        parsed = _regular_layout(image, threads, allocate or np.empty, None if mapped is None else mapped[1])
        if parsed is not None:
            return Alignment(names=parsed[0], sequences=parsed[1], source=source)
    pieces = max(1, min(4 * threads, image.size // _PIECE_BYTES))
    bounds = [*_piece_starts(raw, image.size, pieces), image.size]
    parts = [image[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]

    def index(piece):
        line_ends = _line_ends(piece)
        return (line_ends, *_record_headers(piece, line_ends))

    with ThreadPoolExecutor(min(threads, len(parts))) as pool:
        indexed = list(pool.map(index, parts))
        starts = np.concatenate([h + lo for (_, h, _), lo in zip(indexed, bounds)])
        ends = np.concatenate([e + lo for (_, _, e), lo in zip(indexed, bounds)])

        def name_of(index: int) -> str:
            return _decode_name(image[starts[index] : ends[index]].tobytes())

        status, length, offset = _first_record_length(parts[0], indexed[0][0], _ALLOWED, _WHITESPACE)
        if status == _ILLEGAL:
            _raise_illegal(source, image, starts, ends, 0, offset, name_of)
        out = (allocate or np.empty)((starts.size, max(length, 0)), np.uint8)
        row_offsets = np.cumsum([0] + [h.size for _, h, _ in indexed])

        def copy(k):
            rows = out[row_offsets[k] : row_offsets[k + 1]]
            return _copy_records(parts[k], indexed[k][0], rows, length, _ALLOWED, _WHITESPACE)

        results = list(pool.map(copy, range(len(parts))))
    for k, (status, record, a, b) in enumerate(results):
        # Pieces are in file order, and each reports its first error: the first failing piece's is the
        # error a single pass would have met first.
        record += row_offsets[k]
        if status == _NOT_FASTA:
            raise InputError(f"{source}: not a FASTA file (byte {a + 1} is not part of a '>' record)")
        if status == _ILLEGAL:
            _raise_illegal(source, image, starts, ends, record, a, name_of)
        if status == _UNEQUAL:
            raise InputError(
                f"{source}: record #{record + 1} '{name_of(record)}' has length {a} but "
                f"record #1 '{name_of(0)}' has length {b}; all sequences of an alignment must be equally long"
            )
    if out.shape[0] == 0:
        raise InputError(f"{source}: contains no FASTA records")
    return Alignment(names=header_words(image, starts, ends), sequences=out, source=source)


def _raise_illegal(source, image, starts, ends, record, offset, name_of):
    byte = _illegal_byte(image, starts, ends, record, offset)
    shown = chr(byte) if 32 < byte < 127 else f"byte 0x{byte:02x}"
    raise InputError(
        f"{source}: record #{record + 1} '{name_of(record)}' has an illegal character '{shown}' at position "
        f"{offset + 1}"
    )


@jit
def _copy_sequences(buf, line_ends, translate, codes, offsets):
    """Copy the sequence lines of every record into ``codes`` through ``translate`` (whitespace skipped);
    ``offsets`` receives record starts. Returns ``(status, record, offset, byte)`` of the first problem."""
    record = -1
    at = 0
    start = np.int64(0)  # not the literal 0: Numba would compile _line_bounds once more for it
    for k in range(line_ends.size):
        start, stop = _line_bounds(buf, line_ends, k, start)
        if stop > start and buf[start] == 62:
            record += 1
            offsets[record] = at
        elif record < 0:
            for q in range(start, stop):
                if buf[q] != 32 and buf[q] != 9 and buf[q] != 13:
                    return _NOT_FASTA, -1, q, 0
        else:
            for q in range(start, stop):
                c = buf[q]
                if c == 32 or c == 9 or c == 13:
                    continue
                code = translate[c]
                if code == 255:
                    return _ILLEGAL, record, at - offsets[record], c
                codes[at] = code
                at += 1
        start = line_ends[k] + 1
    offsets[record + 1] = at
    return _OK, 0, 0, 0


def read_sequences(path: str | os.PathLike, *, iupac_as_n: bool = False, alphabet=None):
    """Read unaligned nucleotide sequences (e.g. scan signatures) from FASTA into a
    :class:`~seqcompare.io.sequences.SequenceSet` of base codes.

    Parameters
    ----------
    path : str or path-like
        FASTA file (plain or gzip; ``"-"`` for stdin); records may be wrapped and of any lengths.
    iupac_as_n : bool
        Read IUPAC ambiguity codes other than N as N instead of refusing them.
    alphabet : Alphabet, optional
        Another alphabet (:class:`~seqcompare.align.alphabets.Alphabet`: protein, a matrix's letters, bytes; or
        anything with its ``name``, ``table`` of each byte's code, 255 outside it, and ``allowed``, its wording
        in errors).

    Raises
    ------
    InputError
        Missing, empty or non-FASTA file, or a character outside the alphabet (default: A, C, G, T, N, either
        case; U reads as T), named by record and position.
    """
    from .sequences import SequenceSet, code_table, illegal_base_message

    source = os.fspath(path)
    image = np.frombuffer(read_bytes(source), dtype=np.uint8)
    translate = code_table(iupac_as_n) if alphabet is None else alphabet.table
    allowed, name = (None, "dna") if alphabet is None else (alphabet.allowed, alphabet.name)
    # NumPy alone for small inputs, and for any input while this process has not started Numba (its start-up
    # costs more than NumPy's extra passes: 51 MB of proteins read in 0.19-0.35 s on 2 cores, against 0.36-1.4 s
    # for the compiled scan's first call); the compiled scan for the rest and for every error.
    if image.size <= SMALL_BYTES or not compiler_started():
        parsed = _parse_sequences_well_formed(image, translate)
        if parsed is not None:
            return SequenceSet(parsed[0], parsed[1], parsed[2], None, source, name)
    line_ends = _line_ends(image)
    starts, ends = _record_headers(image, line_ends)
    codes = np.empty(image.size, dtype=np.uint8)
    offsets = np.zeros(starts.size + 1, dtype=np.int64)
    status, record, offset, byte = _copy_sequences(image, line_ends, translate, codes, offsets)

    def name_of(index: int) -> str:
        return _decode_name(image[starts[index] : ends[index]].tobytes())

    if status == _NOT_FASTA:
        raise InputError(f"{source}: not a FASTA file (byte {offset + 1} is not part of a '>' record)")
    if status == _ILLEGAL:
        shown = chr(byte) if 32 < byte < 127 else f"byte 0x{byte:02x}"
        raise InputError(illegal_base_message(source, record, name_of(record), shown, offset, allowed))
    if starts.size == 0:
        raise InputError(f"{source}: contains no FASTA records")
    return SequenceSet(header_words(image, starts, ends), codes[: offsets[-1]].copy(), offsets, None, source, name)


def duplicated_names(names: list[str]) -> list[str]:
    """Names that occur more than once, in order of first repeat."""
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for name in names:
        if name in seen:
            repeated[name] = None
        seen.add(name)
    return list(repeated)
