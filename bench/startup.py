"""Start-up of every subcommand, as a user runs it (issue 17, goal 7): the wall time of the whole ``seqcompare``
process, warm on a tiny input (Numba's cache filled by an earlier run, where the input needs it at all), and
cold on a working-size input (an empty cache: every kernel the command needs is compiled in that run, and the
run must say so on stderr), then that working-size run again with its kernels loaded from the filled cache.

Usage::

    python bench/startup.py --out DIR [--repeats 7] [--cold]

Tiny inputs: 3 FASTA genomes of 60 bases (hamming, align), 2 reads against 2 signatures (scan), 3 series of 8
(dtw), a 4-sample VCF of 6 SNPs (ccc). Working-size inputs, big enough for the compiled kernels: 2,000 genomes
of 5,000 sites (hamming), 120 sequences of 400 bases all-vs-all (align), 60 reads of 3,000 bases against 6
signatures of 800 (scan), 120 series of 400 (dtw), a VCF of 300 samples and 400 SNPs (ccc). Writes
``results_startup.json``.
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


def write_inputs(folder: str) -> dict:
    def path(name, text):
        full = os.path.join(folder, name)
        with open(full, "w") as handle:
            handle.write(text)
        return full

    genomes = path("g.fa", ">a\n" + "ACGT" * 15 + "\n>b\n" + "ACGA" * 15 + "\n>c\n" + "ACCT" * 15 + "\n")
    reads = path("r.fq", "@r1\n" + "ACGTTGCA" * 8 + "\n+\n" + "I" * 64 + "\n@r2\n" + "TTTTACGT" * 8 + "\n+\n" + "I" * 64 + "\n")
    signatures = path("s.fa", ">s1\nACGTTGCAAC\n>s2\nGGGGCCCCAA\n")
    series = path("x.csv", "1,2,3,4,5,6,7,8\n2,3,4,5,6,7,8,9\n0,0,1,1,2,2,3,3\n")
    header = "##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\ts2\ts3\ts4\n"
    rows = "".join(f"1\t{100 + k}\tv{k}\tA\tG\t.\tPASS\t.\tGT\t0|1\t1|1\t0|0\t{k % 2}|0\n" for k in range(6))
    vcf = path("v.vcf", header + rows)
    return {"hamming": ["hamming", genomes], "align": ["align", genomes, "--all-vs-all"],
            "scan": ["scan", reads, signatures], "dtw": ["dtw", series], "ccc": ["ccc", vcf]}  # fmt: skip


def write_working_inputs(folder: str) -> dict:
    import numpy as np

    rng = np.random.default_rng(17)

    def fasta(name, rows):
        full = os.path.join(folder, name)
        with open(full, "w") as handle:
            handle.writelines(f">r{k}\n{''.join(np.array(list('ACGT'))[row])}\n" for k, row in enumerate(rows))
        return full

    root = rng.integers(0, 4, 5000)
    genomes = np.where(rng.random((2000, 5000)) < 0.01, rng.integers(0, 4, (2000, 5000)), root)
    signatures = rng.integers(0, 4, (6, 800))
    reads = rng.integers(0, 4, (60, 3000))
    reads[::10, 100:900] = signatures[0]
    read_path = os.path.join(folder, "reads.fq")
    with open(read_path, "w") as handle:
        for k, row in enumerate(reads):
            handle.write(f"@read{k}\n{''.join(np.array(list('ACGT'))[row])}\n+\n{'I' * row.size}\n")
    series = os.path.join(folder, "series.csv")
    np.savetxt(series, rng.integers(-50, 50, (120, 400)), fmt="%d", delimiter=",")
    vcf = os.path.join(folder, "w.vcf")
    with open(vcf, "w") as handle:
        handle.write("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\t"
                     + "\t".join(f"s{k}" for k in range(300)) + "\n")  # fmt: skip
        calls = rng.integers(0, 2, (400, 300, 2))
        for k in range(400):
            handle.write(f"1\t{100 + k}\tv{k}\tA\tG\t.\tPASS\t.\tGT\t"
                         + "\t".join(f"{a}|{b}" for a, b in calls[k]) + "\n")  # fmt: skip
    return {"hamming": ["hamming", fasta("genomes.fa", genomes)],
            "align": ["align", fasta("seqs.fa", rng.integers(0, 4, (120, 400))), "--all-vs-all"],
            "scan": ["scan", read_path, fasta("sigs.fa", signatures)], "dtw": ["dtw", series],
            "ccc": ["ccc", vcf]}  # fmt: skip


def wall(command: list, environment: dict, said: list | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=environment)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr.decode()}")
    if said is not None:
        said.append("compiling kernels (first run only)" in done.stderr.decode())
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--cold", action="store_true", help="also time each command once on an empty Numba cache")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpus": os.cpu_count(), "rows": {}}  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        commands = write_inputs(folder)
        working = write_working_inputs(folder) if args.cold else {}
        for name, arguments in commands.items():
            command = [sys.executable, "-m", "seqcompare", *arguments, "-o", os.path.join(folder, f"{name}.out")]
            entry = {}
            if args.cold:
                cache = os.path.join(folder, f"cache-{name}")
                environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
                said = []
                cold = [sys.executable, "-m", "seqcompare", *working[name], "-o", os.path.join(folder, f"{name}.cold")]
                entry["cold_s"] = wall(cold, environment, said)
                entry["cold_said_compiling"] = said[0]
                # The same working-size run again, every kernel now loaded from the cache it filled.
                loaded = [wall(cold, environment) for _ in range(args.repeats)]
                entry.update(loaded_median_s=statistics.median(loaded), loaded_runs_s=loaded)
                shutil.rmtree(cache, ignore_errors=True)
            environment = dict(os.environ)
            wall(command, environment)  # fill the cache
            runs = [wall(command, environment) for _ in range(args.repeats)]
            entry.update(warm_median_s=statistics.median(runs), warm_runs_s=runs)
            report["rows"][name] = entry
            cold = (f"  cold {entry['cold_s']:.2f} s (said so: {entry['cold_said_compiling']}), working size loaded "
                    f"from the cache {entry['loaded_median_s']:.3f} s" if args.cold else "")  # fmt: skip
            print(f"{name:8s} warm {entry['warm_median_s']:.3f} s{cold}", flush=True)
    with open(os.path.join(args.out, "results_startup.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
