"""CCC 2-way on one GPU: comparisons per second as CoMet counts them (vector pairs x fields per second).

Usage::

    python3 bench/ccc_gpu.py --out DIR [--vectors N] [--fields M] [--repeats R]

For each of non-sparse and sparse (10% missing) random genotypes it times, with the operands already on the
GPU, the products on 1-bit tensor cores plus the on-device values and threshold (CoMet's ``ctime`` analogue;
``device_s``), and the whole ``seqcompare.ccc.api.ccc`` call from host codes to entries on the host
(``call_s``: host counting and bit-plane packing, upload, device work, entries back). It also checks that the
GPU's entries and checksum equal the CPU's on a 2,000-vector slice. Writes ``results_ccc_gpu.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "src"))


def random_codes(rng, n, m, missing):
    """Genotypes 0/1/3 with probabilities 0.5/0.35/0.15 (and code 2 = missing in about ``missing`` of the
    fields), from random bytes through a 256-entry table (fast at billions of fields)."""
    table = np.zeros(256, dtype=np.uint8)
    table[128:218] = 1
    table[218:] = 3
    if missing:
        table[: int(round(256 * missing))] = 2
    codes = np.empty((n, m), dtype=np.uint8)
    for row in range(0, n, 1024):
        codes[row : row + 1024] = table[rng.integers(0, 256, size=(min(1024, n - row), m), dtype=np.uint8)]
    return codes


class Codes:
    def __init__(self, codes):
        self.codes = codes
        self.names = [f"snp{i}" for i in range(len(codes))]
        self.alleles = [("A", "B")] * len(codes)


def measure(codes, sparse: bool, threshold: str, repeats: int) -> dict:
    import cupy

    from seqcompare.ccc.api import ccc
    from seqcompare.ccc.formulas import Metric
    from seqcompare.ccc.gpu import _pairs_2way, device_operands, device_planes
    from seqcompare.ccc.reductions import Threshold

    n, m = codes.shape
    planes, defined, ones, metric = device_planes(cupy, codes, Metric("ccc", sparse))
    operands = device_operands(cupy, planes, metric)
    limits = Threshold.parse(threshold, 2)
    times, entries, stages = [], 0, []
    for repeat in range(repeats + 1):
        cupy.cuda.Device(0).synchronize()
        start = time.perf_counter()
        # Kernel-level: the device's products, values and threshold, entries copied back (no reductions).
        entries = sum(len(block.value) for _, block in _pairs_2way(cupy, operands, n, m, defined, ones, metric,
                                                                   limits))  # fmt: skip
        cupy.cuda.Device(0).synchronize()
        if repeat:
            times.append(time.perf_counter() - start)
            split: dict = {}
            for _ in _pairs_2way(cupy, operands, n, m, defined, ones, metric, limits, timings=split):
                pass
            stages.append(split)
    del operands
    call = []
    for _ in range(1):
        start = time.perf_counter()
        result = ccc(Codes(codes), sparse=sparse, threshold=threshold, device="cuda")
        call.append(time.perf_counter() - start)
    comparisons = n * (n - 1) // 2 * m
    device_s = statistics.median(times)
    return {"vectors": n, "fields": m, "sparse": sparse, "threshold": threshold, "entries": entries,
            "comparisons": comparisons, "device_runs_s": times, "device_s": device_s,
            "device_rate": comparisons / device_s,
            "gemm_s": statistics.median(x["gemm_s"] for x in stages),
            "finalize_s": statistics.median(x["finalize_s"] for x in stages), "call_s": min(call), "call_rate": comparisons / min(call),
            "checksum": str(result.checksum)}  # fmt: skip


def measure3(codes, sparse: bool, threshold: str, repeats: int) -> dict:
    import cupy

    from seqcompare.ccc.api import ccc
    from seqcompare.ccc.formulas import Metric
    from seqcompare.ccc.gpu import _triples_3way, device_operands, device_planes, replace_sparse
    from seqcompare.ccc.reductions import Threshold

    n, m = codes.shape
    planes, defined, ones, metric = device_planes(cupy, codes, Metric("ccc", sparse))
    pair = device_operands(cupy, planes, replace_sparse(metric, False))["aa"]
    limits = Threshold.parse(threshold, 3)
    times, entries = [], 0
    for repeat in range(repeats + 1):
        cupy.cuda.Device(0).synchronize()
        start = time.perf_counter()
        entries = sum(len(block.value) for _, block in _triples_3way(cupy, pair, planes, n, m, defined, ones, metric,
                                                                     limits))  # fmt: skip
        cupy.cuda.Device(0).synchronize()
        if repeat:
            times.append(time.perf_counter() - start)
    split: dict = {}
    for _ in _triples_3way(cupy, pair, planes, n, m, defined, ones, metric, limits, timings=split):
        pass
    start = time.perf_counter()
    result = ccc(Codes(codes), way=3, sparse=sparse, threshold=threshold, device="cuda")
    call_s = time.perf_counter() - start
    comparisons = n * (n - 1) * (n - 2) // 6 * m
    device_s = statistics.median(times)
    return {"way": 3, "vectors": n, "fields": m, "sparse": sparse, "threshold": threshold, "entries": entries,
            "comparisons": comparisons, "device_runs_s": times, "device_s": device_s,
            "device_rate": comparisons / device_s, "call_s": call_s, "call_rate": comparisons / call_s,
            "stages": split, "checksum": str(result.checksum)}  # fmt: skip


def check_against_cpu(codes, sparse: bool, threshold: str) -> bool:
    from seqcompare.ccc.api import ccc

    cpu = ccc(Codes(codes), sparse=sparse, threshold=threshold, method="blas")
    gpu = ccc(Codes(codes), sparse=sparse, threshold=threshold, device="cuda")
    return bool(np.array_equal(cpu.entry_index, gpu.entry_index) and np.array_equal(cpu.entry_value, gpu.entry_value)
                and cpu.checksum.total == gpu.checksum.total)  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--vectors", type=int, default=32768)
    parser.add_argument("--fields", type=int, default=32768)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threshold", default="0.75")
    parser.add_argument("--vectors3", type=int, default=2048)
    parser.add_argument("--fields3", type=int, default=16384)
    parser.add_argument("--threshold3", default="0.5")
    parser.add_argument("--skip2", action="store_true", help="only the 3-way runs")
    parser.add_argument("--configs", action="store_true", help="2-way without missing data with every GEMM shape")
    parser.add_argument("--dense-only", action="store_true", help="only the runs without missing data")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    import cupy

    rng = np.random.default_rng(3)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "gpu": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "runs": []}  # fmt: skip
    import seqcompare.ccc.gpu as gpu_ccc
    from seqcompare.cuda.bitgemm import CONFIGS as MMA_CONFIGS

    configs = list(MMA_CONFIGS) if args.configs else [gpu_ccc.GEMM_CONFIG]
    sparse_runs = [] if args.dense_only else [(True, gpu_ccc.GEMM_CONFIG)]
    for sparse, config in [(False, c) for c in configs] + sparse_runs if not args.skip2 else []:
        default = gpu_ccc.GEMM_CONFIG
        gpu_ccc.GEMM_CONFIG = config
        codes = random_codes(rng, args.vectors, args.fields, 0.1 if sparse else 0.0)
        report[f"equal_to_cpu_{'sparse' if sparse else 'dense'}_{config}"] = check_against_cpu(codes[:2000], sparse, "0.5")
        row = measure(codes, sparse, args.threshold, args.repeats)
        row["gemm_config"] = config
        report["runs"].append(row)
        print(json.dumps(row), flush=True)
        gpu_ccc.GEMM_CONFIG = default
        del codes
    for sparse in (False,) if args.dense_only else (False, True):
        codes = random_codes(rng, args.vectors3, args.fields3, 0.1 if sparse else 0.0)
        from seqcompare.ccc.api import ccc

        cpu = ccc(Codes(codes[:120]), way=3, sparse=sparse, threshold="0.3", method="blas")
        gpu = ccc(Codes(codes[:120]), way=3, sparse=sparse, threshold="0.3", device="cuda")
        report[f"equal_to_cpu_3way_{'sparse' if sparse else 'dense'}"] = bool(
            np.array_equal(cpu.entry_value, gpu.entry_value) and cpu.checksum.total == gpu.checksum.total)
        row = measure3(codes, sparse, args.threshold3, max(1, args.repeats // 2))
        report["runs"].append(row)
        print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, "results_ccc_gpu.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
