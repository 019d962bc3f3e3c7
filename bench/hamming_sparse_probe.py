"""Where the sparse method's split between lists and bit planes should fall on this CPU (issue 17, goal 5).

Usage::

    python bench/hamming_sparse_probe.py --threads 2 --out results.json

In one warm process, on the simulated 4,000 x 30,000 alignment of ``bench/hamming_cpu.py``: the bitpack kernel
into a matrix, and the sparse method with its heavy-site share (``seqcompare.hamming.sparse.HEAVY_PAIR_SHARE``)
set to a range of values, medians of ``--repeats``; the CPU's model and vector features beside them. Every
result is checked equal to bitpack's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hamming_cpu import ensure_dataset  # noqa: E402


def cpu_description() -> dict:
    model, flags = "", []
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name") and not model:
                    model = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = line.split(":", 1)[1].split()
    except OSError:
        pass
    return {"model": model, "avx2": "avx2" in flags, "avx512f": "avx512f" in flags,
            "avx512_vpopcntdq": "avx512_vpopcntdq" in flags, "cores": os.cpu_count()}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(HERE, "results_hamming_sparse_probe.json"))
    args = parser.parse_args(argv)
    import seqcompare
    from seqcompare.allpairs import MatrixReduction
    from seqcompare.hamming import sparse
    from seqcompare.hamming.api import encode_inputs, run_hamming

    aln = seqcompare.read_alignment(ensure_dataset(4000, 30000, seed=4000))
    encoded = encode_inputs(aln)
    n = encoded.n_left

    def timed(method):
        times, result = [], None
        for _ in range(args.repeats + 1):  # the first call loads the kernels
            start = time.perf_counter()
            result = run_hamming(encoded, MatrixReduction((n, n), True), method=method, threads=args.threads)
            times.append(time.perf_counter() - start)
        return statistics.median(times[1:]), result

    report = {"cpu": cpu_description(), "threads": args.threads, "rows": {}}
    bitpack_s, expected = timed("bitpack")
    report["rows"]["bitpack"] = round(bitpack_s, 4)
    shipped = sparse.HEAVY_PAIR_SHARE
    for share in (1 / 120, 1 / 470, 1 / 1000, 1 / 2000, 1 / 3800, 1 / 4000, 1 / 10000, 0.0):
        sparse.HEAVY_PAIR_SHARE = share
        operands = sparse.SparseOperands([encoded.left], encoded.space, encoded.table, args.threads)
        seconds, result = timed("sparse")
        if not np.array_equal(result, expected):
            raise SystemExit(f"sparse differs from bitpack at share {share}")
        report["rows"][f"sparse share 1/{round(1 / share) if share else 'inf'}"] = {  # 1/inf: every site in planes
            "seconds": round(seconds, 4), "heavy_sites": int(operands.heavy_sites.size),
            "list_entries": int(operands.lists[0].entries.size) if operands.lists else 0}  # fmt: skip
        print(share, report["rows"], flush=True)
    sparse.HEAVY_PAIR_SHARE = shipped
    with open(args.out, "w") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
