"""Host steps of a search over every pair, alone, warm, in one process (labelled host-side figures): the ranking
behind ``--top N`` and :meth:`seqcompare.PairScores.best` (each query's ``n`` best of queries x targets pairs,
random integer scores), and the GPU search's 16-bit test over the pairs (``local16_eligible``, BLOSUM62 11/1,
targets of 1 to 299 against a query of 464)::

    python3 bench/best_pairs_bench.py [--targets 200000] [--queries 20] [--n 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from seqcompare.align.api import best_pairs
from seqcompare.align.matrices import substitution_matrix
from seqcompare.align.modes_gpu import local16_eligible


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    pairs = np.stack([np.tile(np.arange(args.targets), args.queries), np.repeat(np.arange(args.queries), args.targets)],
                     axis=1)  # fmt: skip
    scores = rng.integers(0, 60, len(pairs)).astype(np.int64)
    best_pairs(pairs, scores, args.n, True, 1)  # untimed: first touches
    seconds = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        found = best_pairs(pairs, scores, args.n, True, 1)
        seconds.append(time.perf_counter() - began)
    print(f"best_pairs: {len(pairs):,} pairs, {len(found)} best: median {statistics.median(seconds) * 1e3:.1f} ms "
          f"(runs {' '.join(f'{s * 1e3:.1f}' for s in seconds)})")  # fmt: skip
    blosum = substitution_matrix("BLOSUM62").scores
    t_len, q_len = rng.integers(1, 300, len(pairs)), np.full(len(pairs), 464)
    local16_eligible(t_len, q_len, blosum, 11, 1)  # untimed
    seconds = []
    for _ in range(args.repeats):
        began = time.perf_counter()
        local16_eligible(t_len, q_len, blosum, 11, 1)
        seconds.append(time.perf_counter() - began)
    print(f"local16_eligible: {len(pairs):,} pairs: median {statistics.median(seconds) * 1e3:.1f} ms "
          f"(runs {' '.join(f'{s * 1e3:.1f}' for s in seconds)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
