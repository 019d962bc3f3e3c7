"""Batched NW and DTW: GCUPS at the seed's workloads (lengths 100, 250, 1,000, 10,000 at equal total cells).

Usage::

    python bench/dp_bench.py --out DIR --device cpu|cuda [--cells N] [--threads T] [--peers]

Random DNA pairs (NW with the seed's costs 0,1,1,1 and, for the parasail comparison, affine scores) and
random integer signals 0..999 (DTW, full mode). GPU: kernel-only GCUPS (CUDA events) and end to end (inputs on
the host to scores on the host); CPU: end to end on T threads. ``--peers`` times parasail's ``nw_scan_16`` and
dtaidistance's ``distance_fast`` (no pruning, |a - b| cost) on the same pairs with T processes, after checking
that their scores equal ours. Writes ``results_dp_<device>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

LENGTHS = (100, 250, 1000, 10000)


def workload(rng, length: int, cells: int):
    count = max(1, cells // (length * length))
    t = rng.integers(0, 4, (count, length)).astype(np.uint8)
    q = rng.integers(0, 4, (count, length)).astype(np.uint8)
    return ["".join("ACGT"[c] for c in row) for row in t], ["".join("ACGT"[c] for c in row) for row in q]


def _parasail_chunk(pairs):
    import parasail

    matrix = parasail.matrix_create("ACGT", 2, -3)
    return [parasail.nw_scan_16(q, t, 5, 2, matrix).score for t, q in pairs]


def _dtai_chunk(pairs):
    from dtaidistance import dtw as dtai

    return [dtai.distance_fast(a, b, use_pruning=False, inner_dist="euclidean") for a, b in pairs]


def in_processes(function, pairs, workers: int):
    """``function`` over ``pairs`` split across ``workers`` processes, timed after a warm-up in every process
    (imports and pool start-up are not counted against the peer)."""
    chunks = [pairs[k::workers] for k in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(function, [chunk[:2] for chunk in chunks]))
        start = time.perf_counter()
        parts = list(pool.map(function, chunks))
        seconds = time.perf_counter() - start
    merged = [None] * len(pairs)
    for k, part in enumerate(parts):
        merged[k::workers] = part
    return merged, seconds


def main(argv=None) -> int:
    from seqcompare.align.api import align, dtw
    from seqcompare.align.costs import Costs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--cells", type=float, default=2e9)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--peers", action="store_true")
    parser.add_argument("--lengths", default=",".join(map(str, LENGTHS)))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(7)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]), "device": args.device,
              "threads": args.threads, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": []}  # fmt: skip
    for length in (int(x) for x in args.lengths.split(",")):
        if args.device == "cuda":
            from seqcompare.align.api import pair_plan
            from seqcompare.align.gpu import dp_on_gpu

            # Codes straight from the generator (billions of bases: no Python strings).
            count = max(1, int(args.cells) // (length * length))
            row = {"length": length, "pairs": count}
            t_codes = rng.integers(0, 4, count * length).astype(np.uint8)
            q_codes = rng.integers(0, 4, count * length).astype(np.uint8)
            t_off = q_off = np.arange(count + 1, dtype=np.int64) * length
            plan = pair_plan(count, count, None)
            cells = length * length * count
            targets = ["".join("ACGT"[c] for c in t_codes[k * length : (k + 1) * length]) for k in range(min(8, count))]
            queries = ["".join("ACGT"[c] for c in q_codes[k * length : (k + 1) * length]) for k in range(min(8, count))]
            jobs = (("nw", 0, dict(match=0, mismatch=1, ins=1, dele=1)), ("dtw", 1, dict(mode=0)),
                    ("dtw_float", 1, dict(mode=0)))  # fmt: skip
            for name, kind, options in jobs:
                if name == "dtw":
                    t_codes = rng.integers(0, 1000, t_codes.size).astype(np.int32)
                    q_codes = rng.integers(0, 1000, q_codes.size).astype(np.int32)
                elif name == "dtw_float":
                    t_codes = rng.normal(size=t_codes.size)
                    q_codes = rng.normal(size=q_codes.size)
                dp_on_gpu(kind, t_codes, t_off, q_codes, q_off, plan[: min(len(plan), 64)], **options)
                runs = []
                for _ in range(3):
                    timing: dict = {}
                    dp_on_gpu(kind, t_codes, t_off, q_codes, q_off, plan, timings=timing, **options)
                    runs.append(timing)
                kernel = float(np.median([r["kernel_s"] for r in runs]))
                total = float(np.median([r["total_s"] for r in runs]))
                row[name] = {"kernel_s": kernel, "kernel_gcups": cells / kernel / 1e9, "end_to_end_s": total,
                             "end_to_end_gcups": cells / total / 1e9}  # fmt: skip
            nw_cpu = align(targets[:8], queries[:8], costs=Costs.edit()).scores
            row["nw_equal_to_cpu_on_8"] = bool(np.array_equal(nw_cpu, align(targets[:8], queries[:8], device="cuda").scores))
        else:
            targets, queries = workload(rng, length, int(args.cells))
            row = {"length": length, "pairs": len(targets)}
            costs = Costs.scores(2, -3, -3, -2)
            signals_a = rng.normal(size=(len(targets), length))
            signals_b = rng.normal(size=(len(targets), length))
            # Compile (or load from Numba's cache) each path at this length's lane width before timing.
            align(targets[:64], queries[:64], costs=costs, threads=args.threads)
            align(targets[:64], queries[:64], costs=Costs.edit(), threads=args.threads)
            dtw(signals_a[:64], signals_b[:64], threads=args.threads)
            start = time.perf_counter()
            ours = align(targets, queries, costs=costs, threads=args.threads)
            seconds = time.perf_counter() - start
            row["nw_affine"] = {"seconds": seconds, "gcups": ours.cells / seconds / 1e9}
            start = time.perf_counter()
            seed = align(targets, queries, costs=Costs.edit(), threads=args.threads)
            seconds = time.perf_counter() - start
            row["nw_seed_costs"] = {"seconds": seconds, "gcups": seed.cells / seconds / 1e9}
            start = time.perf_counter()
            distances = dtw(signals_a, signals_b, threads=args.threads)
            seconds = time.perf_counter() - start
            row["dtw_float"] = {"seconds": seconds, "gcups": distances.cells / seconds / 1e9}
            if args.peers and length <= 1000:
                theirs, seconds = in_processes(_parasail_chunk, list(zip(targets, queries)), args.threads)
                row["parasail_nw_scan_16"] = {"seconds": seconds, "gcups": ours.cells / seconds / 1e9,
                                              "scores_equal": bool(np.array_equal(np.array(theirs), ours.scores))}
                theirs, seconds = in_processes(_dtai_chunk, list(zip(signals_a, signals_b)), args.threads)
                row["dtaidistance_distance_fast"] = {
                    "seconds": seconds, "gcups": distances.cells / seconds / 1e9,
                    "distances_equal": bool(np.allclose(theirs, distances.scores, rtol=1e-9, atol=0))}
        report["runs"].append(row)
        print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, f"results_dp_{args.device}.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
