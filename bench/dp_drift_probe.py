"""Why one process's GPU DTW calls from ordinary int32 arrays drift from about 16 to 20 ms (issue 17, goal 1; a
labelled probe, not a product figure). In one warm process on a GPU, 40,000 pairs of 1,000 (values 0..999):

- ``seqcompare.dtw(a, b, device="cuda")`` 10 times back to back, then 10 times with a pause of 50 ms and of
  250 ms before each call, then back to back again;
- ``cudaHostRegister`` (read-only) and ``cudaHostUnregister`` of both sides (320 MB), back to back and paused;
- each array's share of transparent huge pages (``AnonHugePages`` of its mappings in ``/proc/self/smaps``), and
  the kernel's THP settings; then the same calls on arrays given ``MADV_HUGEPAGE`` and ``MADV_NOHUGEPAGE``
  before they are first written.

    python3 bench/dp_drift_probe.py
"""

from __future__ import annotations

import mmap
import statistics
import time

import numpy as np

PAGE = 4096


def huge_share(array: np.ndarray) -> float:
    """The fraction of ``array``'s bytes on transparent huge pages, from /proc/self/smaps."""
    lo, hi = array.ctypes.data, array.ctypes.data + array.nbytes
    covered = 0
    current = None
    with open("/proc/self/smaps") as handle:
        for line in handle:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                start, end = (int(x, 16) for x in head[0].split("-"))
                current = (start, end) if start < hi and end > lo else None
            elif current is not None and head[0] == "AnonHugePages:":
                covered += int(head[1]) * 1024
    return covered / array.nbytes


def advised(shape, advice):
    """A fresh int32 array of ``shape`` whose pages were given ``advice`` before anything was written to them."""
    size = int(np.prod(shape)) * 4
    region = mmap.mmap(-1, size + (2 << 20))
    region.madvise(advice)
    array = np.frombuffer(region, dtype=np.int32, count=int(np.prod(shape)), offset=0).reshape(shape)
    return array, region


def main() -> None:
    import cupy

    import seqcompare

    for name in ("enabled", "defrag"):
        try:
            with open(f"/sys/kernel/mm/transparent_hugepage/{name}") as handle:
                print(f"THP {name}: {handle.read().strip()}")
        except OSError as error:
            print(f"THP {name}: {error}")
    rng = np.random.default_rng(1)
    n, m = 40000, 1000
    a = rng.integers(0, 1000, (n, m)).astype(np.int32)
    b = rng.integers(0, 1000, (n, m)).astype(np.int32)
    print(f"ordinary arrays: huge-page share a {huge_share(a):.2f}, b {huge_share(b):.2f}")
    expected = seqcompare.dtw(a, b, device="cuda").scores

    def series(label, x, y, pause, count=10):
        runs = []
        for _ in range(count):
            if pause:
                time.sleep(pause)
            cupy.cuda.Device().synchronize()
            start = time.perf_counter()
            scores = seqcompare.dtw(x, y, device="cuda").scores
            runs.append(time.perf_counter() - start)
        assert np.array_equal(scores, expected)
        print(f"{label:34s} median {statistics.median(runs) * 1e3:6.2f} ms  runs {[round(r * 1e3, 1) for r in runs]}",
              flush=True)  # fmt: skip

    for pause in (0, 0.05, 0.25, 0):
        series(f"api, pause {pause * 1e3:.0f} ms", a, b, pause)
    runtime = cupy.cuda.runtime
    for pause in (0, 0.05, 0):
        registers, unregisters = [], []
        for _ in range(8):
            if pause:
                time.sleep(pause)
            spans = []
            start = time.perf_counter()
            for x in (a, b):
                first = -(-x.ctypes.data // PAGE) * PAGE
                last = (x.ctypes.data + x.nbytes) // PAGE * PAGE
                runtime.hostRegister(first, last - first, 8)
                spans.append(first)
            middle = time.perf_counter()
            for first in spans:
                runtime.hostUnregister(first)
            registers.append(middle - start)
            unregisters.append(time.perf_counter() - middle)
        print(f"register 320 MB, pause {pause * 1e3:.0f} ms: register {[round(r * 1e3, 1) for r in registers]} "
              f"unregister {[round(r * 1e3, 1) for r in unregisters]}", flush=True)  # fmt: skip
    for label, advice in (("MADV_HUGEPAGE", mmap.MADV_HUGEPAGE), ("MADV_NOHUGEPAGE", mmap.MADV_NOHUGEPAGE)):
        x, region_x = advised((n, m), advice)
        y, region_y = advised((n, m), advice)
        x[:] = a
        y[:] = b
        print(f"{label}: huge-page share {huge_share(x):.2f}, {huge_share(y):.2f}")
        series(f"api, {label}", x, y, 0)
        series(f"api, {label}, pause 50 ms", x, y, 0.05)
        del x, y


if __name__ == "__main__":
    main()
