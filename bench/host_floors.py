"""Floors of a machine, each timed in fresh processes: Python's start, NumPy's and Numba's imports, CUDA's start
by the driver alone (through ctypes) and by CuPy, first-touch page faults of 2 GB (huge and 4 KB pages, 1 and 16
threads), and, given a FASTQ file, :func:`seqcompare.io.fastq.read_fastq`'s passes on 16 threads. They are what
no run of ours can go below (issue 17's goals 4 and 5, issue 20's read). A labelled probe, not a product figure::

    python3 bench/host_floors.py [READS.fastq] [--reads-only] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

# Fresh processes compile nothing: bytecode as an installed package has it (the shell of the development machine
# sets PYTHONDONTWRITEBYTECODE, which would charge every import its compilation).
ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}

CUDA_BY_THE_DRIVER = r"""
import ctypes, time
began = time.perf_counter()
cuda = ctypes.CDLL("libcuda.so.1")
loaded = time.perf_counter()
assert cuda.cuInit(0) == 0
initialised = time.perf_counter()
device = ctypes.c_int()
assert cuda.cuDeviceGet(ctypes.byref(device), 0) == 0
context = ctypes.c_void_p()
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0
assert cuda.cuCtxSetCurrent(context) == 0
pointer = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(pointer), 1 << 20) == 0
allocated = time.perf_counter()
print("dlopen", round(loaded - began, 3), "cuInit", round(initialised - loaded, 3),
      "ctx+alloc", round(allocated - initialised, 3))
"""

CUDA_BY_CUPY = r"""
import time
began = time.perf_counter()
import cupy
imported = time.perf_counter()
cupy.zeros(1)
cupy.cuda.Device().synchronize()
ready = time.perf_counter()
print("import cupy", round(imported - began, 3), "context+first array", round(ready - imported, 3))
"""

PAGE_FAULTS = r"""
import mmap, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np

def in_huge_pages(size):
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory.madvise(mmap.MADV_HUGEPAGE)
    return np.frombuffer(memory, np.uint8)

size = 2_000_000_000
for name, make in (("huge", in_huge_pages), ("plain", lambda size: np.empty(size, np.uint8))):
    for threads in (1, 16):
        array = make(size)
        step = size // threads
        fills = []
        for value in (1, 2):  # the first fill faults every page in, the second only writes
            began = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(lambda i: array[i * step:(i + 1) * step].fill(value), range(threads)))
            fills.append(round(time.perf_counter() - began, 3))
        print(name, "threads", threads, "first fill s", fills[0], "second fill s", fills[1])
        del array
"""

READ_FASTQ = r"""
import sys, time
began = time.perf_counter()
from seqcompare.io.fastq import read_fastq
passes = {}
imported = time.perf_counter()
read_fastq(sys.argv[1], threads=16, timings=passes)
read = time.perf_counter()
print("import", round(imported - began, 3), "read_fastq", round(read - imported, 3),
      {name: round(seconds, 3) for name, seconds in passes.items()})
"""


def fresh(code: str, *arguments: str, repeats: int = 3) -> tuple[list, str]:
    """Seconds of ``repeats`` fresh processes running ``code``, and the last one's output (its tail)."""
    seconds, said = [], ""
    for _ in range(repeats):
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True,
                              env=ENVIRONMENT)  # fmt: skip
        seconds.append(round(time.perf_counter() - began, 3))
        said = (done.stdout + done.stderr).strip()[-400:]
    return seconds, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reads", nargs="?", help="a FASTQ file: read_fastq's passes on it")
    parser.add_argument("--reads-only", action="store_true", help="only the FASTQ part")
    parser.add_argument("--out", help="also write the results as JSON here")
    args = parser.parse_args()
    results = {}
    if not args.reads_only:
        results["pass"] = fresh("pass")
        results["numpy"] = fresh("import numpy")
        results["numpy_numba"] = fresh("import numpy, numba")
        results["seqcompare"] = fresh("import seqcompare")
        results["driver"] = fresh(CUDA_BY_THE_DRIVER)
        results["cupy"] = fresh(CUDA_BY_CUPY)
        results["faults"] = fresh(PAGE_FAULTS, repeats=1)
    if args.reads:
        results["read_fastq"] = [fresh(READ_FASTQ, args.reads, repeats=1)[1] for _ in range(3)]
    for name, found in results.items():
        print(name, found)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
