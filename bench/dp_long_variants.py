"""The long-pair kernel (``align/dp.cu``, ``dp_long``) with one part of its step changed at a time (issue 17,
goal 3): kernel-only time by CUDA events, a labelled micro-benchmark, not a product figure.

The workload is ``bench/dp_long.py``'s: 20 related pairs of 10,000, NW seed(0,2,3,3) on uint8 codes and DTW on
int32 random walks (and on the same walks as float32), through ``seqcompare.align`` / ``seqcompare.dtw`` with
``device="cuda"``; each variant is ``dp.cu`` with text edits, its scores compared with ``base``'s (variants
marked "rates only" compute wrong scores on purpose). The best of 5 warm calls per variant, strip size, warps a
block and columns a step, in two rounds::

    python3 bench/dp_long_variants.py [VARIANT ...] [--strips 8 16] [--warps-per-block 1 4] [--columns 1 2]
                                      [--pairs 20] [--length 10000]

Variants: ``base``; ``chain_one`` (each cell's chain down the strip one DPX instruction: DTW as
min(up + c, min(diag, left) + c), NW with the cell above taken last); ``relaxed`` (the rows between chunks
passed by relaxed GPU-scope loads and stores in place of volatile, system-scope ones); ``no_wait`` (the row above
read once, never awaited: rates only); ``chain_one_relaxed``; and, with no waiting, each of these taken out
(rates only): the bottom row's stores for the chunk below (``no_publish``), the target value's load in the
interior steps (``no_target_load``), lane 0's loads of the awaited row (``no_border_load``), and all three. ``--old FILE``
adds an earlier ``dp.cu`` (``git show REV:src/seqcompare/align/dp.cu``, from session 28 on: ``dp_long`` with its
columns a step as a template parameter) as variant ``old``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from align_modes import replaced  # noqa: E402  (bench/ on the path first)


def chain_one(text: str) -> str:
    """DTW's cell with one dependent DPX instruction: the off-chain part first, the cell above last (NW's cell
    takes the cell above last since session 27)."""
    return replaced(text, "            value = plus_distance(min3(diag, up, left), qv[r], tj);",
                    "            value = chain_cell(diag, up, left, qv[r], tj);")


CHAIN_CELL = """
// DTW's cell with one instruction on the chain: min(up + c, min(diag, left) + c) = c + min(diag, up, left).
__device__ __forceinline__ int chain_cell(int diag, int up, int left, int q, int t) {
    int c = plus_distance(0, q, t);
    return __viaddmin_s32(up, c, plus_distance(min(diag, left), q, t));
}
template <typename V>
__device__ __forceinline__ V chain_cell(V diag, V up, V left, V q, V t) { return plus_distance(min3(diag, up, left), q, t); }
"""


def chain_one_helpers(text: str) -> str:
    marker = "// The part of a cell that does not depend on the cell above it"
    return replaced(text, marker, CHAIN_CELL + marker)


RELAXED = """
__device__ __forceinline__ int relaxed_load(const int* cell) {
    int v; asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(cell) : "memory"); return v;
}
__device__ __forceinline__ float relaxed_load(const float* cell) { return __int_as_float(relaxed_load((const int*)cell)); }
__device__ __forceinline__ double relaxed_load(const double* cell) { return *(const volatile double*)cell; }
__device__ __forceinline__ void relaxed_store(int* cell, int v) {
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" :: "l"(cell), "r"(v) : "memory");
}
__device__ __forceinline__ void relaxed_store(float* cell, float v) { relaxed_store((int*)cell, __float_as_int(v)); }
__device__ __forceinline__ void relaxed_store(double* cell, double v) { *(volatile double*)cell = v; }
"""


def relaxed(text: str) -> str:
    marker = "template <typename V>\n__device__ __forceinline__ V await_cell(const V* cell) {"
    text = replaced(text, marker, RELAXED + marker)
    text = text.replace("    V value = *(const volatile V*)cell;\n    while (unset(value)) {",
                        "    V value = relaxed_load(cell);\n    while (unset(value)) {")
    text = replaced(text, "        value = *(const volatile V*)cell;\n", "        value = relaxed_load(cell);\n")
    return replaced(text, "    *(volatile V*)cell = value;", "    relaxed_store(cell, value);")


def no_wait(text: str) -> str:
    return replaced(text, "    while (unset(value)) {", "    while (false) {")


def no_publish(text: str) -> str:
    text = replaced(text, "if (pass_down) bottom_row[K * i + col] = up;", "if (false) bottom_row[K * i + col] = up;")
    return replaced(text, "publish_cell(row_below + (K * (s - 31) + 1 + lane), bottom_row[lane]);", "")


def no_target_load(text: str) -> str:
    """The interior steps' target value from the step number, not memory."""
    return replaced(text, "t_next[col] = target_row[K * (i + 1 - lane) + col + 32 * K];", "t_next[col] = V((s + i + col) & 3);")


