"""CPU alignment of pairs by order (each pair its own query) beside parasail, side by side on the same cores.

Usage::

    python bench/align_pairs.py --parasail-source DIR --out DIR [--pairs 2000] [--length 1000] [--threads 2]
                                [--repeats 3] [--stats | --cigar]

Workload: ``--pairs`` random DNA targets of ``--length`` bases and, as each pair's query, the target copied with
15% of its bases changed (substitutions, insertions and deletions in equal shares), written to two FASTA files.
Each mode (local, semi-global, global), NUC.4.4 with gap open 5 and extend 2 (parasail's ``nuc44``), or with
``--protein`` random proteins under BLOSUM62 with gap open 11 and extend 1 (``blosum62``):

- parasail: ``bench/peers/parasail_pairs.c`` linked with parasail's striped AVX2 ``sw``/``sg``/``nw`` (16-bit
  lanes, 32-bit where a score saturates), built from ``--parasail-source``, OpenMP threads over the pairs;
- seqcompare: ``seqcompare align TARGETS QUERIES --mode M --matrix NUC.4.4 --gap-open 5 --gap-extend 2 -j T``.

Each tool a fresh process, from FASTA on disk to scores on disk or stdout, alternating, median of ``--repeats``;
the scores must be identical. With ``--stats``, parasail's ``_stats`` functions (``sw_stats_striped_avx2_256_16``
and kin) against ``seqcompare align ... --stats``: scores, matches, similar and length must be identical. With
``--cigar``, parasail's ``_trace`` functions and ``parasail_result_get_cigar`` against ``seqcompare align ...
--cigar``: scores must be identical, and the CIGARs are compared with parasail's ``=`` and ``X`` read as ``M`` and
its ``I`` and ``D`` as our ``D`` and ``I`` (it names them from the query's side); the counts that agree as
given, and with parasail's gaps outside the aligned part (before its first pair, after its last) stripped, are
recorded. Writes ``results_align_pairs.json`` (``_stats.json``, ``_cigar.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = {"local": "sw", "semi-global": "sg", "global": "nw"}


def write_pairs(folder: str, pairs: int, length: int, seed: int = 11, alphabet: str = "ACGT") -> tuple:
    rng = np.random.default_rng(seed)
    letters = np.array(list(alphabet))
    targets, queries = os.path.join(folder, "targets.fa"), os.path.join(folder, "queries.fa")
    with open(targets, "w") as t_file, open(queries, "w") as q_file:
        for k in range(pairs):
            target = letters[rng.integers(0, len(letters), length)]
            query = []
            for base in target:
                event = rng.random()
                if event < 0.05:
                    query.append(letters[rng.integers(0, len(letters))])
                elif event < 0.10:
                    query.extend([base, letters[rng.integers(0, len(letters))]])
                elif event >= 0.15:
                    query.append(base)
            t_file.write(f">t{k}\n{''.join(target)}\n")
            q_file.write(f">q{k}\n{''.join(query)}\n")
    return targets, queries


def as_ours(cigar: str) -> str:
    """parasail's CIGAR in ours: ``=`` and ``X`` as ``M`` (runs merged), its ``I`` (a query letter against a gap)
    our ``D``, its ``D`` our ``I``."""
    runs = []
    for count, op in re.findall(r"(\d+)([=XMID])", cigar):
        op = {"=": "M", "X": "M", "I": "D", "D": "I"}.get(op, op)
        if runs and runs[-1][1] == op:
            runs[-1][0] += int(count)
        else:
            runs.append([int(count), op])
    return "".join(f"{count}{op}" for count, op in runs)


def build_parasail(source: str, work: str) -> str:
    with open(os.path.join(work, "config.h"), "w") as handle:
        handle.write("#define HAVE_POSIX_MEMALIGN 1\n#define SIZEOF_INT 4\n")
    driver = os.path.join(work, "parasail_pairs")
    files = [os.path.join(source, "src", f"{kind}{flavour}_striped_avx2_256_{bits}.c") for kind in ("nw", "sg", "sw")
             for flavour in ("", "_stats", "_trace") for bits in (16, 32)]  # fmt: skip
    files += [os.path.join(source, "src", name) for name in ("memory.c", "memory_avx2.c", "matrix_lookup.c", "cigar.c")]
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
    extra = parser.add_mutually_exclusive_group()
    extra.add_argument("--stats", action="store_true", help="parasail's _stats functions against --stats")
    extra.add_argument("--cigar", action="store_true", help="parasail's _trace functions and CIGARs against --cigar")
    parser.add_argument("--protein", action="store_true",
                        help="random proteins (20 letters), BLOSUM62 with gap open 11 and extend 1, in place of DNA")
    args = parser.parse_args(argv)
    matrix, theirs_matrix, gap_open, gap_extend = (("BLOSUM62", "blosum62", "11", "1") if args.protein
                                                   else ("NUC.4.4", "nuc44", "5", "2"))  # fmt: skip
    work = os.path.abspath(args.out)
    os.makedirs(work, exist_ok=True)
    driver = build_parasail(os.path.abspath(args.parasail_source), work)
    targets, queries = write_pairs(work, args.pairs, args.length,
                                   alphabet="ARNDCQEGHILKMFPSTWYV" if args.protein else "ACGT")  # fmt: skip
    threads = str(args.threads)
    environment = dict(os.environ, OMP_NUM_THREADS=threads)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)  # time our process as from an install, with its bytecode
    record = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]), "pairs": args.pairs,
              "length": args.length, "threads": args.threads, "cpu": platform.processor() or platform.machine(),
              "stats": args.stats, "cigar": args.cigar, "matrix": matrix, "gap_open": int(gap_open),
              "gap_extend": int(gap_extend), "modes": {}}  # fmt: skip
    ours_out = os.path.join(work, "ours.tsv")
    for mode, kind in MODES.items():
        ours_command = [sys.executable, "-m", "seqcompare", "align", targets, queries, "--mode", mode, "--matrix",
                        matrix, "--gap-open", gap_open, "--gap-extend", gap_extend, "-j", threads, "-q", "-o",
                        ours_out]  # fmt: skip
        theirs_command = [driver, kind, theirs_matrix, targets, queries, gap_open, gap_extend]
        if args.stats or args.cigar:
            ours_command.append("--stats" if args.stats else "--cigar")
            theirs_command.append("stats" if args.stats else "trace")
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
            rows = [line.rstrip("\n").split("\t") for line in handle]
        ours = [[int(row[c]) for c in columns] for row in rows]
        lines = [line.split() for line in theirs.stdout.splitlines()]
        identical = ours == [[int(value) for value in line[: len(names)]] for line in lines]
        assert identical, f"{mode}: scores{' or statistics' if args.stats else ''} differ from parasail's"
        if args.cigar:
            at = header.index("cigar")
            theirs_cigars = [as_ours(line[1] if len(line) > 1 else "") for line in lines]
            agree = sum(row[at] == cigar for row, cigar in zip(rows, theirs_cigars))
            # parasail's CIGAR may hold gaps before the alignment's first pair or after its last (semi-global's
            # free end gaps, a local alignment's leading gap), outside the aligned part that ours describes.
            inner = sum(row[at] == re.sub(r"^\d+[ID]|\d+[ID]$", "", cigar) or row[at] == cigar
                        for row, cigar in zip(rows, theirs_cigars))  # fmt: skip
            record.setdefault("cigars_agreeing", {})[mode] = {"as_given": agree, "end_gaps_stripped": inner,
                                                               "pairs": len(rows)}  # fmt: skip
            print(f"{mode:12s} CIGARs agreeing with parasail's: {agree} of {len(rows)}; {inner} with parasail's gaps "
                  "outside the aligned part stripped", flush=True)  # fmt: skip
        medians = {tool: statistics.median(times) for tool, times in runs.items()}
        record["modes"][mode] = {"seconds": runs, "median_s": medians, "identical_scores": identical,
                                 "parasail_over_seqcompare": medians["parasail"] / medians["seqcompare"]}  # fmt: skip
        print(f"{mode:12s} parasail {medians['parasail']:.3f} s  seqcompare {medians['seqcompare']:.3f} s  "
              f"ratio {medians['parasail'] / medians['seqcompare']:.2f}x  (scores identical)", flush=True)  # fmt: skip
    suffix = "_stats" if args.stats else "_cigar" if args.cigar else ""
    with open(os.path.join(work, f"results_align_pairs{suffix}.json"), "w") as handle:
        json.dump(record, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
