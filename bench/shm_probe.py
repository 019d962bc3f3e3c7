"""How fast this host makes and page-locks a large shared buffer, by each route the GPU helper could take.

The forked GPU helper (``seqcompare.cuda.helper``) reads the parent's sequences from an anonymous shared file
(``memfd``) and page-locks it before uploading. Writing 1 GB into fresh shared pages and locking them are two of
the largest stages of ``hamming --device cuda --max-dist`` end to end (bench/RESULTS.md, session 31). This
script times, on one host, each way to fill and lock such a buffer, and how long a killed process that holds
CUDA and a locked gigabyte takes to end (the pipes it holds stay open until then)::

    python3 bench/shm_probe.py --gigabytes 1 --out OUTDIR

Every figure is the median of ``--repeats`` fresh buffers. No result of the package depends on it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import mmap
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
MADV_HUGEPAGE = 14
MADV_POPULATE_WRITE = 23  # Linux 5.14
MFD_HUGETLB = 4
_FILE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "seqcompare-shm-probe.bin")


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError as exc:
        return f"unreadable ({exc.strerror})"


def _pieces(size: int, count: int) -> list[tuple[int, int]]:
    step = -(-size // count // mmap.PAGESIZE) * mmap.PAGESIZE
    return [(a, min(size, a + step)) for a in range(0, size, step)]


def _madvise(address: int, length: int, advice: int) -> None:
    if LIBC.madvise(address, length, advice) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def fill(route: str, size: int, threads: int, source: np.ndarray) -> dict:
    """A fresh shared buffer of ``size`` bytes written with ``source``'s bytes by ``route``; its stages' seconds.

    Routes: ``plain`` (pages faulted in by the writing threads), ``populate`` (MADV_POPULATE_WRITE first, by the
    same threads), ``fallocate``, ``thp`` and ``thp_populate`` (MADV_HUGEPAGE first), ``hugetlb`` (MFD_HUGETLB),
    ``anonymous`` (private anonymous memory with MADV_HUGEPAGE: not shareable, the baseline), ``file`` (a
    read-only mapping of a file in /tmp that holds the bytes already: nothing is written)."""
    flags = MFD_HUGETLB if route == "hugetlb" else 0
    began = time.perf_counter()
    if route == "file":
        descriptor = os.open(_FILE, os.O_RDONLY)
    else:
        descriptor = os.memfd_create("probe", flags) if route != "anonymous" else os.open(os.devnull, os.O_RDONLY)
    try:
        if route not in ("anonymous", "file"):
            os.ftruncate(descriptor, size)
        if route == "fallocate":
            os.posix_fallocate(descriptor, 0, size)
        allocated = time.perf_counter()
        if route == "anonymous":
            memory = mmap.mmap(-1, size)
        elif route == "file":
            memory = mmap.mmap(descriptor, size, prot=mmap.PROT_READ)
        else:
            memory = mmap.mmap(descriptor, size)
        array = np.frombuffer(memory, np.uint8)
        address = array.ctypes.data
        if route in ("thp", "thp_populate", "anonymous"):
            _madvise(address, size, MADV_HUGEPAGE)
        populated = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            if route in ("populate", "thp_populate", "fallocate"):
                list(pool.map(lambda ab: _madvise(address + ab[0], ab[1] - ab[0], MADV_POPULATE_WRITE),
                              _pieces(size, threads)))  # fmt: skip
                populated = time.perf_counter()
            if route == "file":  # the bytes are there; read every page once so that the mapping is populated
                list(pool.map(lambda ab: int(array[ab[0] : ab[1] : mmap.PAGESIZE].sum()), _pieces(size, threads)))
            else:
                list(pool.map(lambda ab: np.copyto(array[ab[0] : ab[1]], source[ab[0] : ab[1]]),
                              _pieces(size, threads)))  # fmt: skip
        written = time.perf_counter()
        stages = {"allocate_s": allocated - began, "populate_s": populated - allocated, "write_s": written - populated,
                  "total_s": written - began}  # fmt: skip
        stages["huge_kb"] = _anon_huge_kb(address)
        return stages, descriptor, memory, array
    except BaseException:
        os.close(descriptor)
        raise


def _anon_huge_kb(address: int) -> int:
    """``ShmemPmdMapped`` (or ``AnonHugePages``) of the mapping at ``address``, in kB: whether huge pages were used."""
    lines = _read("/proc/self/smaps").splitlines()
    inside = False
    total = 0
    for line in lines:
        head = line.split()
        if "-" in head[0] and len(head) > 4:
            low, high = (int(x, 16) for x in head[0].split("-"))
            inside = low <= address < high
        elif inside and head[0] in ("ShmemPmdMapped:", "FilePmdMapped:", "AnonHugePages:"):
            total += int(head[1])
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gigabytes", type=float, default=1.0)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    size = int(args.gigabytes * (1 << 30)) // mmap.PAGESIZE * mmap.PAGESIZE
    report = {
        "host": platform.node(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "thp_enabled": _read("/sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_shmem_enabled": _read("/sys/kernel/mm/transparent_hugepage/shmem_enabled"),
        "nr_hugepages": _read("/proc/sys/vm/nr_hugepages"),
        "tmp_filesystem": subprocess.run(["df", "-T", "/tmp"], capture_output=True, text=True).stdout.strip(),
        "bytes": size,
    }
    source = np.random.default_rng(1).integers(65, 90, size, dtype=np.uint8)
    try:
        import cupy
    except ImportError:
        cupy = None
    with open(_FILE, "wb") as handle:
        handle.write(source.tobytes())
    routes = [("plain", 1), ("plain", 4), ("plain", args.threads), ("populate", args.threads),
              ("fallocate", args.threads), ("thp_populate", args.threads), ("hugetlb", args.threads),
              ("anonymous", args.threads), ("file", args.threads)]  # fmt: skip
    for route, threads in routes:
        runs = []
        name = f"{route}_{threads}threads"
        for _ in range(args.repeats):
            try:
                stages, descriptor, memory, array = fill(route, size, threads, source)
            except OSError as exc:
                runs = f"failed: {exc}"
                break
            if cupy is not None:
                started = time.perf_counter()
                try:
                    flags = 1 | (8 if route == "file" else 0)  # portable (and read-only for a file's pages)
                    cupy.cuda.runtime.hostRegister(array.ctypes.data, size, flags)
                    stages["register_s"] = time.perf_counter() - started
                    device = cupy.empty(size, np.uint8)
                    cupy.cuda.runtime.deviceSynchronize()
                    started = time.perf_counter()
                    device.set(array)
                    cupy.cuda.runtime.deviceSynchronize()
                    stages["upload_s"] = time.perf_counter() - started
                    del device
                    started = time.perf_counter()
                    cupy.cuda.runtime.hostUnregister(array.ctypes.data)
                    stages["unregister_s"] = time.perf_counter() - started
                except cupy.cuda.runtime.CUDARuntimeError as exc:
                    stages["register_error"] = str(exc)
                    device = cupy.empty(size, np.uint8)
                    started = time.perf_counter()
                    device.set(array)  # staged by the driver
                    cupy.cuda.runtime.deviceSynchronize()
                    stages["pageable_upload_s"] = time.perf_counter() - started
                    del device
            runs.append(stages)
            del array
            memory.close()
            os.close(descriptor)
        report[name] = runs
        if isinstance(runs, list):
            keys = [k for k in runs[0] if k.endswith("_s")]
            summary = {k: round(statistics.median(r[k] for r in runs), 4) for k in keys}
            summary["huge_kb"] = runs[-1]["huge_kb"]
            summary.update({k: v for k, v in runs[-1].items() if k.endswith("_error")})
            report[name + "_median"] = summary
            print(name, summary, flush=True)
        else:
            print(name, runs, flush=True)
    os.remove(_FILE)
    if cupy is not None:
        report["killed_process_end_s"] = _killed_end(size)
        print("a killed process holding CUDA and a locked buffer ends after (s):", report["killed_process_end_s"])
    with open(os.path.join(args.out, "shm_probe.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


_HOLDER = r"""
import mmap, os, sys, numpy as np, cupy
size = int(sys.argv[1])
memory = mmap.mmap(-1, size)
array = np.frombuffer(memory, np.uint8); array[::4096] = 1
cupy.cuda.runtime.hostRegister(array.ctypes.data, size, 1)
device = cupy.empty(size, np.uint8); device.set(array); cupy.cuda.runtime.deviceSynchronize()
print("ready", flush=True)
sys.stdin.read()
"""


def _killed_end(size: int) -> list[float]:
    """Seconds from SIGKILL to the end of a process that holds a CUDA context, ``size`` bytes locked and on the
    device: how long the pipes it inherited stay open after a command kills it."""
    ends = []
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", _HOLDER, str(size)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE)  # fmt: skip
        child.stdout.readline()
        started = time.perf_counter()
        child.kill()
        child.stdout.read()  # EOF once every holder of the pipe's write end is gone
        ends.append(round(time.perf_counter() - started, 4))
        child.wait()
    return ends


if __name__ == "__main__":
    sys.exit(main())
