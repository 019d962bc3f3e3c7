"""GPU NW and DTW through the public API, end to end (warm process, inputs in host memory, scores back in host
memory), with the kernels' own rate beside each row (labelled: the values uploaded first, CUDA events around the
kernels alone). Issue 17, goal 1.

Usage::

    python bench/dp_api.py --out DIR [--pairs 40000] [--length 1000] [--repeats 5] [--profile]

Rows: ``align`` from a 2-D uint8 array of base codes (the default edit distance, by Myers' bit-vectors, with the
NW kernel's rate on the same unit costs beside it; and NW costs 0/2/3/3) and from a list of str; ``dtw`` from
2-D arrays of int16,
int32, int64, float32 and float64. GCUPS = pairs x length^2 / median seconds. ``--profile`` adds where the time
of the wide and string rows goes (string encoding; bytes over PCIe). ``--page-locked`` adds each DTW row from
arrays the caller holds in page-locked memory (``seqcompare.cuda.locked_empty``), which go up with no staging. Writes ``results_dp_api.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def median_of(function, repeats: int) -> tuple:
    function()  # compile, load the kernels, fill the memory pools
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), runs


def main(argv=None) -> int:
    import seqcompare
    from seqcompare.align.gpu import dp_on_gpu
    from seqcompare.cuda import locked_empty

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="row names, separated by commas, or by semicolons where a name "
                        "holds a comma (default: all)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--page-locked", action="store_true",
                        help="add each DTW row from arrays the caller holds in page-locked memory "
                        "(seqcompare.cuda.locked_empty)")  # fmt: skip
    parser.add_argument("--registration", action="store_true",
                        help="add each 2-D row with sides locked in place read-write, not read-only "
                        "(seqcompare.cuda.runtime.READ_ONLY_REGISTRATION), right after it")  # fmt: skip
    args = parser.parse_args(argv)
    from seqcompare.cuda import runtime
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(5)
    pairs, length = args.pairs, args.length
    cells = pairs * length * length
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "pairs": pairs, "length": length, "rows": {}}  # fmt: skip
    only = set(filter(None, args.only.split(";" if ";" in args.only else ",")))  # ";" where names hold commas

    def kernel_rate(kind, t_values, q_values, **options):
        offsets = np.arange(pairs + 1, dtype=np.int64) * length
        plan = np.stack([np.arange(pairs), np.arange(pairs)], axis=1)
        best = []
        for _ in range(3):
            timing = {}
            dp_on_gpu(kind, t_values.reshape(-1), offsets, q_values.reshape(-1), offsets, plan, timings=timing,
                      kernels_only=True, **options)  # fmt: skip
            best.append(timing["kernel_s"])
        return cells / min(best) / 1e9

    def timed_row(name, function, kernel=None):
        median, runs = median_of(function, args.repeats)
        entry = {"median_s": median, "runs_s": runs, "gcups": cells / median / 1e9}
        if kernel is not None:
            entry["kernel_gcups"] = kernel()
            entry["share_of_kernel"] = entry["gcups"] / entry["kernel_gcups"]
        report["rows"][name] = entry
        extra = f"  kernel-only {entry['kernel_gcups']:.0f} GCUPS ({entry['share_of_kernel']:.0%})" if kernel else ""
        print(f"{name:32s} {median:.4f} s  {entry['gcups']:.0f} GCUPS{extra}", flush=True)

    def row(name, function, kernel=None):
        if only and name not in only:
            return
        timed_row(name, function, kernel)
        if args.registration and ("2-D" in name or name.startswith("align uint8 codes, NW")):
            runtime.READ_ONLY_REGISTRATION = False
            try:
                timed_row(f"{name}, registered read-write", function)
            finally:
                runtime.READ_ONLY_REGISTRATION = True

    targets = rng.integers(0, 4, (pairs, length), dtype=np.uint8)
    queries = rng.integers(0, 4, (pairs, length), dtype=np.uint8)
    # The default costs (edit distance) take Myers' bit-vector kernel (kind 4); other costs the NW kernels. The
    # NW kernel on unit costs (what edit distance ran on before) is timed beside it, in the same run (goal 6).
    row("align uint8 codes, edit (Myers)", lambda: seqcompare.align(targets, queries, device="cuda"),
        lambda: kernel_rate(4, targets, queries))
    if not only or "align uint8 codes, edit (Myers)" in only:
        unit_nw = kernel_rate(0, targets, queries, match=0, mismatch=1, ins=1, dele=1)
        report["rows"]["align uint8 codes, edit (Myers)"]["nw_kernel_unit_costs_gcups"] = unit_nw
        myers = report["rows"]["align uint8 codes, edit (Myers)"]["kernel_gcups"]
        print(f"  the NW kernel on the same unit costs: {unit_nw:.0f} GCUPS; Myers' kernel {myers / unit_nw:.2f}x it",
              flush=True)  # fmt: skip
    nw_costs = seqcompare.Costs.seed(0, 2, 3, 3)
    row("align uint8 codes, NW seed(0,2,3,3)", lambda: seqcompare.align(targets, queries, costs=nw_costs, device="cuda"),
        lambda: kernel_rate(0, targets, queries, match=0, mismatch=2, ins=3, dele=3))
    letters = np.frombuffer(b"ACGT", np.uint8)
    target_text = [letters[r].tobytes().decode() for r in targets]
    query_text = [letters[r].tobytes().decode() for r in queries]
    row("align list of str, edit (Myers)", lambda: seqcompare.align(target_text, query_text, device="cuda"))
    if args.profile:
        from seqcompare.io.sequences import NumberedNames, SequenceSet

        # As align encodes a side (names made only for an error message).
        encode, _ = median_of(lambda: SequenceSet.from_strings(target_text, NumberedNames("target", pairs),
                                                               iupac_as_n=True), args.repeats)  # fmt: skip
        report["profile_str_encoding_s_per_side"] = encode
        print(f"  profile: encoding one side's {pairs} strings takes {encode:.4f} s", flush=True)
    del target_text, query_text
    signals_a = rng.integers(0, 1000, (pairs, length))
    signals_b = rng.integers(0, 1000, (pairs, length))
    for dtype in (np.int16, np.int32, np.int64, np.float32, np.float64):
        a, b = signals_a.astype(dtype), signals_b.astype(dtype)
        name = f"dtw {np.dtype(dtype).name} 2-D"
        row(name, lambda: seqcompare.dtw(a, b, device="cuda"), lambda: kernel_rate(1, a, b))
        if args.profile and name in report["rows"]:
            report["rows"][name]["bytes_over_pcie"] = int(a.nbytes + b.nbytes)
            report["rows"][name]["pcie_gb_s_if_bound"] = (a.nbytes + b.nbytes) / report["rows"][name]["median_s"] / 1e9
        if args.page_locked:
            # the same arrays held in page-locked memory by the caller: they go up straight from it
            locked_a, locked_b = locked_empty(a.shape, a.dtype), locked_empty(b.shape, b.dtype)
            locked_a[...], locked_b[...] = a, b
            row(f"{name}, page-locked by the caller", lambda: seqcompare.dtw(locked_a, locked_b, device="cuda"),
                lambda: kernel_rate(1, a, b))  # fmt: skip
            del locked_a, locked_b
    with open(os.path.join(args.out, "results_dp_api.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
