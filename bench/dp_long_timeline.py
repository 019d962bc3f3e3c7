"""Where a warm call of goal 3 (issue 17) goes: 20 related pairs of 10,000 through ``seqcompare.align`` /
``seqcompare.dtw`` with ``device="cuda"`` (NW seed(0,2,3,3) on uint8 codes, DTW on int32 and float32 random
walks), timed whole, with the GPU layer's own stages inside it (``dp_on_gpu``'s ``timings``: host seconds at
each step since that layer began, and the copy up and the kernel by CUDA events). Medians of 15 calls after 3
untimed ones::

    python3 bench/dp_long_timeline.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def main() -> int:
    import seqcompare
    import seqcompare.align.gpu as gpu

    real = gpu.dp_on_gpu

    def traced(*args, **kwargs):
        kwargs["timings"] = traced.timings = {}
        traced.entered = time.perf_counter()
        return real(*args, **kwargs)

    gpu.dp_on_gpu = traced
    rng = np.random.default_rng(1)
    pairs, length = 20, 10_000
    targets = rng.integers(0, 4, (pairs, length), dtype=np.uint8)
    queries = targets.copy()
    hit = rng.random(queries.shape) < 0.1
    queries[hit] = rng.integers(0, 4, int(hit.sum()), dtype=np.uint8)
    walk_a = np.cumsum(rng.integers(-1, 2, (pairs, length)), axis=1).astype(np.int32)
    walk_b = (walk_a + rng.integers(-2, 3, (pairs, length))).astype(np.int32)
    float_a, float_b = walk_a.astype(np.float32), walk_b.astype(np.float32)
    costs = seqcompare.Costs.seed(0, 2, 3, 3)
    jobs = {
        "NW": lambda: seqcompare.align(targets, queries, costs=costs, device="cuda"),
        "DTW int32": lambda: seqcompare.dtw(walk_a, walk_b, device="cuda"),
        "DTW float32": lambda: seqcompare.dtw(float_a, float_b, device="cuda"),
    }
    try:
        for name, job in jobs.items():
            for _ in range(3):
                job()
            rows: dict = {}
            for _ in range(15):
                began = time.perf_counter()
                job()
                ended = time.perf_counter()
                timings = traced.timings
                rows.setdefault("API call", []).append(ended - began)
                rows.setdefault("  API before the GPU layer", []).append(traced.entered - began)
                for step, at in timings.get("stages", []):
                    rows.setdefault(f"  GPU layer: {step}", []).append(at)
                rows.setdefault("  GPU layer: returned", []).append(timings["total_s"])
                rows.setdefault("  API after the GPU layer", []).append(ended - traced.entered - timings["total_s"])
                rows.setdefault("  copy up and border reset (events)", []).append(timings.get("upload_s", float("nan")))
                rows.setdefault("  copy up to kernel's end (events)", []).append(timings["kernel_s"])
            median = statistics.median(rows["API call"])
            print(f"{name}: {median * 1e3:.3f} ms a call, {pairs * length**2 / median / 1e9:.0f} GCUPS", flush=True)
            for label, values in rows.items():
                print(f"    {label:40s} {statistics.median(values) * 1e3:8.3f} ms")
    finally:
        gpu.dp_on_gpu = real
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
