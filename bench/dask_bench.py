"""The Dask engine: its overhead against the local engine, and weak scaling over GPUs.

Usage::

    python bench/dask_bench.py overhead --out DIR [--threads T] [--repeats R]
    python bench/dask_bench.py weak --out DIR --gpus 1,2,4 [--repeats R] [--hamming N,M] [--ccc N,M]
    python bench/dask_bench.py strong --out DIR --gpus 1,2,4 [--repeats R] [--hamming N,M]

``overhead``: one machine, one Dask worker (a local cluster of one process with every core) against the
single-process engine on the same problems, each taking >= 30 s on a 2-core machine: Hamming pairs within
distance 100 of 67,000 random DNA sequences of 30,000 sites, and 2-way CCC (threshold 0.7) of 17,000 random
SNPs x 2,504 individuals with 5% missing. Results must match (pairs exactly, CCC checksums).

``weak``: for each GPU count G, a local cluster with one worker per GPU runs a problem G times the work of the
one-GPU problem (rows x sqrt(G)): Hamming pairs (bitmma) and 2-way CCC with a threshold (bitmma). Efficiency
is T(1) / T(G). With ``--check`` each result is compared with a single-process GPU run of the same input
(pairs exactly, CCC checksums).

``strong``: one Hamming problem (``--hamming`` rows x sites, the same array for every count) on a local cluster
of G workers, one per GPU, for each G. Speed-up is T(1 worker) / T(G) and efficiency speed-up / G; the
single-process GPU run's time stands beside them, and with ``--check`` every result is compared with it.

Writes ``results_dask_<mode>[_<label>].json`` to DIR; medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import statistics
import sys
import time
from types import SimpleNamespace

import numpy as np


def _in_threads(n: int, m: int, dtype, fill) -> np.ndarray:
    """An (n, m) array filled in row chunks on every core (each chunk with its own seeded generator)."""
    from concurrent.futures import ThreadPoolExecutor

    out = np.empty((n, m), dtype=dtype)
    bounds = np.linspace(0, n, 4 * (os.cpu_count() or 1) + 1).astype(int)
    with ThreadPoolExecutor() as pool:
        list(pool.map(lambda k: fill(np.random.default_rng([n, k]), out[bounds[k] : bounds[k + 1]]),
                      range(len(bounds) - 1)))  # fmt: skip
    return out


def dna(rng, n: int, m: int) -> np.ndarray:
    """Random A/C/G/T as a 2-D array of one-byte strings (what a FASTA alignment reads into); every 1000th row
    a copy of the first."""
    letters = np.frombuffer(b"ACGT", np.uint8)

    def fill(generator, part):
        part[...] = letters[generator.integers(0, 4, part.shape, dtype=np.uint8)]

    rows = _in_threads(n, m, np.uint8, fill)
    rows[::1000] = rows[0]  # planted copies: pairs to report and compare
    return rows.view("S1")


def snps(rng, n: int, m: int):
    """Random diploid genotypes with 5% missing, as CoMet codes (what a VCF reads into); every 1000th vector a
    copy of the first."""
    from types import SimpleNamespace

    from seqcompare.io.genotypes import _COUNT_TO_CODE

    table = _COUNT_TO_CODE[2]

    def fill(generator, part):
        counts = generator.integers(0, 3, part.shape, dtype=np.int8)
        counts[generator.random(part.shape, dtype=np.float32) < 0.05] = -1
        part[...] = table[counts.astype(np.intp) + 1]

    codes = _in_threads(n, m, np.uint8, fill)
    codes[::1000] = codes[0]  # planted copies: entries above any threshold, to compare
    return SimpleNamespace(codes=codes)


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def task_stream_summary(records) -> dict:
    """Per worker, from Dask's task stream of one run: tasks, seconds computing, the span from the first
    task's start to the last one's end (compute / span is how busy the worker was), when its first task
    started and its last ended, counted from the run's first task start, and each task as ``[task id, start,
    seconds]`` (the id is the region's number in the work's split: a Hamming tile)."""
    by_worker: dict = {}
    tasks_of: dict = {}
    for record in records:
        spans = [(s["start"], s["stop"]) for s in record.get("startstops", ()) if s.get("action") == "compute"]
        if spans:
            by_worker.setdefault(record["worker"], []).extend(spans)
            task_id = record.get("key", "").rsplit("-", 2)[-2]
            tasks_of.setdefault(record["worker"], []).extend((task_id, a, b) for a, b in spans)
    summary = {}
    origin = min((a for spans in by_worker.values() for a, _ in spans), default=0.0)
    for worker, spans in sorted(by_worker.items()):
        summary[worker] = {"tasks": len(spans), "compute_s": round(sum(b - a for a, b in spans), 3),
                           "span_s": round(max(b for _, b in spans) - min(a for a, _ in spans), 3),
                           "first_start_s": round(min(a for a, _ in spans) - origin, 3),
                           "last_stop_s": round(max(b for _, b in spans) - origin, 3),
                           "each": sorted([int(t) if t.isdigit() else t, round(a - origin, 3), round(b - a, 3)]
                                          for t, a, b in tasks_of[worker])}  # fmt: skip
    return summary


def profiled(function, top: int = 25, sort: str = "cumulative") -> str:
    """``function()`` under cProfile: the ``top`` entries by ``sort`` (cProfile's key), as text."""
    import cProfile
    import io
    import pstats

    profile = cProfile.Profile()
    profile.runcall(function)
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats(sort).print_stats(top)
    return text.getvalue()


def timed_with_tasks(name: str, function, client, repeats: int):
    """``timed(function, repeats)``, logged, then one more run under Dask's task stream: ``(median seconds,
    all seconds, result, per-worker task summary)``."""
    from distributed import get_task_stream

    seconds, runs, result = timed(function, repeats)
    logging.info("%s %s s", name, runs)
    client.run(_task_records, True)
    began = time.time()
    with get_task_stream(client) as stream:
        function()
    tasks = task_stream_summary(stream.data)
    starts = [s["start"] for r in stream.data for s in r.get("startstops", ()) if s.get("action") == "compute"]
    origin = min(starts, default=began)
    for worker, records in client.run(_task_records).items():
        if worker in tasks and records:  # each Hamming task's stamps, from the run's first task start
            tasks[worker]["stamps"] = [{k: round(v - origin, 3) for k, v in record.items()} for record in records]
            tasks[worker]["run_began_s"] = round(began - origin, 3)
    logging.info("%s tasks, one more run: %s", name, tasks)
    logging.info("%s: on the workers so far: %s", name, client.run(_upload_counts))
    return seconds, runs, result, tasks


def _task_records(clear: bool = False) -> list:
    """On a worker: the Hamming tasks' stamps (``hamming.gpu.TURN_TIMES.records``), emptied with ``clear``."""
    import sys

    gpu = sys.modules.get("seqcompare.hamming.gpu")
    if gpu is None:
        return []
    records = list(gpu.TURN_TIMES.records)
    if clear:
        gpu.TURN_TIMES.records.clear()
    return records


def _upload_counts() -> dict:
    """On a worker: how often shared-memory blocks were page-locked for upload and how often CUDA refused, and
    how often a Hamming task found a block already on its GPU (hits) or uploaded it (misses)."""
    import sys

    counts = {}
    runtime = sys.modules.get("seqcompare.cuda.runtime")
    if runtime is not None:
        counts.update(runtime.MAPPINGS)
    gpu = sys.modules.get("seqcompare.hamming.gpu")
    if gpu is not None:
        counts.update(resident_hits=gpu.RESIDENT.hits, resident_misses=gpu.RESIDENT.misses,
                      turns=gpu.TURN_TIMES.turns, **{f"{k}_s": round(v, 3) for k, v in gpu.TURN_TIMES.seconds.items()})
    return counts


def hamming_on_cluster(name: str, rows, client, args):
    """Hamming pairs of ``rows`` on the cluster: once small and untimed (kernels compile or load on every
    worker), then ``timed_with_tasks``: ``(median seconds, all seconds, pairs, per-worker task summary)``."""
    from seqcompare.hamming.api import hamming_pairs

    hamming_pairs(rows[:4096], max_dist=args.max_dist, client=client, device=args.device)
    return timed_with_tasks(name, lambda: hamming_pairs(rows, max_dist=args.max_dist, client=client,
                                                        device=args.device, tile_size=args.tile_size),
                            client, args.repeats)  # fmt: skip


def timed(function, repeats: int):
    seconds, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), seconds, result


