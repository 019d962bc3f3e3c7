"""What the CPU and GPU scan paths share that needs no compiled code (so that the command line's parser and
the GPU helper process import no Numba): options, the index's constants, and its lookup tables."""

from __future__ import annotations

import numpy as np

from .options import DEFAULT_COVERAGE_KMER, DEFAULT_K, MAX_K, METHODS, REPORTS  # noqa: F401 - names of this module too

# Window counts of the clean-window dilation ladder (each level one pass over a sample's bitset).
LADDER = np.array([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048,
                   3072, 4096, 6144, 8192, 12288, 16384], dtype=np.int64)  # fmt: skip
# How each level is built: D[level] = D[first] | (D[second] >> shift).
_LADDER_RECIPE = [(-1, -1, 0)]
for _level in range(1, LADDER.size):
    _w = int(LADDER[_level])
    _a = max(int(x) for x in LADDER[:_level] if x <= _w // 2 and (_w - x) in LADDER[:_level].tolist())
    _LADDER_RECIPE.append((int(np.flatnonzero(LADDER == _w - _a)[0]), int(np.flatnonzero(LADDER == _a)[0]), _w - _a))
LADDER_RECIPE = np.array(_LADDER_RECIPE, dtype=np.int64)


def lookup_tables(keys, entry_sig, entry_pos, k: int, xp=np):
    """``(bitmap, word_rank, key_start, entry_sig, entry_pos)`` of :class:`SignatureIndex` from unsorted
    window keys and their entries, with ``xp`` = NumPy or CuPy."""
    order = xp.argsort(keys, kind="stable") if xp is np else xp.argsort(keys)
    keys, entry_sig, entry_pos = keys[order], entry_sig[order], entry_pos[order]
    n = int(keys.size)
    boundary = xp.flatnonzero(keys[1:] != keys[:-1]) + 1 if n else xp.zeros(0, dtype=xp.int64)
    key_start = xp.concatenate([xp.zeros(1, dtype=xp.int64), boundary.astype(xp.int64),
                                xp.full(1 if n else 0, n, dtype=xp.int64)])  # fmt: skip
    unique = keys[key_start[:-1]]
    n_words = -(-(4**k) // 64)
    word = unique >> 6
    bit = xp.left_shift(xp.uint64(1), (unique & 63).astype(xp.uint64))
    bitmap = xp.zeros(n_words, dtype=xp.uint64)
    if unique.size:
        if xp is np:
            # Keys are distinct, so within a word OR = sum; reduceat sums each word's run of keys at once.
            starts = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
            bitmap[word[starts]] = np.bitwise_or.reduceat(bit, starts)
        else:
            xp.add.at(bitmap, word, bit)
    word_rank = xp.searchsorted(word, xp.arange(n_words, dtype=word.dtype)).astype(xp.int64)
    return bitmap, word_rank, key_start, entry_sig, entry_pos
