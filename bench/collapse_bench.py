"""``--collapse`` against the same run without it, on alignments where 30% of the sequences are duplicates
(issue 18: identical outputs, at least 1.4x faster).

Usage::

    python bench/collapse_bench.py --out DIR [--threads 2] [--devices cpu] [--repeats 3] [--duplicates 0.3]
                                   [--cases NAME,NAME] [--scale F]

The alignments: ``simulate_pol(n * 0.7, m)`` for the TN93 case (HIV-pol-like, IUPAC mixtures), and
``simulate_pol(n * 0.7, m, ambiguity_rate=0)`` for the SNP cases, each grown to ``n`` sequences by copies of
randomly chosen sequences, placed at random (a duplicate keeps its original's text exactly). Every round runs,
in fresh processes from FASTA on disk to output on disk, ``seqcompare hamming`` with the case's options, without
and with ``--collapse``, alternating; the outputs must be byte-identical. Figures are medians over rounds.
``--scale F`` multiplies every case's number of sequences by F (for machines where the sizes below take a second
or two, mostly start-up and reading). Writes ``results_collapse.json``.
"""

from __future__ import annotations

import argparse
import hashlib
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

CASES = {
    # name: (n, m, ambiguity rate, options)
    "tn93_links_5000x9000": (5000, 9000, 0.003, ["--model", "tn93", "--max-dist", "0.015", "--min-overlap", "501",
                                                  "--csv"]),  # fmt: skip
    "snp_pairs_20000x9000": (20000, 9000, 0.0, ["--max-dist", "20"]),
    "snp_matrix_4000x9000": (4000, 9000, 0.0, []),
    # Not in the default set: for a GPU, where the smaller cases are mostly reading and start-up.
    "tn93_links_100000x30000": (100000, 30000, 0.003, ["--model", "tn93", "--max-dist", "0.015", "--csv"]),
}
DEFAULT_CASES = ("tn93_links_5000x9000", "snp_pairs_20000x9000", "snp_matrix_4000x9000")


def make_alignment(path: str, n: int, m: int, ambiguity_rate: float, fraction: float, seed: int = 0) -> int:
    """Write ``n`` sequences of which ``fraction`` are copies; returns how many are distinct."""
    from seqcompare.simulate import simulate_pol, write_fasta

    distinct = n - int(round(n * fraction))
    names, rows = simulate_pol(distinct, m, seed=seed, ambiguity_rate=ambiguity_rate)
    rng = np.random.default_rng(seed + 1)
    picks = np.concatenate([np.arange(distinct), rng.integers(0, distinct, n - distinct)])
    picks = picks[rng.permutation(n)]
    write_fasta(path, [f"seq{k}_{names[p]}" for k, p in enumerate(picks)], rows[picks])
    return distinct


def timed(command: list) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--devices", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--duplicates", type=float, default=0.3)
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help=f"of {', '.join(CASES)}")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results = {"command": " ".join(sys.argv), "machine": platform.processor() or platform.machine(),
               "cpu_count": os.cpu_count(), "threads": args.threads, "duplicates": args.duplicates,
               "scale": args.scale, "cases": []}  # fmt: skip
    try:
        results["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                           text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        results["commit"] = "unknown"
    for name in args.cases.split(","):
        n, m, ambiguity_rate, options = CASES[name]
        n = int(round(n * args.scale))
        fasta = os.path.join(args.out, f"{name}.fa")
        distinct = make_alignment(fasta, n, m, ambiguity_rate, args.duplicates)
        for device in args.devices.split(","):
            base = [sys.executable, "-m", "seqcompare", "hamming", fasta, "-q", "--threads", str(args.threads),
                    "--device", device, *options]  # fmt: skip
            plain_out = os.path.join(args.out, f"{name}.{device}.plain")
            collapsed_out = os.path.join(args.out, f"{name}.{device}.collapsed")
            plain, collapsed = [], []
            subprocess.run(base + ["-o", plain_out], check=True)  # warm the page cache and Numba's cache
            for _ in range(args.repeats):
                plain.append(timed(base + ["-o", plain_out]))
                collapsed.append(timed(base + ["--collapse", "-o", collapsed_out]))
            identical = digest(plain_out) == digest(collapsed_out)
            row = {"case": name, "device": device, "n": n, "m": m, "distinct": distinct, "options": options,
                   "plain_s": plain, "collapsed_s": collapsed, "plain_median_s": statistics.median(plain),
                   "collapsed_median_s": statistics.median(collapsed), "identical": identical,
                   "output_bytes": os.path.getsize(plain_out)}  # fmt: skip
            row["speedup"] = row["plain_median_s"] / row["collapsed_median_s"]
            results["cases"].append(row)
            print(f"{name} [{device}]: plain {row['plain_median_s']:.2f} s, --collapse "
                  f"{row['collapsed_median_s']:.2f} s, {row['speedup']:.2f}x, identical {identical}", flush=True)  # fmt: skip
            for path in (plain_out, collapsed_out):
                os.unlink(path)
        os.unlink(fasta)
    with open(os.path.join(args.out, "results_collapse.json"), "w") as handle:
        json.dump(results, handle, indent=2)
    return 0 if all(case["identical"] for case in results["cases"]) else 1


if __name__ == "__main__":
    sys.exit(main())
