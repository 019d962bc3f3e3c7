"""Write ``modes_pairs.tsv``: edlib's infix (HW) and prefix (SHW) edit distances and best end locations of seeded
random DNA pairs, the golden file of ``tests/test_matrices_and_modes.py``.

Run from the repository root with edlib installed (``pip install edlib==1.3.9.post1``)::

    python tests/data/golden/edlib/make_modes.py

A query of 1 to 40 bases is either a mutated window of its target (1 to 80 bases) or unrelated to it. Each line:
mode, query, target, edit distance, and the smallest end location among edlib's (0-based, in the target).
"""

import os

import edlib
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1919)
rows = ["mode\tquery\ttarget\tedlib_distance\tedlib_first_end"]
for k in range(240):
    mode = "HW" if k % 2 == 0 else "SHW"
    target = "".join("ACGT"[c] for c in rng.integers(0, 4, int(rng.integers(1, 81))))
    if rng.random() < 0.6:
        start = int(rng.integers(0, len(target))) if mode == "HW" else 0
        window = np.array(["ACGT".index(c) for c in target[start : start + int(rng.integers(1, 41))]])
        window = np.where(rng.random(window.size) < 0.1, rng.integers(0, 4, window.size), window)
        window = window[rng.random(window.size) >= 0.05]
        query = "".join("ACGT"[c] for c in window) or "A"
    else:
        query = "".join("ACGT"[c] for c in rng.integers(0, 4, int(rng.integers(1, 41))))
    found = edlib.align(query, target, mode=mode, task="locations")
    first_end = min(end for _, end in found["locations"])
    rows.append(f"{mode}\t{query}\t{target}\t{found['editDistance']}\t{first_end}")
with open(os.path.join(HERE, "modes_pairs.tsv"), "w") as handle:
    handle.write("\n".join(rows) + "\n")
print(f"{len(rows) - 1} pairs, edlib {getattr(edlib, '__version__', '1.3.9.post1')}")