def overhead(args) -> dict:
    from seqcompare.ccc.api import ccc
    from seqcompare.distributed import close, connect
    from seqcompare.hamming.api import hamming_pairs

    rng = np.random.default_rng(7)
    wanted = args.jobs.split(",")
    rows = dna(rng, 67000, 30000) if "hamming" in wanted else None
    counts = snps(rng, 17000, 2504) if "ccc" in wanted else None
    out = {}
    start = time.perf_counter()
    client = connect(workers=1, threads=args.threads)
    out["cluster_start_s"] = time.perf_counter() - start
    try:
        jobs = {
            "hamming_pairs_67000x30000": (
                lambda: hamming_pairs(rows, max_dist=100, threads=args.threads),
                lambda: hamming_pairs(rows, max_dist=100, client=client),
                lambda r: digest(*r),
            ),
            "ccc2_17000x2504": (
                lambda: ccc(counts, threshold=0.7),
                lambda: ccc(counts, threshold=0.7, client=client),
                lambda r: str(r.checksum),
            ),
        }
        for name, (local, dask, check) in jobs.items():
            if name.split("_")[0].rstrip("2") not in wanted:
                continue
            local_s, local_all, local_result = timed(local, args.repeats)
            dask_s, dask_all, dask_result = timed(dask, args.repeats)
            out[name] = {"local_s": local_s, "local_runs": local_all, "dask_s": dask_s, "dask_runs": dask_all,
                         "dask_over_local": dask_s / local_s, "identical": check(local_result) == check(dask_result),
                         "check": check(local_result)}  # fmt: skip
            print(json.dumps({name: out[name]}), flush=True)
    finally:
        close(client)
    return out


