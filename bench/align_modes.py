"""Issue 19's figures: alignment modes through the public API, side by side with the peers, in one run.

Usage::

    python3 bench/align_modes.py traceback --out DIR [--pairs 20000 --length 1000 --repeats 3]
    python3 bench/align_modes.py search --out DIR --cudasw-source .peers/CUDASW4 [--db 200000 --db-length 256]
    python3 bench/align_modes.py cpu --out DIR --parasail-source DIR [--threads N --repeats 3]
    python3 bench/align_modes.py identity16s --out DIR [--reads FASTQ --subset 100]

- ``traceback``: global NW with ``cigar=True`` (edit costs, DNA pairs of about ``--length`` at 10% divergence):
  the CPU's path (scores, then a compiled traceback per pair on every thread) against the GPU's (scores, then the
  traceback kernel), and scores alone on each; the CIGARs must be identical.
- ``search``: protein Smith-Waterman of CUDASW++4.0's own query set (its ``allqueries.fasta``: 20 real proteins of
  144 to 5,478 residues) against a database of ``--db`` random proteins of ``--db-length`` residues (the shape of
  its ``runpeakbenchmark.sh`` pseudo database, written as FASTA so both tools read the same sequences), BLOSUM62,
  gap open 11 and extend 1 (CUDASW++'s defaults; a gap of L costs 11 + (L - 1)). CUDASW++4.0 is built from
  ``--cudasw-source`` (its Makefile: ``make release`` with ``-arch=sm_90`` and ``-x cu``, the command below) and
  its database made with its ``makedb`` (outside the searches' times, as in its benchmarks; timed once on its
  own, a FASTA user's step before a first search); each tool runs in a fresh process, wall time from the process's start. Every top-10 hit it
  reports must have the same score in ours. Ours runs three ways: a script through the API (every score with its
  ends), the same with ``positions=False`` (every score alone, what CUDASW++ computes), and the command line as a
  user runs the same search (``seqcompare align DB QUERIES ... --top 10``: each query's 10 best hits as TSV, what
  CUDASW++ writes; scores alone, then the hits' ends), whose scores at every rank must equal CUDASW++'s. Then,
  in this process, our kernels alone (labelled): CUDA events around every launch, best of 3 warm calls, with and
  without the ends; and from the first launch's start to the last one's end, gaps included.
- ``cpu``: the same search on the CPU, side by side with parasail's striped AVX2 ``sw`` (a profile per query,
  16-bit lanes, 32-bit where saturated) built from ``--parasail-source`` with ``bench/peers/parasail_search.c``:
  the bundled 31 UniProt proteins against themselves, and CUDASW++'s queries against ``--cpu-db`` random proteins;
  identical scores required.

- ``identity16s``: the identity matrix of real PacBio HiFi 16S reads, both strands, through the CLI.

Results go to ``DIR/results_align_modes_<part>.json``.
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

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
AMINO = "ARNDCQEGHILKMFPSTWYV"


def commit() -> str:
    done = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def write(out: str, part: str, record: dict) -> None:
    record.update({"commit": commit(), "host": platform.node(), "cpu": platform.processor() or platform.machine(),
                   "cores": os.cpu_count()})  # fmt: skip
    path = os.path.join(out, f"results_align_modes_{part}.json")
    with open(path, "w") as handle:
        json.dump(record, handle, indent=1)
    print(json.dumps(record, indent=1))


def mutated(rng, sequence: np.ndarray, rate: float) -> np.ndarray:
    """Substitutions, insertions and deletions, each at ``rate / 3`` a base."""
    keep = rng.random(sequence.size) >= rate / 3
    out = np.where(rng.random(sequence.size) < rate / 3, rng.integers(0, 4, sequence.size), sequence)[keep]
    at = rng.integers(0, out.size + 1, rng.binomial(out.size, rate / 3))
    return np.insert(out, at, rng.integers(0, 4, at.size))


def traceback(args) -> None:
    import seqcompare

    rng = np.random.default_rng(19)
    targets, queries = [], []
    for _ in range(args.pairs):
        base = rng.integers(0, 4, args.length)
        targets.append("".join("ACGT"[c] for c in base))
        queries.append("".join("ACGT"[c] for c in mutated(rng, base, 0.1)))
    cells = sum(len(t) * len(q) for t, q in zip(targets, queries))
    record = {"part": "traceback", "pairs": args.pairs, "length": args.length, "cells": cells, "runs": {}}
    results = {}
    for name, options in (("cpu_scores", {}), ("cpu_cigar", {"cigar": True}), ("gpu_scores", {"device": "cuda"}),
                          ("gpu_cigar", {"device": "cuda", "cigar": True})):  # fmt: skip
        if name.startswith("gpu") and args.no_gpu:
            continue
        times = []
        for _ in range(args.repeats + 1):  # the first run compiles or loads: not counted
            started = time.perf_counter()
            results[name] = seqcompare.align(targets, queries, **options)
            times.append(time.perf_counter() - started)
        record["runs"][name] = {"seconds": times[1:], "median": statistics.median(times[1:]),
                                "gcups": cells / statistics.median(times[1:]) / 1e9}  # fmt: skip
        print(name, record["runs"][name], flush=True)
    if "gpu_cigar" in results:
        assert results["gpu_cigar"].cigars == results["cpu_cigar"].cigars, "CIGARs differ"
        assert np.array_equal(results["gpu_cigar"].scores, results["cpu_cigar"].scores)
        record["identical_cigars"] = True
        runs = record["runs"]
        record["gpu_cigar_speedup_over_cpu_cigar"] = runs["cpu_cigar"]["median"] / runs["gpu_cigar"]["median"]
    write(args.out, "traceback", record)


def random_proteins(rng, count: int, length: int) -> list:
    letters = np.frombuffer(AMINO.encode(), dtype=np.uint8)
    codes = letters[rng.integers(0, len(AMINO), (count, length))]
    return [row.tobytes().decode() for row in codes]


def search_workload(db: str, queries: str) -> tuple:
    """``(database, queries, matrix, pairs)`` of a protein search: the two FASTA files read in BLOSUM62's alphabet,
    and every query against every database sequence (query-major)."""
    from seqcompare.align.alphabets import from_letters
    from seqcompare.align.matrices import substitution_matrix
    from seqcompare.io.fasta import read_sequences

    matrix = substitution_matrix("BLOSUM62")
    alphabet = from_letters(matrix.name, matrix.letters)
    database = read_sequences(db, alphabet=alphabet)
    asked = read_sequences(queries, alphabet=alphabet)
    n_db, n_queries = len(database), len(asked)
    pairs = np.stack([np.tile(np.arange(n_db), n_queries), np.repeat(np.arange(n_queries), n_db)], axis=1)
    return database, asked, matrix, pairs


def write_random_database(path: str, count: int, length: int = 256, seed: int = 19) -> None:
    """``count`` random proteins of ``length`` as FASTA (records ``r0``, ``r1``, ...)."""
    with open(path, "w") as handle:
        for k, sequence in enumerate(random_proteins(np.random.default_rng(seed), count, length)):
            handle.write(f">r{k}\n{sequence}\n")


def replaced(text: str, old: str, new: str) -> str:
    """``text`` (a kernel source) with its one occurrence of ``old`` replaced: a variant for the ablation
    benchmarks (``local16_ablation.py``, ``dp_long_variants.py``), which fail loudly once the source changes."""
    assert text.count(old) == 1, f"the source changed; no single {old!r}"
    return text.replace(old, new)


def time_kernel_launches(cupy, owner) -> list:
    """Wrap ``owner.module`` (an engine module's compiler, such as ``seqcompare.align.modes_gpu``) so that every
    kernel launch from the modules it compiles lies between two CUDA events; returns the list that receives each
    launch's ``(kernel name, start event, end event)`` (the caller clears it between calls)."""
    launches = []
    compile_module = owner.module

    class TimedModule:
        """A compiled module whose kernels record CUDA events around each launch."""

        def __init__(self, compiled):
            self.compiled = compiled

        def get_function(self, name):
            kernel = self.compiled.get_function(name)

            def launch(*args, **kwargs):
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                start.record()
                kernel(*args, **kwargs)
                end.record()
                launches.append((name, start, end))

            return launch

    owner.module = lambda *args, **kwargs: TimedModule(compile_module(*args, **kwargs))
    return launches


def our_search(db: str, queries: str, out: str, device: str = "cuda", threads: str = "0", positions: str = "1") -> None:
    """One search in this process (run as a fresh process by :func:`search` and :func:`cpu`): every query against
    every database sequence, local, BLOSUM62 11/1, on ``device`` (the CPU: ``threads``), with the ends or (``positions``
    "0") the scores alone; scores to ``out`` (.npy, queries by rows)."""
    started = time.perf_counter()
    import seqcompare

    database, asked, matrix, pairs = search_workload(db, queries)
    n_db, n_queries = len(database), len(asked)
    computed = time.perf_counter()
    result = seqcompare.align(database, asked, mode="local", matrix=matrix, gap_open=11, gap_extend=1, pairs=pairs,
                              device=device, threads=int(threads) or None, positions=positions == "1")  # fmt: skip
    finished = time.perf_counter()
    np.save(out, result.scores.reshape(n_queries, n_db))
    print(json.dumps({"read_s": computed - started, "align_s": finished - computed, "cells": result.cells}))


def search(args) -> None:
    source = os.path.abspath(args.cudasw_source)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    # Its Makefile, for sm_90 without NVTX's library; its .cpp files compiled as CUDA (-x cu), which CUDA 13's
    # headers need (makedb.cpp reaches CCCL's device intrinsics).
    build = subprocess.run(f"make -j{os.cpu_count()} release NVCC_FLAGS='-arch=sm_90 -lineinfo "
                           f"--expt-relaxed-constexpr -rdc=true --extended-lambda -Xcompiler=-fopenmp' "
                           f"DIALECT='-std=c++17 -x cu'", shell=True, cwd=source, capture_output=True, text=True)  # fmt: skip
    print(build.stdout[-2000:], build.stderr[-3000:], flush=True)
    build.check_returncode()
    db = os.path.join(work, "db.fasta")
    write_random_database(db, args.db, args.db_length)
    queries = os.path.join(source, "allqueries.fasta")
    prefix = os.path.join(work, "cudasw_db", "db")
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    started = time.perf_counter()
    subprocess.run([os.path.join(source, "makedb"), db, prefix], check=True, capture_output=True)
    makedb_s = time.perf_counter() - started  # once: a FASTA user's step before CUDASW++'s first search
    print("cudasw4 makedb", makedb_s, flush=True)
    record = {"part": "search", "db": args.db, "db_length": args.db_length, "queries": "CUDASW4 allqueries.fasta",
              "cudasw4_makedb_s": makedb_s, "runs": {"cudasw4": []}}  # fmt: skip
    hits = None
    for _ in range(args.repeats):
        tsv = os.path.join(work, "cudasw.tsv")
        started = time.perf_counter()
        done = subprocess.run([os.path.join(source, "align"), "--query", queries, "--db", prefix, "--top", "10",
                               "--verbose", "--uploadFull", "--mat", "blosum62", "--gop", "-11", "--gex", "-1",
                               "--tsv", "--of", tsv], capture_output=True, text=True)  # fmt: skip
        wall = time.perf_counter() - started
        if done.returncode:
            print(done.stdout[-3000:], done.stderr[-3000:])
            done.check_returncode()
        gcups = [line for line in (done.stdout + done.stderr).splitlines() if "GCUPS" in line]
        record["runs"]["cudasw4"].append({"wall_s": wall, "reported": gcups[-3:]})
        print("cudasw4", wall, gcups[-3:], flush=True)
        hits = [line.split("\t") for line in open(tsv).read().splitlines() if line and line[0].isdigit()]
    tools = ["cudasw4"]
    for tool, positions in (("seqcompare", "1"), ("seqcompare-scores", "0")):
        tools.append(tool)
        record["runs"][tool] = []
        for _ in range(args.repeats):
            scores_path = os.path.join(work, "ours.npy")
            started = time.perf_counter()
            done = subprocess.run([sys.executable, __file__, "our-search", db, queries, scores_path, "cuda", "0",
                                   positions], capture_output=True, text=True)  # fmt: skip
            wall = time.perf_counter() - started
            if done.returncode:
                print(done.stdout[-3000:], done.stderr[-3000:])
                done.check_returncode()
            inside = json.loads(done.stdout.strip().splitlines()[-1])
            record["runs"][tool].append({"wall_s": wall, **inside})
            print(tool, wall, inside, flush=True)
        ours = np.load(scores_path)
        cells = record["runs"][tool][0]["cells"]
        record["cells"] = cells
        # Every top hit CUDASW++ reports (query number, ..., score, reference length, reference header, ...): the
        # header r<k> names database sequence k.
        mismatched = [hit for hit in hits if ours[int(hit[0]), int(hit[6][1:])] != int(hit[4])]
        record[f"{tool}_top_hits_checked"] = len(hits)
        record[f"{tool}_top_hits_differing"] = len(mismatched)
        record[f"{tool}_examples_differing"] = mismatched[:5]
        aligning = statistics.median(run["align_s"] for run in record["runs"][tool])
        record[f"{tool}_align_median_s"] = aligning
        record[f"{tool}_align_gcups"] = cells / aligning / 1e9
    # The command line's search, as a user runs it: each query's 10 best hits written as TSV, what CUDASW++
    # writes above. Its ranks must hold CUDASW++'s scores (the hits themselves may differ only among ties).
    tools.append("seqcompare-cli")
    record["runs"]["seqcompare-cli"] = []
    for _ in range(args.repeats):
        top_path = os.path.join(work, "ours_top.tsv")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "seqcompare", "align", db, queries, "--mode", "local", "--matrix",
                        "BLOSUM62", "--gap-open", "11", "--gap-extend", "1", "--top", "10", "--device", "cuda", "-q",
                        "-o", top_path], check=True)  # fmt: skip
        wall = time.perf_counter() - started
        record["runs"]["seqcompare-cli"].append({"wall_s": wall})
        print("seqcompare-cli", wall, flush=True)
    ours_top = [line.split("\t") for line in open(top_path).read().splitlines()[1:]]
    names = [line[1:].split()[0] for line in open(queries) if line.startswith(">")]
    ranked = {(names.index(line[0]), int(line[1]) - 1): int(line[3]) for line in ours_top}
    theirs = {(int(hit[0]), int(hit[3])): int(hit[4]) for hit in hits}
    record["seqcompare-cli_top_scores_checked"] = len(theirs)
    record["seqcompare-cli_top_scores_differing"] = sum(ranked.get(key) != score for key, score in theirs.items())
    for tool in tools:
        walls = [run["wall_s"] for run in record["runs"][tool]]
        record[f"{tool}_wall_median_s"] = statistics.median(walls)
        record[f"{tool}_wall_gcups"] = record["cells"] / statistics.median(walls) / 1e9
    record["kernels_gcups"] = kernel_rates(db, queries)
    print("kernels alone (GCUPS, best of 3 warm calls):", record["kernels_gcups"], flush=True)
    write(args.out, "search", record)


