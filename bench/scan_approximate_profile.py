"""Where the time of an approximate scan goes, in one warm process: FASTQ parse, the exact engine over the
patterns' pieces (with the GPU's own stage times), and the verification.

    python bench/scan_approximate_profile.py READS PATTERNS [--device cuda] [--threads 16] [--metric max_edits]
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("reads")
    parser.add_argument("patterns")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--metric", default="max_edits")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import seqcompare.scan.approximate as approximate
    from seqcompare.io.fastq import read_fastq
    from seqcompare.scan.api import scan

    began = time.perf_counter()
    samples = read_fastq(args.reads, threads=args.threads)
    parse = time.perf_counter() - began
    verifying = []
    original = approximate.Verifier.__call__

    def timed(self, chunk, rows):
        start = time.perf_counter()
        out = original(self, chunk, rows)
        verifying.append((time.perf_counter() - start, int(rows[0].size)))
        return out

    approximate.Verifier.__call__ = timed
    gpu_stages = {}
    if args.device == "cuda":
        import seqcompare.scan.gpu as gpu

        plain = gpu.scan_on_gpu

        def with_timings(*a, **k):
            k["timings"] = gpu_stages
            return plain(*a, **k)

        gpu.scan_on_gpu = with_timings
    runs = []
    for _ in range(args.repeats):
        verifying.clear()
        start = time.perf_counter()
        result = scan(samples, args.patterns, both_strands=True, report="all", threads=args.threads,
                      device=args.device, **{args.metric: 0.05})  # fmt: skip
        total = time.perf_counter() - start
        runs.append({"scan_s": total, "verify_s": sum(t for t, _ in verifying),
                     "candidates": sum(n for _, n in verifying), "occurrences": len(result),
                     "gpu": dict(gpu_stages)})  # fmt: skip
    print(json.dumps({"parse_s": parse, "bases": int(samples.codes.size), "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
