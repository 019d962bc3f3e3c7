"""What the GPU DTW path's value checks cost a call (issue 17, goal 1), in one warm process on a GPU.

    python bench/dp_checks_probe.py --out DIR [--pairs 40000] [--length 1000] [--repeats 7]

For int32 and float32 signals (values 0..999) of ``--pairs`` pairs of ``--length``, as 2-D arrays in ordinary
memory, medians of ``--repeats`` calls after one warm-up, interleaved round by round:

- ``api``: ``seqcompare.dtw(a, b, device="cuda")``;
- ``checked`` / ``unchecked``: ``dp_on_gpu`` with ``check=True`` (what the API asks) and ``check=False``;
- ``fused``: ``check=True`` with ``_Checks.add`` replaced by one raw kernel a piece that folds the piece's
  minimum and maximum (or its finiteness) into two device words by atomics, read back once.

Also each route's host timeline of one call (``timings["stages"]``). Writes ``results_dp_checks_probe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

_FUSED = r"""
extern "C" __global__ void fold_range(const T* values, long long n, int* found) {
    // found[0]: running minimum, found[1]: running maximum (int), or found[0] = 1 where a float is not finite
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long step = (long long)gridDim.x * blockDim.x;
    int low = 2147483647, high = -2147483647 - 1, bad = 0;
    for (; i < n; i += step) {
        T v = values[i];
#if FLOATING
        bad |= !isfinite((double)v);
#else
        long long w = (long long)v;
        int c = w < -2147483647LL - 1 ? -2147483647 - 1 : (w > 2147483647LL ? 2147483647 : (int)w);
        low = min(low, c); high = max(high, c);
#endif
    }
#if FLOATING
    if (__any_sync(0xffffffff, bad) && (threadIdx.x & 31) == 0) found[0] = 1;
#else
    for (int o = 16; o; o >>= 1) {
        low = min(low, __shfl_xor_sync(0xffffffff, low, o));
        high = max(high, __shfl_xor_sync(0xffffffff, high, o));
    }
    if ((threadIdx.x & 31) == 0) { atomicMin(found, low); atomicMax(found + 1, high); }
#endif
}
"""


def fused_checks(cupy, gpu):
    """A stand-in for ``gpu._Checks`` with one raw kernel a piece (the prototype this probe measures)."""
    kernels = {}

    class FusedChecks(gpu._Checks):
        def __init__(self, cupy_module, floating):
            super().__init__(cupy_module, floating)
            self.words = None

        def add(self, values) -> None:
            if values.size == 0:
                return
            name = {np.dtype(np.int16): "short", np.dtype(np.int32): "int", np.dtype(np.int64): "long long",
                    np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[values.dtype]  # fmt: skip
            if name not in kernels:
                floating = int(name in ("float", "double"))
                kernels[name] = cupy.RawKernel(f"#define T {name}\n#define FLOATING {floating}\n" + _FUSED,
                                               "fold_range")  # fmt: skip
            if self.words is None:
                self.words = cupy.array([0, 0] if self.floating else [2**31 - 1, -(2**31)], dtype=cupy.int32)
            kernels[name]((264,), (256,), (values, np.int64(values.size), self.words))

        def verify(self, kind, longest):
            if self.words is not None:
                low, high = self.words.get().tolist()
                if self.floating:
                    self.found_on_host.append([0.0 if low else 1.0])
                else:
                    self.found_on_host.append([float(low), float(high)])
                self.words = None
            super().verify(kind, longest)

    return FusedChecks


def main(argv=None) -> int:
    import cupy

    import seqcompare
    import seqcompare.align.gpu as gpu

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(1)
    n, m = args.pairs, args.length
    cells = n * m * m
    offsets = np.arange(n + 1, dtype=np.int64) * m
    plan = np.stack([np.arange(n), np.arange(n)], axis=1).astype(np.int64)
    original = gpu._Checks
    fused = fused_checks(cupy, gpu)
    report = {"pairs": n, "length": m, "repeats": args.repeats, "rows": {}}
    for dtype in (np.int32, np.float32):
        a = rng.integers(0, 1000, (n, m)).astype(dtype)
        b = rng.integers(0, 1000, (n, m)).astype(dtype)
        reference = seqcompare.dtw(a, b, device="cuda").scores

        def routed(check, checks_class):
            def call(timings=None):
                gpu._Checks = checks_class
                try:
                    return gpu.dp_on_gpu(1, a.reshape(-1), offsets, b.reshape(-1), offsets, plan, check=check,
                                         timings=timings)  # fmt: skip
                finally:
                    gpu._Checks = original
            return call

        routes = {"api": lambda timings=None: seqcompare.dtw(a, b, device="cuda").scores,
                  "checked": routed(True, original), "unchecked": routed(False, original),
                  "fused": routed(True, fused)}  # fmt: skip
        runs = {name: [] for name in routes}
        for name, call in routes.items():
            got = np.asarray(call(), dtype=np.float64)
            assert np.array_equal(got, np.asarray(reference, dtype=np.float64)), name
        for _ in range(args.repeats):
            for name, call in routes.items():
                cupy.cuda.Device().synchronize()
                start = time.perf_counter()
                call()
                runs[name].append(time.perf_counter() - start)
        stages = {}
        for name in ("checked", "unchecked", "fused"):
            timings = {}
            routes[name](timings)
            stages[name] = [(step, round(at * 1e3, 2)) for step, at in timings["stages"]]
        row = {}
        for name in routes:
            median = statistics.median(runs[name])
            row[name] = {"median_s": median, "gcups": cells / median / 1e9, "runs_s": runs[name]}
            print(f"{np.dtype(dtype).name:8s} {name:10s} {median * 1e3:7.2f} ms  {cells / median / 1e9:6.0f} GCUPS  "
                  f"runs {[round(r * 1e3, 1) for r in runs[name]]}", flush=True)  # fmt: skip
        for name, steps in stages.items():
            print(f"  {name} stages (ms): {steps[:3]} ... {steps[-4:]} ({len(steps)} steps)", flush=True)
        report["rows"][np.dtype(dtype).name] = {"routes": row, "stages_ms": stages}
    with open(os.path.join(args.out, "results_dp_checks_probe.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
