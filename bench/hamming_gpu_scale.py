"""GPU Hamming at scale (issue 3): end to end from FASTA on disk, scaling over GPUs, and one method table.

Usage::

    python3 bench/hamming_gpu_scale.py e2e   --out DIR [--n 100000] [--m 30000] [--repeats 3]
    python3 bench/hamming_gpu_scale.py gpus  --out DIR [--sizes 100000,200000] [--m 30000] [--repeats 3]
    python3 bench/hamming_gpu_scale.py table --out DIR [--n 2048] [--m 30000]

``e2e``
    Writes a simulated SARS-CoV-2-sized alignment as FASTA (``--lineages`` founder lineages, each sequence
    ``--private-rate`` substitutions per site of its own, so there are clusters of close genomes), then times
    fresh ``seqcompare hamming --device cuda --max-dist D FASTA -o pairs.tsv`` processes on one GPU
    (``CUDA_VISIBLE_DEVICES=0``): the first run (kernel caches cold), ``--repeats`` runs with the file in the
    page cache, and one after the file's pages are dropped from the cache (``posix_fadvise DONTNEED``). The
    pairs file must be byte-identical to the one the int8 cuBLAS method (``--method matrix``) writes.
``gpus``
    Host to host (encoded planes on the host to sorted pairs on the host) on 1, 2, ... visible GPUs, same
    problems (one per ``--sizes`` entry), in one process; results must be identical; plus where the time
    goes (copies alone, a peer copy, the kernel alone on each device's share).
``table``
    The paper's Table VI on one dataset: every CPU method (vector oracle first) and every GPU method, all
    checked equal to the oracle, each step's speedup.

Each writes ``DIR/results_hamming_gpu_<what>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def _device_name() -> str:
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def _gpu_count() -> int:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # a dry run of the script on a machine without a GPU
        return 0


def _header(args, what: str) -> dict:
    return {
        "what": what,
        "command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "device": _device_name() if _gpu_count() else "no GPU",
        "gpus_visible": _gpu_count(),
        "cpu_cores": os.cpu_count(),
        "n": args.n,
        "m": args.m,
    }


def _write(args, what: str, report: dict) -> None:
    with open(os.path.join(args.out, f"results_hamming_gpu_{what}.json"), "w") as handle:
        json.dump(report, handle, indent=1)


def _simulate(args):
    from seqcompare.simulate import simulate_alignment

    return simulate_alignment(args.n, args.m, seed=args.seed, lineages=args.lineages,
                              private_rate=args.private_rate)  # fmt: skip


# --- e2e ---------------------------------------------------------------------------------------------------
def _drop_from_page_cache(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _run_cli(argv: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "seqcompare", *argv], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"seqcompare failed ({done.returncode}): {done.stderr.strip()}")
    return seconds, done.stderr


def run_e2e(args) -> dict:
    from seqcompare.simulate import write_fasta

    report = _header(args, "e2e")
    work = args.work or args.out
    os.makedirs(work, exist_ok=True)
    fasta = os.path.join(work, f"sim_{args.n}x{args.m}.fasta")
    start = time.perf_counter()
    names, sequences = _simulate(args)
    report["simulate_s"] = time.perf_counter() - start
    start = time.perf_counter()
    write_fasta(fasta, names, sequences)
    report["write_fasta_s"] = time.perf_counter() - start
    report["fasta_bytes"] = os.path.getsize(fasta)
    del names, sequences
    report["simulation"] = {"seed": args.seed, "lineages": args.lineages, "private_rate": args.private_rate}

    env = dict(os.environ, CUDA_VISIBLE_DEVICES="0", PYTHONUNBUFFERED="1")
    pairs = os.path.join(work, "pairs.tsv")
    argv = ["hamming", "--device", args.device, "--max-dist", str(args.max_dist), fasta, "-o", pairs]
    report["argv"] = "seqcompare " + " ".join(argv)
    report["first_run_s"], _ = _run_cli(argv, env)
    runs, logs = [], []
    for _ in range(args.repeats):
        seconds, log = _run_cli(argv, env)
        runs.append(seconds)
        logs.append(log)
    with open(pairs, "rb") as handle:
        expected = handle.read()
    report["warm_runs_s"] = runs
    report["median_s"] = statistics.median(runs)
    report["log_of_last_run"] = logs[-1]
    report["pairs_written"] = expected.count(b"\n")
    report["pairs_file_bytes"] = len(expected)
    _drop_from_page_cache(fasta)
    report["page_cache_dropped_run_s"], _ = _run_cli(argv, env)

    check = os.path.join(work, "pairs_matrix.tsv")
    report["matrix_method_run_s"], _ = _run_cli([*argv[:-1], check, "--method", "matrix"], env)
    with open(check, "rb") as handle:
        report["identical_to_int8_method"] = handle.read() == expected
    all_gpus = dict(env)
    all_gpus.pop("CUDA_VISIBLE_DEVICES")
    report["all_gpus_run_s"], _ = _run_cli(argv, all_gpus)
    with open(pairs, "rb") as handle:
        report["all_gpus_identical"] = handle.read() == expected
    # Clusters at the same distance (issue 18): the pairs are reduced where they are found, never written.
    clusters_path = os.path.join(work, "clusters.tsv")
    clusters_argv = ["hamming", "--device", args.device, "--clusters", str(args.max_dist), fasta, "-o", clusters_path]
    clusters_runs = [_run_cli(clusters_argv, env)[0] for _ in range(args.repeats)]
    report["clusters_argv"] = "seqcompare " + " ".join(clusters_argv)
    report["clusters_runs_s"] = clusters_runs
    report["clusters_median_s"] = statistics.median(clusters_runs)
    report["clusters_minus_pairs_s"] = report["clusters_median_s"] - report["median_s"]
    report["clusters_match_pairs"] = _clusters_match_pairs(clusters_path, pairs)
    print(f"clusters: {', '.join(f'{t:.2f}' for t in clusters_runs)} s -> median {report['clusters_median_s']:.2f} s "
          f"({report['clusters_minus_pairs_s']:+.2f} s against the pairs run); the components of the pairs "
          f"file: {report['clusters_match_pairs']}")
    if args.device == "cuda":
        _breakdown(fasta, args.max_dist)  # warm-up: kernel loads, pools, first-touch of host memory
        report["breakdown_s"] = _breakdown(fasta, args.max_dist)
    unique = args.n * (args.n - 1) / 2 * args.m
    report["unique_pair_sites"] = unique
    report["pair_sites_per_s_end_to_end"] = unique / report["median_s"]
    print(f"{report['argv']}")
    print(f"FASTA {report['fasta_bytes'] / 1e9:.2f} GB, {report['pairs_written']} pairs written")
    print(f"first run (cold kernel caches) {report['first_run_s']:.2f} s")
    print(f"warm runs {', '.join(f'{t:.2f}' for t in runs)} s -> median {report['median_s']:.2f} s")
    print(f"after dropping the FASTA from the page cache {report['page_cache_dropped_run_s']:.2f} s")
    print(f"int8 method: {report['matrix_method_run_s']:.2f} s, identical: {report['identical_to_int8_method']}")
    print(f"all visible GPUs: {report['all_gpus_run_s']:.2f} s, identical: {report['all_gpus_identical']}")
    print(logs[-1])
    for stage, seconds in report.get("breakdown_s", {}).items():
        print(f"  {stage:<34} {seconds:8.3f} s")
    return report


def _clusters_match_pairs(clusters_path: str, pairs_path: str) -> bool:
    """Whether the clusters file is the connected components of the pairs file (a plain union-find over names),
    numbered from 1 by first member."""
    with open(clusters_path) as handle:
        rows = [line.rstrip("\n").split("\t") for line in handle][1:]
    index = {name: k for k, (name, _) in enumerate(rows)}
    parent = list(range(len(rows)))

    def root(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    with open(pairs_path) as handle:
        for line in handle:
            a, b, _ = line.split("\t")
            ra, rb = root(index[a]), root(index[b])
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    numbering: dict = {}
    expected = [numbering.setdefault(root(k), len(numbering) + 1) for k in range(len(rows))]
    return expected == [int(cluster) for _, cluster in rows]


def _breakdown(fasta: str, max_dist: int) -> dict:
    """Stage times of the same job in this process, on GPU 0: where the end-to-end seconds go."""
    import io

    from seqcompare.hamming.gpu import HostProblem, device_pairs
    from seqcompare.io.fasta import read_alignment
    from seqcompare.io.tables import NameTable, write_long
    from seqcompare.hamming.api import encode_inputs

    clock = [time.perf_counter()]
    aln = read_alignment(fasta)
    clock.append(time.perf_counter())
    encoded = encode_inputs(aln)
    host = HostProblem(encoded, "bitmma", "planes", threads=os.cpu_count())
    clock.append(time.perf_counter())
    stages: dict = {}
    i, j, d = device_pairs(None, max_dist, host=host, devices=[0], timings=stages)
    clock.append(time.perf_counter())
    names = NameTable(aln.names)
    write_long(io.BytesIO(), i, j, d, names, names, "\t")
    clock.append(time.perf_counter())
    return {"read FASTA (parallel scan)": clock[1] - clock[0],
            "encode + pack planes into pinned memory": clock[2] - clock[1],
            "GPU: set-up": stages["setup_s"],
            "GPU: upload + kernels": stages["upload_and_kernels_s"],
            "GPU: sort + copy pairs back": stages["sort_and_copy_back_s"],
            "GPU total (device_pairs)": clock[3] - clock[2],
            "format pairs as text": clock[4] - clock[3]}  # fmt: skip


# --- gpus --------------------------------------------------------------------------------------------------
def run_gpus(args) -> dict:
    import cupy

    from seqcompare.hamming.gpu import HostProblem, device_pairs
    from seqcompare.io.fasta import Alignment
    from seqcompare.hamming.api import encode_inputs

    report = _header(args, "gpus")
    visible = cupy.cuda.runtime.getDeviceCount()
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else [args.n]
    report["sizes"] = sizes
    report["rows"] = []
    for n in sizes:
        args.n = n
        names, sequences = _simulate(args)
        encoded = encode_inputs(Alignment(names, sequences))
        small = encode_inputs(Alignment(names[:300], sequences[:300, :700]))
        device_pairs(small, args.max_dist, devices=range(visible))  # compile on every device
        host = HostProblem(encoded, "bitmma", "planes", threads=os.cpu_count())
        unique = n * (n - 1) / 2 * args.m
        reference, rows = None, []
        for count in range(1, visible + 1):
            times, stages = [], []
            for _ in range(args.repeats):
                timings: dict = {}
                start = time.perf_counter()
                result = device_pairs(None, args.max_dist, host=host, devices=range(count), timings=timings)
                times.append(time.perf_counter() - start)
                stages.append(timings)
            if reference is None:
                reference = result
            identical = all(np.array_equal(a, b) for a, b in zip(result, reference))
            seconds = statistics.median(times)
            rows.append({"n": n, "gpus": count, "seconds": seconds, "runs_s": times, "pairs": int(result[0].size),
                         "pair_sites_per_s": unique / seconds, "speedup_over_1": rows[0]["seconds"] / seconds
                         if rows else 1.0, "identical": identical, "stages_of_median_run":
                         stages[int(np.argsort(times)[len(times) // 2])]})  # fmt: skip
        report["rows"] += rows
        if n == sizes[0]:
            report["diagnostics"] = _transfer_and_kernel_times(host, args, visible)
        del host, encoded, names, sequences
    print(f"host to host (packed planes on the host -> sorted pairs on the host), m = {args.m}, "
          f"--max-dist {args.max_dist}")
    for row in report["rows"]:
        print(f"n {row['n']:>7} {row['gpus']} GPU(s): {row['seconds']:.4f} s  {row['pair_sites_per_s']:.3e} "
              f"pair-sites/s  speedup {row['speedup_over_1']:.2f}x  {row['pairs']} pairs  identical {row['identical']}")
        print(f"    stages {json.dumps(row['stages_of_median_run'])}")
    for key, value in report["diagnostics"].items():
        print(f"  {key:<48} {value:.4f} s")
    return report


def _transfer_and_kernel_times(host, args, visible: int) -> dict:
    """Where multi-GPU time goes: host-to-device copies alone (one device, all at once), a peer copy, and the
    1-bit kernel alone on each device's round-robin share of the tiles."""
    import threading

    import cupy

    from seqcompare.cuda.bitgemm import CONFIGS as MMA_CONFIGS
    from seqcompare.cuda.bitgemm import PAIRS_CONFIG, micro_tiles
    from seqcompare.hamming.gpu import DeviceProblem

    planes = host.host["left"]
    out = {}
    problems = [DeviceProblem(host, d) for d in range(visible)]

    def upload(problem):
        with problem.device:
            problem.operands["left"]["source"].set(planes, stream=problem.copy_stream)
            problem.copy_stream.synchronize()

    upload(problems[0])
    start = time.perf_counter()
    upload(problems[0])
    out["host_to_device_copy_1_gpu_s"] = time.perf_counter() - start
    if visible > 1:
        threads = [threading.Thread(target=upload, args=(p,)) for p in problems]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        out[f"host_to_device_copy_{visible}_gpus_at_once_s"] = time.perf_counter() - start
        source, target = problems[0].operands["left"]["source"], problems[1].operands["left"]["source"]
        with problems[1].device:
            for _ in range(2):
                start = time.perf_counter()
                cupy.cuda.runtime.memcpyPeerAsync(target.data.ptr, 1, source.data.ptr, 0, source.nbytes,
                                                  problems[1].copy_stream.ptr)  # fmt: skip
                problems[1].copy_stream.synchronize()
                out["peer_copy_0_to_1_s"] = time.perf_counter() - start
    edge = MMA_CONFIGS[PAIRS_CONFIG][0]
    tiles = micro_tiles(range(-(-args.n // edge)), None, True, edge, edge)
    for count in sorted({1, visible}):
        for k in range(count):
            problem = problems[k]
            problem.upload_all()
            problem.synchronize()
            with problem.device, problem.stream:
                pairs = {key: cupy.empty(1 << 24, dtype=cupy.uint32) for key in ("i", "j", "d")}
                pairs["count"] = cupy.zeros(1, dtype=cupy.uint64)
                share = cupy.asarray(tiles[k::count])
                problem.stream.synchronize()
                times = []
                for _ in range(3):
                    pairs["count"].fill(0)
                    begin, end = cupy.cuda.Event(), cupy.cuda.Event()
                    begin.record()
                    problem.run_tiles(share, mode=0, max_dist=args.max_dist, pairs=pairs)
                    end.record()
                    end.synchronize()
                    times.append(cupy.cuda.get_elapsed_time(begin, end) / 1e3)
            out[f"kernel_only_share_{k}_of_{count}_s"] = statistics.median(times)
    return out


# --- table -------------------------------------------------------------------------------------------------
def run_table(args) -> dict:
    import cupy

    from seqcompare.cuda.bitgemm import CONFIGS as MMA_CONFIGS
    from seqcompare.cuda.bitgemm import PAIRS_CONFIG, micro_tiles
    from seqcompare.hamming.gpu import DeviceProblem, HostProblem
    from seqcompare.io.fasta import Alignment
    from seqcompare.hamming.api import encode_inputs, run_hamming
    from seqcompare.allpairs import MatrixReduction

    report = _header(args, "table")
    names, sequences = _simulate(args)
    encoded = encode_inputs(Alignment(names, sequences))
    small = encode_inputs(Alignment(names[:8], sequences[:8, :300]))
    n, m = args.n, args.m
    unique = n * (n - 1) / 2 * m
    threads = os.cpu_count()
    steps = [("cpu", "vector", "Algorithm 1, site by site (the oracle)"),
             ("cpu", "matrix", "Algorithm 2, BLAS float32 on the whole matrix"),
             ("cpu", "tiled", "Algorithm 2 on lower-triangle tiles"),
             ("cpu", "bitpack", "bit planes + AVX-512 popcount (CPU auto)"),
             ("cuda", "bitpack", "bit planes + popcount on CUDA cores"),
             ("cuda", "matrix", "one-hot int8 GEMM, cuBLAS, int32 accumulation"),
             ("cuda", "bitmma", "1-bit MMA AND+POPC (GPU auto)")]  # fmt: skip
    oracle, rows = None, []
    for device, method, what in steps:
        run_hamming(small, MatrixReduction((8, 8), True), method=method, device=device, threads=threads)
        times = []
        for _ in range(1 if method == "vector" else args.repeats):
            start = time.perf_counter()
            result = run_hamming(encoded, MatrixReduction((n, n), True), method=method, device=device, threads=threads)
            times.append(time.perf_counter() - start)
        if oracle is None:
            oracle = result
        rows.append({"device": device, "method": method, "what": what, "seconds": statistics.median(times),
                     "identical_to_vector": bool(np.array_equal(result, oracle))})
    # Kernel-only time of the 1-bit path on the same data (operands resident, all lower-triangle blocks).
    host = HostProblem(encoded, "bitmma", "planes", threads=threads)
    problem = DeviceProblem(host, 0)
    problem.upload_all()
    problem.synchronize()
    edge = MMA_CONFIGS[PAIRS_CONFIG][0]
    tiles = micro_tiles(range(-(-n // edge)), None, True, edge, edge)
    pairs = {key: cupy.empty(1 << 20, dtype=cupy.uint32) for key in ("i", "j", "d")}
    pairs["count"] = cupy.zeros(1, dtype=cupy.uint64)
    with problem.device, problem.stream:
        tiles_dev = cupy.asarray(tiles)
        kernel_times = []
        for _ in range(max(5, args.repeats)):
            pairs["count"].fill(0)
            begin, end = cupy.cuda.Event(), cupy.cuda.Event()
            begin.record()
            problem.run_tiles(tiles_dev, mode=0, max_dist=args.max_dist, pairs=pairs)
            end.record()
            end.synchronize()
            kernel_times.append(cupy.cuda.get_elapsed_time(begin, end) / 1e3)
    rows.append({"device": "cuda", "method": "bitmma", "what": "1-bit MMA kernel only, pairs epilogue",
                 "seconds": statistics.median(kernel_times), "identical_to_vector": None})
    previous = None
    for row in rows:
        row["pair_sites_per_s"] = unique / row["seconds"]
        row["overall_speedup"] = rows[0]["seconds"] / row["seconds"]
        row["step_speedup"] = 1.0 if previous is None else previous / row["seconds"]
        previous = row["seconds"]
    report["rows"] = rows
    report["threads"] = threads
    print(f"Table VI, simulated {n} x {m}, full matrix in memory (kernel-only row: pairs epilogue)")
    print(f"{'device':<6} {'method':<8} {'seconds':>9} {'pair-sites/s':>13} {'step':>8} {'overall':>9}  same")
    for row in rows:
        print(f"{row['device']:<6} {row['method']:<8} {row['seconds']:9.4f} {row['pair_sites_per_s']:13.3e} "
              f"{row['step_speedup']:7.1f}x {row['overall_speedup']:8.0f}x  {row['identical_to_vector']}")
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("e2e", "gpus", "table"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", help="where the FASTA and pairs files go (default: --out)")
    parser.add_argument("--n", type=int)
    parser.add_argument("--m", type=int, default=30000)
    parser.add_argument("--max-dist", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", help="gpus only: comma-separated n values (default: --n)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--device", default="cuda", help="e2e only: 'cpu' for a dry run of the script")
    parser.add_argument("--lineages", type=int, default=4000)
    parser.add_argument("--private-rate", type=float, default=0.0002)
    args = parser.parse_args(argv)
    if args.n is None:
        args.n = 2048 if args.what == "table" else 100_000
    os.makedirs(args.out, exist_ok=True)
    runner = {"e2e": run_e2e, "gpus": run_gpus, "table": run_table}[args.what]
    report = runner(args)
    _write(args, args.what, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