def no_border_load(text: str) -> str:
    """Lane 0's cell above not read from the warp's slots of the awaited row."""
    return replaced(text, "border_next[col] = lane0_row[(K * (i + 1) + col) & 31];", "border_next[col] = from_border[col] + 1;")


VARIANTS = {
    "base": [],
    "chain_one": [chain_one_helpers, chain_one],
    "relaxed": [relaxed],
    "chain_one_relaxed": [chain_one_helpers, chain_one, relaxed],
    "no_wait": [no_wait],
    "no_wait_no_publish": [no_wait, no_publish],
    "no_wait_no_target_load": [no_wait, no_target_load],
    "no_wait_no_border_load": [no_wait, no_border_load],
    "no_wait_none_of_these": [no_wait, no_publish, no_target_load, no_border_load],
}
RATES_ONLY = {name for name in VARIANTS if name.startswith("no_")}


def gpu_default_warps() -> int:
    from seqcompare.align import gpu

    return gpu._LONG_WARPS_PER_BLOCK


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--strips", type=int, nargs="+", default=[8])
    parser.add_argument("--warps-per-block", type=int, nargs="+", default=[gpu_default_warps()],
                        help="warps a block of the long kernel (gpu._LONG_WARPS_PER_BLOCK)")
    parser.add_argument("--columns", type=int, nargs="+", default=[0],
                        help="columns a step for DTW (gpu.LONG_COLUMNS: 1 or 2; 0, the default, lets the host choose)")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--length", type=int, default=10_000)
    parser.add_argument("--work", default="/tmp/dp_long_variants")
    parser.add_argument("--old", help="another dp.cu (an earlier commit's), run as variant 'old': its scores must equal base's")
    args = parser.parse_args()

    import cupy

    import seqcompare
    import seqcompare.align.gpu as gpu
    from align_modes import time_kernel_launches

    launches = time_kernel_launches(cupy, gpu)
    base_source = open(gpu._SOURCE).read()
    rng = np.random.default_rng(1)
    targets = rng.integers(0, 4, (args.pairs, args.length), dtype=np.uint8)
    queries = targets.copy()
    hit = rng.random(queries.shape) < 0.1
    queries[hit] = rng.integers(0, 4, int(hit.sum()), dtype=np.uint8)
    walk_a = np.cumsum(rng.integers(-1, 2, (args.pairs, args.length)), axis=1).astype(np.int32)
    walk_b = (walk_a + rng.integers(-2, 3, (args.pairs, args.length))).astype(np.int32)
    costs = seqcompare.Costs.seed(0, 2, 3, 3)
    jobs = {
        "NW": lambda: seqcompare.align(targets, queries, costs=costs, device="cuda").scores,
        "DTW int32": lambda: seqcompare.dtw(walk_a, walk_b, device="cuda").scores,
        "DTW float32": lambda: seqcompare.dtw(walk_a.astype(np.float32), walk_b.astype(np.float32), device="cuda").scores,
    }
    cells = args.pairs * args.length**2
    reference, results = {}, {}
    names = list(args.variants) + (["old"] if args.old else [])
    for round_ in range(2):
        for name in names:
            text = open(args.old).read() if name == "old" else base_source
            for edit in VARIANTS.get(name, []):
                text = edit(text)
            path = os.path.join(args.work, name, "dp.cu")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as handle:
                handle.write(text)
            gpu._SOURCE = path
            for rows, warps, columns in [(rows, warps, columns) for rows in args.strips
                                         for warps in args.warps_per_block for columns in args.columns]:  # fmt: skip
                gpu.LONG_STRIP = rows
                gpu._LONG_WARPS_PER_BLOCK = warps
                gpu.LONG_COLUMNS = columns or None
                for job, run in jobs.items():
                    best = None
                    for call in range(6):
                        launches.clear()
                        scores = run()
                        cupy.cuda.runtime.deviceSynchronize()
                        seconds = sum(cupy.cuda.get_elapsed_time(a, b) / 1e3 for _, a, b in launches)
                        if call:  # the first call compiles
                            best = seconds if best is None else min(best, seconds)
                    key = (job, rows, warps, columns)
                    if name == "base":
                        reference[key] = scores
                    same = None if key not in reference else bool(np.array_equal(scores, reference[key]))
                    if same is False and name not in RATES_ONLY:
                        raise SystemExit(f"{name}, {job}, R = {rows}: scores differ from base's")
                    gcups = cells / best / 1e9
                    label = f"R={rows:2d} W={warps} K={columns or 'auto'}"
                    results.setdefault(f"{name} {job} {label}", []).append(round(gcups))
                    print(f"round {round_} {name:18s} {job:11s} {label} kernel {best * 1e3:7.3f} ms {gcups:6.0f} GCUPS"
                          f"  scores equal base's: {same}", flush=True)  # fmt: skip
    gpu.LONG_STRIP = gpu.LONG_COLUMNS = None
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
