"""Where the GPU DTW host path's time goes beyond the kernels (issue 17, goal 1): the host's and the bus's rates,
and the API's time under other piece sizes, stream counts and staging threads, in one warm process.

    python bench/dp_transfer_probe.py --out DIR [--pairs 40000] [--length 1000] [--repeats 5]

Measured, each the median of ``--repeats`` after one warm-up:

- ``host copy``: ``copy_in_parallel`` of the int16 workload (both sides, 160 MB) into page-locked memory, at 1 to
  16 threads (what staging costs the host).
- ``h2d pinned`` / ``h2d pageable``: the same bytes to the GPU from page-locked memory, and straight from the
  caller's (pageable) arrays.
- ``register``: ``cudaHostRegister`` of the caller's arrays (page-locking them where they lie) and the copy from
  them; then unregistering.
- ``api``: ``seqcompare.dtw(a, b, device="cuda")`` for int16, int32 and float32 by both upload routes
  (``PIN_IN_PLACE``: the caller's pages registered, or staging copies) and under other ``_MIN_PIECE_PAIRS`` and
  ``_STREAMS`` (module constants, set for the run), with each staging copy's time summed; for int16, one
  call's timeline (the host's time at each launch, the device's at each piece's last kernel); and the two
  routes' scores compared.

Writes ``results_dp_transfer_probe.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np


def main(argv=None) -> int:
    import cupy
    from dp_api import median_of  # this folder's: one warm-up, then the median of the runs

    import seqcompare
    import seqcompare.align.gpu as gpu
    import seqcompare.cuda.runtime as runtime

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(5)
    cells = args.pairs * args.length * args.length
    report = {"pairs": args.pairs, "length": args.length, "rows": {}}

    def record(name, seconds, **extra):
        report["rows"][name] = {"median_s": seconds, **extra}
        text = " ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in extra.items())
        print(f"{name:58s} {seconds * 1e3:8.2f} ms {text}", flush=True)

    signals = rng.integers(0, 1000, (2, args.pairs, args.length))
    flat = np.ascontiguousarray(signals.astype(np.int16)).reshape(-1)
    pinned = runtime.pinned_empty(flat.shape, flat.dtype)
    default_threads = runtime.COPY_THREADS
    for threads in (1, 4, 8, 16):
        runtime.COPY_THREADS = threads
        seconds, _ = median_of(lambda: runtime.copy_in_parallel(pinned, flat), args.repeats)
        record(f"host copy into pinned, {threads} threads", seconds, gb_s=flat.nbytes / seconds / 1e9)
    runtime.COPY_THREADS = default_threads
    device = cupy.empty(flat.size, flat.dtype)
    stream = cupy.cuda.Stream(non_blocking=True)

    def h2d(source):
        device.set(source, stream=stream)
        stream.synchronize()

    seconds, _ = median_of(lambda: h2d(pinned), args.repeats)
    record("h2d from pinned", seconds, gb_s=flat.nbytes / seconds / 1e9)
    seconds, _ = median_of(lambda: h2d(flat), args.repeats)
    record("h2d from pageable", seconds, gb_s=flat.nbytes / seconds / 1e9)
    registering = []

    def registered():
        started = time.perf_counter()
        cupy.cuda.runtime.hostRegister(flat.ctypes.data, flat.nbytes, 0)
        registering.append(time.perf_counter() - started)
        try:
            h2d(flat)
        finally:
            cupy.cuda.runtime.hostUnregister(flat.ctypes.data)

    seconds, _ = median_of(registered, args.repeats)
    record("register + h2d + unregister", seconds, register_s=statistics.median(registering),
           gb_s=flat.nbytes / seconds / 1e9)  # fmt: skip
    del device, pinned

    copies = []
    original_copy = gpu.copy_in_parallel

    def timed_copy(destination, source):
        started = time.perf_counter()
        original_copy(destination, source)
        copies.append(time.perf_counter() - started)

    gpu.copy_in_parallel = timed_copy
    defaults = {"PIN_IN_PLACE": gpu.PIN_IN_PLACE, "_MIN_PIECE_PAIRS": gpu._MIN_PIECE_PAIRS,
                "_PIECE_BYTES": gpu._PIECE_BYTES, "_STREAMS": gpu._STREAMS}  # fmt: skip
    settings = [{"PIN_IN_PLACE": False}, {"PIN_IN_PLACE": True}, {"PIN_IN_PLACE": False, "_STREAMS": 2},
                {"PIN_IN_PLACE": True, "_STREAMS": 2}, {"PIN_IN_PLACE": True, "_MIN_PIECE_PAIRS": 4096},
                {"PIN_IN_PLACE": True, "_MIN_PIECE_PAIRS": 20000}]  # fmt: skip
    original_launch = gpu._launch
    original_dp = gpu.dp_on_gpu
    timeline = []

    def timed_launch(*launch_args, **launch_kwargs):
        timeline.append(("launch", time.perf_counter(), None))
        original_launch(*launch_args, **launch_kwargs)
        event = cupy.cuda.Event()
        event.record()
        timeline.append(("kernels done", time.perf_counter(), event))

    def traced(function):
        """One call with the host's time of each launch and the device's time of each piece's kernels' end, in
        ms from the call's start."""
        timeline.clear()
        timings = {}
        entered = []

        def timed_dp(*dp_args, **dp_kwargs):
            entered.append(time.perf_counter())
            out = original_dp(*dp_args, timings=timings, **dp_kwargs)
            entered.append(time.perf_counter())
            return out

        gpu._launch = timed_launch
        gpu.dp_on_gpu = timed_dp
        start_event = cupy.cuda.Event()
        start_event.record()
        start = time.perf_counter()
        try:
            function()
        finally:
            gpu._launch = original_launch
            gpu.dp_on_gpu = original_dp
        total = time.perf_counter() - start
        rows = [(what, round((host - start) * 1e3, 2),
                 None if event is None else round(cupy.cuda.get_elapsed_time(start_event, event), 2))
                for what, host, event in timeline]  # fmt: skip
        offset = entered[0] - start
        stages = [("dp_on_gpu entered", round(offset * 1e3, 2))]
        stages += [(what, round((offset + seconds) * 1e3, 2)) for what, seconds in timings["stages"]]
        stages.append(("dp_on_gpu returned", round((entered[1] - start) * 1e3, 2)))
        return {"total_ms": round(total * 1e3, 2), "events": rows, "stages": stages}

    for dtype in (np.int16, np.int32, np.float32):
        a, b = signals[0].astype(dtype), signals[1].astype(dtype)
        for setting in settings:
            for name, value in {**defaults, **setting}.items():
                setattr(gpu, name, value)
            copies.clear()
            seconds, _ = median_of(lambda: seqcompare.dtw(a, b, device="cuda"), args.repeats)
            label = ", ".join(f"{k}={v}" for k, v in setting.items()) or "defaults"
            record(f"api dtw {np.dtype(dtype).name} ({label})", seconds, gcups=cells / seconds / 1e9,
                   staging_copy_s_per_call=sum(copies) / (args.repeats + 1))  # fmt: skip
            if dtype is np.int16 and len(setting) == 1:
                trace = traced(lambda: seqcompare.dtw(a, b, device="cuda"))
                report["rows"][f"api dtw int16 ({label})"]["trace"] = trace
                print("   trace (what, host ms, device ms):", trace, flush=True)
        for name, value in defaults.items():
            setattr(gpu, name, value)
        expected = seqcompare.dtw(a, b, device="cuda").scores
        gpu.PIN_IN_PLACE = not defaults["PIN_IN_PLACE"]
        other = seqcompare.dtw(a, b, device="cuda").scores
        gpu.PIN_IN_PLACE = defaults["PIN_IN_PLACE"]
        print(f"   {np.dtype(dtype).name}: the two routes' scores equal: {np.array_equal(expected, other)}", flush=True)
        report["rows"][f"api dtw {np.dtype(dtype).name} (PIN_IN_PLACE=True)"]["routes_equal"] = bool(
            np.array_equal(expected, other))
    with open(os.path.join(args.out, "results_dp_transfer_probe.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
