"""Floors of a machine, each in fresh processes: Python's start, NumPy's and Numba's imports, CUDA's start by the
driver alone (ctypes) and by CuPy, first-touch page faults of 2 GB (huge and 4 KB pages, 1 and 16 threads), and,
given a FASTQ file, :func:`seqcompare.io.fastq.read_fastq`'s passes on 16 threads (issue 17's goals 4 and 5 and
issue 20's read: what no run of ours can go below). A labelled probe, not a product figure::

    python3 bench/host_floors.py [READS.fastq]        # READS_ONLY=1: the FASTQ part alone
"""
import json, os, subprocess, sys, time

PY = sys.executable
env = dict(os.environ)
env.pop("PYTHONDONTWRITEBYTECODE", None)

def fresh(code, n=3):
    times = []
    for _ in range(n):
        s = time.perf_counter()
        out = subprocess.run([PY, "-c", code], capture_output=True, text=True, env=env)
        times.append(round(time.perf_counter() - s, 3))
        last = (out.stdout + out.stderr).strip()[-300:]
    return times, last

DRIVER = r'''
import ctypes, time
s = time.perf_counter()
cuda = ctypes.CDLL("libcuda.so.1")
a = time.perf_counter()
assert cuda.cuInit(0) == 0
b = time.perf_counter()
dev = ctypes.c_int(); assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
ctx = ctypes.c_void_p(); assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cuda.cuCtxSetCurrent(ctx) == 0
ptr = ctypes.c_uint64(); assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), 1 << 20) == 0
c = time.perf_counter()
print("dlopen", round(a - s, 3), "cuInit", round(b - a, 3), "ctx+alloc", round(c - b, 3))
'''
CUPY = r'''
import time
s = time.perf_counter()
import cupy
a = time.perf_counter()
x = cupy.zeros(1)
cupy.cuda.Device().synchronize()
b = time.perf_counter()
print("import cupy", round(a - s, 3), "context+first array", round(b - a, 3))
'''
FAULTS = r'''
import time, numpy as np, mmap
from concurrent.futures import ThreadPoolExecutor
def huge(n):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS); m.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(m, np.uint8)
n = 2_000_000_000
for name, make in (("huge", huge), ("plain", lambda n: np.empty(n, np.uint8))):
    for threads in (1, 16):
        a = make(n)
        s = time.perf_counter()
        step = n // threads
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda i: a[i * step:(i + 1) * step].fill(1), range(threads)))
        t = time.perf_counter() - s
        s = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda i: a[i * step:(i + 1) * step].fill(2), range(threads)))
        print(name, "threads", threads, "first fill s", round(t, 3), "second fill s", round(time.perf_counter() - s, 3))
        del a
'''
results = {}
reads_only = os.environ.get("READS_ONLY")
if not reads_only:
  results["pass"] = fresh("pass")
  results["numpy"] = fresh("import numpy")
  results["numpy_numba"] = fresh("import numpy, numba")
  results["seqcompare"] = fresh("import seqcompare")
  results["driver"] = fresh(DRIVER)
  results["cupy"] = fresh(CUPY)
  results["faults"] = fresh(FAULTS, 1)
reads = sys.argv[1] if len(sys.argv) > 1 else None
if reads:
    FQ = r'''
import time, sys
s = time.perf_counter()
from seqcompare.io.fastq import read_fastq
tm = {}
a = time.perf_counter()
ss = read_fastq(sys.argv[1], threads=16, timings=tm)
b = time.perf_counter()
print("import", round(a - s, 3), "read_fastq", round(b - a, 3), {k: round(v, 3) for k, v in tm.items()})
'''
    times = []
    for _ in range(3):
        out = subprocess.run([PY, "-c", FQ, reads], capture_output=True, text=True, env=env)
        times.append((out.stdout + out.stderr).strip()[-400:])
    results["read_fastq_1gbp"] = times
for k, v in results.items():
    print(k, v)
