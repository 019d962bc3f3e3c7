"""CPU Hamming benchmarks: every method side by side (the paper's Table VI) and the peers, in one run.

Usage::

    pip install '.[bench]'          # hammingdist, pairsnp, scipy
    python bench/hamming_cpu.py --threads 2 --out bench/results_hamming_cpu.json

Datasets: the bundled real alignment (338 x 29,903) and simulated 1000 x 30,000 and 4000 x 30,000 DNA
alignments (``seqcompare simulate alignment``: random root, ~1.5% substitutions per sequence in lineages,
0.5% N, three 30-site '-' runs per sequence), written to ``bench/work/``.

End to end means a fresh process from FASTA on disk to the lower triangle on disk, timed from outside
(interpreter start-up, imports and Numba's cache loading included, as a user sees it). Every figure is the
median of ``--repeats`` runs. Peers' semantics differ from ours (hammingdist counts N and treats '-' as a
wildcard; scipy counts every difference); the work per pair-site is the same, so the times compare.
"""

from __future__ import annotations

import argparse
import gzip
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")


def median_time(command: list[str], repeats: int, env=None) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ensure_dataset(n: int, m: int, seed: int, substitution_rate: float = 0.015) -> str:
    from seqcompare.simulate import simulate_alignment, write_fasta

    os.makedirs(WORK, exist_ok=True)
    suffix = "" if substitution_rate == 0.015 else f"_sub{substitution_rate}"
    path = os.path.join(WORK, f"sim_{n}x{m}_seed{seed}{suffix}.fasta")
    if not os.path.exists(path):
        names, sequences = simulate_alignment(n, m, seed=seed, substitution_rate=substitution_rate)
        write_fasta(path + ".tmp", names, sequences)
        os.replace(path + ".tmp", path)
    return path


def method_table(path: str, threads: int, repeats: int) -> list[dict]:
    """Table VI: compute time of each method on one dataset, in-process, after a warm-up."""
    import seqcompare
    from seqcompare.hamming.api import encode_inputs, run_hamming
    from seqcompare.allpairs import MatrixReduction

    aln = seqcompare.read_alignment(path)
    encoded = encode_inputs(aln)
    n, m = aln.sequences.shape
    pair_sites = n * (n - 1) / 2 * m
    rows, reference = [], None
    for method in ("vector", "matrix", "tiled", "bitpack"):
        run_hamming(encode_inputs(aln.sequences[:8].view("S1")), MatrixReduction((8, 8), True), method=method)
        times = []
        for _ in range(1 if method == "vector" else repeats):
            start = time.perf_counter()
            result = run_hamming(encoded, MatrixReduction((n, n), True), method=method, threads=threads)
            times.append(time.perf_counter() - start)
        if reference is None:
            reference = result
        identical = bool(np.array_equal(result, reference))
        rows.append({"method": method, "seconds": statistics.median(times), "identical_to_vector": identical,
                     "pair_sites_per_s": pair_sites / statistics.median(times)})  # fmt: skip
    for previous, row in zip([None, *rows], rows):
        row["incremental_speedup"] = None if previous is None else previous["seconds"] / row["seconds"]
        row["overall_speedup"] = rows[0]["seconds"] / row["seconds"]
    return rows


_HAMMINGDIST = """
import sys, hammingdist
data = hammingdist.from_fasta_large(sys.argv[1])
data.dump_lower_triangular(sys.argv[2])
"""

_SCIPY = """
import sys, numpy as np
from scipy.spatial.distance import pdist
import seqcompare
aln = seqcompare.read_alignment(sys.argv[1])
d = pdist(aln.sequences, metric="hamming")
np.save(sys.argv[2], np.rint(d * aln.length).astype(np.int32))
"""

_PAIRSNP = """
import sys, numpy as np
from pairsnp import calculate_snp_matrix, calculate_distance_matrix
sparse, consensus, seq_names = calculate_snp_matrix(sys.argv[1])
d = calculate_distance_matrix(sparse, consensus, "dist", False)
np.save(sys.argv[2], np.asarray(d, dtype=np.int32))
"""


def peers(path: str, threads: int, repeats: int, skip: set[str]) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))  # fmt: skip
    out = os.path.join(WORK, "out")
    seqcompare_cli = [sys.executable, "-m", "seqcompare", "hamming", "-q", "-j", str(threads), "-L", path]
    result = {"seqcompare -L (end to end)": median_time(seqcompare_cli + ["-o", out + ".tsv"], repeats, env)}
    result["seqcompare --max-dist 20 (end to end)"] = median_time(
        seqcompare_cli[:-2] + ["--max-dist", "20", path, "-o", out + ".pairs"], repeats, env
    )
    for name, code in (("hammingdist from_fasta_large + dump_lower_triangular", _HAMMINGDIST),
                       ("scipy pdist(hamming)", _SCIPY), ("pairsnp", _PAIRSNP)):  # fmt: skip
        key = name.split()[0]
        if key in skip:
            continue
        try:
            result[name] = median_time([sys.executable, "-c", code, path, out + ".peer"], repeats, env)
        except subprocess.CalledProcessError as exc:
            result[name] = f"failed: {exc}"
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "results_hamming_cpu.json"))
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    args = parser.parse_args(argv)

    # Peers read plain FASTA only (hammingdist crashes on gzip input), so every tool gets the plain file.
    os.makedirs(WORK, exist_ok=True)
    real = os.path.join(WORK, "sarscov2_338.fasta")
    with gzip.open(os.path.join(ROOT, "data", "sarscov2_338.fasta.gz")) as src, open(real, "wb") as dst:
        dst.write(src.read())
    sizes = [(200, 3000)] if args.quick else [(1000, 30000), (4000, 30000)]
    datasets = {"sarscov2_338 (real)": real}
    for n, m in sizes:
        datasets[f"simulated {n}x{m}"] = ensure_dataset(n, m, seed=n)
    report = {
        "command": " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "python": platform.python_version()},  # fmt: skip
        "threads": args.threads,
        "method_table": {},
        "peers": {},
    }
    table_set = list(datasets)[1]
    report["method_table"][table_set] = method_table(datasets[table_set], args.threads, args.repeats)
    for label, path in datasets.items():
        # pairsnp 0.0.7 calls np.fromstring in binary mode, which NumPy 2 removed: it cannot run here.
        skip = {"pairsnp", "scipy"} if "4000" in label else {"pairsnp"}
        report["peers"][label] = peers(path, args.threads, args.repeats, skip)
        print(label, json.dumps(report["peers"][label], indent=1), flush=True)
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps(report["method_table"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
