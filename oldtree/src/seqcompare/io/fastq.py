"""FASTQ samples (plain, gzip or stdin; sequences and qualities may be wrapped) into a :class:`SequenceSet`.

Three compiled passes, none a per-line Python loop: newlines are found with NumPy in parallel pieces; one pass
over the *lines* (a few per record) finds the records and checks their structure; then threads translate
bases to codes and quality characters to Phred scores, record by record, straight into the output arrays.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import jit
from ..errors import InputError
from .fasta import (SMALL_BYTES, _decode_name, _header_names, _line_ends, _line_spans, _piece_starts, header_names,
                    read_bytes, read_sequences)  # fmt: skip
from .sequences import ILLEGAL, SequenceSet, _translate_run, code_table, empty_array, illegal_base_message

_OK, _NOT_FASTQ, _NO_PLUS, _TRUNCATED, _QUALITY_LENGTH, _ILLEGAL_BASE, _ILLEGAL_QUALITY = range(7)
_PIECE_BYTES = 16 << 20


@jit
def _line_stop(buf, line_ends, k, start):
    stop = line_ends[k]
    if stop > start and buf[stop - 1] == 13:
        stop -= 1
    return stop


@jit
def _fastq_records(buf, line_ends):
    """Find every record: returns ``(status, record, detail_a, detail_b, table)``; ``table[r]`` holds the
    header span, first and last (exclusive) sequence line, first and last quality line, and the length."""
    n_lines = line_ends.size
    table = np.empty((n_lines // 2 + 1, 7), np.int64)
    line_start = np.empty(n_lines + 1, np.int64)
    line_start[0] = 0
    for k in range(n_lines):
        line_start[k + 1] = line_ends[k] + 1
    record = 0
    k = 0
    while k < n_lines:
        start = line_start[k]
        stop = _line_stop(buf, line_ends, k, start)
        if stop == start:
            k += 1  # blank lines between records
            continue
        if buf[start] != 64:  # '@'
            return _NOT_FASTQ, record, start, 0, table[:record]
        table[record, 0] = start + 1
        table[record, 1] = stop
        k += 1
        table[record, 2] = k
        length = 0
        while k < n_lines:
            start = line_start[k]
            stop = _line_stop(buf, line_ends, k, start)
            if stop > start and (buf[start] == 43 or buf[start] == 64):  # '+' ends the sequence; '@' is a new record
                break
            length += stop - start
            k += 1
        if k == n_lines or buf[line_start[k]] == 64:
            return _NO_PLUS, record, length, 0, table[: record + 1]
        table[record, 3] = k
        k += 1
        table[record, 4] = k
        quality = 0
        while quality < length:
            if k == n_lines:
                return _TRUNCATED, record, quality, length, table[: record + 1]
            start = line_start[k]
            quality += _line_stop(buf, line_ends, k, start) - start
            k += 1
        if quality != length:
            return _QUALITY_LENGTH, record, quality, length, table[: record + 1]
        table[record, 5] = k
        table[record, 6] = length
        record += 1
    return _OK, record, 0, 0, table[:record]


@jit
def _copy_records(buf, line_ends, table, offsets, first, last, codes_table, codes, quality):
    """Translate records ``first:last``; returns ``(status, record, position, byte)`` of the first bad byte."""
    for r in range(first, last):
        at = offsets[r]
        for k in range(table[r, 2], table[r, 3]):
            start = line_ends[k - 1] + 1 if k > 0 else 0
            n = _line_stop(buf, line_ends, k, start) - start
            bad = _translate_run(buf[start : start + n], codes_table, codes[at : at + n])
            if bad >= 0:
                return _ILLEGAL_BASE, r, at + bad - offsets[r], buf[start + bad]
            at += n
        at = offsets[r]
        for k in range(table[r, 4], table[r, 5]):
            start = line_ends[k - 1] + 1 if k > 0 else 0
            n = _line_stop(buf, line_ends, k, start) - start
            bad = _phred_run(buf[start : start + n], quality[at : at + n])
            if bad >= 0:
                return _ILLEGAL_QUALITY, r, at + bad - offsets[r], buf[start + bad]
            at += n
    return _OK, 0, 0, 0


@jit
def _phred_run(text, out) -> int:
    """``out[q] = text[q] - 33`` (Phred+33); the first ``q`` outside ``'!'..'~'``, or -1. Checked by a running
    minimum and maximum, so that the loop vectorises (as :func:`~seqcompare.io.sequences._translate_run`)."""
    lowest = np.uint8(255)
    highest = np.uint8(0)
    for q in range(text.size):
        c = text[q]
        out[q] = c - np.uint8(33)
        lowest = min(lowest, c)
        highest = max(highest, c)
    if lowest < 33 or highest > 126:
        for q in range(text.size):
            if text[q] < 33 or text[q] > 126:
                return q
    return -1


def _parse_four_line_records(image: np.ndarray, translate: np.ndarray):
    """``(names, codes, offsets, quality)`` of a FASTQ image of plain four-line records, by NumPy alone; None
    for anything else (wrapped records, blank lines, a bad byte or length, no record), which the compiled passes
    read or word as an error."""
    if image.size == 0 or image[0] != 64:
        return None
    ends, starts, stops = _line_spans(image)
    if ends.size % 4:
        return None
    header, bases, plus, scores = (slice(k, None, 4) for k in range(4))
    lengths = stops[bases] - starts[bases]
    if (stops[header] == starts[header]).any() or (stops[plus] == starts[plus]).any():
        return None
    if not ((image[starts[header]] == 64).all() and (image[starts[plus]] == 43).all()):
        return None
    if not np.array_equal(stops[scores] - starts[scores], lengths):
        return None
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # Every byte of the sequence lines, in order; likewise the quality lines (the same lengths).
    def gathered(lines):
        edges = np.zeros(image.size + 1, dtype=np.int8)  # +1 where a line opens, -1 where it closes
        edges[starts[lines]] += 1
        edges[stops[lines]] -= 1
        return image[np.cumsum(edges[:-1], dtype=np.int8) > 0]

    codes = translate[gathered(bases)]
    characters = gathered(scores)
    if (codes == ILLEGAL).any() or ((characters < 33) | (characters > 126)).any():
        return None
    names = _header_names(image, starts, stops, np.arange(0, starts.size, 4))
    return names, codes, offsets, characters - 33


def _parallel_line_ends(raw, image: np.ndarray, pool, pieces: int) -> np.ndarray:
    bounds = [*_piece_starts(raw, image.size, pieces, b"\n"), image.size]
    parts = list(pool.map(lambda lo_hi: _line_ends(image[lo_hi[0] : lo_hi[1]]) + lo_hi[0], zip(bounds[:-1], bounds[1:])))
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def read_fastq(path: str | os.PathLike, *, iupac_as_n: bool = False, threads: int | None = None,
               timings: dict | None = None, alphabet=None) -> SequenceSet:
    """Read a FASTQ file (plain or gzip; ``"-"`` for stdin) of samples.

    Parameters
    ----------
    path : str or path-like
        The file. Records are ``@name[ comment]``, sequence lines, ``+[...]``, quality lines (Phred+33) adding
        up to the sequence's length; wrapped lines, CRLF and blank lines between records are accepted.
    iupac_as_n : bool
        Read IUPAC ambiguity codes other than N (R, Y, K, ...) as N instead of refusing them.
    threads : int, optional
        Threads for the parallel passes (default: all available cores).
    timings : dict, optional
        Receives the seconds of each pass (read, newlines, records, translate, names).
    alphabet : optional
        Another byte-to-code table (anything with ``table`` and ``allowed``), such as
        :func:`~seqcompare.io.sequences.iupac_codes`; it replaces ``iupac_as_n``.

    Returns
    -------
    SequenceSet
        Names, base codes and Phred scores.

    Raises
    ------
    InputError
        Missing or empty file, not FASTQ, a record without its '+' line, a truncated record, quality length
        different from sequence length, a base other than A, C, G, T, N (the message names record and
        position), or a quality character outside Phred+33.
    """
    from ..validation import default_threads

    import time

    clock = [time.perf_counter()]
    source = os.fspath(path)
    raw = read_bytes(source)
    image = np.frombuffer(raw, dtype=np.uint8)
    threads = threads or default_threads()
    translate = code_table(iupac_as_n) if alphabet is None else alphabet.table
    allowed = None if alphabet is None else alphabet.allowed
    clock.append(time.perf_counter())
    if image.size <= SMALL_BYTES:  # a small file of plain records: NumPy alone, no compiled pass to load
        parsed = _parse_four_line_records(image, translate)
        if parsed is not None:
            return SequenceSet(*parsed, source)
    with ThreadPoolExecutor(threads) as pool:
        pieces = max(1, min(4 * threads, image.size // _PIECE_BYTES))
        # (a last line without a newline ends at image.size: _line_ends adds that end itself)
        line_ends = _parallel_line_ends(raw, image, pool, pieces) if image.size else np.empty(0, np.int64)
        clock.append(time.perf_counter())
        status, record, a, b, table = _fastq_records(image, line_ends)
        clock.append(time.perf_counter())

        def name_of(r: int) -> str:
            return _decode_name(image[table[r, 0] : table[r, 1]].tobytes())

        if status == _NOT_FASTQ:
            if record == 0:
                raise InputError(f"{source}: not a FASTQ file (byte {a + 1} should start an '@' record)")
            raise InputError(f"{source}: record #{record + 1} does not start with '@' (byte {a + 1}); "
                             f"the previous record '{name_of(record - 1)}' may have more quality than sequence")
        if status == _NO_PLUS:
            raise InputError(f"{source}: record #{record + 1} '{name_of(record)}' has no '+' line after its "
                             f"{a} bases (truncated record?)")  # fmt: skip
        if status == _TRUNCATED:
            raise InputError(f"{source}: record #{record + 1} '{name_of(record)}' is truncated: {a} quality "
                             f"characters for {b} bases")  # fmt: skip
        if status == _QUALITY_LENGTH:
            raise InputError(f"{source}: record #{record + 1} '{name_of(record)}' has {a} quality characters "
                             f"but {b} bases")  # fmt: skip
        if len(table) == 0:
            raise InputError(f"{source}: contains no FASTQ records")
        offsets = np.zeros(len(table) + 1, dtype=np.int64)
        np.cumsum(table[:, 6], out=offsets[1:])
        codes = empty_array(int(offsets[-1]))
        quality = empty_array(int(offsets[-1]))
        # Chunks of records of about equal size, in file order.
        bounds = np.unique(np.searchsorted(offsets, np.linspace(0, offsets[-1], 4 * threads + 1)))
        bounds = np.unique(np.concatenate([[0], np.clip(bounds, 0, len(table)), [len(table)]]))
        jobs = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
        results = list(pool.map(lambda job: _copy_records(image, line_ends, table, offsets, job[0], job[1], translate,
                                                          codes, quality), jobs))  # fmt: skip
        clock.append(time.perf_counter())
        names = header_names(image, table[:, 0], table[:, 1], pool, 4 * threads)
        clock.append(time.perf_counter())
    for status, record, position, byte in results:
        shown = chr(byte) if 32 < byte < 127 else f"byte 0x{byte:02x}"
        if status == _ILLEGAL_BASE:
            raise InputError(illegal_base_message(source, record, name_of(record), shown, position, allowed))
        if status == _ILLEGAL_QUALITY:
            raise InputError(f"{source}: record #{record + 1} '{name_of(record)}' has quality character "
                             f"'{shown}' at position {position + 1}, outside Phred+33 ('!' to '~')")  # fmt: skip
    if timings is not None:
        timings.update(zip(("read_s", "newlines_s", "records_s", "translate_s", "names_s"), np.diff(clock).tolist()))
    return SequenceSet(names, codes, offsets, quality, source)


def read_fasta_or_fastq(path: str | os.PathLike, *, iupac_as_n: bool = False, alphabet=None):
    """:func:`~seqcompare.io.fasta.read_sequences`, or :func:`read_fastq` for a FASTQ file (its first record starts
    with '@'; its qualities are kept). FASTQ is DNA: with another ``alphabet`` it is an error.

    Raises
    ------
    InputError
        As the reader of the file's format, or FASTQ given for an alphabet other than DNA.
    """
    source = os.fspath(path)
    try:
        return read_sequences(source, iupac_as_n=iupac_as_n, alphabet=alphabet)
    except InputError as error:
        if "not a FASTA file (byte 1 " not in str(error) or source == "-" or not _starts_with(source, b"@"):
            raise
    if alphabet is not None and alphabet.name != "dna":
        raise InputError(f"{source}: FASTQ records are read as DNA; give FASTA for the {alphabet.name} alphabet")
    return read_fastq(source, iupac_as_n=iupac_as_n or alphabet is not None)


def _starts_with(path: str, prefix: bytes) -> bool:
    """Whether the file (plain or gzip) starts with ``prefix``."""
    import gzip

    with open(path, "rb") as handle:
        head = handle.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    with opener(path, "rb") as handle:
        return handle.read(len(prefix)) == prefix


def write_selected_records(source, selected: np.ndarray, destinations: dict, threads: int | None = None) -> None:
    """Copy FASTQ records of ``source`` as they are in the file (names, comments, letters, line breaks) into
    output files: ``destinations`` maps ``(option, path)`` to which records go there, True for the records
    where ``selected`` is True, False for the others. A path ending in ``.gz`` is written gzip-compressed, by
    ``threads`` threads (default: every core; :class:`~seqcompare.io.output.ParallelGzipWriter`).

    The file is read again (it was read once already for the scan; a gzip file kept by
    :func:`~seqcompare.io.fasta.keeping_contents` is not inflated again), so ``source`` must be a file, not
    standard input; its records must be the ones ``selected`` was computed on.

    Raises
    ------
    InputError
        ``source`` is standard input, or its records no longer match ``selected`` (the file changed).
    """
    from ..validation import default_threads
    from .output import ParallelGzipWriter, open_output

    source = os.fspath(source)
    if source == "-":
        raise InputError("--matched-out/--unmatched-out need the samples in a file: standard input cannot be read twice")
    raw = read_bytes(source)
    image = np.frombuffer(raw, dtype=np.uint8)
    line_ends = _line_ends(image) if image.size else np.empty(0, np.int64)
    status, count, _, _, table = _fastq_records(image, line_ends)
    if status != _OK or count != selected.size:
        raise InputError(f"{source}: changed while it was scanned ({count} records now, {selected.size} scanned)")
    starts = table[:, 0] - 1  # the '@'
    stops = np.minimum(line_ends[table[:, 5] - 1] + 1, image.size)  # past the last quality line's newline
    for (option, path), wanted in destinations.items():
        chosen = np.flatnonzero(selected == wanted)
        with open_output(path, option) as stream, contextlib.ExitStack() as compressing:
            out = stream
            if str(path).endswith(".gz"):
                out = compressing.enter_context(ParallelGzipWriter(stream, threads or default_threads()))
            # Runs of consecutive chosen records are one slice of the file each.
            breaks = np.flatnonzero(np.diff(chosen) != 1) + 1
            for run in np.split(chosen, breaks) if chosen.size else []:
                piece = image[starts[run[0]] : stops[run[-1]]]
                out.write(piece.tobytes() if piece.size < (1 << 26) else memoryview(piece))
                if piece.size and piece[-1] != 10:
                    out.write(b"\n")  # the file's last line had no newline
