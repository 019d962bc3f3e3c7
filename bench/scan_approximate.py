"""Issue 20, speed: patterns of 20 to 1,000 bases in reads, within 5% mismatches or edits, side by side with
seqkit locate (mismatches) and Sassy (edits), in one run on the same cores.

    python bench/scan_approximate.py --out DIR [--bases 1e9] [--threads 2] [--repeats 3] [--device cpu|cuda]

Workload (seeded, written once to ``--work``): reads of ``--read-length`` random bases, every 50th carrying one
pattern with up to 5% random edits on either strand; 14 patterns, two each of 20, 30, 50, 100, 200, 500 and
1,000 bases; ``k`` = 5% of each pattern's length, rounded down (1, 1, 2, 5, 10, 25, 50), both strands.

Runs, each a fresh process, interleaved round by round, median of ``--repeats``:

- ``seqcompare scan READS PATTERNS --max-mismatches 5% --both-strands --report all --tsv -j T``, FASTQ on disk
  to TSV on disk; the same with ``--max-edits 5%``.
- seqkit locate (``seqkit locate -j T -m k -f GROUP.fa READS``, one run per group of patterns of equal ``k``, as
  it takes one ``-m``; the run's time is their sum). seqkit is taken from ``--seqkit`` or PATH; where it is
  missing the script installs Debian's package (built from the public shenwei356/seqkit source). It is some
  thousand times slower than the others on the long patterns (150 s for 20 Mbp on 2 cores), so it runs on the
  first ``--seqkit-bases`` of the reads (a file of its own), against seqcompare on that same file.
- Sassy (the ``sassy-rs`` wheel, installed by the script where missing): a Python process reads the FASTQ and
  calls ``Searcher("dna", rc=True).search_many(patterns, reads, k, T, "batch_texts")`` per group of equal
  ``k``. Its whole process and its search calls alone are both timed.

Exactness, checked in the same run: the mismatch occurrences equal seqkit's (every read, pattern, strand,
start and end); the forward-strand edit occurrences equal Sassy's (read, pattern, end, cost), and both report
on the reverse strand ours equal Sassy's forward search (``rc=False``) for the reverse-complemented patterns,
which is the same model (Sassy's own ``rc=True`` searches the reverse-complement text, so on a plateau of equal
costs it picks the end rightmost in that text). Sassy's starts come from its own traceback and are not compared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

LENGTHS = [20, 30, 50, 100, 200, 500, 1000] * 2
PERCENT = 5
COMPLEMENT = bytes.maketrans(b"ACGT", b"TGCA")


def write_workload(work: str, bases: int, read_length: int, seed: int = 7) -> tuple:
    """``(reads.fastq, patterns.fa, {k: group.fa})`` under ``work``, made once per size."""
    os.makedirs(work, exist_ok=True)
    reads = os.path.join(work, f"reads_{bases}_{read_length}.fastq")
    patterns = os.path.join(work, "patterns.fa")
    rng = np.random.default_rng(seed)
    sequences = [bytes(rng.choice(np.frombuffer(b"ACGT", np.uint8), n)) for n in LENGTHS]
    with open(patterns, "wb") as handle:
        for i, p in enumerate(sequences):
            handle.write(b">p%d_%d\n%s\n" % (i, len(p), p))
    groups = {}
    for i, p in enumerate(sequences):
        groups.setdefault(len(p) * PERCENT // 100, []).append((i, p))
    group_files = {}
    for k, members in groups.items():
        path = os.path.join(work, f"patterns_k{k}.fa")
        with open(path, "wb") as handle:
            for i, p in members:
                handle.write(b">p%d_%d\n%s\n" % (i, len(p), p))
        group_files[k] = path
    if not os.path.exists(reads):
        n_reads = bases // read_length
        quality = b"I" * read_length
        alphabet = np.frombuffer(b"ACGT", np.uint8)
        with open(reads + ".tmp", "wb") as handle:
            for start in range(0, n_reads, 10_000):
                block = alphabet[rng.integers(0, 4, (min(10_000, n_reads - start), read_length))]
                lines = []
                for j, row in enumerate(block):
                    r = start + j
                    read = bytearray(row.tobytes())
                    if r % 50 == 0:
                        copy = _mutated(sequences[r // 50 % len(sequences)], rng)
                        at = int(rng.integers(0, read_length - len(copy)))
                        read[at : at + len(copy)] = copy
                    lines.append(b"@r%d\n%s\n+\n%s\n" % (r, bytes(read), quality))
                handle.write(b"".join(lines))
        os.replace(reads + ".tmp", reads)
    return reads, patterns, group_files


def _mutated(pattern: bytes, rng) -> bytes:
    letters = bytearray(pattern)
    for _ in range(int(rng.integers(0, len(pattern) * PERCENT // 100 + 1))):
        at = int(rng.integers(len(letters)))
        kind = int(rng.integers(3))
        if kind == 0:
            letters[at] = b"ACGT"[rng.integers(4)]
        elif kind == 1:
            del letters[at]
        else:
            letters.insert(at, b"ACGT"[rng.integers(4)])
    copy = bytes(letters)
    return copy.translate(COMPLEMENT)[::-1] if rng.random() < 0.5 else copy


SASSY_SCRIPT = r"""
import json, sys, time
start = time.perf_counter()
import sassy
reads_path, out, threads, both = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
groups = json.loads(sys.argv[5])
with open(reads_path, "rb") as handle:
    lines = handle.read().split(b"\n")
