"""Where a cold `seqcompare scan --device cuda` process spends its time (issue 4's end-to-end line).

Usage::

    python3 bench/scan_cold_start.py SAMPLES.fastq SIGNATURES.fasta [--threads N]
    python3 bench/scan_cold_start.py --helper SIGNATURES.fasta

The second form times, alone in a fresh process, each step the command line's GPU helper process
(:mod:`seqcompare.gpu.scan_helper`) takes before it can scan: CuPy import, CUDA context, signature reading,
the index's CPU and GPU parts, and the kernels' module.

Runs, in this fresh process, the same steps as the command line (signature preparation in a background thread
while the FASTQ is parsed, then the scan) and prints each step's end as seconds since the process started
(read from /proc/self/stat), plus the scan's own stage timings.
"""

from __future__ import annotations

import os
import sys
import time


def since_start() -> float:
    with open("/proc/self/stat") as handle:
        start_ticks = int(handle.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as handle:
        uptime = float(handle.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def main() -> int:
    marks = [("python started, script running", since_start())]
    import numpy  # noqa: F401

    marks.append(("numpy imported", since_start()))
    import numba  # noqa: F401

    marks.append(("numba imported", since_start()))
    from concurrent.futures import ThreadPoolExecutor

    from seqcompare.io.fastq import read_fastq
    from seqcompare.scan.api import prepare_signatures, scan

    marks.append(("seqcompare modules imported", since_start()))
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else os.cpu_count()
    background_marks = []

    def prepare():
        import cupy

        background_marks.append(("[background] cupy imported", since_start()))
        with cupy.cuda.Device(0):
            cupy.zeros(1).sum()
        background_marks.append(("[background] CUDA context", since_start()))
        prepared = prepare_signatures(sys.argv[2], device="cuda")
        background_marks.append(("[background] signatures read and indexed", since_start()))
        return prepared

    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(prepare)
        samples = read_fastq(sys.argv[1], threads=threads)
        marks.append(("FASTQ parsed", since_start()))
        prepared = future.result()
        marks.append(("signatures ready", since_start()))
    from seqcompare.gpu.scan import scan_on_gpu

    for label in ("cold", "warm"):
        timings: dict = {}
        start = time.perf_counter()
        scan_on_gpu(samples, prepared.index, False, -1.0, threads=threads, timings=timings)
        stages = ", ".join(f"{key[:-2]} {value:.3f}" for key, value in timings.items())
        marks.append((f"scan_on_gpu {label}: {time.perf_counter() - start:.3f} s ({stages})", since_start()))
    start = time.perf_counter()
    result = scan(samples, prepared, device="cuda", threads=threads)
    marks.append((f"scan done ({len(result)} matches, {time.perf_counter() - start:.3f} s)", since_start()))
    text = "".join(line + "\n" for line in result.lines())
    marks.append(("output formatted", since_start()))
    for name, at in sorted(marks + background_marks, key=lambda item: item[1]):
        print(f"{at:7.3f} s  {name}")
    del text
    return 0


def helper_steps(signatures_path: str) -> int:
    marks = [("python started, script running", since_start())]
    import numpy as np

    from seqcompare.scan.api import prepare_signatures  # noqa: F401  (what the forked helper has imported)

    marks.append(("numpy, numba, seqcompare.scan.api imported", since_start()))
    import cupy

    marks.append(("cupy imported", since_start()))
    cupy.cuda.runtime.getDeviceCount()
    with cupy.cuda.Device(0):
        cupy.zeros(1).sum()
        cupy.cuda.Device(0).synchronize()
        marks.append(("CUDA context, first kernel", since_start()))
        from seqcompare.io.fasta import read_sequences

        signatures = read_sequences(signatures_path)
        marks.append(("signatures read", since_start()))
        from seqcompare.scan import index as index_module

        codes, offsets, k = signatures.codes, signatures.offsets, index_module.DEFAULT_K
        n = index_module._count_clean_windows(codes, offsets, k)
        keys = np.empty(n, np.int64)
        entry_sig, entry_pos = np.empty(n, np.int32), np.empty(n, np.int32)
        index_module._clean_windows(codes, offsets, k, keys, entry_sig, entry_pos)
        marks.append(("index keys (CPU)", since_start()))
        tables = index_module.lookup_tables(cupy.asarray(keys), cupy.asarray(entry_sig), cupy.asarray(entry_pos), k, cupy)
        cupy.cuda.Device(0).synchronize()
        marks.append(("lookup tables sorted and ranked (GPU)", since_start()))
        index_module.clean_runs(codes, offsets, k)
        marks.append(("clean runs (CPU)", since_start()))
        from seqcompare.gpu._runtime import module
        from seqcompare.gpu.scan import pack_records

        packed = [cupy.asarray(a) for a in pack_records(codes, offsets)]
        marks.append(("signatures packed and uploaded", since_start()))
        module("scan.cu", ())
        marks.append(("scan kernels' module loaded", since_start()))
        from seqcompare.gpu.scan import device_index

        device_index(codes, offsets, k)
        marks.append(("device_index again (warm)", since_start()))
    del tables, packed
    for name, at in marks:
        print(f"{at:7.3f} s  {name}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--helper":
        raise SystemExit(helper_steps(sys.argv[2]))
    raise SystemExit(main())
