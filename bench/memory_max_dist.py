"""Peak memory of `seqcompare hamming --max-dist 20` on a 20,000 x 30,000 alignment (acceptance: < 4 GB RSS).

Usage::

    python bench/memory_max_dist.py [--sequences 20000] [--length 30000] [--threads 2]

Simulates the alignment into bench/work/ (once), runs the CLI in a child process and reports the child's
peak resident set size (``ru_maxrss``) and wall time.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hamming_cpu import ensure_dataset  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sequences", type=int, default=20000)
    parser.add_argument("--length", type=int, default=30000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-dist", type=int, default=20)
    parser.add_argument("--substitution-rate", type=float, default=0.015,
                        help="0.0005 makes many pairs fall within 20 SNPs (tens of millions at 20,000)")  # fmt: skip
    args = parser.parse_args()
    path = ensure_dataset(args.sequences, args.length, seed=args.sequences,
                          substitution_rate=args.substitution_rate)  # fmt: skip
    out = os.path.join(HERE, "work", "pairs.tsv")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "seqcompare", "hamming", "-q", "-j", str(args.threads),
                    "--max-dist", str(args.max_dist), path, "-o", out], check=True)  # fmt: skip
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(out) as handle:
        pairs = sum(1 for _ in handle)
    print(json.dumps({"sequences": args.sequences, "length": args.length, "max_dist": args.max_dist,
                      "threads": args.threads, "wall_s": round(wall, 2), "peak_rss_gib": round(peak_kib / 2**20, 3),
                      "pairs_written": pairs, "input_bytes": os.path.getsize(path)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
