"""GPU Hamming end to end against hammingdist's GPU path, side by side in one run (issue 17, goal 4).

Usage::

    python3 bench/hamming_gpu_e2e.py --out DIR [--n 32768] [--m 30000] [--max-dist 20] [--repeats 5]
                                     [--work DIR] [--hammingdist-wheel-dir .whl]

Writes a simulated alignment (``hamming_gpu_scale.py``'s generator: founder lineages plus private substitutions,
so that close genomes exist) to ``--work``, then times fresh processes from FASTA on disk to a result on disk,
interleaved, ``--repeats`` rounds after one untimed round that fills every cache:

* ``seqcompare hamming --device cuda --max-dist D FASTA -o pairs.tsv`` (the console script: no teardown);
* hammingdist (PyPI; its wheel carries the CUDA path) ``from_fasta_to_lower_triangular(FASTA, OUT,
  use_gpu=True, max_distance=D)``, the lower triangle of min(distance, D), which is what it offers on a GPU.

The outputs differ in form (pairs within D against a full lower triangle), so the ratio is of the same input to
a result on disk that answers "which pairs are within D". One more fresh seqcompare process runs with every
stage timed from the first line of a script (``--timeline``): imports, the background CUDA start, reading, encoding,
the GPU work and the text, so that the figure can be read.

Writes ``DIR/results_hamming_gpu_e2e_goal4.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))

_HAMMINGDIST = """
import sys, time
started = time.perf_counter()
import hammingdist
if not hammingdist.cuda_gpu_available():
    raise SystemExit("hammingdist: no CUDA GPU available to it")
hammingdist.from_fasta_to_lower_triangular(sys.argv[1], sys.argv[2], use_gpu=True, max_distance=int(sys.argv[3]))
print(f"in-process seconds {time.perf_counter() - started:.3f}")
"""

# The CLI's own code path, with its stages timed from interpreter start (the console script, main() inside).
_TIMELINE = r"""
import json, os, sys, time
clock = {"python_started": time.perf_counter()}
import numpy
clock["numpy_imported"] = time.perf_counter()
import seqcompare.cli as cli
import seqcompare.cli.hamming as command
clock["cli_imported"] = time.perf_counter()
import seqcompare.io.fasta as fasta, seqcompare.hamming.api as api, seqcompare.io.tables as tables
import seqcompare.cuda.runtime as runtime

import os
MAIN = os.getpid()

def note(key):  # the forked GPU helper's stages go to stderr, on the same clock (CLOCK_MONOTONIC)
    clock[key] = time.perf_counter()
    if os.getpid() != MAIN:
        print(f"@helper {key} {clock[key]}", file=sys.stderr, flush=True)

def timed(module, name, label):
    original = getattr(module, name)
    def wrapper(*args, **kwargs):  # the first call of each is timed
        first = label + "_start" not in clock
        if first:
            note(label + "_start")
        try:
            return original(*args, **kwargs)
        finally:
            if first:
                note(label + "_end")
    setattr(module, name, wrapper)

timed(fasta, "read_alignment", "read_fasta")
timed(api, "encode_inputs", "encode")
timed(api, "run_hamming", "run_hamming")
if os.environ.get("SEQCOMPARE_BENCH_PROFILE"):  # the first run_hamming profiled (in the helper: its stderr is relayed)
    import cProfile, io, pstats
    profiled = api.run_hamming
    def run_hamming_profiled(*args, **kwargs):
        profile = cProfile.Profile()
        try:
            return profile.runcall(profiled, *args, **kwargs)
        finally:
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
            print("profile of run_hamming:" + text.getvalue(), file=sys.stderr, flush=True)
    api.run_hamming = run_hamming_profiled
timed(tables, "write_long", "write_text")
timed(fasta, "read_bytes", "read_fasta.map_file")
timed(fasta, "_line_ends", "read_fasta.line_ends")
timed(fasta, "_regular_layout", "read_fasta.regular_layout")
import seqcompare.hamming.work as hamming_work
timed(hamming_work, "pack_planes", "pack_planes")
import seqcompare.hamming.gpu as gpu  # imports neither CuPy nor Numba
for allocator in ("pinned_empty", "locked_empty"):  # how the page-locked buffers are made (before c29e451: the first)
    for owner in (runtime, gpu):
        if hasattr(owner, allocator):
            timed(owner, allocator, "page_locked_buffer")
timed(gpu, "device_pairs", "device_pairs")
import seqcompare.cuda.bitgemm as bitgemm
timed(gpu, "load_kernels", "load_kernels")  # in the background thread, after the contexts (session 30)
timed(gpu.DeviceProblem, "upload", "first_upload")
if hasattr(gpu, "lock_mapping"):  # rows left in place in the file (session 32): its page-locking and first gather
    timed(gpu, "lock_mapping", "lock_file_mapping")
    timed(gpu.DeviceProblem, "_gather_file_rows", "first_file_rows_gather")
