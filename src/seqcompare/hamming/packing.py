"""Compiled encoders: byte-to-code tables and bit-plane packing (apart so that importing
:mod:`seqcompare.hamming.encoding` compiles nothing)."""

import numpy as np

from .._jit import jit


@jit
def apply_table(table, matrix, out):
    """``out[i, s] = table[matrix[i, s]]`` (``np.take`` widens indices to intp, which is 8x the traffic)."""
    n, m = matrix.shape
    for i in range(n):
        for s in range(m):
            out[i, s] = table[matrix[i, s]]


# Gathering bit ``p`` of eight bytes into one byte: with the bits at positions 0, 8, ..., 56 (``x & _LOW_BITS``),
# the product by _GATHER puts byte i's bit at position 56 + i, and no two partial products overlap or carry.
_LOW_BITS = np.uint64(0x0101010101010101)
_GATHER = np.uint64(0x0102040810204080)


@jit(reads=("matrix", "patterns"))
def pack_rows(matrix, patterns, n_plane_bits, row_start, row_stop, out):
    """Pack rows ``row_start:row_stop``: bit ``k`` of ``out[i, p, w]`` = bit ``p`` of
    ``patterns[matrix[i, 64 w + k]]``.

    ``patterns`` maps each input value straight to its plane bits (value planes, then validity), so the
    code matrix is never materialised. One table look-up per site; the per-plane bit gathering then runs
    over a 64-entry buffer in loops LLVM vectorises. :func:`row_packer` picks :func:`pack_byte_rows` where it
    serves.
    """
    m = matrix.shape[1]
    words = out.shape[2]
    site_bits = np.zeros(64, np.uint64)
    for i in range(row_start, row_stop):
        row = matrix[i]
        for w in range(words):
            start = w * 64
            count = min(m, start + 64) - start
            for k in range(count):
                site_bits[k] = patterns[row[start + k]]
            for k in range(count, 64):
                site_bits[k] = 0
            for p in range(n_plane_bits):
                word = np.uint64(0)
                shift = np.uint64(p)
                for k in range(64):
                    word |= ((site_bits[k] >> shift) & np.uint64(1)) << np.uint64(k)
                out[i, p, w] = word


def row_packer(matrix, n_plane_bits: int):
    """The kernel that packs ``matrix`` into ``n_plane_bits`` planes: :func:`pack_byte_rows` for one-byte values
    and at most 8 planes (sequences, small code spaces), else :func:`pack_rows`. Chosen here, not inside one
    kernel, so that a run compiles only the one it uses."""
    return pack_byte_rows if n_plane_bits <= 8 and matrix.dtype.itemsize == 1 else pack_rows


@jit(reads=("matrix", "patterns"))
def pack_byte_rows(matrix, patterns, n_plane_bits, row_start, row_stop, out):
    """:func:`pack_rows` for one-byte values and at most 8 plane bits: eight sites' patterns go into the bytes
    of one word, and each plane takes one multiply per eight sites (1.3-1.4x the per-bit loop on a Zen core,
    bench/RESULTS.md session 42)."""
    m = matrix.shape[1]
    words = out.shape[2]
    byte_patterns = np.zeros(256, np.uint8)
    for value in range(min(256, patterns.shape[0])):
        byte_patterns[value] = np.uint8(patterns[value])
    lanes = np.zeros(8, np.uint64)  # the patterns of sites 8j .. 8j + 7 in the bytes of lanes[j]
    for i in range(row_start, row_stop):
        row = matrix[i]
        for w in range(words):
            start = w * 64
            count = min(m, start + 64) - start
            if count == 64:
                for j in range(8):
                    lane = np.uint64(0)
                    for b in range(8):
                        lane |= np.uint64(byte_patterns[row[start + 8 * j + b]]) << np.uint64(8 * b)
                    lanes[j] = lane
            else:  # the last, partial word: padding sites set no bit
                for j in range(8):
                    lane = np.uint64(0)
                    for b in range(8):
                        if 8 * j + b < count:
                            lane |= np.uint64(byte_patterns[row[start + 8 * j + b]]) << np.uint64(8 * b)
                    lanes[j] = lane
            for p in range(n_plane_bits):
                word = np.uint64(0)
                shift = np.uint64(p)
                for j in range(8):
                    word |= ((((lanes[j] >> shift) & _LOW_BITS) * _GATHER) >> np.uint64(56)) << np.uint64(8 * j)
                out[i, p, w] = word
