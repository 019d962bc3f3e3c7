"""Latency of single SASS instructions on the lent GPU: cycles from one result to the next when each
instruction waits on the one before (a labelled micro-benchmark, not a product figure).

The long-pair DP kernel (``align/dp.cu``, ``dp_long``) has few warps a scheduler, so its step is bound by the
chain of dependent cells down a strip, not by issue rate; this measures what each candidate cell instruction
costs on such a chain (issue 17, goal 3). ``dpx_rates.py`` beside it gives the rates (independent chains).

Each kernel is one warp a multiprocessor running one chain of 2,048 operations in every lane, timed by the
SM's clock; the figure is cycles a chain operation (the median over the warps, the least of 5 runs, less the
clocks' own cost). ``--sass`` needs no GPU: it compiles each kernel with nvcc for sm_90 and prints the SASS
instructions of its loop, so that cycles a dependent instruction can be read off::

    python3 bench/chain_latency.py [NAME_PART ...]
    python3 bench/chain_latency.py --sass [NAME_PART ...]   (nvcc and cuobjdump on PATH)
"""

from __future__ import annotations

import json
import re
import sys

import numpy as np

# Each body advances `a` (int) or `f` (float) once, waiting on its last value; x{i}, y{i} and k are run-time
# values the compiler cannot fold.
OPS = {
    "clock_only": "",
    "lop3_iadd": "a = (a ^ x{i}) + k;",
    "imin_plus": "a = min(a, x{i}) ^ k;",
    "vimin3": "a = __vimin3_s32(x{i}, a, x{j});",
    "viaddmin": "a = __viaddmin_s32(a, k, x{i});",
    "sad": "a = sad(x{i}, k, a);",
    "dtw_cell_min3_sad": "a = sad(x{i}, k, __vimin3_s32(x{j}, a, x{i}));",
    "dtw_split_min_sad": "a = sad(x{i}, k, min(a, x{j}));",
    "nw_viaddmin": "a = __viaddmin_s32(a, k, x{i});",
    "add_then_min_asm": "a = add_min(a, k, x{i});",
    "shfl_up": "a = __shfl_up_sync(0xffffffffu, a, 1) + k;",
    "shfl_idx": "a = __shfl_sync(0xffffffffu, a, (x{i} + a) & 31);",
    "fmin": "f = fminf(f, y{i});",
    "fadd": "f = f + y{i};",
    "fmin_bits_vimin3": "f = __int_as_float(__vimin3_s32(__float_as_int(y{i}), __float_as_int(f), __float_as_int(y{j})));",
    "ldg_chase": "a = table[a & 7] + (a >> 8);",
    "ld_volatile_chase": "a = ((volatile const int*)table)[a & 7] + (a >> 8);",
}
HEADER = r"""
__device__ __forceinline__ int sad(int a, int b, int c) {
    int r; asm("sad.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r;
}
__device__ __forceinline__ int add_min(int a, int b, int c) {
    int s, r; asm("add.s32 %0, %1, %2;" : "=r"(s) : "r"(a), "r"(b)); asm("min.s32 %0, %1, %2;" : "=r"(r) : "r"(s), "r"(c));
    return r;
}
"""
CHAIN = 8  # distinct operands cycled through by the unrolled body
STEPS = 256  # loop iterations; 8 operations each


def source(name: str, body: str) -> str:
    # Every value differs between lanes, so that nothing runs on the uniform datapath.
    declarations = " ".join(f"int x{i} = (seed + (int)threadIdx.x) * {i + 3} + {i}; float y{i} = (float)x{i};"
                            for i in range(CHAIN))  # fmt: skip
    steps = "\n".join(body.format(i=i, j=(i + 3) % CHAIN) for i in range(CHAIN))
    return HEADER + f"""extern "C" __global__ void chain_{name}(long long* cycles, int* sink, const int* __restrict__ table,
                                                   int seed, int k, int steps) {{
        {declarations}
        int a = seed + (int)threadIdx.x; float f = (float)a;
        __syncwarp();
        long long start = clock64();
        for (int s = 0; s < steps; ++s) {{
            {steps}
        }}
        long long stop = clock64();
        if (threadIdx.x == 0) cycles[blockIdx.x] = stop - start;
        sink[blockIdx.x * 32 + threadIdx.x] = a ^ __float_as_int(f);
    }}"""


def print_sass(wanted) -> None:
    """Each kernel's loop as SASS (nvcc -arch=sm_90 -cubin, then cuobjdump), by instruction counts."""
    import collections
    import os
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        for name, body in OPS.items():
            if wanted and not any(w in name for w in wanted):
                continue
            path = os.path.join(work, name + ".cu")
            with open(path, "w") as handle:
                handle.write(source(name, body))
            subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-std=c++17", "-w", "-o", path + ".cubin", path], check=True)
            sass = subprocess.run(["cuobjdump", "-sass", path + ".cubin"], check=True, capture_output=True,
                                  text=True).stdout  # fmt: skip
            lines = [re.sub(r"/\*.*?\*/", "", line).strip() for line in sass.splitlines()]
            lines = [line.rstrip(" ;") for line in lines if line]
            clocks = [n for n, line in enumerate(lines) if "CS2R" in line and "SR_CLOCK" in line]
            loop = lines[clocks[0] + 1: clocks[-1]] if len(clocks) >= 2 else lines
            opcodes = collections.Counter(re.sub(r"^@!?P\d+ ", "", line).split()[0] for line in loop)
            print(f"{name:22s} {dict(opcodes.most_common())}")


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    wanted = [a for a in args if not a.startswith("--")]
    if "--sass" in args:
        print_sass(wanted)
        return 0
    import cupy as cp

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    table = cp.zeros(8, dtype=np.int32)  # every entry 0: the chase's address stays in one line
    cycles = cp.zeros(sms, dtype=np.int64)
    sink = cp.zeros(sms * 32, dtype=np.int32)
    results = {}
    base = None
    for name, body in OPS.items():
        if wanted and name != "clock_only" and not any(w in name for w in wanted):
            continue
        module = cp.RawModule(code=source(name, body), options=("-std=c++17",))
        kernel = module.get_function("chain_" + name)
        runs = []
        for _ in range(5):
            kernel((sms,), (32,), (cycles, sink, table, np.int32(1), np.int32(3), np.int32(STEPS)))
            cp.cuda.runtime.deviceSynchronize()
            runs.append(float(np.median(cycles.get())))
        total = min(runs)
        if name == "clock_only":
            base = total
            print(f"{name:22s} {total:8.0f} cycles in all", flush=True)
            continue
        per_op = (total - (base or 0.0)) / (STEPS * CHAIN)
        results[name] = round(per_op, 2)
        print(f"{name:22s} {per_op:7.2f} cycles an operation", flush=True)
    print(json.dumps({"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cycles": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
