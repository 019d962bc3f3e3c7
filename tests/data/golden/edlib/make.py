"""Write ``nanopore_pairs.tsv``: edlib's global (NW) edit distances of windows of the bundled real nanopore
reads (``data/scan_example/reads.fastq``), the golden file of ``tests/test_dp.py``.

Run from the repository root with edlib installed (``pip install edlib==1.3.9.post1``)::

    python tests/data/golden/edlib/make.py

Windows of 0 to 1,500 bases, at seeded random places, cross every 64-base word boundary; a third of the pairs
are a window against an overlapping one of the same read (related), the rest against another read.
"""

import os

import edlib
import numpy as np

from seqcompare.io.fastq import read_fastq

HERE = os.path.dirname(os.path.abspath(__file__))
reads = read_fastq(os.path.join("data", "scan_example", "reads.fastq"))
rng = np.random.default_rng(2026)
rows = ["read_a\tstart_a\tstop_a\tread_b\tstart_b\tstop_b\tedlib_nw_distance"]
for k in range(60):
    a = int(rng.integers(0, len(reads)))
    b = a if k % 3 == 0 else int(rng.integers(0, len(reads)))
    length_a, length_b = (int(x) for x in rng.integers(0, 1501, 2))
    start_a = int(rng.integers(0, max(1, reads.lengths[a] - length_a)))
    start_b = start_a + int(rng.integers(0, 200)) if a == b else int(rng.integers(0, max(1, reads.lengths[b] - length_b)))
    stop_a, stop_b = min(start_a + length_a, int(reads.lengths[a])), min(start_b + length_b, int(reads.lengths[b]))
    start_b = min(start_b, stop_b)
    text_a, text_b = reads.text(a)[start_a:stop_a], reads.text(b)[start_b:stop_b]
    if not text_a or not text_b:  # edlib needs a non-empty query; empty sides are tested against the oracle
        continue
    distance = edlib.align(text_b, text_a, mode="NW", task="distance")["editDistance"]
    rows.append(f"{a}\t{start_a}\t{stop_a}\t{b}\t{start_b}\t{stop_b}\t{distance}")
with open(os.path.join(HERE, "nanopore_pairs.tsv"), "w") as handle:
    handle.write("\n".join(rows) + "\n")
print(f"{len(rows) - 1} pairs, edlib {getattr(edlib, '__version__', '1.3.9.post1')}")
