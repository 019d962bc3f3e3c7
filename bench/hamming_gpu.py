"""GPU Hamming benchmarks (issue 3): the pairs run at 32,768 x 30,000, every method, the mask builders.

Usage::

    python3 bench/hamming_gpu.py --out DIR [--n 32768] [--m 30000] [--repeats 5]

Writes ``DIR/results_hamming_gpu.json`` and prints a table. Data: ``seqcompare.simulate.simulate_alignment``
(random root, 8 founder lineages, ~1.5% substitutions per sequence, 0.5% N, three 30-site gap runs), encoded
with snp-dists semantics (N and '-' skipped). Timings: CUDA events around device work, host clocks around
host-to-host runs (synchronised), medians of ``--repeats`` after a warm-up that compiles every kernel.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

ONE_BIT_CEILING_TOPS = 10_097  # ../shared/CEILINGS.md: mma.sync m16n8k256 b1 and.popc, register-resident
INT8_CEILING_TOPS = 1_190


def event_time(cupy, fn, repeats: int) -> float:
    """Median seconds of the device work ``fn()`` queues, between CUDA events on the current stream."""
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return statistics.median(times)


def wall_time(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--n", type=int, default=32768)
    parser.add_argument("--m", type=int, default=30000)
    parser.add_argument("--max-dist", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    import cupy

    from seqcompare.cuda.bitgemm import CONFIGS as MMA_CONFIGS
    from seqcompare.cuda.bitgemm import PAIRS_CONFIG, micro_tiles
    from seqcompare.hamming.gpu import DeviceProblem, HostProblem, device_pairs
    from seqcompare.io.fasta import Alignment
    from seqcompare.hamming.api import encode_inputs
    from seqcompare.simulate import simulate_alignment

    props = cupy.cuda.runtime.getDeviceProperties(0)
    report = {
        "command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "device": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "multiprocessors": props["multiProcessorCount"],
        "gpus_visible": cupy.cuda.runtime.getDeviceCount(),
        "cpu_cores": os.cpu_count(),
        "n": args.n, "m": args.m, "max_dist": args.max_dist,
    }  # fmt: skip
    n, m = args.n, args.m
    unique_pair_sites = n * (n - 1) / 2 * m

    t = time.perf_counter()
    names, sequences = simulate_alignment(n, m, seed=3)
    report["simulate_s"] = time.perf_counter() - t
    encoded = encode_inputs(Alignment(names, sequences))

    # Compile and warm every kernel on a small problem first.
    small = encode_inputs(Alignment(names[:300], sequences[:300, :700]))
    for method in ("bitmma", "matrix", "bitpack"):
        device_pairs(small, args.max_dist, method=method)
    for packer in ("ballot", "shared", "naive"):
        device_pairs(small, args.max_dist, packer=packer)

    # --- the acceptance run: bitmma, pairs within max_dist, from encoded planes on the host to pairs on the host
    t = time.perf_counter()
    host = HostProblem(encoded, "bitmma", "planes", threads=os.cpu_count())
    report["cpu_pack_planes_s"] = time.perf_counter() - t
    report["planes_bytes"] = int(host.host["left"].nbytes)

    def host_to_host():
        return device_pairs(None, args.max_dist, host=host, devices=[0])

    seconds, (i, j, d) = wall_time(host_to_host, args.repeats)
    stages = {}
    device_pairs(None, args.max_dist, host=host, timings=stages, devices=[0])
    report["bitmma_host_to_host_stages"] = stages
    report["bitmma_host_to_host_s"] = seconds
    report["bitmma_host_to_host_pair_sites_per_s"] = unique_pair_sites / seconds
    report["pairs_found"] = int(i.size)

    visible = cupy.cuda.runtime.getDeviceCount()
    if visible > 1:
        seconds, (i_all, j_all, d_all) = wall_time(
            lambda: device_pairs(None, args.max_dist, host=host, devices=range(visible)), args.repeats
        )
        assert np.array_equal(i_all, i) and np.array_equal(j_all, j) and np.array_equal(d_all, d)
        report["bitmma_host_to_host_all_gpus"] = {"gpus": visible, "seconds": seconds,
                                                  "pair_sites_per_s": unique_pair_sites / seconds}  # fmt: skip

    # Kernel only (operands resident, all tiles, pairs epilogue), for every kernel shape.
    problem = DeviceProblem(host, 0)
    problem.upload_all()
    problem.synchronize()
    pairs = {name: cupy.empty(1 << 20, dtype=cupy.uint32) for name in ("i", "j", "d")}
    pairs["count"] = cupy.zeros(1, dtype=cupy.uint64)
    k_bits = host.row_words * 64
    report["kernel_shapes"] = {}
    for config, (rows_edge, cols_edge, *_) in MMA_CONFIGS.items():
        tiles = micro_tiles(range(-(-n // rows_edge)), None, True, rows_edge, cols_edge)
        with problem.device, problem.stream:
            tiles_dev = cupy.asarray(tiles)

            def kernel_only():
                pairs["count"].fill(0)
                problem.run_tiles(tiles_dev, mode=0, max_dist=args.max_dist, pairs=pairs, config=config)

            kernel_only()
            problem.synchronize()
            seconds = event_time(cupy, kernel_only, args.repeats)
        padded_pairs = len(tiles) * rows_edge * cols_edge
        tops = 2 * padded_pairs * k_bits / seconds / 1e12
        h2h, _ = wall_time(lambda: device_pairs(None, args.max_dist, host=host, config=config, devices=[0]),
                           args.repeats)  # fmt: skip
        report["kernel_shapes"][config] = {
            "kernel_s": seconds, "kernel_pair_sites_per_s": unique_pair_sites / seconds,
            "kernel_tops_incl_padding": tops, "pct_of_1bit_ceiling": 100 * tops / ONE_BIT_CEILING_TOPS,
            "host_to_host_s": h2h, "host_to_host_pair_sites_per_s": unique_pair_sites / h2h,
        }  # fmt: skip
    default = report["kernel_shapes"][PAIRS_CONFIG]
    report["bitmma_kernel_s"] = default["kernel_s"]
    report["bitmma_kernel_pair_sites_per_s"] = default["kernel_pair_sites_per_s"]
    report["bitmma_kernel_tops"] = default["kernel_tops_incl_padding"]
    report["bitmma_pct_of_1bit_ceiling"] = default["pct_of_1bit_ceiling"]

    # Building operands: expand from planes vs the three mask builders from 8-bit codes.
    builders = {}
    rows = n
    with problem.device, problem.stream:
        entry = problem.operands["left"]

        def expand():
            problem._build(entry, 0, rows)

        builders["expand_from_planes"] = event_time(cupy, expand, args.repeats)
    codes_host = HostProblem(encoded, "bitmma", "ballot", threads=os.cpu_count())
    coded = DeviceProblem(codes_host, 0)
    coded.upload_all()
    coded.synchronize()
    with coded.device, coded.stream:
        entry = coded.operands["left"]
        for packer in ("naive", "shared", "ballot"):
            codes_host.packer = packer
            builders[f"{packer}_from_codes"] = event_time(cupy, lambda: coded._build(entry, 0, rows), args.repeats)
    report["operand_build_s"] = builders
    report["codes_bytes"] = int(n * m)

    # The other methods, host to host, same problem.
    for method in ("matrix", "bitpack"):
        other = HostProblem(encoded, method, "planes", threads=os.cpu_count())
        seconds, (i2, j2, d2) = wall_time(lambda: device_pairs(None, args.max_dist, host=other, devices=[0]), 1)
        assert np.array_equal(i2, i) and np.array_equal(j2, j) and np.array_equal(d2, d), method
        report[f"{method}_host_to_host_s"] = seconds
        report[f"{method}_host_to_host_pair_sites_per_s"] = unique_pair_sites / seconds

    with open(os.path.join(args.out, "results_hamming_gpu.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps(report, indent=1))
    print()
    print(f"{'what':<52} {'seconds':>9} {'pair-sites/s':>13}")
    for key in ("bitmma_kernel", "bitmma_host_to_host", "matrix_host_to_host", "bitpack_host_to_host"):
        print(f"{key:<52} {report[key + '_s']:9.4f} {report[key + '_pair_sites_per_s']:13.3e}")
    print(f"bitmma kernel: {report['bitmma_kernel_tops']:.0f} TOP/s = {report['bitmma_pct_of_1bit_ceiling']:.1f}% "
          f"of the 1-bit ceiling ({ONE_BIT_CEILING_TOPS} TOP/s)")
    for name, seconds in builders.items():
        print(f"build operands {name:<37} {seconds:9.4f}")
    if "bitmma_host_to_host_all_gpus" in report:
        row = report["bitmma_host_to_host_all_gpus"]
        print(f"bitmma host to host on {row['gpus']} GPUs: {row['seconds']:.4f} s {row['pair_sites_per_s']:.3e}/s")
    for config, row in report["kernel_shapes"].items():
        print(f"shape {config:<12} kernel {row['kernel_s']:.4f} s {row['kernel_pair_sites_per_s']:.3e}/s "
              f"({row['pct_of_1bit_ceiling']:.1f}% of 1-bit ceiling)  host-to-host {row['host_to_host_s']:.4f} s "
              f"{row['host_to_host_pair_sites_per_s']:.3e}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
