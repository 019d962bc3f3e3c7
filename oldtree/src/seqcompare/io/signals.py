"""Numeric signals (time series) for DTW: a 2-D ``.npy`` (one series per row) or text, one series per line.

Text lines hold numbers separated by commas and/or whitespace (UCR ``.csv`` files, plain columns); lines may
differ in length. Integers stay integers (exact DTW); any decimal point or exponent makes every series float64.
A ``.npy`` array keeps its dtype (float32 signals give float32 DTW).
"""

from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import InputError


def _read_npy(path: str) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise InputError(f"{path}: holds Python objects, not numbers; save signals as a numeric array") from None
        raise InputError(f"{path}: not a readable .npy file ({exc})") from None
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: not a readable .npy file ({exc or 'empty'})") from None
    if not isinstance(array, np.ndarray):
        raise InputError(f"{path}: an .npz archive, not one .npy array")
    if array.ndim != 2:
        raise InputError(f"{path}: a {array.ndim}-D array of shape {array.shape}; signals are 2-D, one series per row")
    if array.dtype.kind not in "biuf":
        raise InputError(f"{path}: values of type {array.dtype}, not numbers")
    if array.shape[0] == 0:
        raise InputError(f"{path}: no signals (shape {array.shape})")
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        row = int(np.flatnonzero(~np.isfinite(array).all(axis=1))[0])
        raise InputError(f"{path}: series {row + 1} holds NaN or infinity")
    return array  # 2-D, in its own dtype: DTW reads it in place (float32 stays float32)


def _parse_text(path: str, text: str, skip: int) -> list:
    series = []
    floating = False
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.replace(",", " ").split()
        if not fields:
            continue
        if number == 1 and fields[0].startswith(">"):
            raise InputError(f"{path}: looks like FASTA; dtw reads numeric signals (.npy, or one series per line)")
        if skip > len(fields):
            raise InputError(f"{path}: line {number}: --skip-columns {skip} but the line has only {len(fields)} values")
        values = fields[skip:]
        try:
            series.append(np.array([int(x) for x in values], dtype=np.int64))
            continue
        except ValueError:
            pass
        try:
            parsed = np.array([float(x) for x in values], dtype=np.float64)
        except ValueError:
            bad = next(x for x in values if not _is_number(x))
            raise InputError(f"{path}: line {number}: {bad[:20]!r} is not a number") from None
        if not np.isfinite(parsed).all():
            raise InputError(f"{path}: line {number}: NaN or infinity")
        series.append(parsed)
        floating = True
    if not series:
        raise InputError(f"{path}: no signals")
    if floating:
        series = [s.astype(np.float64) for s in series]
    return series


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_signals(path: str | os.PathLike, skip_columns: int = 0):
    """Read signals for :func:`seqcompare.dtw`.

    Parameters
    ----------
    path : str or path-like
        ``.npy`` (2-D, numeric, one series per row), or text (``-`` for standard input): one series per line.
    skip_columns : int
        Text only: values to drop at the start of each line (1 for UCR files' class labels).

    Returns
    -------
    ndarray or list of ndarray
        A ``.npy`` file's 2-D array as stored (int or float, any width); from text, one int64 or float64 array
        per series (all float64 when any text value is a decimal).

    Raises
    ------
    InputError
        One line naming the file (and line): missing, a directory, not text, not numbers, NaN, a ``.npy`` that is
        empty, holds objects, or is not 2-D, or ``skip_columns`` past a line's width.
    """
    path = os.fspath(path)
    if skip_columns < 0:
        raise InputError(f"--skip-columns must be non-negative, not {skip_columns}")
    if path == "-":
        raw = sys.stdin.buffer.read()
    else:
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a file")
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if path.lower().endswith(".npy"):
            return _read_npy(path)
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if raw[:6] == b"\x93NUMPY":
        raise InputError(f"{path}: a .npy array; name it .npy (or save the signals as text)")
    if b"\x00" in raw[:65536]:
        raise InputError(f"{path}: binary data, not text signals")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not text (byte {exc.start + 1} is not UTF-8)") from None
    return _parse_text(path, text, skip_columns)
