"""Edit distance on the CPU, side by side with edlib in one run (issue 17, goal 6).

Usage::

    python bench/edit_cpu.py --threads 2 --repeats 5 --out bench/results_edit_cpu.json

Workloads: 20,000 pairs of 1,000-base random DNA, (a) each against a copy with 10% edits (a third each
substitutions, insertions, deletions) and (b) against an unrelated sequence. seqcompare runs end to end through
the public API (``seqcompare.align(targets, queries, costs=Costs.edit(), threads=T)`` from lists of str:
encoding, Myers' bit-vectors in SIMD lanes, results); edlib 1.3.9 (``edlib.align(a, b, mode="NW",
task="distance")``, installed here from PyPI when missing) runs in ``T`` processes, each on its share of the
pairs, as a user would parallelise it. Every distance is checked equal between the two. GCUPS count the full
``n * m`` matrix of every pair, the same for both.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def ensure_edlib():
    try:
        import edlib  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "edlib==1.3.9.post1"], check=True)


def mutated(rng, sequence: str, rate: float) -> str:
    out = []
    for base in sequence:
        draw = rng.random()
        if draw < rate / 3:
            continue  # deletion
        if draw < 2 * rate / 3:
            out.append("ACGT"[rng.integers(0, 4)])  # insertion before the base
            out.append(base)
        elif draw < rate:
            out.append("ACGT".replace(base, "")[rng.integers(0, 3)])  # substitution
        else:
            out.append(base)
    return "".join(out)


def workloads(count: int, length: int, seed: int = 17) -> dict:
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGT"))
    targets = ["".join(letters[rng.integers(0, 4, length)]) for _ in range(count)]
    related = [mutated(rng, t, 0.10) for t in targets]
    unrelated = ["".join(letters[rng.integers(0, 4, length)]) for _ in range(count)]
    return {"10% divergence": (targets, related), "unrelated": (targets, unrelated)}


def _edlib_share(pairs):
    import edlib

    return [edlib.align(q, t, mode="NW", task="distance")["editDistance"] for t, q in pairs]


def edlib_distances(pool, targets, queries, processes: int) -> list:
    pairs = list(zip(targets, queries))
    step = -(-len(pairs) // processes)
    shares = [pairs[k : k + step] for k in range(0, len(pairs), step)]
    return [d for part in pool.map(_edlib_share, shares) for d in part]


def timed(function, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results_edit_cpu.json"))
    args = parser.parse_args(argv)
    ensure_edlib()
    import seqcompare
    from seqcompare.align.costs import Costs

    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.processor() or platform.machine(),
              "cores": os.cpu_count(), "threads": args.threads, "rows": {}}  # fmt: skip
    with ProcessPoolExecutor(args.threads) as pool:
        pool.map(_edlib_share, [[("A", "A")]] * args.threads)  # start the workers and import edlib
        for name, (targets, queries) in workloads(args.pairs, args.length).items():
            cells = sum(len(t) * len(q) for t, q in zip(targets, queries))
            seqcompare.align(targets[:64], queries[:64], costs=Costs.edit(), threads=args.threads)  # load kernels
            ours_s, ours_runs, ours = timed(lambda: seqcompare.align(targets, queries, costs=Costs.edit(),
                                                                     threads=args.threads), args.repeats)  # fmt: skip
            peer_s, peer_runs, peer = timed(lambda: edlib_distances(pool, targets, queries, args.threads),
                                            args.repeats)  # fmt: skip
            identical = ours.scores.tolist() == peer
            row = {"pairs": len(targets), "cells": cells, "seqcompare_s": ours_s, "edlib_s": peer_s,
                   "seqcompare_gcups": cells / ours_s / 1e9, "edlib_gcups": cells / peer_s / 1e9,
                   "ratio_edlib_over_seqcompare": peer_s / ours_s, "identical": identical,
                   "seqcompare_runs_s": ours_runs, "edlib_runs_s": peer_runs}  # fmt: skip
            report["rows"][name] = row
            print(f"{name:15s} seqcompare {ours_s:.3f} s ({row['seqcompare_gcups']:.1f} GCUPS)  edlib {peer_s:.3f} s "
                  f"({row['edlib_gcups']:.1f})  ratio {row['ratio_edlib_over_seqcompare']:.2f}x  identical {identical}",
                  flush=True)  # fmt: skip
            if not identical:
                raise SystemExit(f"{name}: distances differ from edlib's")
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
