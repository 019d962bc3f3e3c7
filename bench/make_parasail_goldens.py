"""Golden scores of parasail's serial ``nw``, ``sg`` and ``sw`` (issue 19: scores identical to parasail's).

Usage::

    python bench/make_parasail_goldens.py --parasail-source DIR [--out tests/data/parasail_modes.tsv] [--seed 19]

Builds ``bench/peers/parasail_driver.c`` (a few lines calling parasail's public API) against parasail's own serial
implementations (``src/nw.c``, ``src/sg.c``, ``src/sw.c``, ``src/memory.c``, ``src/matrix_lookup.c``, with a
two-line ``config.h``), then aligns random protein and DNA pairs (lengths 1 to 60, related and unrelated) under
several matrices and affine gaps (open >= extend) and writes one line per alignment: mode, matrix, open, extend,
query, target, score, query end, target end. parasail's ``s1`` is our query and its ``s2`` (the database
sequence) our target.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

PROTEIN = "ARNDCQEGHILKMFPSTWYV"
MATRICES = {"blosum62": PROTEIN, "blosum45": PROTEIN, "blosum80": PROTEIN, "pam250": PROTEIN, "nuc44": "ACGT"}
GAPS = [(10, 1), (11, 1), (8, 8), (5, 2), (3, 3), (12, 2)]


def build_driver(source: str, work: str) -> str:
    with open(os.path.join(work, "config.h"), "w") as handle:
        handle.write("#define HAVE_POSIX_MEMALIGN 1\n#define SIZEOF_INT 4\n")
    driver = os.path.join(work, "parasail_driver")
    files = [os.path.join(source, "src", name) for name in ("nw.c", "sg.c", "sw.c", "nw_stats.c", "sg_stats.c", "sw_stats.c", "memory.c", "matrix_lookup.c")]
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["gcc", "-O2", "-std=gnu99", f"-I{work}", f"-I{source}", f"-I{os.path.join(source, 'src')}",
                    "-o", driver, os.path.join(here, "peers", "parasail_driver.c"), *files], check=True)  # fmt: skip
    return driver


def gcc_version() -> str:
    return subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()


def mutate(rng, sequence: str, letters: str, rate: float) -> str:
    """``sequence`` with substitutions, deletions and insertions, each at about ``rate / 3`` a character."""
    codes = np.array([letters.index(c) for c in sequence], dtype=np.int64)
    substituted = np.where(rng.random(codes.size) < rate / 3, rng.integers(0, len(letters), codes.size), codes)
    kept = substituted[rng.random(codes.size) >= rate / 3]
    at = rng.integers(0, kept.size + 1, rng.binomial(max(1, kept.size), rate / 3))
    grown = np.insert(kept, at, rng.integers(0, len(letters), at.size))
    return "".join(letters[k] for k in grown) or letters[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parasail-source", required=True)
    parser.add_argument("--out", default="tests/data/parasail_modes.tsv")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--pairs", type=int, default=120, help="pairs per mode")
    parser.add_argument("--commit", help="parasail's commit, when the source is not a git checkout")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    work = tempfile.mkdtemp(prefix="parasail-")
    driver = build_driver(args.parasail_source, work)
    rows = []
    for mode in ("nw", "sg", "sw"):
        for _ in range(args.pairs):
            matrix = list(MATRICES)[rng.integers(len(MATRICES))]
            letters = MATRICES[matrix]
            gap_open, gap_extend = GAPS[rng.integers(len(GAPS))]
            target = "".join(letters[k] for k in rng.integers(0, len(letters), int(rng.integers(1, 61))))
            if rng.random() < 0.6:  # related: a mutated piece of the target
                start = int(rng.integers(0, len(target)))
                query = mutate(rng, target[start : start + int(rng.integers(1, 61))], letters, 0.2)
            else:
                query = "".join(letters[k] for k in rng.integers(0, len(letters), int(rng.integers(1, 41))))
            rows.append((mode, matrix, gap_open, gap_extend, query, target))
    text = "".join(f"{m} {x} {o} {e} {q} {t}\n" for m, x, o, e, q, t in rows)
    done = subprocess.run([driver], input=text, capture_output=True, text=True, check=True)
    results = done.stdout.split("\n")
    commit = args.commit or subprocess.run(["git", "-C", args.parasail_source, "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True).stdout.strip() or "unknown"  # fmt: skip
    with open(args.out, "w") as handle:
        handle.write(f"# parasail {commit} serial nw/sg/sw and their _stats, made by: python bench/make_parasail_goldens.py "
                     f"--parasail-source DIR --seed {args.seed} --pairs {args.pairs} (gcc {gcc_version()})\n")
        handle.write("# mode\tmatrix\topen\textend\tquery\ttarget\tscore\tend_query\tend_ref\tmatches\tsimilar\tlength\n")
        for row, result in zip(rows, results, strict=False):
            handle.write("\t".join(str(v) for v in row) + "\t" + "\t".join(result.split()) + "\n")
    print(f"wrote {len(rows)} alignments to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
