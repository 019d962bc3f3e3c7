"""Integer DTW on the GPU with and without narrowing in transit (int32 and int64 signals whose values fit int16 go
up as int16; ``seqcompare.align.gpu.NARROW_IN_TRANSIT``), through the public API, end to end (warm process,
arrays in ordinary host memory, distances back in host memory). Issue 17, goal 1.

Usage::

    python bench/dtw_narrowing.py --out DIR [--repeats 5] [--rounds 2] [--search-series 1048576]

Cases: 40,000 pairs of 1,000 (``dtw(a, b)``; int32 sides of 160 MB are locked in place and not narrowed, int64
ones narrowed), and one query of 1,023 against a database (``dtw(query, database)``; int32 of 4.3 GB at 2^20
series, staged, and int64 at half as many series). Values 0 to 999. Each round times every case narrowed and
not, one after the other (median of ``--repeats`` calls each, after one untimed call), and checks that both give
the same distances. GCUPS = cells / median seconds. Writes ``results_dtw_narrowing.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def main(argv=None) -> int:
    import seqcompare
    from seqcompare.align import gpu
    from seqcompare.cuda.runtime import prepare_narrowing

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--search-series", type=int, default=1 << 20)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    # A warm process: the compiled pass that narrows is loaded (in a process where Numba has not started, calls
    # do not narrow).
    prepare_narrowing()
    rng = np.random.default_rng(11)
    pairs_a = rng.integers(0, 1000, (40000, 1000))
    pairs_b = rng.integers(0, 1000, (40000, 1000))
    database = rng.integers(0, 1000, (args.search_series, 1023))
    query = rng.integers(0, 1000, 1023)
    cases = {
        "pairs 40,000 x 1,000, int32": (pairs_a.astype(np.int32), pairs_b.astype(np.int32)),
        "pairs 40,000 x 1,000, int64": (pairs_a, pairs_b),
        f"search {args.search_series:,} x 1,023, int32": (query.astype(np.int32), database.astype(np.int32)),
        f"search {args.search_series // 2:,} x 1,023, int64": (query, database[: args.search_series // 2]),
    }
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rounds": []}  # fmt: skip
    for round_number in range(args.rounds):
        rows = {}
        for name, (a, b) in cases.items():
            cells = (a.shape[0] * a.shape[1] * b.shape[1]) if a.ndim == 2 else a.size * b.size
            found = {}
            for narrow in (True, False):
                gpu.NARROW_IN_TRANSIT = narrow
                try:
                    scores = seqcompare.dtw(a, b, device="cuda").scores  # untimed: kernels, pools, compiling
                    runs = []
                    for _ in range(args.repeats):
                        start = time.perf_counter()
                        seqcompare.dtw(a, b, device="cuda")
                        runs.append(time.perf_counter() - start)
                finally:
                    gpu.NARROW_IN_TRANSIT = True
                found[narrow] = scores
                median = statistics.median(runs)
                label = f"{name}, {'narrowing on' if narrow else 'narrowing off'}"
                rows[label] = {"median_s": median, "runs_s": runs, "gcups": cells / median / 1e9}
                print(f"round {round_number + 1}  {label:48s} {median:.4f} s  {cells / median / 1e9:,.0f} GCUPS",
                      flush=True)  # fmt: skip
            if not np.array_equal(found[True], found[False]):
                raise SystemExit(f"{name}: the distances differ with and without narrowing")
        report["rounds"].append(rows)
    with open(os.path.join(args.out, "results_dtw_narrowing.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
