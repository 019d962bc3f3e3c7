"""What a user's call costs, end to end through the public API (warm process, inputs in memory): one command
per row, medians of ``--repeats``. Written with the names both the current tree and earlier ones export, so
that ``bench/before_after.sh`` can time a baseline and this tree side by side (``api``).

Usage::

    python bench/public_api.py --out DIR [--device cpu|cuda] [--repeats 5]

GPU sizes: Hamming pairs within 20 of 32,768 x 30,000 simulated genomes; 2-way CCC (threshold 0.75) of 32,768
SNPs x 32,768 and 3-way (0.5) of 2,048 x 16,384; 40,000 NW pairs and 40,000 integer DTW pairs of length 1,000.
CPU sizes: 4,000 x 30,000; 4,000 x 2,504 and 300 x 2,504; 2,000 pairs of 1,000. Writes ``results_public_api.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


class Codes:
    """Genotypes as CoMet codes (what the readers return), without building per-SNP objects."""

    def __init__(self, codes):
        self.codes = codes
        self.names = [f"snp{i}" for i in range(len(codes))]
        self.alleles = [("A", "B")] * len(codes)


def timed(function, repeats: int) -> dict:
    function()  # compile, load kernels, warm the memory pools
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        runs.append(time.perf_counter() - start)
    return {"median_s": statistics.median(runs), "runs_s": runs}


def main(argv=None) -> int:
    import seqcompare
    from seqcompare.simulate import simulate_alignment

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="hamming,ccc2,ccc3,align,dtw", help="rows to run (comma-separated)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    os.makedirs(args.out, exist_ok=True)
    gpu = args.device == "cuda"
    rng = np.random.default_rng(11)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]), "device": args.device,
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "seqcompare": os.path.dirname(seqcompare.__file__),
              "rows": {}}  # fmt: skip

    def record(name, function):
        report["rows"][name] = timed(function, args.repeats)
        print(name, f"{report['rows'][name]['median_s']:.4f} s", flush=True)

    if "hamming" in only:
        n = 32768 if gpu else 4000
        names, sequences = simulate_alignment(n, 30000, seed=3)
        alignment = seqcompare.Alignment(names, sequences)
        record(f"hamming_pairs {n} x 30000 max_dist 20",
               lambda: seqcompare.hamming_pairs(alignment, max_dist=20, device=args.device))
        del alignment, sequences
    table = np.zeros(256, dtype=np.uint8)
    table[128:218], table[218:] = 1, 3
    if "ccc2" in only:
        vectors, fields = (32768, 32768) if gpu else (4000, 2504)
        codes = Codes(table[rng.integers(0, 256, size=(vectors, fields), dtype=np.uint8)])
        record(f"ccc 2-way {vectors} x {fields} threshold 0.75",
               lambda: seqcompare.ccc(codes, threshold=0.75, device=args.device))
        del codes
    if "ccc3" in only:
        vectors3, fields3 = (2048, 16384) if gpu else (300, 2504)
        codes3 = Codes(table[rng.integers(0, 256, size=(vectors3, fields3), dtype=np.uint8)])
        record(f"ccc 3-way {vectors3} x {fields3} threshold 0.5",
               lambda: seqcompare.ccc(codes3, way=3, threshold=0.5, device=args.device))
        del codes3
    pairs, length = (40000, 1000) if gpu else (2000, 1000)
    if "align" in only:
        letters = np.frombuffer(b"ACGT", np.uint8)
        targets = [letters[rng.integers(0, 4, length)].tobytes().decode() for _ in range(pairs)]
        queries = [letters[rng.integers(0, 4, length)].tobytes().decode() for _ in range(pairs)]
        record(f"align {pairs} pairs of {length}", lambda: seqcompare.align(targets, queries, device=args.device))
    if "dtw" in only:
        signals_a = rng.integers(0, 1000, size=(pairs, length))
        signals_b = rng.integers(0, 1000, size=(pairs, length))
        record(f"dtw {pairs} integer pairs of {length}",
               lambda: seqcompare.dtw(signals_a, signals_b, device=args.device))
    with open(os.path.join(args.out, "results_public_api.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
