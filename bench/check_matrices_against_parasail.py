"""Check the shipped substitution matrices against parasail's C tables (issue 19: scores identical to parasail's).

Usage: ``python bench/check_matrices_against_parasail.py PARASAIL_SOURCE`` (a checkout of jeffdaily/parasail).
Reads ``parasail/matrices/<name>.h``, takes the rows and columns both tables have (parasail adds a ``*`` row and
column of -4 to NUC.4.4 for characters outside it, which seqcompare refuses instead), and prints whether the
values are identical. Exits 1 if any differ.
"""

import os
import re
import sys

import numpy as np

from seqcompare.align.matrices import substitution_matrix

FILES = {"BLOSUM45": "blosum45", "BLOSUM50": "blosum50", "BLOSUM62": "blosum62", "BLOSUM80": "blosum80",
         "BLOSUM90": "blosum90", "PAM250": "pam250", "NUC.4.4": "nuc44"}  # fmt: skip


def parasail_table(source: str, base: str) -> tuple[str, np.ndarray]:
    """The letters and values of parasail's ``parasail_<base>_`` array."""
    with open(os.path.join(source, "parasail", "matrices", f"{base}.h")) as handle:
        text = handle.read()
    body = text.split(f"parasail_{base}_[] = {{")[1].split("};")[0]
    header = [h for h in re.findall(r"/\*\s+((?:\S\s+)+)\*/", body) if not h.split()[0].isdigit()][0].split()
    rows = [line for line in body.splitlines() if re.match(r"/\* \S \*/", line.strip())]
    values = np.array([[int(v) for v in re.sub(r"/\*.*?\*/", "", row).replace(",", " ").split()] for row in rows])
    return "".join(header), values


def main() -> int:
    source = sys.argv[1]
    different = 0
    for name, base in FILES.items():
        letters, values = parasail_table(source, base)
        ours = substitution_matrix(name)
        keep = [k for k, letter in enumerate(letters) if letter in ours.letters]
        index = [ours.letters.index(letters[k]) for k in keep]
        same = np.array_equal(ours.scores[np.ix_(index, index)], values[np.ix_(keep, keep)])
        different += not same
        print(f"{name}: {len(keep)} letters, {'identical' if same else 'DIFFERENT'}")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