def weak(args) -> dict:
    from seqcompare.ccc.api import ccc
    from seqcompare.distributed import close, connect
    from seqcompare.hamming.api import hamming_pairs

    gpus = [int(g) for g in args.gpus.split(",")]
    device = args.device
    h_rows, h_sites = (int(x) for x in args.hamming.split(","))
    c_rows, c_fields = (int(x) for x in args.ccc.split(","))
    out = {"gpus": gpus, "hamming_rows_1gpu": h_rows, "hamming_sites": h_sites, "ccc_rows_1gpu": c_rows,
           "ccc_fields": c_fields, "runs": []}  # fmt: skip
    for count in gpus:
        scale = np.sqrt(count)
        rng = np.random.default_rng(count)
        logging.info("%d workers: generating %d x %d DNA and %d x %d SNPs", count, int(h_rows * scale), h_sites,
                     int(c_rows * scale), c_fields)  # fmt: skip
        wanted = args.jobs.split(",")
        rows = dna(rng, int(h_rows * scale), h_sites) if "hamming" in wanted else None
        counts = snps(rng, int(c_rows * scale), c_fields) if "ccc" in wanted else None
        logging.info("generated; starting the cluster")
        start = time.perf_counter()
        client = connect(workers=count, device=device, threads=args.threads if device == "cpu" else None,
                         tasks_per_worker=args.tasks_per_worker)
        started = time.perf_counter() - start
        try:
            run = {"gpus": count, "cluster_start_s": started}
            probe = np.ones(1 << 28, np.uint8)
            start = time.perf_counter()
            client.scatter(probe, hash=False).result()
            run["scatter_256mb_s"] = time.perf_counter() - start
            del probe
            logging.info("cluster up")
            # Each problem first runs once small, untimed: kernels compile (or load) on every worker.
            if rows is not None:
                seconds, runs, pairs, tasks = hamming_on_cluster("hamming", rows, client, args)
                local_pairs = hamming_pairs(rows, max_dist=args.max_dist, device=device) if args.check else None
                run["hamming"] = {"rows": len(rows), "pair_sites": len(rows) * (len(rows) - 1) // 2 * h_sites,
                                  "seconds": seconds, "runs": runs, "pairs": int(len(pairs[0])),
                                  "identical_to_single_process": None if local_pairs is None else
                                  digest(*pairs) == digest(*local_pairs), "tasks": tasks}  # fmt: skip
            if counts is not None:
                ccc(SimpleNamespace(codes=counts.codes[:1024]), threshold=args.threshold, client=client,
                    device=device)  # fmt: skip
                seconds, runs, result, tasks = timed_with_tasks(
                    "ccc", lambda: ccc(counts, threshold=args.threshold, client=client, device=device),
                    client, args.repeats)  # fmt: skip
                local = ccc(counts, threshold=args.threshold, device=device) if args.check else None
                if args.profile:
                    logging.info("one process:\n%s", profiled(lambda: ccc(counts, threshold=args.threshold,
                                                                           device=device)))  # fmt: skip
                run["ccc2"] = {"rows": len(counts.codes), "comparisons": result.comparisons, "seconds": seconds,
                               "runs": runs, "checksum": str(result.checksum),
                               "identical_to_single_process": None if local is None
                               else str(local.checksum) == str(result.checksum), "tasks": tasks}  # fmt: skip
        finally:
            close(client)
        out["runs"].append(run)
        print(json.dumps(run), flush=True)
    base = out["runs"][0]
    for run in out["runs"]:
        for name in ("hamming", "ccc2"):
            if name in run:
                run[name]["weak_efficiency"] = base[name]["seconds"] / run[name]["seconds"]
    return out