names = [line[1:] for line in lines[0::4] if line]
reads = lines[1::4][: len(names)]
searching = 0.0
rows = []
for k, members in groups.items():
    patterns = [p.encode() for _, p in members]
    began = time.perf_counter()
    matches = sassy.Searcher("dna", rc=both).search_many(patterns, reads, int(k), threads, "batch_texts")
    searching += time.perf_counter() - began
    for m in matches:
        rows.append(f"{names[m.text_idx].decode()}\t{members[m.pattern_idx][0]}\t{m.strand}\t{m.text_start}\t{m.text_end}\t{m.cost}\n")
with open(out, "w") as handle:
    handle.writelines(rows)
print(json.dumps({"search_s": searching, "process_s": time.perf_counter() - start}))
"""


def ensure_peers(seqkit: str | None) -> tuple:
    """``(seqkit path, sassy version)``, installing what is missing (Debian's seqkit, the sassy-rs wheel)."""
    seqkit = seqkit or shutil.which("seqkit")
    if seqkit is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "seqkit"], check=True, capture_output=True)
        seqkit = shutil.which("seqkit")
    try:
        import sassy  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "sassy-rs"], check=True)
    version = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; print(m.version('sassy-rs'))"],
                             capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    return seqkit, version


def timed(command: list, **kwargs) -> float:
    began = time.perf_counter()
    subprocess.run(command, check=True, stdout=kwargs.pop("stdout", subprocess.DEVNULL), **kwargs)
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", default=os.environ.get("SEQCOMPARE_WORK", "/tmp/seqcompare-work"))
    parser.add_argument("--bases", type=float, default=1e9)
    parser.add_argument("--seqkit-bases", type=float, default=2e7)
    parser.add_argument("--read-length", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--peer-threads", type=int, help="threads of the peers (default: --threads)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seqkit")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--tag", default="")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    reads, patterns, groups = write_workload(args.work, int(args.bases), args.read_length)
    small_reads, _, _ = write_workload(args.work, int(args.seqkit_bases), args.read_length)
    seqkit, sassy_version = (None, None) if args.no_peers else ensure_peers(args.seqkit)
    outputs = {name: os.path.join(args.work, f"out_{name}.tsv")
               for name in ("mis", "edit", "small_mis", "seqkit", "sassy", "sassy_rc")}  # fmt: skip
    t = str(args.threads)
    peer_t = str(args.peer_threads or args.threads)

    def ours(reads_path, metric, out):
        return [sys.executable, "-m", "seqcompare", "scan", reads_path, patterns, "--both-strands", "--report", "all",
                "--tsv", "-q", "-j", t, "--device", args.device, metric, "5%", "-o", out]  # fmt: skip

    group_members = {}
    for k, path in groups.items():
        with open(path) as handle:
            text = handle.read().split()
        group_members[str(k)] = [(int(text[i][2:].split("_")[0]), text[i + 1]) for i in range(0, len(text), 2)]
    reverse_members = {k: [(i, p.encode().translate(COMPLEMENT)[::-1].decode()) for i, p in members]
                       for k, members in group_members.items()}  # fmt: skip
    times: dict = {key: [] for key in ("seqcompare_mismatches", "seqcompare_edits", "sassy_process", "sassy_search",
                                       "seqcompare_mismatches_small", "seqkit_small")}  # fmt: skip
    timed(ours(reads, "--max-edits", outputs["edit"]))  # warm the kernels' cache and the page cache
    for _ in range(args.repeats):
        times["seqcompare_mismatches"].append(timed(ours(reads, "--max-mismatches", outputs["mis"])))
        times["seqcompare_edits"].append(timed(ours(reads, "--max-edits", outputs["edit"])))
        if args.no_peers:
            continue
        began = time.perf_counter()
        report = subprocess.run([sys.executable, "-c", SASSY_SCRIPT, reads, outputs["sassy"], peer_t, "1",
                                 json.dumps(group_members)], check=True, capture_output=True, text=True)  # fmt: skip
        times["sassy_process"].append(time.perf_counter() - began)
        times["sassy_search"].append(json.loads(report.stdout)["search_s"])
        print({key: round(values[-1], 3) for key, values in times.items() if values}, flush=True)
    if not args.no_peers:
        # The reverse strand's check: Sassy forward-only with the reverse-complemented patterns (untimed).
        subprocess.run([sys.executable, "-c", SASSY_SCRIPT, reads, outputs["sassy_rc"], peer_t, "0",
                        json.dumps(reverse_members)], check=True, capture_output=True, text=True)  # fmt: skip
        for _ in range(args.repeats):
            times["seqcompare_mismatches_small"].append(timed(ours(small_reads, "--max-mismatches", outputs["small_mis"])))
            with open(outputs["seqkit"], "w") as sink:
                total = 0.0
                for k, path in sorted(groups.items()):
                    total += timed([seqkit, "locate", "-j", peer_t, "-m", str(k), "-f", path, small_reads], stdout=sink)
            times["seqkit_small"].append(total)
            print({key: round(values[-1], 3) for key, values in times.items() if values}, flush=True)
    medians = {key: statistics.median(values) for key, values in times.items() if values}
    checks = {} if args.no_peers else compare(outputs)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    result = {"commit": commit, "host": platform.node(), "cpu": _cpu_name(), "threads": args.threads,
              "peer_threads": int(peer_t),
              "device": args.device, "bases": int(args.bases), "seqkit_bases": int(args.seqkit_bases),
              "read_length": args.read_length, "patterns": LENGTHS, "percent": PERCENT, "sassy_rs": sassy_version,
              "seqkit": seqkit, "times": times, "medians": medians, "checks": checks}  # fmt: skip
    if not args.no_peers:
        result["ratios"] = {
            "seqkit_over_seqcompare_mismatches_small": medians["seqkit_small"] / medians["seqcompare_mismatches_small"],
            "sassy_process_over_seqcompare_edits": medians["sassy_process"] / medians["seqcompare_edits"],
            "sassy_search_over_seqcompare_edits": medians["sassy_search"] / medians["seqcompare_edits"]}  # fmt: skip
    name = f"results_scan_approximate_{args.device}_{commit}{args.tag}.json"
    with open(os.path.join(args.out, name), "w") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps({k: result[k] for k in ("medians", "ratios", "checks") if k in result}, indent=1))
    return 0 if all(checks.values()) else 1


