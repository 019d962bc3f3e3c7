"""Unlocking a call's pages after it returns (issue 17, goal 1; a labelled probe): ``seqcompare.dtw(a, b,
device="cuda")`` on 40,000 pairs of 1,000 from ordinary arrays, with ``seqcompare.align.gpu.DEFER_UNLOCKING`` on
and off, interleaved round by round in one warm process::

    python3 bench/dp_unlock_probe.py [--rounds 3] [--repeats 7] [--dtypes int32,int16,float32]

Two ways of calling, each the median of ``--repeats`` calls:

- ``back to back``: one call after another on the same arrays, as ``bench/dp_api.py`` times them. A call then
  waits at its start for the pages the call before it left to unlock.
- ``spaced``: a 30 ms pause before each call (a caller doing something with the scores), the call alone timed.

Also, for one call of each way (``--timeline``), the host's time at each step of ``dp_on_gpu`` (its ``stages``)
and the API's time around it. Every call's scores are checked equal to the first call's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def main(argv=None) -> None:
    import seqcompare
    import seqcompare.align.gpu as gpu

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dtypes", default="int32,int16,float32")
    parser.add_argument("--timeline", action="store_true")
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(5)
    cells = args.pairs * args.length * args.length
    signals = [rng.integers(0, 1000, (args.pairs, args.length)) for _ in range(2)]
    report = {"pairs": args.pairs, "length": args.length, "rows": {}}
    original = gpu.dp_on_gpu
    traced = {}

    def traced_call(*call_args, **options):
        traced["entered"] = time.perf_counter()
        options["timings"] = traced.setdefault("timings", {})
        try:
            return original(*call_args, **options)
        finally:
            traced["left"] = time.perf_counter()

    for name in args.dtypes.split(","):
        a, b = (values.astype(name) for values in signals)
        expected = seqcompare.dtw(a, b, device="cuda").scores
        for round_number in range(args.rounds):
            for deferred in (True, False):
                gpu.DEFER_UNLOCKING = deferred
                for way in ("back to back", "spaced"):
                    gpu.wait_for_unlocking()
                    seqcompare.dtw(a, b, device="cuda")  # a warm-up in this setting
                    runs = []
                    for _ in range(args.repeats):
                        if way == "spaced":
                            time.sleep(0.03)
                        start = time.perf_counter()
                        scores = seqcompare.dtw(a, b, device="cuda").scores
                        runs.append(time.perf_counter() - start)
                        assert np.array_equal(scores, expected)
                    median = statistics.median(runs)
                    key = f"{name} {way} {'deferred' if deferred else 'unlocked in the call'}"
                    report["rows"].setdefault(key, []).append({"median_s": median, "runs_s": runs,
                                                                "gcups": cells / median / 1e9})  # fmt: skip
                    print(f"round {round_number + 1} {key:44s} {median * 1e3:7.2f} ms "
                          f"{cells / median / 1e9:6.0f} GCUPS (min {min(runs) * 1e3:.2f})", flush=True)  # fmt: skip
        if args.timeline:
            for deferred in (True, False):
                gpu.DEFER_UNLOCKING = deferred
                gpu.wait_for_unlocking()
                gpu.dp_on_gpu = traced_call
                try:
                    time.sleep(0.03)
                    traced.clear()
                    start = time.perf_counter()
                    seqcompare.dtw(a, b, device="cuda")
                    end = time.perf_counter()
                finally:
                    gpu.dp_on_gpu = original
                steps = [(step, seconds) for step, seconds in traced["timings"].get("stages", [])]
                line = ", ".join(f"{step} {seconds * 1e3:.2f}" for step, seconds in steps)
                print(f"timeline {name} {'deferred' if deferred else 'in the call'}: API before "
                      f"{(traced['entered'] - start) * 1e3:.2f} ms; {line}; API after "
                      f"{(end - traced['left']) * 1e3:.2f}; total {(end - start) * 1e3:.2f} ms; kernels "
                      f"{traced['timings'].get('kernel_s', 0) * 1e3:.2f} ms", flush=True)  # fmt: skip
        gpu.DEFER_UNLOCKING = True
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(report, handle, indent=1)


if __name__ == "__main__":
    main()
