"""Text output of distance tables: snp-dists-compatible matrices, lower triangles and long form.

Integers are formatted by a compiled kernel into one byte buffer per block of rows, so writing a
10^8-cell matrix costs about as much as copying it, not one Python ``str()`` per cell.
"""

from __future__ import annotations

import numpy as np

from .._jit import jit

SNP_DISTS_CORNER = "snp-dists 0.8.2"
_BLOCK_CELLS = 1 << 22
# Tables up to this many values are formatted by Python's ``str``: faster than Numba's start-up (~0.3 s) when
# nothing else of the run needs compiled code (~40 ms per 250,000 values).
SMALL_CELLS = 1 << 18
_PARALLEL_FORMAT_CELLS = 1 << 18  # blocks of fewer values are formatted by one thread
_FORMATTERS: list = []


def _formatters():
    """The threads that format a block's rows (up to 8: more parts than that gain nothing a block)."""
    if not _FORMATTERS:
        from concurrent.futures import ThreadPoolExecutor

        _FORMATTERS.append(ThreadPoolExecutor(8, thread_name_prefix="seqcompare-format"))
    return _FORMATTERS[0]


def csv_field(text: str, separator: str = ",") -> str:
    """``text`` as one field of a delimited line: for commas, quoted as RFC 4180 says (in double quotes, quotes
    doubled) when it holds the separator, a double quote, CR or LF; tab-separated fields are written as they are
    (snp-dists' TSV has no quoting, and names cut at whitespace cannot hold a tab)."""
    if separator == "," and any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


class NameTable:
    """Names as one byte blob plus offsets, the form the formatting kernels take; for comma-separated output
    (``separator=","``) each name is already quoted as :func:`csv_field` says."""

    def __init__(self, names: list[str], separator: str = "\t"):
        encoded = [csv_field(name, separator).encode("utf-8", "surrogateescape") for name in names]
        self.blob = np.frombuffer(b"".join(encoded), dtype=np.uint8) if encoded else np.empty(0, np.uint8)
        self.offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=self.offsets[1:])
        self.names = names

    def max_length(self) -> int:
        return int(np.max(np.diff(self.offsets))) if len(self.names) else 0


# "00", "01", ..., "99": two digits a step (a 40 MB lower triangle formats in half the time of one digit a step).
_DIGIT_PAIRS = np.frombuffer("".join(f"{k:02d}" for k in range(100)).encode(), dtype=np.uint8).copy()


@jit
def _put_int(buffer, at, value):
    value = np.int64(value)  # unsigned values mixed with int64 constants would be typed float64 by Numba
    if value < 0:
        buffer[at] = 45
        at += 1
        value = -value
    if value < 10:
        buffer[at] = 48 + value
        return at + 1
    digits = 2
    probe = value // 100
    while probe > 0:
        digits += 1 if probe < 10 else 2
        probe //= 100
    end = at + digits
    k = end
    while value >= 100:
        pair = 2 * (value % 100)
        value //= 100
        buffer[k - 2] = _DIGIT_PAIRS[pair]
        buffer[k - 1] = _DIGIT_PAIRS[pair + 1]
        k -= 2
    if value >= 10:
        buffer[k - 2] = _DIGIT_PAIRS[2 * value]
        buffer[k - 1] = _DIGIT_PAIRS[2 * value + 1]
    else:
        buffer[k - 1] = 48 + value
    return end


@jit
def _put_name(buffer, at, blob, offsets, index):
    for q in range(offsets[index], offsets[index + 1]):
        buffer[at] = blob[q]
        at += 1
    return at


@jit
def _format_rows(values, row_ids, counts, blob, offsets, separator, buffer):
    """``name<sep>v0<sep>v1...\\n`` for each row; row ``r`` prints its first ``counts[r]`` values."""
    at = np.int64(0)  # not the literal 0: Numba would compile _put_name once more for it
    for r in range(values.shape[0]):
        at = _put_name(buffer, at, blob, offsets, row_ids[r])
        for c in range(counts[r]):
            buffer[at] = separator
            at = _put_int(buffer, at + 1, values[r, c])
        buffer[at] = 10
        at += 1
    return at


