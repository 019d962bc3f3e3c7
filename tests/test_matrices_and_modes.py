"""Substitution matrices by name and from NCBI-format files, and the alignment modes' plain DP oracle against an
enumeration of every alignment (issue 19's foundations)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from seqcompare.align.matrices import NAMES, read_matrix, substitution_matrix
from seqcompare.align.reference import MODES, mode_alignment_reference, mode_reference
from seqcompare.errors import InputError

PROTEIN = "ARNDCQEGHILKMFPSTWYVBZX*"


def test_every_named_matrix_is_the_published_square_symmetric_table():
    for name in NAMES:
        matrix = substitution_matrix(name)
        assert matrix.scores.shape == (len(matrix.letters),) * 2
        assert np.array_equal(matrix.scores, matrix.scores.T), name
        assert matrix.letters == (PROTEIN if name != "NUC.4.4" else "ATGCSWRYKMBVHDN")
    # Published values (each table's diagonal extremes and its stop/ambiguity corners).
    expected = {("BLOSUM62", "W", "W"): 11, ("BLOSUM62", "C", "C"): 9, ("BLOSUM62", "A", "A"): 4,
                ("BLOSUM62", "*", "*"): 1, ("BLOSUM62", "X", "*"): -4, ("BLOSUM62", "E", "D"): 2,
                ("BLOSUM45", "W", "W"): 15, ("BLOSUM50", "P", "P"): 10, ("BLOSUM80", "D", "D"): 10,
                ("BLOSUM90", "W", "W"): 11, ("PAM250", "W", "W"): 17, ("PAM250", "C", "W"): -8,
                ("NUC.4.4", "A", "A"): 5, ("NUC.4.4", "A", "T"): -4, ("NUC.4.4", "N", "N"): -1,
                ("NUC.4.4", "R", "A"): 1}  # fmt: skip
    for (name, a, b), value in expected.items():
        assert substitution_matrix(name).score(a, b) == value
        assert substitution_matrix(name.lower()).score(a.lower(), b) == value
    assert substitution_matrix("nuc44").name == "NUC.4.4"
    codes = substitution_matrix("BLOSUM62").codes()
    assert codes[ord("w")] == codes[ord("W")] == PROTEIN.index("W") and codes[ord("J")] == 255


def test_a_matrix_file_reads_back_exactly_and_bad_files_name_the_line(tmp_path, rng):
    letters = "ACGTN"
    values = rng.integers(-9, 10, (5, 5))
    text = "# a comment\n\n   " + "  ".join(letters) + "\n" + "".join(
        f"{a} " + " ".join(str(v) for v in row) + "\n" for a, row in zip(letters, values))  # fmt: skip
    path = tmp_path / "mine.txt"
    path.write_text(text)
    matrix = substitution_matrix(str(path))
    assert matrix.letters == letters and np.array_equal(matrix.scores, values) and matrix.name == str(path)
    broken = {"header": "  AB C\nA 1 2\n", "duplicate": " A A\nA 1 1\nA 1 1\n", "count": " A C\nA 1\nC 1 2\n",
              "integer": " A C\nA 1 x\nC 1 2\n", "order": " A C\nC 1 2\nA 1 2\n", "empty": "# nothing\n"}  # fmt: skip
    for what, body in broken.items():
        path = tmp_path / f"{what}.txt"
        path.write_text(body)
        with pytest.raises(InputError, match=str(path)) as caught:
            read_matrix(path)
        assert "\n" not in str(caught.value), what
    with pytest.raises(InputError, match="unknown substitution matrix 'BLOSUM99'.*BLOSUM62"):
        substitution_matrix("BLOSUM99")


def _alignments(t, q):
    """Every global alignment of code lists ``t`` and ``q``: lists of columns ('M', a, b), ('I', a) (a target
    code against a gap) and ('D', b)."""
    if not t and not q:
        yield []
        return
    if t and q:
        for rest in _alignments(t[1:], q[1:]):
            yield [("M", t[0], q[0]), *rest]
    if t:
        for rest in _alignments(t[1:], q):
            yield [("I", t[0]), *rest]
    if q:
        for rest in _alignments(t, q[1:]):
            yield [("D", q[0]), *rest]


def _score(columns, scores, gap_open, gap_extend):
    total, previous = 0, None
    for column in columns:
        if column[0] == "M":
            total += scores[column[1]][column[2]]
        else:  # Gotoh's recurrence may also open a new gap right after one of the same kind
            total -= min(gap_open, gap_extend) if previous == column[0] else gap_open
        previous = column[0]
    return total


def _brute_force(t, q, scores, gap_open, gap_extend, mode):
    """The best score over every alignment the mode allows, and its ends by the oracle's tie order: each alignment
    of ``t[a:b]`` with ``q[c:d]`` ends in cell ``(d, b)``; ``_end_order`` ranks the cells a mode may end in."""
    n, m = len(t), len(q)
    best, rank, ends = None, None, None
    for a, b, c, d in itertools.product(range(n + 1), range(n + 1), range(m + 1), range(m + 1)):
        if a > b or c > d:
            continue
        allowed = {"global": a == 0 and b == n and c == 0 and d == m, "local": True,
                   "semi-global": (a == 0 or c == 0) and (b == n or d == m),
                   "infix": c == 0 and d == m, "prefix": a == 0 and c == 0 and d == m}[mode]  # fmt: skip
        order = _end_order(mode, d, b, m, n)
        if not allowed or order is None:
            continue
        for columns in _alignments(t[a:b], q[c:d]):
            if mode == "local" and (a == b) != (c == d):
                break  # only gaps: never better than the empty alignment of the same end (score 0)
            value = _score(columns, scores, gap_open, gap_extend)
            if best is None or value > best or (value == best and order < rank):
                best, rank, ends = value, order, (b - 1, d - 1)
    if best is None:
        return 0, -1, -1
    return best, ends[0], ends[1]


def _end_order(mode, i, j, m, n):
    """Where cell ``(i, j)`` stands in the mode's tie order, or None if an alignment may not end there."""
    if mode == "global" or (mode != "local" and (m == 0 or n == 0)):
        return 0 if (i, j) == (m, n) else None
    if mode == "local":
        return (j, i) if i >= 1 and j >= 1 else None
    if mode == "semi-global":
        if i == m and 1 <= j < n:
            return (0, j)
        return (1, i) if j == n and i >= 1 else None
    return j if i == m else None