def strong(args) -> dict:
    from seqcompare.distributed import close, connect
    from seqcompare.hamming.api import hamming_pairs

    gpus = [int(g) for g in args.gpus.split(",")]
    device = args.device
    n_rows, n_sites = (int(x) for x in args.hamming.split(","))
    logging.info("generating %d x %d DNA", n_rows, n_sites)
    rows = dna(np.random.default_rng(0), n_rows, n_sites)
    out = {"gpus": gpus, "hamming_rows": n_rows, "hamming_sites": n_sites,
           "pair_sites": n_rows * (n_rows - 1) // 2 * n_sites, "runs": []}  # fmt: skip
    expected = None
    if args.check:
        hamming_pairs(rows[:4096], max_dist=args.max_dist, device=device)  # compile or load the kernels
        seconds, runs, local_pairs = timed(lambda: hamming_pairs(rows, max_dist=args.max_dist, device=device), 1)
        expected = digest(*local_pairs)
        out["single_process"] = {"seconds": seconds, "pairs": int(len(local_pairs[0]))}
        logging.info("one process, no Dask: %.3f s, %d pairs", seconds, len(local_pairs[0]))
        del local_pairs
    for count in gpus:
        start = time.perf_counter()
        client = connect(workers=count, device=device, threads=args.threads if device == "cpu" else None,
                         tasks_per_worker=args.tasks_per_worker)
        run = {"gpus": count, "cluster_start_s": time.perf_counter() - start}
        try:
            seconds, runs, pairs, tasks = hamming_on_cluster(f"hamming on {count}", rows, client, args)
            run.update(seconds=seconds, runs=runs, pairs=int(len(pairs[0])), tasks=tasks,
                       identical_to_single_process=None if expected is None else digest(*pairs) == expected)
        finally:
            close(client)
        out["runs"].append(run)
        print(json.dumps(run), flush=True)
    base = out["runs"][0]
    for run in out["runs"]:
        run["speedup"] = base["seconds"] / run["seconds"]  # over the first count (1 GPU in the runs)
        run["efficiency"] = run["speedup"] * base["gpus"] / run["gpus"]
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("overhead", "weak", "strong"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--gpus", default="1,2")
    parser.add_argument("--hamming", default="200000,30000", help="rows for one GPU, sites")
    parser.add_argument("--ccc", default="65536,16384", help="SNPs for one GPU, individuals")
    parser.add_argument("--max-dist", type=int, default=100)
    parser.add_argument("--tile-size", type=int, default=None,
                        help="weak, strong: the Hamming task tile's edge (default: the engine's, 6 tiles a worker)")
    parser.add_argument("--tasks-per-worker", type=int, default=None,
                        help="weak, strong: tasks a worker runs at once (Dask's nthreads; default: the library's)")
    parser.add_argument("--jobs", default="hamming,ccc", help="which problems")
    parser.add_argument("--threshold", type=float, default=0.7)
    parser.add_argument("--label", default="", help="appended to the results file's name")
    parser.add_argument("--check", action="store_true", help="compare with a single-process GPU run")
    parser.add_argument("--profile", action="store_true", help="weak: log a cProfile of a single-process CCC run")
    parser.add_argument("--device", default="cuda", help="weak, strong: cuda, or cpu for a dry run")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("distributed", "tornado", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    result = {"overhead": overhead, "weak": weak, "strong": strong}[args.mode](args)
    # A device's copy of the tree may carry stale git metadata: the caller can name the commit.
    git = os.environ.get("SEQCOMPARE_COMMIT") or os.popen("git rev-parse --short HEAD 2>/dev/null").read().strip()
    result.update(command=" ".join(["bench/dask_bench.py", *(argv or sys.argv[1:])]), commit=git,
                  date=time.strftime("%Y-%m-%d %H:%M:%S"))  # fmt: skip
    with open(os.path.join(args.out, f"results_dask_{args.mode}{'_' + args.label if args.label else ''}.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
