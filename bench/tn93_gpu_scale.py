"""GPU TN93 links at scale, disk to disk (issue 18: 100,000 x 30,000 at 0.015 within 10 s on an H200).

Usage::

    python bench/tn93_gpu_scale.py --out DIR [--n 100000] [--m 30000] [--threshold 0.015] [--repeats 3]
                                   [--work DIR] [--timeout 300]

Writes ``simulate_pol(n, m, seed=0)`` (HIV-pol-like, IUPAC mixtures) as FASTA, then times fresh
``seqcompare hamming --model tn93 --max-dist T --csv --device cuda`` processes from FASTA on disk to CSV on disk
(interpreter start-up and imports included), medians over ``repeats`` after one warm-up run. Writes
``results_tn93_gpu_scale.json`` with the log of the last run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", default="/tmp/seqcompare-work")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=30_000)
    parser.add_argument("--threshold", type=float, default=0.015)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--profile", action="store_true",
                        help="after the timed runs, one more under cProfile (main thread; labelled, slower)")
    args = parser.parse_args()
    from seqcompare.simulate import simulate_pol, write_fasta

    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    fasta = os.path.join(args.work, f"pol_{args.n}x{args.m}.fasta")
    report = {"n": args.n, "m": args.m, "threshold": args.threshold}
    start = time.perf_counter()
    if not os.path.exists(fasta):
        names, rows = simulate_pol(args.n, args.m, seed=0)
        write_fasta(fasta, names, rows)
        del names, rows
    report["simulate_and_write_s"] = time.perf_counter() - start
    links = os.path.join(args.work, "links.csv")
    argv = [sys.executable, "-m", "seqcompare", "hamming", fasta, "--model", "tn93", "--max-dist",
            str(args.threshold), "--csv", "--device", "cuda", "-o", links]  # fmt: skip
    report["argv"] = " ".join(argv[1:])
    runs, log = [], ""
    for round_ in range(args.repeats + 1):
        start = time.perf_counter()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            report["timed_out_after_s"] = args.timeout
            print(f"timed out after {args.timeout} s", flush=True)
            break
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        log = done.stderr
        print(f"run {round_}: {seconds:.2f} s", flush=True)
        if round_ == 0:
            report["first_run_s"] = seconds
            if seconds > args.timeout / 2:
                break  # too slow to repeat within the budget
        else:
            runs.append(seconds)
    report["runs_s"] = runs
    if runs:
        report["median_s"] = statistics.median(runs)
    if os.path.exists(links):
        with open(links, "rb") as handle:
            report["links"] = handle.read().count(b"\n") - 1
    report["log_of_last_run"] = log
    if args.profile:  # where the main thread's time goes: reading, codes, planes, upload, the engine's wait
        # In process (the console script ends with os._exit, before cProfile could write its file).
        stats = os.path.join(args.work, "tn93.prof")
        script = os.path.join(args.work, "tn93_profile.py")
        with open(script, "w") as handle:
            handle.write(f"import cProfile\nimport seqcompare.cli\nprofile = cProfile.Profile()\nprofile.enable()\n"
                         f"seqcompare.cli.main({argv[3:]!r})\nprofile.disable()\nprofile.dump_stats({stats!r})\n")
        subprocess.run([sys.executable, script], check=True)
        import io
        import pstats

        text = io.StringIO()
        pstats.Stats(stats, stream=text).sort_stats("cumulative").print_stats(45)
        report["profile"] = text.getvalue()
        print(report["profile"], flush=True)
    print(json.dumps({k: v for k, v in report.items() if k != "log_of_last_run"}), flush=True)
    print(log)
    with open(os.path.join(args.out, "results_tn93_gpu_scale.json"), "w") as handle:
        json.dump(report, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
