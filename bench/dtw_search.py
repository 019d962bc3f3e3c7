"""DTW of one query against a database on one GPU, side by side with cuDTW++ (Schmidt and Hundt, Euro-Par 2020;
github.com/asbschmidt/cuDTW) on its own workload: 1 query of 1,023 values against 2^20 series of 1,023,
float32, with the transfers. Issue 17, goal 2.

Usage::

    python bench/dtw_search.py --out DIR [--cudtw-source DIR] [--entries 1048576] [--repeats 3]

cuDTW++ is built here from its public source (``--cudtw-source``: the ``src`` folder of the repository), with
its own Makefile's flags except ``-arch=sm_90``, and its ``main.cu`` set to this workload (``num_entries``
2^20, ``num_gpus`` 1; everything else as published: 8 streams, batches of 2^17, page-locked host buffers,
the timer around copies and kernels). Its model differs in the cost: (x - y)^2 where seqcompare uses |x - y|;
both are one float32 DP of the same shape (1,023 x 1,023 cells per series). seqcompare is timed through
``seqcompare.dtw(database, query, device="cuda")`` from a NumPy float32 array in ordinary (pageable) memory to
the distances in host memory, by both routes the database can take to the GPU in each round (staged through
page-locked buffers, the default at this size, and locked in place, with ``_PIN_IN_PLACE_UP_TO`` raised); and,
on cuDTW++'s own footing, from the same database held in page-locked memory (``seqcompare.cuda.locked_empty``,
filled before the timer, as cuDTW++ fills its page-locked buffers before its own). Writes
``results_dtw_search.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def build_cudtw(source: str, work: str, entries: int) -> str:
    folder = os.path.join(work, "cudtw")
    shutil.copytree(source, folder)
    main = os.path.join(folder, "main.cu")
    with open(main) as handle:
        text = handle.read()
    text, found = re.subn(r"index_t num_entries = [^;]+;", f"index_t num_entries = {entries};", text)
    text, found_gpus = re.subn(r"index_t num_gpus = \d+;", "index_t num_gpus = 1;", text)
    if found != 1 or found_gpus != 1:
        raise SystemExit("cuDTW++'s main.cu no longer has the settings this benchmark sets")
    with open(main, "w") as handle:
        handle.write(text)
    binary = os.path.join(folder, "cudtw")
    command = ["nvcc", "-O3", "-std=c++14", "-arch=sm_90", '-Xcompiler=-fopenmp -march=native', "main.cu", "-o", binary]
    subprocess.run(command, cwd=folder, check=True)
    return binary


def run_cudtw(binary: str) -> float:
    done = subprocess.run([binary], capture_output=True, text=True, check=True, cwd=os.path.dirname(binary))
    found = re.search(r"TIMING: ([0-9.]+) ms .*\(streamed_computation\)", done.stdout)
    if not found:
        raise SystemExit(f"no streamed_computation timing in cuDTW++'s output:\n{done.stdout}")
    return float(found.group(1)) / 1e3


def main(argv=None) -> int:
    import seqcompare
    from seqcompare.align import gpu
    from seqcompare.align.gpu import dp_on_gpu
    from seqcompare.cuda import locked_empty

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--cudtw-source", help="cuDTW++'s src folder (built here); without it, seqcompare only")
    parser.add_argument("--entries", type=int, default=1 << 20)
    parser.add_argument("--length", type=int, default=1023)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    entries, length = args.entries, args.length
    cells = entries * length * length
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "entries": entries, "length": length,
              "cells": cells, "rows": {}}  # fmt: skip
    rng = np.random.default_rng(1)
    block = rng.standard_normal((4096, length), dtype=np.float32)
    database = np.tile(block, (-(-entries // 4096), 1))[:entries]
    query = rng.standard_normal(length, dtype=np.float32)
    with tempfile.TemporaryDirectory() as work:
        rounds = []
        binary = build_cudtw(args.cudtw_source, work, entries) if args.cudtw_source else None
        seqcompare.dtw(database[:8192], query, device="cuda")  # compile, warm
        locked = locked_empty(database.shape, database.dtype)
        locked[...] = database
        for _ in range(args.repeats):  # interleaved: one run of each per round
            start = time.perf_counter()
            result = seqcompare.dtw(database, query, device="cuda")
            ours = time.perf_counter() - start
            # the same call with the database locked in place instead (above _PIN_IN_PLACE_UP_TO it is staged)
            limit, gpu._PIN_IN_PLACE_UP_TO = gpu._PIN_IN_PLACE_UP_TO, 1 << 62
            start = time.perf_counter()
            in_place_result = seqcompare.dtw(database, query, device="cuda")
            ours_in_place = time.perf_counter() - start
            gpu._PIN_IN_PLACE_UP_TO = limit
            assert np.array_equal(in_place_result.scores, result.scores)
            # the database held in page-locked memory, as cuDTW++ holds its own (filled before its timer starts)
            start = time.perf_counter()
            locked_result = seqcompare.dtw(locked, query, device="cuda")
            ours_locked = time.perf_counter() - start
            assert np.array_equal(locked_result.scores, result.scores)
            theirs = run_cudtw(binary) if binary else None
            rounds.append((ours, theirs, ours_in_place, ours_locked))
            print(f"seqcompare {ours:.4f} s (locked in place: {ours_in_place:.4f} s; from page-locked memory: "
                  f"{ours_locked:.4f} s)" + (f"  cuDTW++ {theirs:.4f} s" if theirs else ""), flush=True)  # fmt: skip
    ours = statistics.median(r[0] for r in rounds)
    report["rows"]["seqcompare.dtw(database, query) float32"] = {"median_s": ours, "runs_s": [r[0] for r in rounds],
                                                                  "gcups": cells / ours / 1e9}  # fmt: skip
    in_place = statistics.median(r[2] for r in rounds)
    report["rows"]["the same, database locked in place (_PIN_IN_PLACE_UP_TO raised)"] = {
        "median_s": in_place, "runs_s": [r[2] for r in rounds], "gcups": cells / in_place / 1e9}  # fmt: skip
    from_locked = statistics.median(r[3] for r in rounds)
    report["rows"]["the same, database in page-locked memory (seqcompare.cuda.locked_empty)"] = {
        "median_s": from_locked, "runs_s": [r[3] for r in rounds], "gcups": cells / from_locked / 1e9}  # fmt: skip
    if binary:
        theirs = statistics.median(r[1] for r in rounds)
        report["rows"]["cuDTW++ streamed_computation"] = {"median_s": theirs, "runs_s": [r[1] for r in rounds],
                                                          "gcups": cells / theirs / 1e9}  # fmt: skip
        report["ratio_cudtw_over_seqcompare"] = theirs / ours
        report["ratio_cudtw_over_seqcompare_page_locked"] = theirs / from_locked
    timing = {}
    offsets = np.arange(entries + 1, dtype=np.int64) * length
    plan = np.stack([np.arange(entries), np.zeros(entries, np.int64)], axis=1)
    dp_on_gpu(1, database.reshape(-1), offsets, query, np.array([0, length]), plan, timings=timing, kernels_only=True)
    report["rows"]["seqcompare kernels only (labelled)"] = {"seconds": timing["kernel_s"],
                                                            "gcups": cells / timing["kernel_s"] / 1e9}  # fmt: skip
    # Where the time of one call from page-locked memory goes: dp_on_gpu's stages (host seconds since its start).
    traced = {}
    dp_on_gpu(1, locked.reshape(-1), offsets, query, np.array([0, length]), plan, timings=traced, check=True)
    report["profile_page_locked_call"] = traced
    stages = traced["stages"]
    pieces = [stage for stage in stages if stage[0].startswith("piece ")]
    marks = [stage for stage in stages if not stage[0].startswith("piece ")][:2] + pieces[:1] + pieces[-1:] + [
        stage for stage in stages if not stage[0].startswith("piece ")][2:]
    print("dp_on_gpu from page-locked memory: " + ", ".join(f"{name} {at:.4f}" for name, at in marks) +
          f"; kernels {traced['kernel_s']:.4f} s, total {traced['total_s']:.4f} s", flush=True)  # fmt: skip
    assert result.scores.dtype == np.float32 and np.isfinite(result.scores).all()
    for name, entry in report["rows"].items():
        print(f"{name:45s} {entry.get('median_s', entry.get('seconds')):.4f} s  {entry['gcups']:.0f} GCUPS")
    with open(os.path.join(args.out, "results_dtw_search.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
