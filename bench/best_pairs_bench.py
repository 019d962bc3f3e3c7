"""The ranking behind ``--top N`` and :meth:`seqcompare.PairScores.best` alone: each query's ``n`` best of a
search's pairs (queries x targets, random integer scores), warm, in one process (a labelled host-side figure)::

    python3 bench/best_pairs_bench.py [--targets 200000] [--queries 20] [--n 10] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from seqcompare.align.api import best_pairs


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
    print(f"{len(pairs):,} pairs, {len(found)} best: median {statistics.median(seconds) * 1e3:.1f} ms "
          f"(runs {' '.join(f'{s * 1e3:.1f}' for s in seconds)})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
