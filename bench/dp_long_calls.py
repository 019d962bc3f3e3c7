"""Goal 3 of issue 17 through the public API, end to end: 20 related pairs of 10,000, NW seed(0,2,3,3) on uint8
codes and DTW on int32 random walks, ``device="cuda"``, warm, in one process (the workload of ``bench/dp_long.py``).

Each row is the median of 15 calls after one untimed call, made back to back, with 1 ms between calls, and with
Python's garbage collector off, in two rounds (``--rounds``); GCUPS = pairs x 10,000^2 / median seconds::

    python3 bench/dp_long_calls.py [--rounds 2]
"""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np


def main() -> int:
    import argparse

    import seqcompare

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    rng = np.random.default_rng(1)
    pairs, length = 20, 10_000
    targets = rng.integers(0, 4, (pairs, length), dtype=np.uint8)
    queries = targets.copy()  # related pairs (10% substituted)
    hit = rng.random(queries.shape) < 0.1
    queries[hit] = rng.integers(0, 4, int(hit.sum()), dtype=np.uint8)
    walk_a = np.cumsum(rng.integers(-1, 2, (pairs, length)), axis=1).astype(np.int32)
    walk_b = (walk_a + rng.integers(-2, 3, (pairs, length))).astype(np.int32)
    costs = seqcompare.Costs.seed(0, 2, 3, 3)
    jobs = {
        "NW": lambda: seqcompare.align(targets, queries, costs=costs, device="cuda"),
        "DTW int32": lambda: seqcompare.dtw(walk_a, walk_b, device="cuda"),
    }
    for round_ in range(args.rounds):
        for name, job in jobs.items():
            for style in ("back-to-back", "gap 1 ms", "gc off"):
                job()
                runs = []
                if style == "gc off":
                    gc.disable()
                for _ in range(15):
                    start = time.perf_counter()
                    job()
                    runs.append(time.perf_counter() - start)
                    if style == "gap 1 ms":
                        pause = time.perf_counter()
                        while time.perf_counter() - pause < 1e-3:
                            pass
                gc.enable()
                median = statistics.median(runs)
                print(f"round {round_} {name:9s} {style:13s} median {median * 1e3:.3f} ms "
                      f"({pairs * length**2 / median / 1e9:.0f} GCUPS) min {min(runs) * 1e3:.3f}", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
