"""Compiled bit-plane packer (kept apart so importing :mod:`seqcompare.encoding` compiles nothing)."""

import numpy as np

from ._jit import jit


@jit
def pack_code_planes(codes, n_planes, out):
    """Fill ``out[i, p, w]`` with bit ``p`` of the codes of sites ``64 w .. 64 w + 63`` of row ``i``."""
    n, m = codes.shape
    words = out.shape[2]
    for i in range(n):
        row = codes[i]
        for w in range(words):
            start = w * 64
            stop = min(m, start + 64)
            valid = np.uint64(0)
            for s in range(start, stop):
                if row[s] != 0:
                    valid |= np.uint64(1) << np.uint64(s - start)
            out[i, n_planes, w] = valid
            for p in range(n_planes):
                word = np.uint64(0)
                for s in range(start, stop):
                    word |= np.uint64((row[s] >> p) & 1) << np.uint64(s - start)
                out[i, p, w] = word
