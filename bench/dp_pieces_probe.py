"""Piece plans for the GPU DTW path's ordinary arrays (issue 17, goal 1; a labelled probe): the current equal
pieces against plans whose first pieces are smaller (the first kernel starts sooner), whose last pieces are
smaller (less is left to copy and compute once the last range is registered; session 45), and eight equal pieces,
in one warm process, interleaved round by round, ``seqcompare.dtw(a, b, device="cuda")`` on 40,000 pairs of
1,000 (int32 and float32, values 0..999)::

    python3 bench/dp_pieces_probe.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def plans(n: int) -> dict:
    def cuts(fractions):
        edges = np.concatenate([[0], np.cumsum(fractions)]) / np.sum(fractions) * n
        return np.round(edges).astype(np.int64)

    return {"equal (current)": None, "halves first": cuts([1, 1, 2, 2, 2]), "ramp": cuts([1, 2, 3, 5, 5]),
            "eight equal": cuts([1] * 8), "quarter last": cuts([4, 4, 4, 1]), "ramp down": cuts([4, 4, 4, 2, 1]),
            "small both ends": cuts([1, 4, 4, 4, 1])}  # fmt: skip


def main(argv=None) -> None:
    import cupy

    import seqcompare
    import seqcompare.align.gpu as gpu

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    n, m = 40000, 1000
    current = gpu._pieces
    for dtype in (np.int32, np.float32):
        a = rng.integers(0, 1000, (n, m)).astype(dtype)
        b = rng.integers(0, 1000, (n, m)).astype(dtype)
        expected = seqcompare.dtw(a, b, device="cuda").scores
        variants = plans(n)
        runs = {name: [] for name in variants}
        for round_ in range(args.rounds + 1):
            for name, bounds in variants.items():
                gpu._pieces = current if bounds is None else (lambda pairs, streamed, bounds=bounds: bounds)
                try:
                    cupy.cuda.Device().synchronize()
                    start = time.perf_counter()
                    scores = seqcompare.dtw(a, b, device="cuda").scores
                    elapsed = time.perf_counter() - start
                finally:
                    gpu._pieces = current
                assert np.array_equal(scores, expected), name
                if round_:  # the first round warms each plan
                    runs[name].append(elapsed)
        for name, times in runs.items():
            median = statistics.median(times)
            print(f"{np.dtype(dtype).name:8s} {name:16s} median {median * 1e3:6.2f} ms  {n * m * m / median / 1e9:5.0f} "
                  f"GCUPS  runs {[round(t * 1e3, 1) for t in times]}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
