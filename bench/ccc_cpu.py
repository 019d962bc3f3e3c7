"""CCC 2-way on the CPU: 10,000 SNPs x 2,504 individuals with --threshold, through the command line.

Usage::

    python bench/ccc_cpu.py --out DIR [--threshold T] [--repeats R]

The SNPs are the 4,294 real biallelic SNPs of data/ccc_example/1kg_chr1_2504.vcf.gz (1000 Genomes, 2,504
individuals) and, to reach 10,000, copies of them with the individuals shuffled (so allele frequencies are
real, linkage between copies is not). They are written in CoMet's packed binary format and run as
``seqcompare ccc FILE --num-vector 10000 --num-field 2504 --threshold T --checksum``; wall time is measured
around the whole process (reading included) and the command's own rate line is kept.
Writes ``results_ccc_cpu.json``.
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

import numpy as np

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
VCF = os.path.join(HERE, os.pardir, "data", "ccc_example", "1kg_chr1_2504.vcf.gz")


def build(path: str, n_vectors: int, seed: int = 11) -> tuple[int, int]:
    from seqcompare.io.genotypes import read_vcf, write_comet

    real = read_vcf(VCF).codes
    rng = np.random.default_rng(seed)
    parts, have = [real], real.shape[0]
    while have < n_vectors:
        rows = real[rng.permutation(real.shape[0])[: n_vectors - have]]
        parts.append(np.take_along_axis(rows, rng.permuted(np.tile(np.arange(real.shape[1]), (len(rows), 1)), axis=1), 1))
        have += len(rows)
    codes = np.concatenate(parts)[:n_vectors]
    write_comet(path, codes)
    return codes.shape


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--vectors", type=int, default=10_000)
    parser.add_argument("--threshold", default="0.8")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(HERE, "work"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    data = os.path.join(args.work, f"ccc_{args.vectors}x2504.bin")
    n_vectors, n_fields = build(data, args.vectors)
    command = [sys.executable, "-m", "seqcompare", "ccc", data, "--num-vector", str(n_vectors), "--num-field",
               str(n_fields), "--threshold", args.threshold, "--checksum", "-o", os.path.join(args.work, "ccc.tsv")]
    times, log = [], ""
    for _ in range(args.repeats):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode:
            raise SystemExit(done.stderr)
        log = done.stderr
    with open(os.path.join(args.work, "ccc.tsv")) as handle:
        entries = sum(1 for _ in handle) - 1
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]), "argv": " ".join(command[1:]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu_count": os.cpu_count(),
              "processor": platform.processor() or platform.machine(), "vectors": n_vectors, "fields": n_fields,
              "comparisons": n_vectors * (n_vectors - 1) // 2 * n_fields, "wall_runs_s": times,
              "wall_median_s": statistics.median(times), "entries": entries, "log_of_last_run": log}  # fmt: skip
    report["wall_rate"] = report["comparisons"] / report["wall_median_s"]
    with open(os.path.join(args.out, "results_ccc_cpu.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k != "log_of_last_run"}, indent=1))
    print(log)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
