"""Does a GPU's Hamming work slow down when its neighbours work too? (issue 21)

Usage::

    python3 bench/gpu_concurrency.py --out DIR [--gpus 4] [--rows 65536] [--sites 30000] [--seconds 15]

On a multi-GPU host, the Dask engine's GPU tasks took about 12% more GPU time when four workers ran at once
than when one ran alone (bench/RESULTS.md, session 43). This probe takes Dask out of the picture: one process
per GPU, each with its own random DNA problem (``--rows`` x ``--sites``, bit planes on the host), runs

1. the pairs kernel alone, its operands resident on the device (``kernel``): CUDA-event seconds per call;
2. host to host (``host_to_host``: planes on the host to sorted pairs on the host, copies and kernels), wall
   seconds per call;

each for ``--seconds``, first on GPU 0 alone, then on ``--gpus`` GPUs at once (the processes start each stage
together). ``nvidia-smi`` samples every GPU's SM clock, power, temperature and clock-event reasons meanwhile.
If the kernel alone slows down with its neighbours at the same clocks, the GPUs share something (power, heat);
if only host to host does, the host does (memory, PCIe).

Writes ``DIR/results_gpu_concurrency.json`` (and the samples as ``DIR/smi_<phase>.csv``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SMI_FIELDS = ["timestamp", "index", "clocks.sm", "power.draw", "temperature.gpu", "clocks_event_reasons.active"]


def child(args) -> None:
    """One GPU's process (``CUDA_VISIBLE_DEVICES`` names it): prepare, then each stage when told to go."""
    sys.path.insert(0, HERE)
    import cupy

    from dask_bench import dna
    from seqcompare.cuda.bitgemm import PAIRS_CONFIG, micro_tiles
    from seqcompare.hamming.api import encode_inputs
    from seqcompare.hamming.gpu import DeviceProblem, HostProblem, device_pairs
    from seqcompare.cuda.bitgemm import CONFIGS

    rows = dna(None, args.rows, args.sites)
    host = HostProblem(encode_inputs(rows), "bitmma", "planes", threads=args.threads)
    del rows
    device_pairs(None, args.max_dist, host=host, devices=[0])  # compile or load the kernels
    problem = DeviceProblem(host, 0)
    problem.upload_all()
    problem.synchronize()
    pairs = {name: cupy.empty(1 << 20, dtype=cupy.uint32) for name in ("i", "j", "d")}
    pairs["count"] = cupy.zeros(1, dtype=cupy.uint64)
    edge_rows, edge_cols = CONFIGS[PAIRS_CONFIG][:2]
    tiles = micro_tiles(range(-(-args.rows // edge_rows)), None, True, edge_rows, edge_cols)
    with problem.device, problem.stream:
        tiles_dev = cupy.asarray(tiles)
    problem.stream.synchronize()

    def kernel() -> float:
        with problem.device, problem.stream:
            start, stop = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            pairs["count"].fill(0)
            problem.run_tiles(tiles_dev, mode=0, max_dist=args.max_dist, pairs=pairs)
            stop.record()
            stop.synchronize()
            return cupy.cuda.get_elapsed_time(start, stop) / 1e3

    def host_to_host() -> float:
        start = time.perf_counter()
        device_pairs(None, args.max_dist, host=host, devices=[0])
        return time.perf_counter() - start

    report = {}
    for name, function in (("kernel", kernel), ("host_to_host", host_to_host)):
        print("ready", flush=True)
        sys.stdin.readline()  # go
        began = time.time()
        calls = []
        while time.time() - began < args.seconds:
            calls.append([round(time.time() - began, 3), function()])
        report[name] = calls
    print(json.dumps(report), flush=True)


def run_phase(args, gpus: list, phase: str) -> dict:
    """Children on ``gpus`` at once, each stage started together; ``nvidia-smi`` sampling meanwhile."""
    smi_path = os.path.join(args.out, f"smi_{phase}.csv")
    fields = list(SMI_FIELDS)
    if subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv"],
                      capture_output=True).returncode != 0:  # fmt: skip
        fields[-1] = "clocks_throttle_reasons.active"  # the older driver's name
    with open(smi_path, "w") as smi_out:
        smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader",
                                "-lms", "250"], stdout=smi_out, stderr=subprocess.DEVNULL)  # fmt: skip
    children = []
    for gpu in gpus:
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        command = [sys.executable, os.path.abspath(__file__), "--child", "--rows", str(args.rows), "--sites",
                   str(args.sites), "--seconds", str(args.seconds), "--max-dist", str(args.max_dist),
                   "--threads", str(args.threads)]  # fmt: skip
        children.append(subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True))  # fmt: skip
    stages = {}
    try:
        for stage in ("kernel", "host_to_host"):
            for process in children:
                line = process.stdout.readline()
                assert line.strip() == "ready", f"a child said {line!r}"
            stages[stage] = time.time()
            for process in children:
                process.stdin.write("go\n")
                process.stdin.flush()
        reports = [json.loads(process.stdout.readline()) for process in children]
        for process in children:
            process.wait()
    finally:
        smi.terminate()
        smi.wait()
    result = {"gpus": gpus, "stage_started": stages, "per_gpu": {}}
    for gpu, report in zip(gpus, reports):
        entry = {}
        for stage, calls in report.items():
            seconds = [s for _, s in calls]
            entry[stage] = {"calls": len(seconds), "median_s": statistics.median(seconds), "min_s": min(seconds),
                            "first_half_median_s": statistics.median(seconds[: max(1, len(seconds) // 2)]),
                            "second_half_median_s": statistics.median(seconds[len(seconds) // 2 :])}  # fmt: skip
        result["per_gpu"][gpu] = entry
    result["smi"] = smi_summary(smi_path, gpus, fields)
    return result


def smi_summary(path: str, gpus: list, fields: list) -> dict:
    """Median SM clock, power and temperature per GPU over the samples, and how often each clock-event reason
    showed."""
    columns: dict = {}
    with open(path) as handle:
        for line in handle:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) != len(fields):
                continue
            index = parts[1]
            entry = columns.setdefault(index, {"sm_mhz": [], "power_w": [], "temp_c": [], "reasons": {}})
            try:
                entry["sm_mhz"].append(float(parts[2].split()[0]))
                entry["power_w"].append(float(parts[3].split()[0]))
                entry["temp_c"].append(float(parts[4]))
            except ValueError:
                continue
            entry["reasons"][parts[5]] = entry["reasons"].get(parts[5], 0) + 1
    summary = {}
    for index, entry in sorted(columns.items()):
        busy = [k for k, w in enumerate(entry["power_w"]) if w > 200]  # samples while this GPU worked
        pick = (lambda values: [values[k] for k in busy]) if busy else (lambda values: values)
        median = (lambda values: statistics.median(pick(values)) if values else None)
        summary[index] = {"samples": len(entry["sm_mhz"]), "busy_samples": len(busy),
                          "busy_median_sm_mhz": median(entry["sm_mhz"]),
                          "busy_median_power_w": median(entry["power_w"]),
                          "max_temp_c": max(entry["temp_c"], default=None), "reasons": entry["reasons"]}  # fmt: skip
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out")
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--rows", type=int, default=65536)
    parser.add_argument("--sites", type=int, default=30000)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--max-dist", type=int, default=20)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args)
        return 0
    os.makedirs(args.out, exist_ok=True)
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *sys.argv[1:]]),
              "commit": os.environ.get("SEQCOMPARE_COMMIT"), "date": time.strftime("%Y-%m-%d %H:%M:%S"),
              "alone": run_phase(args, [0], "alone"),
              "together": run_phase(args, list(range(args.gpus)), "together")}  # fmt: skip
    with open(os.path.join(args.out, "results_gpu_concurrency.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    alone = report["alone"]["per_gpu"][0]
    print(f"{'stage':<14} {'GPU 0 alone':>12} " + " ".join(f"{'GPU %d with all' % g:>16}" for g in range(args.gpus)))
    for stage in ("kernel", "host_to_host"):
        together = report["together"]["per_gpu"]
        print(f"{stage:<14} {alone[stage]['median_s']:12.4f} "
              + " ".join(f"{together[g][stage]['median_s']:16.4f}" for g in range(args.gpus)))  # fmt: skip
    for phase in ("alone", "together"):
        for index, entry in report[phase]["smi"].items():
            print(phase, "GPU", index, {k: v for k, v in entry.items() if k != "reasons"}, entry["reasons"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