def compare(outputs: dict) -> dict:
    """The exactness checks (see the module's docstring)."""
    ours_mis = set()
    with open(outputs["small_mis"]) as handle:
        next(handle)
        for line in handle:
            sample, signature, offset, _score, end, _count, strand = line.rstrip("\n").split("\t")
            ours_mis.add((sample, signature, strand, int(offset), int(end)))
    theirs_mis = set()
    with open(outputs["seqkit"]) as handle:
        for line in handle:
            if line.startswith("seqID"):
                continue
            read, pattern, _seq, strand, start, end = line.split("\t")[:6]
            theirs_mis.add((read, pattern, strand, int(start) - 1, int(end)))
    ours = {"+": set(), "-": set()}
    with open(outputs["edit"]) as handle:
        next(handle)
        for line in handle:
            sample, signature, _offset, _score, end, cost, strand = line.rstrip("\n").split("\t")
            ours[strand].add((sample, int(signature[1:].split("_")[0]), int(end), int(cost)))
    theirs = {"+": set(), "-": set()}
    for name, wanted in (("sassy", "+"), ("sassy_rc", "-")):
        with open(outputs[name]) as handle:
            for line in handle:
                read, pattern, strand, _start, end, cost = line.rstrip("\n").split("\t")
                if strand == "+":
                    theirs[wanted].add((read, int(pattern), int(end), int(cost)))
    print(f"mismatch occurrences: seqcompare {len(ours_mis)}, seqkit {len(theirs_mis)}; edit occurrences (+): "
          f"seqcompare {len(ours['+'])}, Sassy {len(theirs['+'])}; (-): {len(ours['-'])} and {len(theirs['-'])}")
    return {"mismatches_equal_seqkit": ours_mis == theirs_mis and len(ours_mis) > 0,
            "forward_edits_equal_sassy": ours["+"] == theirs["+"] and len(ours["+"]) > 0,
            "reverse_edits_equal_sassy": ours["-"] == theirs["-"] and len(ours["-"]) > 0}  # fmt: skip


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    sys.exit(main())
