"""Scan benchmarks (issue 4) on the course's standard full-size run.

Usage::

    python bench/scan_bench.py --out DIR [--device cpu|cuda] [--threads N] [--repeats 3] [--work DIR]

Data: ``seqcompare simulate scan --seed 5`` with the course's standard knobs (1,000 signatures of 3,000-10,000
bases, 2,000 virus-free + 20 infected samples of 100,000-200,000 bases, Phred 10-30, N ratio 0.1; a 604 MB
FASTQ), written once to ``--work`` (default ``bench/work``).

End to end: fresh ``seqcompare scan SAMPLES SIGNATURES`` processes timed from outside (interpreter start-up,
imports, parsing, matching, output), median of ``--repeats``; the output must hold every planted pair and, on a
GPU, be byte-identical to the CPU's. With ``--device cuda`` also the stages in a warm process: parsing, and
matching = packing + upload + kernels + results, with the signature index build (done while the FASTQ is
parsed in the CLI) reported apart and added in a second figure (the course's matcher: 2.77 s on one H200,
parsing excluded), and the kernels alone (CUDA events). Writes
``DIR/results_scan_<device>.json``.
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

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
COURSE_MATCHER_H200_S = 2.77  # ../shared/spec/scan.md: the course's reference matcher, matching only


def ensure_data(work: str) -> tuple[str, str, str]:
    os.makedirs(work, exist_ok=True)
    samples, signatures, truth = (os.path.join(work, name) for name in ("scan_full.fastq", "scan_full_sigs.fasta",
                                                                         "scan_full_truth.tsv"))  # fmt: skip
    if not all(os.path.exists(p) for p in (samples, signatures, truth)):
        subprocess.run([sys.executable, "-m", "seqcompare", "simulate", "scan", "--seed", "5", "--samples-out", samples,
                        "--signatures-out", signatures, "--truth", truth], check=True)  # fmt: skip
    return samples, signatures, truth


def run(argv: list[str]) -> tuple[float, bytes, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "seqcompare", *argv], capture_output=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"seqcompare failed: {done.stderr.decode().strip()}")
    return seconds, done.stdout, done.stderr.decode()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(HERE, "work"))
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    samples, signatures, truth = ensure_data(args.work)
    report = {
        "command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "device": args.device, "threads": args.threads, "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "fastq_bytes": os.path.getsize(samples), "signatures_bytes": os.path.getsize(signatures),
    }  # fmt: skip
    command = ["scan", samples, signatures, "-j", str(args.threads), "--device", args.device]
    report["argv"] = "seqcompare " + " ".join(command)
    run(command)  # warm-up: Numba and CuPy caches
    times, output, log = [], b"", ""
    for _ in range(args.repeats):
        seconds, output, log = run(command)
        times.append(seconds)
    report["end_to_end_runs_s"] = times
    report["end_to_end_median_s"] = statistics.median(times)
    report["log_of_last_run"] = log
    with open(truth) as handle:
        planted = {tuple(line.split("\t")[:2]) for line in handle.read().splitlines()[1:]}
    found = {tuple(line.split(": ", 1)[0:1] + [line.split(": ", 1)[1].rsplit(" (", 1)[0]])
             for line in output.decode().splitlines()}  # fmt: skip
    report["matches"] = len(output.splitlines())
    report["planted_pairs"] = len(planted)
    report["all_planted_found"] = planted <= found
    if args.device == "cuda":
        _, cpu_output, _ = run(["scan", samples, signatures, "-j", str(args.threads)])
        report["identical_to_cpu_output"] = cpu_output == output
        report["stages"] = stages(samples, signatures, args.threads, args.repeats)
        report["matching_speedup_over_course_matcher"] = COURSE_MATCHER_H200_S / report["stages"]["matching_s"]
        report["matching_incl_index_build_speedup_over_course_matcher"] = (
            COURSE_MATCHER_H200_S / report["stages"]["matching_incl_index_build_s"]
        )
    with open(os.path.join(args.out, f"results_scan_{args.device}.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k != "log_of_last_run"}, indent=1))
    print(log)
    return 0


def stages(samples_path: str, signatures_path: str, threads: int, repeats: int) -> dict:
    from seqcompare.scan.gpu import device_index, scan_on_gpu
    from seqcompare.io.fasta import read_sequences
    from seqcompare.io.fastq import read_fastq

    result: dict = {}
    start = time.perf_counter()
    parse: dict = {}
    samples = read_fastq(samples_path, threads=threads, timings=parse)
    result["read_fastq_s"] = time.perf_counter() - start
    result["read_fastq_stages_s"] = parse
    start = time.perf_counter()
    read_fastq(samples_path, threads=threads)
    result["read_fastq_again_s"] = time.perf_counter() - start
    signatures = read_sequences(signatures_path)
    index = device_index(signatures.codes, signatures.offsets, 12)
    scan_on_gpu(samples, index, False, -1.0, threads=threads)
    builds, runs = [], []
    for _ in range(max(3, repeats)):
        start = time.perf_counter()
        device_index(signatures.codes, signatures.offsets, 12)
        builds.append(time.perf_counter() - start)
        timings: dict = {}
        start = time.perf_counter()
        scan_on_gpu(samples, index, False, -1.0, threads=threads, timings=timings)
        timings["matching_s"] = time.perf_counter() - start
        runs.append(timings)
    result["signature_index_build_s"] = statistics.median(builds)
    for key in runs[0]:
        result[key] = statistics.median(run[key] for run in runs)
    result["matching_incl_index_build_s"] = result["matching_s"] + result["signature_index_build_s"]
    result["runs"] = runs
    return result


if __name__ == "__main__":
    raise SystemExit(main())