def kernel_rates(db: str, queries: str, calls: int = 3) -> dict:
    """Our search's kernels alone (labelled, not a product figure): the sum of CUDA events around every launch of
    a warm call, the best of ``calls``, with the ends (``ends``) and without (``scores``)."""
    import cupy

    import seqcompare
    import seqcompare.align.modes_gpu as modes_gpu

    launches = time_kernel_launches(cupy, modes_gpu)
    database, asked, matrix, pairs = search_workload(db, queries)
    rates = {}
    for name, positions in (("ends", True), ("scores", False), ("ends_again", True), ("scores_again", False)):
        best = span = None
        for call in range(calls + 1):
            launches.clear()
            result = seqcompare.align(database, asked, mode="local", matrix=matrix, gap_open=11, gap_extend=1,
                                      pairs=pairs, device="cuda", positions=positions)  # fmt: skip
            cupy.cuda.runtime.deviceSynchronize()
            seconds = sum(cupy.cuda.get_elapsed_time(start, stop) / 1e3 for _, start, stop in launches)
            # from the first launch's start to the last one's end: the kernels and any gaps the host left
            spanned = cupy.cuda.get_elapsed_time(launches[0][1], launches[-1][2]) / 1e3
            if call:  # the first call compiles
                best = seconds if best is None else min(best, seconds)
                span = spanned if span is None else min(span, spanned)
        rates[name] = round(result.cells / best / 1e9, 1)
        rates[name + "_first_launch_to_last_end"] = round(result.cells / span / 1e9, 1)
    return rates


