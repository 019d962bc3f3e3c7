"""Where a cold `seqcompare scan --device cuda` process spends its time (issue 4's end-to-end line).

Usage::

    python3 bench/scan_cold_start.py SAMPLES.fastq SIGNATURES.fasta [--threads N]

This is the in-process path (``seqcompare.scan.api.scan``); the command line forks a helper process instead
(:mod:`seqcompare.scan.gpu_helper`), and its log (without ``-q``) gives that path's stage times.

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
    from seqcompare.scan.gpu import scan_on_gpu

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


if __name__ == "__main__":
    raise SystemExit(main())
