"""FASTQ samples (plain, gzip or stdin; sequences and qualities may be wrapped) into a :class:`SequenceSet`.

Compiled passes, none a per-line Python loop. In a file of plain four-line records, threads find the records of
runs of the file (:func:`_plain_structure`); in any other file, newlines are found with NumPy in parallel pieces
and one pass over the *lines* (a few per record) finds the records and checks their structure. Then threads
translate bases to codes and quality characters to Phred scores, record by record, straight into the output
arrays (or check and pack the bases, :func:`read_fastq`'s ``pack_into``).
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import jit
from ..errors import InputError
from .fasta import (SMALL_BYTES, _decode_name, _header_names, _line_ends, _line_spans, _piece_starts, header_names,
                    read_bytes, read_sequences)  # fmt: skip
from .sequences import (ILLEGAL, SelectedNames, SequenceSet, _translate_run, code_table, empty_array, illegal_base_message,
                        pack_words, packed_layout, translate_dna_run)  # fmt: skip

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
def _newline_at_or_after(buf, words, p):
    """The first ``\\n`` at or after ``p``, or ``buf.size``. ``words`` is ``buf``'s whole 8-byte words as uint64:
    once ``p`` is aligned, 8 bytes are tested at a time (a zero byte of ``word ^ 0x0a..0a``, found exactly by
    the borrow-free test), about 4x the rate of a test on each byte over a 2 kb line."""
    size = buf.size
    while p < size and p & 7:
        if buf[p] == 10:
            return p
        p += 1
    low7 = np.uint64(0x7F7F7F7F7F7F7F7F)
    newlines = np.uint64(0x0A0A0A0A0A0A0A0A)
    w = p >> 3
    while w < words.size:
        y = words[w] ^ newlines
        if ~(((y & low7) + low7) | y | low7) != np.uint64(0):  # a byte of y is zero: a newline in this word
            break
        w += 1
    p = max(p, w << 3)
    while p < size and buf[p] != 10:
        p += 1
    return p


@jit
def _plain_records(buf, words, start, stop):
    """Plain four-line records (header, one sequence line, '+', one quality line of the same length) from
    ``start``, a record's '@', for as long as a record starts before ``stop``: ``(plain, end, line_ends,
    table)``, laid out as :func:`_fastq_records` lays them out with line numbers counted from ``start``, and
    ``end`` where the next record starts. ``plain`` is False at anything else (an empty or wrapped sequence,
    blank lines, a quality line of another length or with a byte outside Phred+33, a missing '+'), which
    :func:`_fastq_records` then reads (or words as an error). Newlines are searched for in the headers, the
    sequences and the '+' lines only: each quality line is checked, which also proves it holds none."""
    size = buf.size
    rows = max(16, (stop - start) >> 11)
    line_ends = np.empty(4 * rows, np.int64)
    table = np.empty((rows, 7), np.int64)
    r = 0
    p = start
    while p < stop:
        if buf[p] != 64:
            return False, p, line_ends[: 4 * r], table[:r]
        header_end = _newline_at_or_after(buf, words, p)
        first = header_end + 1
        if first >= size or buf[first] == 64 or buf[first] == 43 or buf[first] == 10 or buf[first] == 13:
            return False, p, line_ends[: 4 * r], table[:r]
        sequence_end = _newline_at_or_after(buf, words, first)
        plus = sequence_end + 1
        if plus >= size or buf[plus] != 43:
            return False, p, line_ends[: 4 * r], table[:r]
        length = sequence_end - first - (buf[sequence_end - 1] == 13)  # (the line's first byte is no CR)
        plus_end = _newline_at_or_after(buf, words, plus)
        quality = plus_end + 1
        after = quality + length
        if after > size or _phred_check(buf[quality:after]) >= 0:
            return False, p, line_ends[: 4 * r], table[:r]
        if after < size and buf[after] == 13:
            after += 1
        if after < size and buf[after] != 10:
            return False, p, line_ends[: 4 * r], table[:r]
        if r == rows:  # (copied element by element: a slice assignment compiles Numba's 5 s shape-error path)
            rows *= 2
            grown_ends = np.empty(4 * rows, np.int64)
            for i in range(4 * r):
                grown_ends[i] = line_ends[i]
            grown_table = np.empty((rows, 7), np.int64)
            for i in range(r):
                for j in range(7):
                    grown_table[i, j] = table[i, j]
            line_ends, table = grown_ends, grown_table
        line_ends[4 * r] = header_end
        line_ends[4 * r + 1] = sequence_end
        line_ends[4 * r + 2] = plus_end
        line_ends[4 * r + 3] = after
        header_stop = header_end - 1 if header_end > p and buf[header_end - 1] == 13 else header_end
        table[r, 0] = p + 1
        table[r, 1] = header_stop
        table[r, 2] = 4 * r + 1
        table[r, 3] = 4 * r + 2
        table[r, 4] = 4 * r + 3
        table[r, 5] = 4 * r + 4
        table[r, 6] = length
        r += 1
        p = after + 1
    return True, p, line_ends[: 4 * r], table[:r]


def _record_start_after(raw, p: int) -> int:
    """The first line start after ``p`` that begins with '@' and whose line after next begins with '+' (a quality
    line may begin with '@', but the line after next is then a sequence), or the end of ``raw``. Byte searches
    of the file: a kernel for this cost 0.9 s of a cold run's compile."""
    at = raw.find(b"\n@", p)
    while at >= 0:
        second = raw.find(b"\n", at + 1)
        third = raw.find(b"\n", second + 1) if second >= 0 else -1
        if third >= 0 and raw[third + 1 : third + 2] == b"+":
            return at + 1
        at = raw.find(b"\n@", at + 1)
    return len(raw)


