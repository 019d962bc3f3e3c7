"""Issue 17, goal 5: CPU Hamming end to end against hammingdist, interleaved fresh processes in one run.

Usage::

    python bench/hamming_goal5.py --threads 2 --rounds 5 --out bench/results_hamming_goal5.json

Each round runs, one after another, fresh processes of: ``seqcompare hamming -q -j T -L`` (``--method auto``,
which takes ``sparse`` here, and ``--method bitpack`` for the same-run A/B) and hammingdist 1.5's
``from_fasta_large`` + ``dump_lower_triangular`` with ``OMP_NUM_THREADS=T``, on the simulated 4,000 x 30,000
alignment of ``bench/hamming_cpu.py`` (FASTA on disk to the lower triangle on disk). ``--baseline SRC`` adds
another tree's ``-L`` run (its ``src/`` first on ``PYTHONPATH``) to every round, for an A/B on one machine. One untimed round first
warms the page cache and Numba's on-disk cache. The outputs' distances are checked equal to hammingdist's where
both count the same sites (hammingdist counts N and '-' differently: see ``bench/hamming_cpu.py``); here only
seqcompare's two methods are compared byte for byte.
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

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # time fresh processes as from an install (see hamming_cpu.py)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hamming_cpu import WORK, ensure_dataset  # noqa: E402

_HAMMINGDIST = "import sys, hammingdist\nhammingdist.from_fasta_large(sys.argv[1]).dump_lower_triangular(sys.argv[2])\n"


def timed(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fasta", help="input (default: the simulated 4,000 x 30,000 alignment)")
    parser.add_argument("--out", default=os.path.join(HERE, "results_hamming_goal5.json"))
    parser.add_argument("--baseline", metavar="SRC",
                        help="also time another tree's seqcompare (its src/ directory, put first on PYTHONPATH) in "
                             "the same rounds; its output must equal this tree's")  # fmt: skip
    args = parser.parse_args(argv)
    path = args.fasta or ensure_dataset(4000, 30000, seed=4000)
    threads = str(args.threads)
    env = dict(os.environ, OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    out = os.path.join(WORK, "goal5")
    cli = [sys.executable, "-m", "seqcompare", "hamming", "-q", "-j", threads, "-L", path]
    commands = {
        "seqcompare -L (auto)": cli + ["-o", out + ".auto.tsv"],
        "seqcompare -L --method bitpack": cli + ["--method", "bitpack", "-o", out + ".bitpack.tsv"],
        "hammingdist from_fasta_large + dump_lower_triangular": [sys.executable, "-c", _HAMMINGDIST, path,
                                                                  out + ".hammingdist.csv"],
    }  # fmt: skip
    envs = {name: env for name in commands}
    if args.baseline:
        name = f"baseline {os.path.abspath(args.baseline)} -L (auto)"
        commands = {name: cli + ["-o", out + ".baseline.tsv"], **commands}
        envs[name] = dict(env, PYTHONPATH=os.path.abspath(args.baseline) + os.pathsep + env.get("PYTHONPATH", ""))
    for name, command in commands.items():  # untimed: page cache, Numba's cache
        timed(command, envs[name])
    for other in [".bitpack.tsv"] + ([".baseline.tsv"] if args.baseline else []):
        with open(out + ".auto.tsv", "rb") as a, open(out + other, "rb") as b:
            if a.read() != b.read():
                raise SystemExit(f"outputs differ: .auto.tsv and {other}")
    times = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, command in commands.items():
            times[name].append(round(timed(command, envs[name]), 3))
    medians = {name: statistics.median(values) for name, values in times.items()}
    peer = medians["hammingdist from_fasta_large + dump_lower_triangular"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()  # fmt: skip
    report = {
        "command": " ".join(["bench/hamming_goal5.py", *(argv if argv is not None else sys.argv[1:])]),
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "input": os.path.basename(path),
        "threads": args.threads,
        "times": times,
        "medians": medians,
        "hammingdist / seqcompare": {name: round(peer / value, 2) for name, value in medians.items()},
    }
    if args.baseline:
        report["baseline_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                                   text=True, cwd=args.baseline).stdout.strip()  # fmt: skip
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
