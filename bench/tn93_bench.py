"""TN93 links side by side with veg/tn93, the tool HIV-TRACE runs (issue 18: at least 20x tn93 at the same thread
count on 5,000 x 9,000).

Usage::

    python bench/tn93_bench.py --out DIR --tn93-source DIR [--n 5000] [--m 9000] [--threads 2]
                               [--devices cpu,cuda] [--repeats 3] [--threshold 0.015]

tn93 is built from its public source in the benchmark (``cmake -DCMAKE_BUILD_TYPE=Release``, or g++ with its
CMakeLists' flags where cmake is missing or fails). The input is ``seqcompare.simulate.simulate_pol(n, m,
seed=0)``: HIV-pol-like, with IUPAC mixtures. Every round runs, in fresh processes from FASTA on disk to CSV on disk, ``tn93 -t T -l 500``
(``OMP_NUM_THREADS=threads``) and then ``seqcompare hamming --model tn93 --max-dist T --min-overlap 501 --csv``
on each device (``--threads threads``); the figures are medians over rounds, and the outputs must hold the same
lines (tn93 writes them in its threads' order). Beside them, labelled: the same links through the Python API
(``seqcompare.model_pairs``) in one warm process, the alignment already in memory. Writes
``results_tn93.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def build_tn93(source: str, work: str) -> str:
    """The tn93 binary built from ``source`` into ``work``; returns its path."""
    build = os.path.join(work, "tn93-build")
    os.makedirs(build, exist_ok=True)
    if shutil.which("cmake"):
        try:
            # tn93 asks for CMake 3.0, which CMake 4 no longer accepts without a policy floor.
            subprocess.run(["cmake", "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_POLICY_VERSION_MINIMUM=3.5",
                            os.path.abspath(source)], cwd=build, check=True, capture_output=True)  # fmt: skip
            subprocess.run(["make", "-j4", "tn93"], cwd=build, check=True, capture_output=True)
            return os.path.join(build, "tn93")
        except subprocess.CalledProcessError as error:
            print("cmake build failed, building with g++:", error.stderr.decode(errors="replace")[-300:])
    # The flags of tn93's CMakeLists.txt (-O3 -std=c++14 -funroll-loops, OpenMP, its version string).
    with open(os.path.join(source, "VERSION.txt")) as handle:
        version = handle.read().strip()
    sources = [os.path.join(source, "src", f) for f in ("TN93.cpp", "tn93_shared.cc", "stringBuffer.cc",
                                                         "argparse.cpp")]  # fmt: skip
    subprocess.run(["g++", "-O3", "-std=c++14", "-funroll-loops", "-fopenmp", f'-DVERSION_NUMBER="{version}"',
                    *sources, "-o", os.path.join(build, "tn93")], check=True, capture_output=True)  # fmt: skip
    return os.path.join(build, "tn93")


def timed(command: list, env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--tn93-source", required=True, help="veg/tn93's source tree")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--m", type=int, default=9000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--devices", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threshold", type=float, default=0.015)
    args = parser.parse_args(argv)

    import seqcompare
    from seqcompare.simulate import simulate_pol, write_fasta

    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="tn93-bench-")
    tn93 = build_tn93(args.tn93_source, work)
    fasta = os.path.join(work, "pol.fasta")
    names, sequences = simulate_pol(args.n, args.m, seed=0)
    write_fasta(fasta, names, sequences)
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    devices = args.devices.split(",")
    threshold = repr(args.threshold)
    commands = {"tn93": [tn93, "-q", "-t", threshold, "-l", "500", "-o", os.path.join(work, "tn93.csv"), fasta]}
    for device in devices:
        commands[f"seqcompare {device}"] = [
            sys.executable, "-m", "seqcompare", "hamming", "-q", "--device", device, "--threads", str(args.threads),
            "--model", "tn93", "--max-dist", threshold, "--min-overlap", "501", "--csv", fasta,
            "-o", os.path.join(work, f"seqcompare_{device}.csv"),
        ]  # fmt: skip
    for name, command in commands.items():  # untimed: caches, compiled kernels
        timed(command, env)
    times = {name: [] for name in commands}
    for _ in range(args.repeats):
        for name, command in commands.items():
            times[name].append(timed(command, env))
            print(name, f"{times[name][-1]:.3f} s", flush=True)
    with open(os.path.join(work, "tn93.csv"), "rb") as handle:
        expected = sorted(handle.read().splitlines()[1:])
    identical = {}
    for device in devices:
        with open(os.path.join(work, f"seqcompare_{device}.csv"), "rb") as handle:
            identical[device] = sorted(handle.read().splitlines()[1:]) == expected
    alignment = seqcompare.Alignment(names, sequences)
    api = {}
    for device in devices:  # labelled: in one warm process, the alignment in memory, no text written
        seqcompare.model_pairs(alignment, model="tn93", max_dist=args.threshold, min_overlap=501,
                               threads=args.threads, device=device)  # fmt: skip
        rounds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            seqcompare.model_pairs(alignment, model="tn93", max_dist=args.threshold, min_overlap=501,
                                   threads=args.threads, device=device)  # fmt: skip
            rounds.append(time.perf_counter() - start)
        api[device] = rounds
    medians = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "workload": f"simulate_pol({args.n}, {args.m}, seed=0), TN93 <= {args.threshold}, tn93 -l 500",
        "threads": args.threads, "links": len(expected), "identical_lines": identical, "seconds": times,
        "median_seconds": medians,
        "ratio_tn93_over_seqcompare": {d: medians["tn93"] / medians[f"seqcompare {d}"] for d in devices},
        "api_warm_in_memory_seconds": api,
        "api_warm_in_memory_median": {d: statistics.median(v) for d, v in api.items()},
    }  # fmt: skip
    print(json.dumps(result, indent=1))
    with open(os.path.join(args.out, "results_tn93.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(identical.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
