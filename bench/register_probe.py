"""Page-locking host memory in place (issue 17, goal 1; a labelled probe, not a product figure): cudaHostRegister
and cudaHostUnregister of 320 MB (the two int32 sides of 40,000 pairs of 1,000) split over 1, 2, 4 and 8 threads,
with no flags and read-only (cudaHostRegisterReadOnly, 8)::

    python3 bench/register_probe.py
"""
import time, numpy as np, cupy as cp
from concurrent.futures import ThreadPoolExecutor
PAGE = 4096
a = np.ones(80_000_000, np.int32)  # 320 MB
base = -(-a.ctypes.data // PAGE) * PAGE
end = (a.ctypes.data + a.nbytes) // PAGE * PAGE
cp.cuda.runtime.free(cp.cuda.runtime.malloc(1))
for flags in (0, 8):
    for threads in (1, 2, 4, 8, 1, 4):
        cuts = np.linspace(base // PAGE, end // PAGE, threads + 1).astype(np.int64) * PAGE
        ranges = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
        pool = ThreadPoolExecutor(threads)
        list(pool.map(lambda x: x, range(threads)))
        s = time.perf_counter()
        list(pool.map(lambda r: cp.cuda.runtime.hostRegister(r[0], r[1] - r[0], flags), ranges))
        reg = time.perf_counter() - s
        s = time.perf_counter()
        list(pool.map(lambda r: cp.cuda.runtime.hostUnregister(r[0]), ranges))
        unreg = time.perf_counter() - s
        pool.shutdown()
        print(f"flags {flags} threads {threads}: register {reg*1e3:6.1f} ms  unregister {unreg*1e3:6.1f} ms  (320 MB)", flush=True)