def build_parasail(source: str, work: str) -> str:
    """``bench/peers/parasail_search.c`` linked with parasail's own striped AVX2 Smith-Waterman files, built
    from its source (a two-line config.h), with OpenMP."""
    with open(os.path.join(work, "config.h"), "w") as handle:
        handle.write("#define HAVE_POSIX_MEMALIGN 1\n#define SIZEOF_INT 4\n")
    driver = os.path.join(work, "parasail_search")
    files = [os.path.join(source, "src", name) for name in ("sw_striped_avx2_256_16.c", "sw_striped_avx2_256_32.c",
                                                            "memory.c", "memory_avx2.c", "matrix_lookup.c")]  # fmt: skip
    subprocess.run(["gcc", "-O3", "-std=gnu99", "-mavx2", "-fopenmp", f"-I{work}", f"-I{source}",
                    f"-I{os.path.join(source, 'src')}", "-o", driver, os.path.join(HERE, "peers", "parasail_search.c"),
                    *files], check=True)  # fmt: skip
    return driver


def cpu(args) -> None:
    """Local protein alignment on the CPU, every query against every database sequence, side by side with
    parasail's striped AVX2 ``sw`` (a profile per query, 16-bit lanes, 32-bit where saturated), same threads;
    each tool in a fresh process, wall time; the scores must be identical."""
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    driver = build_parasail(os.path.abspath(args.parasail_source), work)
    threads = args.threads or os.cpu_count()
    db = os.path.join(work, "db_cpu.fasta")
    write_random_database(db, args.cpu_db, args.db_length)
    proteins = os.path.join(ROOT, "data", "uniprot_31.fasta")
    queries = os.path.join(os.path.abspath(args.cudasw_source), "allqueries.fasta")
    record = {"part": "cpu", "threads": threads, "workloads": {}}
    for name, (query_file, db_file) in {"uniprot_31_x_uniprot_31": (proteins, proteins),
                                        f"cudasw_queries_x_{args.cpu_db}_random_{args.db_length}": (queries, db)}.items():  # fmt: skip
        runs = {"parasail": [], "seqcompare": []}
        for _ in range(args.repeats):
            started = time.perf_counter()
            done = subprocess.run([driver, query_file, db_file, "11", "1"], capture_output=True, text=True, check=True,
                                  env={**os.environ, "OMP_NUM_THREADS": str(threads)})  # fmt: skip
            runs["parasail"].append(time.perf_counter() - started)
            theirs = np.array(done.stdout.split(), dtype=np.int64)
            scores_path = os.path.join(work, "ours_cpu.npy")
            started = time.perf_counter()
            ours_run = subprocess.run([sys.executable, __file__, "our-search", db_file, query_file, scores_path,
                                       "cpu", str(threads)], capture_output=True, text=True)  # fmt: skip
            runs["seqcompare"].append(time.perf_counter() - started)
            if ours_run.returncode:
                print(ours_run.stdout[-2000:], ours_run.stderr[-2000:])
                ours_run.check_returncode()
            cells = json.loads(ours_run.stdout.strip().splitlines()[-1])["cells"]
            ours = np.load(scores_path).reshape(-1)
            assert np.array_equal(ours, theirs), f"{name}: scores differ from parasail's"
        medians = {tool: statistics.median(times) for tool, times in runs.items()}
        record["workloads"][name] = {"cells": cells, "seconds": runs, "median_s": medians, "identical_scores": True,
                                     "gcups": {tool: cells / medians[tool] / 1e9 for tool in medians},
                                     "seqcompare_over_parasail": medians["parasail"] / medians["seqcompare"]}  # fmt: skip
        print(name, record["workloads"][name], flush=True)
    write(args.out, "cpu", record)