timed(bitgemm, "launch", "first_gemm_launch")
timed(gpu, "_pairs_on_device", "pairs_on_device")
timed(gpu.HostProblem, "__init__", "host_pack_planes")
timed(gpu.DeviceProblem, "__init__", "device_setup")
import seqcompare.cuda.helper as helper  # the forked GPU helper (session 31): its own stages are in the log
timed(helper.GpuHelper, "__init__", "helper_fork")
timed(helper.GpuHelper, "call", "helper_call")
timed(helper._Regions, "lock", "helper_lock")
original_start = runtime._start_devices
def start_devices(*args, **kwargs):
    clock["cuda_thread_start"] = time.perf_counter()
    original_start(*args, **kwargs)
    clock["cuda_thread_end"] = time.perf_counter()
runtime._start_devices = start_devices
status = cli.main(sys.argv[1:])
clock["main_returned"] = time.perf_counter()
origin = clock.pop("python_started")
print(json.dumps({"status": status, "numba_imported": "numba" in sys.modules, "python_started_at": origin,
                  **{k: round(v - origin, 4) for k, v in sorted(clock.items(), key=lambda kv: kv[1])}}), flush=True)
sys.stderr.flush()
os._exit(status)  # as the console script ends (seqcompare.cli.entry)
"""


def _run(command: list[str], env: dict) -> tuple[float, str, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return seconds, done.stdout, done.stderr


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", default=None, help="where the FASTA and outputs go (default: --out)")
    parser.add_argument("--n", type=int, default=32768)
    parser.add_argument("--m", type=int, default=30000)
    parser.add_argument("--max-dist", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--lineages", type=int, default=4000)
    parser.add_argument("--private-rate", type=float, default=0.0002)
    parser.add_argument("--no-peer", action="store_true", help="seqcompare only")
    parser.add_argument("--device", default="cuda", help="'cpu' for a dry run of the script without a GPU")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=OPTIONS",
                        help="another seqcompare process in each round, with these extra options (e.g. "
                             "'planes=--gpu-packer planes'); its output must equal the first's")  # fmt: skip
    parser.add_argument("--patch", action="append", default=[], metavar="NAME=MODULE:ATTRIBUTE=VALUE",
                        help="another seqcompare process in each round, run as the console script with one module "
                             "constant set first (e.g. 'pageable=seqcompare.cuda.helper:LOCK_SHARED_FROM=1<<62'); "
                             "its output must equal the first's")  # fmt: skip
    args = parser.parse_args(argv)

    from seqcompare.simulate import simulate_alignment, write_fasta

    work = args.work or args.out
    os.makedirs(work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    fasta = os.path.join(work, f"sim_{args.n}x{args.m}_seed{args.seed}.fasta")
    report = {"command": " ".join([os.path.relpath(sys.argv[0]), *(argv or sys.argv[1:])]),
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu_cores": os.cpu_count(), "n": args.n, "m": args.m,
              "max_dist": args.max_dist}  # fmt: skip
    if not os.path.exists(fasta):
        started = time.perf_counter()
        names, sequences = simulate_alignment(args.n, args.m, seed=args.seed, lineages=args.lineages,
                                              private_rate=args.private_rate)  # fmt: skip
        write_fasta(fasta + ".tmp", names, sequences)
        os.replace(fasta + ".tmp", fasta)
        del names, sequences
        report["simulate_and_write_s"] = time.perf_counter() - started
    report["fasta_bytes"] = os.path.getsize(fasta)

    env = dict(os.environ, CUDA_VISIBLE_DEVICES=os.environ.get("CUDA_VISIBLE_DEVICES", "0"), PYTHONUNBUFFERED="1")
    pairs = os.path.join(work, "pairs.tsv")
    console = os.path.join(os.path.dirname(sys.executable), "seqcompare")
    ours = [console if os.path.exists(console) else "seqcompare", "hamming", "--device", args.device, "--max-dist",
            str(args.max_dist), fasta, "-o", pairs]  # fmt: skip
    peer_out = os.path.join(work, "hammingdist_lower_triangle.txt")
    peer = [sys.executable, "-c", _HAMMINGDIST, fasta, peer_out, str(args.max_dist)]
    report["seqcompare_argv"] = " ".join(ours[1:])

    variants = {}
    for text in args.variant:
        name, _, options = text.partition("=")
        variants[f"seqcompare {name}"] = ours[:-1] + [pairs + "." + name] + options.split()
    for text in args.patch:
        name, _, patch = text.partition("=")
        target, _, value = patch.partition("=")
        module, _, attribute = target.partition(":")
        code = (f"import sys, {module} as patched; patched.{attribute} = {value}; "
                "from seqcompare.cli import entry; sys.argv[0] = 'seqcompare'; entry()")  # fmt: skip
        variants[f"seqcompare {name}"] = [sys.executable, "-c", code, *ours[1:-1], pairs + "." + name]
    report["variants"] = {name: " ".join(command[1:]) for name, command in variants.items()}

    rounds: dict = {"seqcompare": [], "hammingdist": [], **{name: [] for name in variants}}
    peer_logs = []
    for round_number in range(args.repeats + 1):  # round 0 fills the caches and is not counted
        seconds, _, _ = _run(ours, env)
        if round_number:
            rounds["seqcompare"].append(seconds)
        for name, command in variants.items():
            seconds, _, _ = _run(command, env)
            if round_number:
                rounds[name].append(seconds)
        if not args.no_peer:
            seconds, out, err = _run(peer, env)
            if round_number:
                rounds["hammingdist"].append(seconds)
                peer_logs.append(out + err)
        if round_number:
            print(f"round {round_number}: " + ", ".join(f"{k} {v[-1]:.3f} s" for k, v in rounds.items() if v), flush=True)
    report["seqcompare_runs_s"] = rounds["seqcompare"]
    report["seqcompare_median_s"] = statistics.median(rounds["seqcompare"])
    with open(pairs, "rb") as handle:
        written = handle.read()
    report["pairs_written"] = written.count(b"\n")
    for name, command in variants.items():
        report[name + "_runs_s"] = rounds[name]
        report[name + "_median_s"] = statistics.median(rounds[name])
        with open(command[command.index("-o") + 1], "rb") as handle:
            report[name + "_output_identical"] = handle.read() == written
        if not report[name + "_output_identical"]:
            raise SystemExit(f"{name}: output differs from seqcompare's default")
    if not args.no_peer:
        report["hammingdist_runs_s"] = rounds["hammingdist"]
        report["hammingdist_median_s"] = statistics.median(rounds["hammingdist"])
        report["hammingdist_log_of_last_run"] = peer_logs[-1].strip().splitlines()[-6:]
        report["hammingdist_output_bytes"] = os.path.getsize(peer_out)
        report["ratio_hammingdist_over_seqcompare"] = report["hammingdist_median_s"] / report["seqcompare_median_s"]
        os.remove(peer_out)
    for name, command in {"seqcompare": ours, **variants}.items():
        if command[0] == sys.executable:
            continue  # a patched constant: no timeline
        prefix = "" if name == "seqcompare" else name + "_"
        launched = time.perf_counter()  # CLOCK_MONOTONIC, as in the child
        wall, out, err = _run([sys.executable, "-c", _TIMELINE, *command[1:]], env)
        timeline = json.loads(out.strip().splitlines()[-1])
        origin = timeline.pop("python_started_at")
        # The interpreter's start before the script's first line, and the end of the process (and of every
        # process that held its pipes) after it.
        timeline["launched"] = round(launched - origin, 4)
        timeline["pipes_closed"] = round(launched + wall - origin, 4)
        for line in err.strip().splitlines():
            if line.startswith("@helper "):  # the helper's stages, on the same clock
                _, key, at = line.split()
                timeline["helper:" + key] = round(float(at) - origin, 4)
        in_order = sorted(timeline.items(), key=lambda kv: kv[1] if isinstance(kv[1], float) else -1)
        report[prefix + "timeline_s"] = dict(in_order)
        report[prefix + "timeline_cli_log"] = [line for line in err.strip().splitlines() if not line.startswith("@")]
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as handle:
            report["transparent_hugepages"] = handle.read().strip()
    except OSError:
        pass
    with open(os.path.join(args.out, "results_hamming_gpu_e2e_goal4.json"), "w") as handle:
        json.dump(report, handle, indent=1)

    print(f"FASTA {report['fasta_bytes'] / 1e9:.2f} GB ({args.n} x {args.m}), {report['pairs_written']} pairs within "
          f"{args.max_dist}")  # fmt: skip
    print(f"seqcompare {report['seqcompare_argv']}: {', '.join(f'{t:.3f}' for t in rounds['seqcompare'])} s -> "
          f"median {report['seqcompare_median_s']:.3f} s")  # fmt: skip
    for name in variants:
        print(f"{name} ({report['variants'][name]}): {', '.join(f'{t:.3f}' for t in rounds[name])} s -> median "
              f"{report[name + '_median_s']:.3f} s; output identical: {report[name + '_output_identical']}")
    if not args.no_peer:
        print(f"hammingdist GPU: {', '.join(f'{t:.3f}' for t in rounds['hammingdist'])} s -> median "
              f"{report['hammingdist_median_s']:.3f} s; ratio {report['ratio_hammingdist_over_seqcompare']:.2f}x")
        print("\n".join(report["hammingdist_log_of_last_run"]))
    for name in ("seqcompare", *variants):
        prefix = "" if name == "seqcompare" else name + "_"
        if prefix + "timeline_s" not in report:
            continue
        print(f"timeline of one fresh {name} process (seconds from the first line of its script):")
        for stage, at in report[prefix + "timeline_s"].items():
            print(f"  {stage:<24} {at}")
        print("\n".join(report[prefix + "timeline_cli_log"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