@pytest.mark.parametrize("mode", MODES)
def test_mode_oracle_equals_every_alignment_enumerated(rng, mode):
    blosum = substitution_matrix("BLOSUM62").scores.tolist()
    cases = 0
    for _ in range(200):
        n, m = int(rng.integers(0, 6)), int(rng.integers(0, 4))
        alphabet = int(rng.integers(2, 6))  # few letters: many ties among alignments
        t = rng.integers(0, alphabet, n).tolist()
        q = rng.integers(0, alphabet, m).tolist()
        gap_open, gap_extend = int(rng.integers(0, 6)), int(rng.integers(0, 3))
        scores = blosum if rng.random() < 0.5 else (np.eye(24, dtype=int) * 3 - 1).tolist()
        expected = _brute_force(t, q, scores, gap_open, gap_extend, mode)
        assert mode_reference(t, q, scores, gap_open, gap_extend, mode) == expected, (t, q, gap_open, gap_extend)
        cases += 1
    assert cases == 200


def test_mode_oracle_on_worked_examples():
    # HEAGAWGHEE against PAWHEAE (Durbin et al., Biological Sequence Analysis, 1998, section 2.3): BLOSUM50 with a
    # linear gap of 8 gives 1 globally and 28 locally (AWGHE against AW-HE).
    matrix = substitution_matrix("BLOSUM50")
    codes = matrix.codes()
    target = [int(codes[ord(c)]) for c in "HEAGAWGHEE"]
    query = [int(codes[ord(c)]) for c in "PAWHEAE"]
    scores = matrix.scores.tolist()
    assert mode_reference(target, query, scores, 8, 8, "global")[0] == 1
    assert mode_reference(target, query, scores, 8, 8, "local") == (28, 8, 4)
    with pytest.raises(ValueError, match="mode must be one of"):
        mode_reference(target, query, scores, 8, 8, "glocal")


def test_mode_oracle_gives_parasails_scores_and_ends():
    # Golden scores made by parasail's own serial nw, sg and sw (tests/data/parasail_modes.tsv; its first line is
    # the command): protein and DNA pairs, several matrices, affine gaps with open >= extend.
    import os

    names = {"blosum62": "BLOSUM62", "blosum45": "BLOSUM45", "blosum80": "BLOSUM80", "pam250": "PAM250",
             "nuc44": "NUC.4.4"}  # fmt: skip
    modes = {"nw": "global", "sg": "semi-global", "sw": "local"}
    path = os.path.join(os.path.dirname(__file__), "data", "parasail_modes.tsv")
    seen = {mode: 0 for mode in modes}
    with open(path) as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            mode, name, gap_open, gap_extend, query, target = fields[:6]
            score, end_query, end_ref, matches, similar, length = map(int, fields[6:])
            matrix = substitution_matrix(names[name])
            codes = matrix.codes()
            t, q = [int(codes[ord(c)]) for c in target], [int(codes[ord(c)]) for c in query]
            arguments = (matrix.scores.tolist(), int(gap_open), int(gap_extend), modes[mode])
            assert mode_reference(t, q, *arguments) == (score, end_ref, end_query), line
            # parasail's _stats counts: the traceback oracle's path, counted as parasail counts it.
            _, positions, counts, _ = mode_alignment_reference(t, q, *arguments)
            assert (counts[0], counts[1], counts[3]) == (matches, similar, length), line
            seen[mode] += 1
    assert min(seen.values()) >= 100


def test_infix_and_prefix_give_edlibs_distances_and_first_ends():
    # Golden edit distances and end locations written by edlib 1.3.9 in its HW (infix) and SHW (prefix) modes
    # (tests/data/golden/edlib/make_modes.py): unit costs are scores of 0 and -1 with a linear gap of 1.
    import os

    unit = (np.eye(4, dtype=int) - 1).tolist()
    path = os.path.join(os.path.dirname(__file__), "data", "golden", "edlib", "modes_pairs.tsv")
    with open(path) as handle:
        lines = handle.read().splitlines()[1:]
    for line in lines:
        mode, query, target, distance, first_end = line.split("\t")
        got = mode_reference(["ACGT".index(c) for c in target], ["ACGT".index(c) for c in query], unit, 1, 1,
                             {"HW": "infix", "SHW": "prefix"}[mode])  # fmt: skip
        assert got[:2] == (-int(distance), int(first_end)), line
        assert got[2] == len(query) - 1
    assert len(lines) == 240