@jit
def _format_long(left, right, values, blob_left, offsets_left, blob_right, offsets_right, separator, buffer):
    """``left_name<sep>right_name<sep>value\\n`` per entry."""
    at = np.int64(0)
    for k in range(values.size):
        at = _put_name(buffer, at, blob_left, offsets_left, left[k])
        buffer[at] = separator
        at = _put_name(buffer, at + 1, blob_right, offsets_right, right[k])
        buffer[at] = separator
        at = _put_int(buffer, at + 1, values[k])
        buffer[at] = 10
        at += 1
    return at


def _texts(names: NameTable) -> list:
    """The names as written (quoted for comma-separated output)."""
    blob = names.blob.tobytes()
    offsets = names.offsets.tolist()
    return [blob[a:b].decode("utf-8", "surrogateescape") for a, b in zip(offsets[:-1], offsets[1:])]


def _spread(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a, a + n) for a, n in zip(starts, lengths)])``, without a Python loop."""
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def _long_lines(left, right, values, left_names: NameTable, right_names: NameTable, separator: int) -> np.ndarray:
    """The bytes of ``left_name<sep>right_name<sep>value`` lines for integer ``values`` (of magnitude under
    10**18), by NumPy alone: a few vector passes over the output, with neither Numba (whose start-up a fresh
    process pays before its first compiled call) nor a Python object per line (132,509 lines: 0.08-0.12 s as
    f-strings on an H200's host, session 31). The same bytes as :func:`_format_long`, which writes larger
    outputs."""
    values = values.astype(np.int64)
    left_lengths = np.diff(left_names.offsets)[left]
    right_lengths = np.diff(right_names.offsets)[right]
    magnitude = np.abs(values)
    digits = np.ones(values.size, np.int64)
    for power in range(1, 19):
        digits += magnitude >= 10**power
    negative = values < 0
    lengths = left_lengths + right_lengths + digits + negative + 3
    ends = np.cumsum(lengths)
    starts = ends - lengths
    out = np.empty(int(ends[-1]) if ends.size else 0, np.uint8)
    out[_spread(starts, left_lengths)] = left_names.blob[_spread(left_names.offsets[left], left_lengths)]
    at = starts + left_lengths
    out[at] = separator
    at += 1
    out[_spread(at, right_lengths)] = right_names.blob[_spread(right_names.offsets[right], right_lengths)]
    at += right_lengths
    out[at] = separator
    at += 1
    out[at[negative]] = ord("-")
    at += negative
    for place in range(int(digits.max()) if digits.size else 0):  # the digit `place` positions from the right
        has = digits > place
        out[(at + digits - 1 - place)[has]] = 48 + (magnitude[has] // 10**place) % 10
    out[ends - 1] = ord("\n")
    return out


def _digits_bound(dtype) -> int:
    return len(str(np.iinfo(dtype).min))


def write_header(handle, column_names: NameTable, separator: str, corner: str | None) -> None:
    """The header line: the corner cell (empty when ``corner`` is None), then every column name."""
    cells = [csv_field(corner or "", separator)] + [csv_field(name, separator) for name in column_names.names]
    handle.write(separator.join(cells).encode("utf-8", "surrogateescape") + b"\n")


def float_text(value: float) -> str:
    """A float as veg/tn93 prints distances (C's ``%g``: 6 significant digits); NA for a missing one."""
    return "NA" if value != value else "%g" % value


def write_rows(handle, matrix, row_start: int, row_names: NameTable, separator: str,
               lower_triangle: bool = False, table_values: int | None = None, threads: int = 1) -> None:  # fmt: skip
    """Write matrix rows (``matrix`` holds rows ``row_start...``), each preceded by its name.

    With ``lower_triangle`` row ``i`` prints its first ``i + 1`` values (snp-dists ``-L``). ``table_values``,
    the size of the whole table when it is written in pieces, decides between Python's ``str`` (a small table)
    and the compiled formatter (default: this piece's size). ``threads``: a block's rows are formatted by this
    many threads, each into its own buffer (the compiled formatter lets go of the GIL).
    """
    n_rows, n_cols = matrix.shape
    if n_rows == 0:
        return
    as_text = float_text if matrix.dtype.kind == "f" else str
    if as_text is float_text or (n_rows * n_cols if table_values is None else table_values) <= SMALL_CELLS:
        names = row_names.blob.tobytes()
        lines = []
        for k, row in enumerate(np.asarray(matrix).tolist()):
            i = row_start + k
            name = names[row_names.offsets[i] : row_names.offsets[i + 1]].decode("utf-8", "surrogateescape")
            cells = row[: min(i + 1, n_cols)] if lower_triangle else row
            lines.append(separator.join([name, *map(as_text, cells)]))
        handle.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        return
    sep = ord(separator)
    rows_per_block = max(1, _BLOCK_CELLS // max(1, n_cols))
    width = _digits_bound(matrix.dtype) + 1

    def formatted(lo: int, hi: int) -> np.ndarray:
        row_ids = np.arange(row_start + lo, row_start + hi, dtype=np.int64)
        if lower_triangle:
            counts = np.minimum(row_ids + 1, n_cols)
        else:
            counts = np.full(hi - lo, n_cols, dtype=np.int64)
        size = int(counts.sum()) * width + (hi - lo) * (row_names.max_length() + 1)
        buffer = np.empty(size, dtype=np.uint8)
        used = _format_rows(np.ascontiguousarray(matrix[lo:hi]), row_ids, counts, row_names.blob,
                            row_names.offsets, sep, buffer)  # fmt: skip
        return buffer[:used]  # a fresh buffer: handed over as it is (see io.output.BackgroundWriter)

    for lo in range(0, n_rows, rows_per_block):
        hi = min(n_rows, lo + rows_per_block)
        parts = min(max(1, threads), hi - lo, 8)
        if parts == 1 or (hi - lo) * n_cols < _PARALLEL_FORMAT_CELLS:
            handle.write(formatted(lo, hi))
            continue
        # rows cut where each part holds about as many values (a lower triangle's later rows hold more)
        first = row_start + np.arange(lo, hi + 1, dtype=np.int64)
        held = np.minimum(first, n_cols) if lower_triangle else np.full(first.size, n_cols)
        before = np.concatenate([[0], np.cumsum(held[:-1] + lower_triangle)])
        cuts = lo + np.searchsorted(before, np.linspace(0, before[-1], parts + 1)[1:-1])
        bounds = [lo, *sorted(set(int(c) for c in cuts) - {lo, hi}), hi]
        for block in _formatters().map(formatted, bounds[:-1], bounds[1:]):
            handle.write(block)


def write_long(handle, left, right, values, left_names: NameTable, right_names: NameTable,
               separator: str, extra=()) -> None:  # fmt: skip
    """Write ``left_name<sep>right_name<sep>value`` lines for index arrays ``left``, ``right`` (then each array of
    ``extra`` as a further column). Floats are written as :func:`float_text` writes them."""
    left = np.asarray(left, dtype=np.int64).ravel()
    right = np.asarray(right, dtype=np.int64).ravel()
    values = np.asarray(values).ravel()
    if values.dtype.kind == "f" or len(extra):
        texts = [[float_text(v) for v in values.tolist()] if values.dtype.kind == "f" else list(map(str, values.tolist()))]
        texts += [list(map(str, np.asarray(column).ravel().tolist())) for column in extra]
        left_text, right_text = _texts(left_names), _texts(right_names)
        step = 1 << 16
        for lo in range(0, values.size, step):
            lines = [separator.join((left_text[i], right_text[j], *cells)) for i, j, *cells in
                     zip(left[lo : lo + step].tolist(), right[lo : lo + step].tolist(),
                         *(column[lo : lo + step] for column in texts))]  # fmt: skip
            handle.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        return
    if values.size <= SMALL_CELLS:
        if not values.size:
            return
        if -(10**18) < values.min() and values.max() < 10**18:
            handle.write(_long_lines(left, right, values, left_names, right_names, ord(separator)).tobytes())
            return
        left_text, right_text = _texts(left_names), _texts(right_names)
        lines = [f"{left_text[i]}{separator}{right_text[j]}{separator}{v}"
                 for i, j, v in zip(left.tolist(), right.tolist(), values.tolist())]  # fmt: skip
        handle.write(("\n".join(lines) + "\n").encode("utf-8", "surrogateescape"))
        return
    sep = ord(separator)
    width = _digits_bound(values.dtype) + 3 + left_names.max_length() + right_names.max_length()
    step = max(1, _BLOCK_CELLS // 4)
    for lo in range(0, values.size, step):
        hi = min(values.size, lo + step)
        buffer = np.empty((hi - lo) * width, dtype=np.uint8)
        used = _format_long(left[lo:hi], right[lo:hi], values[lo:hi], left_names.blob, left_names.offsets,
                            right_names.blob, right_names.offsets, sep, buffer)  # fmt: skip
        handle.write(buffer[:used])  # a fresh buffer a block: handed over as it is (see io.output.BackgroundWriter)
