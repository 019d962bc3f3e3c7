"""Where an end-to-end `seqcompare hamming -L` run spends its time, next to hammingdist's own log.

Usage::

    python bench/hamming_breakdown.py [FASTA] [--threads 2]

Default input: the simulated 4000 x 30,000 alignment of ``bench/hamming_cpu.py``. A fresh child process times
the imports and Numba's first dispatch (what every CLI run pays before any work), then each stage once warm:
FASTA scan, bit packing, distance kernel, lower-triangle text. hammingdist runs in another child and its
"distance calculation completed in N ms" line is reported as printed.
"""

import argparse
import json
import os
import subprocess
import sys

# The fresh processes timed here run as from a user's install, with compiled bytecode: under this workplace's
# PYTHONDONTWRITEBYTECODE=1 an editable checkout recompiles every module it imports in every process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from hamming_cpu import ensure_dataset  # noqa: E402

_STAGES = r"""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import numba
t1 = time.perf_counter()
from seqcompare.io.fasta import read_alignment
from seqcompare.io.tables import NameTable, write_rows
from seqcompare.hamming.api import encode_inputs
from seqcompare.hamming.work import Encoded, HammingWork
from seqcompare.allpairs import LowerTriangleReduction, Reduction, ThreadExecutor, run
read_alignment(os.path.join(os.path.dirname(sys.argv[1]), "warmup.fa"))
t2 = time.perf_counter()
path, threads = sys.argv[1], int(sys.argv[2])
aln = read_alignment(path); t3 = time.perf_counter()
enc = encode_inputs(aln)
enc = Encoded(enc.planes("left", threads), None, enc.space, enc.table, "planes", enc.n_sites); t4 = time.perf_counter()
n = enc.n_left
class Keep(Reduction):
    # every block kept, so that the kernel stage is timed apart from the text
    def __init__(self): self.blocks = []
    def reduce(self, tile, block): return tile, block
    def merge(self, partial): self.blocks.append(partial)
    def finish(self): return self.blocks
blocks = run(HammingWork(enc, method="bitpack"), Keep(), ThreadExecutor(threads)); t5 = time.perf_counter()
names = NameTable(aln.names)
with open(os.devnull, "wb") as out:
    triangle = LowerTriangleReduction(n, lambda s, rows: write_rows(out, rows, s, names, "\t", lower_triangle=True))
    for partial in blocks:
        triangle.merge(partial)
    triangle.finish()
t6 = time.perf_counter()
print(json.dumps({"import_numpy_numba_s": t1 - t0, "first_dispatch_and_other_imports_s": t2 - t1,
                  "fasta_scan_s": t3 - t2, "bit_packing_s": t4 - t3, "distance_kernel_s": t5 - t4,
                  "lower_triangle_text_s": t6 - t5,
                  "kernel_pair_sites_per_s": n * (n - 1) / 2 * aln.length / (t5 - t4)}))
"""

_HAMMINGDIST = """
import sys, hammingdist
hammingdist.from_fasta_large(sys.argv[1]).dump_lower_triangular(sys.argv[2])
"""


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("fasta", nargs="?")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    path = args.fasta or ensure_dataset(4000, 30000, seed=4000)
    with open(os.path.join(os.path.dirname(path), "warmup.fa"), "w") as handle:
        handle.write(">a\nACGT\n>b\nACGA\n")
    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    ours = subprocess.run([sys.executable, "-c", _STAGES, path, str(args.threads)], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    result = {"input": os.path.relpath(path), "threads": args.threads, "seqcompare": json.loads(ours.stdout)}
    peer = subprocess.run([sys.executable, "-c", _HAMMINGDIST, path, os.devnull], env=env,
                          capture_output=True, text=True)  # fmt: skip
    result["hammingdist_log"] = [line for line in (peer.stdout + peer.stderr).splitlines() if "completed" in line]
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
