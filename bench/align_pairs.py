"""CPU alignment of pairs by order (each pair its own query) beside parasail, side by side on the same cores.

Usage::

    python bench/align_pairs.py --parasail-source DIR --out DIR [--pairs 2000] [--length 1000] [--threads 2]
                                [--repeats 3] [--stats]

Workload: ``--pairs`` random DNA targets of ``--length`` bases and, as each pair's query, the target copied with
15% of its bases changed (substitutions, insertions and deletions in equal shares), written to two FASTA files.
Each mode (local, semi-global, global), NUC.4.4 with gap open 5 and extend 2 (parasail's ``nuc44``):

- parasail: ``bench/peers/parasail_pairs.c`` linked with parasail's striped AVX2 ``sw``/``sg``/``nw`` (16-bit
  lanes, 32-bit where a score saturates), built from ``--parasail-source``, OpenMP threads over the pairs;
- seqcompare: ``seqcompare align TARGETS QUERIES --mode M --matrix NUC.4.4 --gap-open 5 --gap-extend 2 -j T``.

Each tool a fresh process, from FASTA on disk to scores on disk or stdout, alternating, median of ``--repeats``;
the scores must be identical. With ``--stats``, parasail's ``_stats`` functions (``sw_stats_striped_avx2_256_16``
and kin) against ``seqcompare align ... --stats``: scores, matches, similar and length must be identical. Writes
``results_align_pairs.json`` (``results_align_pairs_stats.json``).
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

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"local": "sw", "semi-global": "sg", "global": "nw"}


def write_pairs(folder: str, pairs: int, length: int, seed: int = 11) -> tuple:
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGT"))
    targets, queries = os.path.join(folder, "targets.fa"), os.path.join(folder, "queries.fa")
    with open(targets, "w") as t_file, open(queries, "w") as q_file:
        for k in range(pairs):
            target = letters[rng.integers(0, 4, length)]
            query = []
            for base in target:
                event = rng.random()
                if event < 0.05:
                    query.append(letters[rng.integers(0, 4)])
                elif event < 0.10:
                    query.extend([base, letters[rng.integers(0, 4)]])
                elif event >= 0.15:
                    query.append(base)
            t_file.write(f">t{k}\n{''.join(target)}\n")
            q_file.write(f">q{k}\n{''.join(query)}\n")
    return targets, queries


def build_parasail(source: str, work: str) -> str:
    with open(os.path.join(work, "config.h"), "w") as handle:
        handle.write("#define HAVE_POSIX_MEMALIGN 1\n#define SIZEOF_INT 4\n")
    driver = os.path.join(work, "parasail_pairs")
    files = [os.path.join(source, "src", f"{kind}{stats}_striped_avx2_256_{bits}.c") for kind in ("nw", "sg", "sw")
             for stats in ("", "_stats") for bits in (16, 32)]  # fmt: skip
    files += [os.path.join(source, "src", name) for name in ("memory.c", "memory_avx2.c", "matrix_lookup.c")]
    subprocess.run(["gcc", "-O3", "-std=gnu99", "-mavx2", "-fopenmp", f"-I{work}", f"-I{source}",
                    f"-I{os.path.join(source, 'src')}", "-o", driver, os.path.join(HERE, "peers", "parasail_pairs.c"),
                    *files], check=True)  # fmt: skip
    return driver


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parasail-source", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--stats", action="store_true", help="parasail's _stats functions against --stats")
    args = parser.parse_args(argv)
    work = os.path.abspath(args.out)
    os.makedirs(work, exist_ok=True)
    driver = build_parasail(os.path.abspath(args.parasail_source), work)
    targets, queries = write_pairs(work, args.pairs, args.length)
    threads = str(args.threads)
    environment = dict(os.environ, OMP_NUM_THREADS=threads)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)  # time our process as from an install, with its bytecode
    record = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]), "pairs": args.pairs,
              "length": args.length, "threads": args.threads, "cpu": platform.processor() or platform.machine(),
              "stats": args.stats, "modes": {}}  # fmt: skip
    ours_out = os.path.join(work, "ours.tsv")
    for mode, kind in MODES.items():
        ours_command = [sys.executable, "-m", "seqcompare", "align", targets, queries, "--mode", mode, "--matrix",
                        "NUC.4.4", "--gap-open", "5", "--gap-extend", "2", "-j", threads, "-q", "-o", ours_out]  # fmt: skip
        theirs_command = [driver, kind, "nuc44", targets, queries, "5", "2"]
        if args.stats:
            ours_command.append("--stats")
            theirs_command.append("stats")
        subprocess.run(ours_command, check=True, env=environment)  # compiles on a cold cache: not timed
        runs = {"parasail": [], "seqcompare": []}
        for _ in range(args.repeats):
            started = time.perf_counter()
            theirs = subprocess.run(theirs_command, capture_output=True, text=True, check=True, env=environment)
            runs["parasail"].append(time.perf_counter() - started)
            started = time.perf_counter()
            subprocess.run(ours_command, check=True, env=environment)
            runs["seqcompare"].append(time.perf_counter() - started)
        with open(ours_out) as handle:
            header = handle.readline().rstrip("\n").split("\t")
            names = ("score", "matches", "similar", "length") if args.stats else ("score",)
            columns = [header.index(name) for name in names]
            ours = [[int(line.rstrip("\n").split("\t")[c]) for c in columns] for line in handle]
        identical = ours == [[int(value) for value in line.split()] for line in theirs.stdout.splitlines()]
        assert identical, f"{mode}: scores{' or statistics' if args.stats else ''} differ from parasail's"
        medians = {tool: statistics.median(times) for tool, times in runs.items()}
        record["modes"][mode] = {"seconds": runs, "median_s": medians, "identical_scores": identical,
                                 "parasail_over_seqcompare": medians["parasail"] / medians["seqcompare"]}  # fmt: skip
        print(f"{mode:12s} parasail {medians['parasail']:.3f} s  seqcompare {medians['seqcompare']:.3f} s  "
              f"ratio {medians['parasail'] / medians['seqcompare']:.2f}x  (scores identical)", flush=True)  # fmt: skip
    with open(os.path.join(work, f"results_align_pairs{'_stats' if args.stats else ''}.json"), "w") as handle:
        json.dump(record, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
