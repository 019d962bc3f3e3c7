"""Page-locking host memory in place (issue 17, goal 1; a labelled probe, not a product figure): cudaHostRegister
and cudaHostUnregister of 320 MB (the two int32 sides of 40,000 pairs of 1,000) split over 1, 2, 4 and 8 threads,
with no flags and read-only (cudaHostRegisterReadOnly, 8)::

    python3 bench/register_probe.py
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import cupy
import numpy as np

PAGE = 4096
READ_ONLY = 8  # cudaHostRegisterReadOnly


def main() -> None:
    values = np.ones(80_000_000, np.int32)  # 320 MB, faulted in by the fill
    first = -(-values.ctypes.data // PAGE) * PAGE  # whole pages inside the array
    last = (values.ctypes.data + values.nbytes) // PAGE * PAGE
    cupy.cuda.runtime.free(cupy.cuda.runtime.malloc(1))  # the context, before any timing
    runtime = cupy.cuda.runtime
    for flags in (0, READ_ONLY):
        for threads in (1, 2, 4, 8, 1, 4):  # 1 and 4 again: the first pass of each flag pays extra
            cuts = (np.linspace(first // PAGE, last // PAGE, threads + 1).astype(np.int64) * PAGE).tolist()
            ranges = list(zip(cuts[:-1], cuts[1:]))
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(lambda _: None, range(threads)))  # the threads exist before the timer starts
                began = time.perf_counter()
                list(pool.map(lambda span: runtime.hostRegister(span[0], span[1] - span[0], flags), ranges))
                registered = time.perf_counter()
                list(pool.map(lambda span: runtime.hostUnregister(span[0]), ranges))
                unregistered = time.perf_counter()
            print(f"flags {flags} threads {threads}: register {(registered - began) * 1e3:6.1f} ms  "
                  f"unregister {(unregistered - registered) * 1e3:6.1f} ms  (320 MB)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
