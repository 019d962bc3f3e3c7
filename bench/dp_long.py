"""Long pairs on the GPU through the public API: few pairs of 10,000 and of 100,000, each spread over many
warps (the long-pair kernel, dp.cu ``dp_long``), beside the one-warp-per-pair kernel on the same inputs in the
same run. Issue 17, goal 3 (at least 1,000 GCUPS for NW and DTW at length 10,000 with 20 pairs).

Usage::

    python bench/dp_long.py --out DIR [--pairs 20] [--length 10000] [--repeats 7] [--long-pairs 20]
                            [--long-length 100000] [--sweep]

Every row is ``seqcompare.align`` or ``seqcompare.dtw`` on 2-D arrays in host memory (uint8 base codes; int16,
int32 or float32 signals), warm, scores back in host memory: GCUPS = pairs x length^2 / median seconds.
``one warp per pair`` rows run the same call with the long-pair kernel switched off (``LONG_QUERY_ROWS``
raised past the length). ``--sweep`` adds each strip size of the long kernel (``LONG_STRIP``). Writes
``results_dp_long.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dp_api import median_of  # noqa: E402  (one untimed call, then the median of the timed ones)


def main(argv=None) -> int:
    import seqcompare
    from seqcompare.align import gpu

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--length", type=int, default=10000)
    parser.add_argument("--long-pairs", type=int, default=20)
    parser.add_argument("--long-length", type=int, default=100000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": {}}  # fmt: skip
    nw_costs = seqcompare.Costs.seed(0, 2, 3, 3)
    affine = seqcompare.Costs(nw_costs.substitution, insert_open=4, insert_extend=1, delete_open=4, delete_extend=1)

    def workloads(pairs, length, seed):
        rng = np.random.default_rng(seed)
        targets = rng.integers(0, 4, (pairs, length), dtype=np.uint8)
        queries = targets.copy()  # related pairs (10% substituted), as long alignments usually are
        hit = rng.random(queries.shape) < 0.1
        queries[hit] = rng.integers(0, 4, int(hit.sum()), dtype=np.uint8)
        walk_a = np.cumsum(rng.integers(-1, 2, (pairs, length)), axis=1)  # inside int16, and the GPU's 32-bit range
        walk_b = walk_a + rng.integers(-2, 3, (pairs, length))
        yield "NW seed(0,2,3,3)", lambda: seqcompare.align(targets, queries, costs=nw_costs, device="cuda")
        yield "NW affine (4+1)", lambda: seqcompare.align(targets, queries, costs=affine, device="cuda")
        yield "edit distance (Myers)", lambda: seqcompare.align(targets, queries, device="cuda")
        for dtype in (np.int16, np.int32, np.float32):
            a, b = walk_a.astype(dtype), walk_b.astype(dtype)
            yield f"DTW {np.dtype(dtype).name}", (lambda a=a, b=b: seqcompare.dtw(a, b, device="cuda"))

    def row(name, function, cells, **settings):
        saved = {key: getattr(gpu, key) for key in settings}
        for key, value in settings.items():
            setattr(gpu, key, value)
        try:
            median, runs = median_of(function, args.repeats)
            scores = function()
        finally:
            for key, value in saved.items():
                setattr(gpu, key, value)
        entry = {"median_s": median, "runs_s": runs, "gcups": cells / median / 1e9}
        report["rows"][name] = entry
        print(f"{name:58s} {median:.5f} s  {entry['gcups']:8.0f} GCUPS", flush=True)
        return scores.scores

    def kernel_only(title, kind, a, b, **options):
        """The kernels' own rate (labelled: values uploaded first, CUDA events around the launches)."""
        offsets = np.arange(len(a) + 1, dtype=np.int64) * a.shape[1]
        plan = np.stack([np.arange(len(a)), np.arange(len(a))], axis=1)
        times = []
        for _ in range(args.repeats + 1):
            timing = {}
            gpu.dp_on_gpu(kind, a.reshape(-1), offsets, b.reshape(-1), offsets, plan, timings=timing,
                          kernels_only=True, **options)  # fmt: skip
            times.append(timing["kernel_s"])
        median = statistics.median(times[1:])
        report["rows"][title] = {"median_s": median, "gcups": len(a) * a.shape[1] ** 2 / median / 1e9}
        print(f"{title:58s} {median:.5f} s  {report['rows'][title]['gcups']:8.0f} GCUPS", flush=True)

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, (2, args.pairs, args.length), dtype=np.uint8)
    kernel_only(f"{args.pairs} x {args.length}, NW seed(0,2,3,3): kernel only", 0, codes[0], codes[1], match=0,
                mismatch=2, ins=3, dele=3)  # fmt: skip
    walks = np.cumsum(rng.integers(-1, 2, (2, args.pairs, args.length)), axis=2).astype(np.int32)
    kernel_only(f"{args.pairs} x {args.length}, DTW int32: kernel only", 1, walks[0], walks[1])
    cells = args.pairs * args.length**2
    for name, function in workloads(args.pairs, args.length, 1):
        title = f"{args.pairs} x {args.length}, {name}"
        spread = row(f"{title}: long-pair kernel", function, cells)
        alone = row(f"{title}: one warp per pair", function, cells, LONG_QUERY_ROWS=1 << 40)
        if not np.array_equal(spread, alone):
            raise SystemExit(f"{title}: the two kernels disagree")
        if args.sweep and not name.startswith("edit"):
            for rows in gpu.STRIPS:
                row(f"{title}: long-pair kernel, R = {rows}", function, cells, LONG_STRIP=rows)
    if args.long_pairs:
        cells = args.long_pairs * args.long_length**2
        for name, function in workloads(args.long_pairs, args.long_length, 2):
            if name.startswith("edit") or name.endswith("int16"):
                continue
            row(f"{args.long_pairs} x {args.long_length}, {name}: long-pair kernel", function, cells)
    with open(os.path.join(args.out, "results_dp_long.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
