"""The GPU protein search warm in one process: CUDASW++4.0's 20 queries (``allqueries.fasta``) against N random
proteins of 256 (``SEARCH_DB``, default 200,000; the generator of ``bench/align_modes.py``), local, BLOSUM62, gap
open 11 and extend 1, through ``seqcompare.align``. Each call's wall time, and the time of its ``local16``
kernels by CUDA events around each launch (labelled kernel-only), one untimed call first.

    python3 bench/align_search_warm.py .peers/CUDASW4/allqueries.fasta      # REPS=5 SEARCH_DB=200000 WORK=/tmp/sq

Writes WORK/scores.npy (scores and the four positions of every pair) for comparing two trees.
"""
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from align_modes import search_workload, time_kernel_launches, write_random_database  # noqa: E402

import seqcompare  # noqa: E402
import seqcompare.align.modes_gpu as modes_gpu  # noqa: E402


def main() -> None:
    import cupy

    launches = time_kernel_launches(cupy, modes_gpu)  # (kernel name, start event, end event) of the current call
    n_db = int(os.environ.get("SEARCH_DB", 200000))
    reps = int(os.environ.get("REPS", 5))
    work = os.environ.get("WORK", "/tmp/sq")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "db.fasta")
    write_random_database(db, n_db)
    database, queries, matrix, pairs = search_workload(db, sys.argv[1])
    rows = []
    for _ in range(reps + 1):
        launches.clear()
        started = time.perf_counter()
        result = seqcompare.align(database, queries, mode="local", matrix=matrix, gap_open=11, gap_extend=1,
                                  pairs=pairs, device="cuda")  # fmt: skip
        wall = time.perf_counter() - started
        cupy.cuda.runtime.deviceSynchronize()
        by_kernel = {}
        for name, start, end in launches:
            by_kernel[name] = by_kernel.get(name, 0.0) + cupy.cuda.get_elapsed_time(start, end) / 1e3
        kernels = sum(by_kernel.values())
        rows.append({"wall": wall, "kernels": kernels, "gcups_wall": result.cells / wall / 1e9,
                     "gcups_kernels": result.cells / kernels / 1e9,
                     "by_rows": {name: round(seconds, 4) for name, seconds in by_kernel.items()}})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    np.save(os.path.join(work, "scores.npy"), np.column_stack([result.scores, result.positions]))
    timed = rows[1:]
    print("median kernels GCUPS", statistics.median(row["gcups_kernels"] for row in timed),
          "wall GCUPS", statistics.median(row["gcups_wall"] for row in timed))  # fmt: skip


if __name__ == "__main__":
    main()
