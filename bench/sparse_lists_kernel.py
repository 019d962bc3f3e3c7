"""Kernel only: the sparse Hamming method's list updates (``hamming.sparse.subtract_shared``) over every tile of
a problem, one thread, median of ``--repeats``; the tiles' sum is printed so that two trees can be compared.

Usage::

    python bench/sparse_lists_kernel.py [--fasta FILE] [--band 512] [--repeats 5]
    PYTHONPATH=OTHER/src python bench/sparse_lists_kernel.py    # another tree's kernel, for an A/B

Default input: the simulated 4,000 x 30,000 alignment of ``bench/hamming_cpu.py`` (goal 5's).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from hamming_cpu import ensure_dataset  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fasta")
    parser.add_argument("--band", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    import seqcompare
    from seqcompare.hamming.api import encode_inputs
    from seqcompare.hamming.sparse import SparseOperands, subtract_shared
    from seqcompare.io.fasta import read_alignment

    encoded = encode_inputs(read_alignment(args.fasta or ensure_dataset(4000, 30000, seed=4000)), alphabet="acgt")
    operands = SparseOperands([encoded.side("left")], encoded.space, encoded.table, 2)
    lists = operands.lists[0]
    starts = lists.band_starts(args.band)
    n = encoded.n_left
    tiles = [(rb, cb) for rb in range(-(-n // args.band)) for cb in range(rb + 1)]

    def run() -> int:
        total = 0
        for rb, cb in tiles:
            r0, r1 = rb * args.band, min(n, (rb + 1) * args.band)
            c0, c1 = cb * args.band, min(n, (cb + 1) * args.band)
            out = np.zeros((r1 - r0, c1 - c0), np.int32)
            subtract_shared(starts, lists.entries, lists.totals, starts, lists.entries, lists.totals,
                            operands.list_consensus, operands.differ, rb, cb, r0, r1, c0, c1, rb == cb, out)  # fmt: skip
            total += int(out.sum(dtype=np.int64))
        return total

    checksum = run()  # loads (or compiles) the kernel
    times = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        run()
        times.append(time.perf_counter() - began)
    print(f"{seqcompare.__file__}: {len(tiles)} tiles, median {statistics.median(times):.3f} s "
          f"(runs {', '.join(f'{t:.3f}' for t in times)}), checksum {checksum}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