def _plain_structure(raw, image: np.ndarray, pool, pieces: int):
    """``(line_ends, table)`` as :func:`_parallel_line_ends` and :func:`_fastq_records` would give them, for a
    file of plain four-line records (:func:`_plain_records`), found by the threads of ``pool`` in ``pieces``
    runs of records; None for any other file. A run's guessed first record is checked against where the run
    before it ended, and read again from there when they differ."""
    words = image[: image.size // 8 * 8].view(np.uint64)
    starts = [0] + [_record_start_after(raw, k * image.size // pieces) for k in range(1, pieces)]
    starts = sorted(set(starts)) + [image.size]
    scans = list(pool.map(lambda k: _plain_records(image, words, starts[k], starts[k + 1]), range(len(starts) - 1)))
    for k in range(len(scans)):
        plain, end, _, _ = scans[k]
        if not plain:
            return None
        if k + 1 < len(scans) and end != starts[k + 1]:  # the guess was wrong: read the next run from here
            starts[k + 1] = end
            scans[k + 1] = _plain_records(image, words, end, max(end, starts[k + 2]))
    if scans[-1][1] < image.size:
        return None
    records = np.cumsum([0] + [len(table) for _, _, _, table in scans])
    line_ends = np.empty(4 * int(records[-1]), np.int64)
    table = np.empty((int(records[-1]), 7), np.int64)

    def place(k: int) -> None:  # each run's rows into the whole, by the threads (44 MB a gigabase)
        first, last = int(records[k]), int(records[k + 1])
        line_ends[4 * first : 4 * last] = scans[k][2]
        np.add(scans[k][3], [0, 0, 4 * first, 4 * first, 4 * first, 4 * first, 0], out=table[first:last])

    list(pool.map(place, range(len(scans))))
    return line_ends, table


@jit
def _copy_records(buf, line_ends, table, offsets, first, last, codes_table, codes, quality):
    """Translate records ``first:last``; returns ``(status, record, position, byte)`` of the first bad byte.
    (Bases go through ``codes_table``: :func:`~seqcompare.io.sequences.translate_dna_run` here too added 1.7 s to
    a cold run's compile for 0.3 s a gigabase on 2 cores.)"""
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
def _check_and_pack(buf, line_ends, table, first, last, iupac_as_n, word0, bases16, nmask8, scratch, scratch_words,
                    check_quality):  # fmt: skip
    """Check records ``first:last`` as :func:`_copy_records` does with :func:`~seqcompare.io.sequences.code_table`,
    and pack their bases (:func:`~seqcompare.io.sequences.pack_words`, into the packed arrays seen as uint16 and
    uint8) without writing codes or qualities out: each record's codes go through ``scratch`` (as long as its
    longest record, and ``scratch_words`` the same memory as uint64), which stays in cache. Qualities are checked
    only with ``check_quality`` (:func:`_plain_records` has checked a plain file's)."""
    for r in range(first, last):
        at = 0
        for k in range(table[r, 2], table[r, 3]):
            start = line_ends[k - 1] + 1 if k > 0 else 0
            n = _line_stop(buf, line_ends, k, start) - start
            bad = translate_dna_run(buf[start : start + n], scratch[at : at + n], iupac_as_n)
            if bad >= 0:
                return _ILLEGAL_BASE, r, at + bad, buf[start + bad]
            at += n
        pack_words(scratch_words, at, word0[r], bases16, nmask8)
        at = 0
        for k in range(table[r, 4], table[r, 5] if check_quality else table[r, 4]):
            start = line_ends[k - 1] + 1 if k > 0 else 0
            n = _line_stop(buf, line_ends, k, start) - start
            bad = _phred_check(buf[start : start + n])
            if bad >= 0:
                return _ILLEGAL_QUALITY, r, at + bad, buf[start + bad]
            at += n
    return _OK, 0, 0, 0


@jit
def _phred_check(text) -> int:
    """The first ``q`` of ``text`` outside ``'!'..'~'`` (Phred+33), or -1; a running minimum and maximum, so
    that the loop vectorises."""
    lowest = np.uint8(255)
    highest = np.uint8(0)
    for q in range(text.size):
        lowest = min(lowest, text[q])
        highest = max(highest, text[q])
    if lowest < 33 or highest > 126:
        for q in range(text.size):
            if text[q] < 33 or text[q] > 126:
                return q
    return -1


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
               timings: dict | None = None, alphabet=None, pack_into=None):
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
        Receives the seconds of each pass (read; plain, the records of a plain file; records, any other file's
        newlines and records; translate; names).
    alphabet : optional
        Another byte-to-code table (anything with ``table`` and ``allowed``), such as
        :func:`~seqcompare.io.sequences.iupac_codes`; it replaces ``iupac_as_n``.
    pack_into : callable, optional
        ``pack_into(shape, dtype)`` makes arrays (e.g. page-locked memory). When given, the records are checked
        and their bases packed 2 bits a base into such arrays in the same pass
        (:func:`~seqcompare.io.sequences.pack_words`, one spare word at the end), and no codes or qualities are
        written: a :class:`FastqRecords` is returned. The codes must be 0..4 (no ``alphabet``).

    Returns
    -------
    SequenceSet or FastqRecords
        Names, base codes and Phred scores.

    Raises
    ------
    InputError
        Missing or empty file, not FASTQ, a record without its '+' line, a truncated record, quality length
        different from sequence length, a base other than A, C, G, T, N (the message names record and
        position), or a quality character outside Phred+33.
    """
    from ..validation import default_threads

    if pack_into is not None and alphabet is not None:
        raise ValueError("pack_into packs codes 0..4: it takes no alphabet")
    clock = [time.perf_counter()]
    source = os.fspath(path)
    raw = read_bytes(source)
    image = np.frombuffer(raw, dtype=np.uint8)
    threads = threads or default_threads()
    translate = code_table(iupac_as_n) if alphabet is None else alphabet.table
    allowed = None if alphabet is None else alphabet.allowed
    clock.append(time.perf_counter())
    if image.size <= SMALL_BYTES and pack_into is None:  # a small file of plain records: NumPy alone, no compiled pass
        parsed = _parse_four_line_records(image, translate)
        if parsed is not None:
            return SequenceSet(*parsed, source)
    with ThreadPoolExecutor(threads) as pool:
        status, record, a, b, table, line_ends, checked = _find_records(raw, image, pool, threads, clock)
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
        if pack_into is None:
            codes, quality, results = _translate_records(image, line_ends, table, offsets, translate, pool, threads)
        else:
            packed, results = _pack_records(image, line_ends, table, offsets, iupac_as_n, pool, threads, pack_into,
                                            check_quality=not checked)  # fmt: skip
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
        timings.update(zip(("read_s", "plain_s", "records_s", "translate_s", "names_s"), np.diff(clock).tolist()))
    if pack_into is None:
        return SequenceSet(names, codes, offsets, quality, source)
    return FastqRecords(names, offsets, source, packed, _Image(image, line_ends, table, translate, threads))


def _find_records(raw, image: np.ndarray, pool, threads: int, clock: list):
    """``(status, records, detail_a, detail_b, table, line_ends, qualities_checked)`` of a FASTQ image, as
    :func:`_fastq_records` gives them with its line ends: a file of plain four-line records from the threads of
    ``pool`` (:func:`_plain_structure`, which also checks the qualities), any other by NumPy's newline search in
    pieces and the record pass. Appends the time when the plain attempt ended to ``clock``."""
    pieces = max(1, min(4 * threads, image.size // _PIECE_BYTES))
    found = _plain_structure(raw, image, pool, pieces) if image.size else None
    clock.append(time.perf_counter())
    if found is not None:
        line_ends, table = found
        return _OK, len(table), 0, 0, table, line_ends, True
    # (a last line without a newline ends at image.size: _line_ends adds that end itself)
    line_ends = _parallel_line_ends(raw, image, pool, pieces) if image.size else np.empty(0, np.int64)
    return (*_fastq_records(image, line_ends), line_ends, False)


def _record_chunks(offsets: np.ndarray, parts: int) -> list:
    """``(first, last)`` runs of records of about equal bases, in order."""
    count = offsets.size - 1
    bounds = np.unique(np.searchsorted(offsets, np.linspace(0, offsets[-1], parts + 1)))
    bounds = np.unique(np.concatenate([[0], np.clip(bounds, 0, count), [count]]))
    return [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _translate_records(image, line_ends, table, offsets, translate, pool, threads: int):
    """``(codes, quality, statuses)`` of the records of ``table``, laid out by ``offsets``, by the threads
    (:func:`_copy_records`)."""
    codes = empty_array(int(offsets[-1]))
    quality = empty_array(int(offsets[-1]))
    results = list((pool.map if pool is not None else map)(
        lambda job: _copy_records(image, line_ends, table, offsets, job[0], job[1], translate, codes, quality),
        _record_chunks(offsets, 4 * threads),
    ))  # fmt: skip
    return codes, quality, results


def _pack_records(image, line_ends, table, offsets, iupac_as_n: bool, pool, threads: int, allocate,
                  check_quality: bool = True):  # fmt: skip
    """``((bases, nmask, word0), statuses)``: the records checked and packed (:func:`_check_and_pack`)."""
    lengths = table[:, 6]
    word0, total = packed_layout(lengths)
    bases = allocate((total + 1,), np.uint64)
    nmask = allocate((total + 1,), np.uint32)
    bases[total] = 0
    nmask[total] = 0xFFFFFFFF

    def job(first_last):
        first, last = first_last
        scratch_words = np.empty((int(lengths[first:last].max()) + 7) // 8, dtype=np.uint64)
        scratch = scratch_words.view(np.uint8)
        return _check_and_pack(image, line_ends, table, first, last, iupac_as_n, word0, bases.view(np.uint16),
                               nmask.view(np.uint8), scratch, scratch_words, check_quality)  # fmt: skip

    return (bases, nmask, word0), list(pool.map(job, _record_chunks(offsets, 4 * threads)))


class _Image:
    """Where a :class:`FastqRecords`' bases and qualities are: the file's bytes, its line ends, the records'
    table (:func:`_fastq_records`), and how bytes translate to codes."""

    def __init__(self, image, line_ends, table, translate, threads: int):
        self.image, self.line_ends, self.table, self.translate, self.threads = image, line_ends, table, translate, threads

    def translated(self, records: np.ndarray):
        """``(codes, quality, offsets)`` of ``records``, end to end."""
        table = self.table[records]
        offsets = np.zeros(records.size + 1, dtype=np.int64)
        np.cumsum(table[:, 6], out=offsets[1:])
        threads = max(1, min(self.threads, records.size // 64))
        with ThreadPoolExecutor(threads) if threads > 1 else contextlib.nullcontext() as pool:  # (none for a few)
            codes, quality, _ = _translate_records(self.image, self.line_ends, table, offsets, self.translate, pool,
                                                   threads)  # fmt: skip
        return codes, quality, offsets


class FastqRecords:
    """The records of a FASTQ file, checked, with their bases packed (``packed``: ``(bases, nmask, word0)``,
    :func:`~seqcompare.io.sequences.pack_words`) while their codes and qualities stay in the file's bytes.

    :func:`read_fastq` makes it when asked to pack (a GPU scan sends the packed bases to the device, and needs
    the codes and qualities of the few records where it finds something). It reads as a
    :class:`~seqcompare.io.sequences.SequenceSet`: ``codes`` and ``quality`` are translated, every record, when
    first read; :meth:`select` translates only the records it is given. Writing a gigabase's codes and
    qualities (2 GB of new memory) took longer than the rest of the parse.
    """

    alphabet = "dna"

    def __init__(self, names, offsets: np.ndarray, source: str, packed: tuple, image: _Image):
        self.names = names
        self.offsets = offsets
        self.source = source
        self.packed = packed
        self._image = image
        self._whole: tuple | None = None

    def __len__(self) -> int:
        return len(self.names)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def codes(self) -> np.ndarray:
        return self._translated()[0]

    @property
    def quality(self) -> np.ndarray:
        return self._translated()[1]

    def _translated(self) -> tuple:
        if self._whole is None:
            self._whole = self._image.translated(np.arange(len(self), dtype=np.int64))[:2]
        return self._whole

    def sequence(self, index: int) -> np.ndarray:
        return self.codes[self.offsets[index] : self.offsets[index + 1]]

    def text(self, index: int) -> str:
        """Record ``index`` as a string of ``ACGTN``."""
        return self.select(np.array([index])).text(0)

    def select(self, records: np.ndarray) -> SequenceSet:
        """The :class:`~seqcompare.io.sequences.SequenceSet` of records ``records`` (indices, in that order):
        only their bases and qualities are translated."""
        records = np.asarray(records, dtype=np.int64)
        codes, quality, offsets = self._image.translated(records)
        return SequenceSet(SelectedNames(self.names, records), codes, offsets, quality, self.source)


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
    threads = threads or default_threads()
    with ThreadPoolExecutor(threads) as pool:  # the records as read_fastq finds them
        status, count, _, _, table, line_ends, _ = _find_records(raw, image, pool, threads, [])
    if status != _OK or count != selected.size:
        raise InputError(f"{source}: changed while it was scanned ({count} records now, {selected.size} scanned)")
    starts = table[:, 0] - 1  # the '@'
    stops = np.minimum(line_ends[table[:, 5] - 1] + 1, image.size)  # past the last quality line's newline
    for (option, path), wanted in destinations.items():
        chosen = np.flatnonzero(selected == wanted)
        with open_output(path, option) as stream, contextlib.ExitStack() as compressing:
            out = stream
            if str(path).endswith(".gz"):
                out = compressing.enter_context(ParallelGzipWriter(stream, threads))
            # Runs of consecutive chosen records are one slice of the file each.
            breaks = np.flatnonzero(np.diff(chosen) != 1) + 1
            for run in np.split(chosen, breaks) if chosen.size else []:
                piece = image[starts[run[0]] : stops[run[-1]]]
                out.write(piece.tobytes() if piece.size < (1 << 26) else memoryview(piece))
                if piece.size and piece[-1] != 10:
                    out.write(b"\n")  # the file's last line had no newline