def identity16s(args) -> None:
    """The 16S workflow on real reads: ``seqcompare align READS --all-vs-all --both-strands --format matrix
    --value identity`` (global edit distance, parasail's identity), the CLI in a fresh process: every read on the
    GPU, and the first ``--subset`` reads on both the CPU and the GPU (identical matrices required)."""
    reads = os.path.abspath(args.reads)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    subset = os.path.join(work, "16s_subset.fastq")
    with open(reads) as handle, open(subset, "w") as out:
        for number, line in enumerate(handle):
            if number >= 4 * args.subset:
                break
            out.write(line)
    record = {"part": "identity16s", "reads": reads, "subset": args.subset, "runs": {}}
    outputs = {}
    for name, path, device in (("subset_cpu", subset, "cpu"), ("subset_gpu", subset, "cuda"),
                               ("all_gpu", reads, "cuda")):  # fmt: skip
        if device == "cuda" and args.no_gpu:
            continue
        out = os.path.join(work, f"{name}.tsv")
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "seqcompare", "align", path, "--all-vs-all", "--both-strands",
                                   "--format", "matrix", "--value", "identity", "--device", device, "-o", out],
                                  capture_output=True, text=True)  # fmt: skip
            times.append(time.perf_counter() - started)
            if done.returncode:
                print(done.stderr[-3000:])
                done.check_returncode()
        with open(out) as handle:
            outputs[name] = handle.read()
        record["runs"][name] = {"seconds": times, "median": statistics.median(times), "log": done.stderr.strip()}
        print(name, record["runs"][name], flush=True)
    if "subset_gpu" in outputs:
        record["subset_identical"] = outputs["subset_gpu"] == outputs["subset_cpu"]
        assert record["subset_identical"], "the CPU's and the GPU's identity matrices differ"
    write(args.out, "identity16s", record)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "our-search":
        our_search(*sys.argv[2:8])
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", choices=("traceback", "search", "cpu", "identity16s"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=20000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--no-gpu", action="store_true")
    parser.add_argument("--cudasw-source", default=os.path.join(ROOT, ".peers", "CUDASW4"))
    parser.add_argument("--db", type=int, default=200000)
    parser.add_argument("--db-length", type=int, default=256)
    parser.add_argument("--parasail-source", default="/tmp/parasail", help="cpu: parasail's source tree")
    parser.add_argument("--cpu-db", type=int, default=2000, help="cpu: random database proteins")
    parser.add_argument("--reads", default=os.path.join(ROOT, "bench", "work", "16s_reads.fastq"),
                        help="identity16s: the reads (the shared PacBio HiFi 16S set, copied here)")  # fmt: skip
    parser.add_argument("--subset", type=int, default=100, help="identity16s: reads run on both devices")
    parser.add_argument("--work", default="/tmp/seqcompare-align-modes")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    {"traceback": traceback, "search": search, "cpu": cpu, "identity16s": identity16s}[args.part](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
