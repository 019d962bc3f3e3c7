"""Alignment modes through the public API and the CLI (issue 19): every mode, matrix and alphabet on the CPU and
the GPU, equal to the plain DP oracle (scores, positions, parasail's statistics, CIGARs) and to parasail's and
edlib's golden files; both strands; score and identity matrices; one-line errors."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import DATA, DEVICES

import seqcompare
from seqcompare.align.matrices import SubstitutionMatrix, substitution_matrix
from seqcompare.align.reference import MODES, mode_alignment_reference
from seqcompare.errors import InputError

HERE = os.path.dirname(__file__)
PARASAIL = {"blosum62": "BLOSUM62", "blosum45": "BLOSUM45", "blosum80": "BLOSUM80", "pam250": "PAM250",
            "nuc44": "NUC.4.4"}  # fmt: skip


def random_matrix(rng, letters: str) -> SubstitutionMatrix:
    scores = rng.integers(-4, 6, (len(letters), len(letters)))
    return SubstitutionMatrix("random", letters, scores.astype(np.int64))


def expected(targets, queries, pairs, matrix, gap_open, gap_extend, mode):
    """The oracle's (scores, positions, counts, cigars) of the pairs, sequences as letters."""
    code = {letter: k for k, letter in enumerate(matrix.letters)}
    table = matrix.scores.tolist()
    found = [mode_alignment_reference([code[c] for c in targets[a]], [code[c] for c in queries[b]], table,
                                      gap_open, gap_extend, mode) for a, b in pairs]  # fmt: skip
    return ([f[0] for f in found], [list(f[1]) for f in found], [list(f[2]) for f in found], [f[3] for f in found])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", MODES)
def test_modes_equal_the_oracle_on_random_pairs(rng, device, mode):
    # Small alphabets and random tables make ties everywhere: the positions, counts and CIGARs pin the path.
    for trial in range(6):
        letters = "ACDEFGHIK"[: int(rng.integers(2, 9))]
        matrix = random_matrix(rng, letters)
        gap_extend = int(rng.integers(0, 4))
        gap_open = gap_extend + int(rng.integers(0, 5))
        targets = ["".join(rng.choice(list(letters), rng.integers(0, 30))) for _ in range(12)]
        queries = ["".join(rng.choice(list(letters), rng.integers(0, 30))) for _ in range(12)]
        result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=gap_open,
                                  gap_extend=gap_extend, stats=True, cigar=True, device=device)  # fmt: skip
        scores, positions, counts, cigars = expected(targets, queries, result.pairs, matrix, gap_open, gap_extend,
                                                     mode)  # fmt: skip
        assert result.scores.tolist() == scores
        assert result.positions.tolist() == positions
        assert result.counts.tolist() == counts
        assert result.cigars == cigars
        # Without statistics or CIGARs, the faster pass: the same scores and ends, no starts or counts.
        fast = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=gap_open,
                                gap_extend=gap_extend, device=device)  # fmt: skip
        assert fast.scores.tolist() == scores and fast.counts is None
        assert fast.positions.tolist() == [[-1, p[1], -1, p[3]] for p in positions]


@pytest.mark.parametrize("device", DEVICES)
def test_modes_on_long_and_uneven_pairs(rng, device):
    # Queries longer than a strip of rows, unequal strips, and a batch of pairs of very different shapes.
    matrix = substitution_matrix("BLOSUM62")
    letters = "ARNDCQEGHILKMFPSTWYV"
    base = "".join(rng.choice(list(letters), 160))
    targets = [base[: int(rng.integers(0, 160))] for _ in range(10)] + [base]
    queries = [base[int(rng.integers(0, 50)) : int(rng.integers(80, 161))] for _ in range(10)] + ["W"]
    for mode in MODES:
        result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=11, gap_extend=1,
                                  stats=True, device=device)  # fmt: skip
        scores, positions, counts, _ = expected(targets, queries, result.pairs, matrix, 11, 1, mode)
        assert (result.scores.tolist(), result.positions.tolist(), result.counts.tolist()) == (scores, positions,
                                                                                                counts), mode  # fmt: skip


@pytest.mark.parametrize("layout", ["int32", "int64 packed", "int64"],
                         ids=["int32 lanes", "int64 lanes, counts in one word", "int64 lanes, counts in two words"])
@pytest.mark.parametrize("mode", MODES)
def test_paths_in_lanes_equal_the_oracle(rng, mode, layout, monkeypatch):
    """Statistics and CIGARs take pairs a vector's lanes at a time (mode_pairs_lanes, which traces each pair back
    in its sweep): 237 pairs by order (groups of like lengths and a partial last group), lengths 0 to 90 in one
    call, three letters and a table with ties everywhere, so the lanes' padding, their own last rows and columns
    and the tie rules all show. Short pairs take int32 lanes; the int64 layouts are those of pairs whose query
    and target reach 2**15 (and 2**16) letters together."""
    import seqcompare.align.modes as modes
    import seqcompare.align.mode_kernels as kernels

    calls = []
    lanes = kernels.mode_pairs_lanes
    monkeypatch.setattr(kernels, "mode_pairs_lanes", lambda *args: calls.append(args[-1].dtype) or lanes(*args))
    if layout != "int32":
        monkeypatch.setattr(modes, "NARROW_PATHS_BELOW", 0)
    matrix = SubstitutionMatrix("ties", "ACG", np.array([[2, -1, -9], [-1, 2, 0], [-9, 0, 1]], np.int64))
    lengths = [0, 1, 2, 5, 17, 40, 63, 90]
    targets = ["".join(rng.choice(list("ACG"), int(rng.choice(lengths)))) for _ in range(37)]
    queries = [t[int(rng.integers(0, 3)) :] + "".join(rng.choice(list("ACG"), int(rng.integers(0, 9))))
               if k % 3 else "".join(rng.choice(list("ACG"), int(rng.choice(lengths))))
               for k, t in enumerate(targets)]  # fmt: skip
    if layout == "int64":
        monkeypatch.setattr(modes, "PACKED_COUNTS_BELOW", 0)
    # And 200 tiny pairs: with A against G below two gap openings, a cell's two gap states often tie (the vertical
    # one is taken).
    targets += ["".join(rng.choice(list("ACG"), int(rng.integers(0, 7)))) for _ in range(200)]
    queries += ["".join(rng.choice(list("ACG"), int(rng.integers(0, 7)))) for _ in range(200)]
    result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=3, gap_extend=1, stats=True,
                              cigar=True, threads=2)  # fmt: skip
    scores, positions, counts, cigars = expected(targets, queries, result.pairs, matrix, 3, 1, mode)
    assert result.scores.tolist() == scores
    assert result.positions.tolist() == positions
    assert result.counts.tolist() == counts
    assert result.cigars == cigars  # traced back in the lanes' sweep
    assert calls and set(calls) == {np.dtype(np.int32 if layout == "int32" else np.int64)}


@pytest.mark.parametrize("mode", ["local", "semi-global", "global"])
def test_pairs_holding_another_letter_take_the_table_and_the_others_still_compare_codes(rng, mode, monkeypatch):
    """DNA with an N in some pairs: the lanes' pairs of A, C, G and T alone score by a compare of the codes, in
    groups of their own, and the pairs with an N by the table; every result is the oracle's."""
    import seqcompare.align.mode_kernels as kernels

    tables = []
    lanes = kernels.mode_pairs_lanes
    monkeypatch.setattr(kernels, "mode_pairs_lanes",
                        lambda *args: tables.append((args[6], args[7], args[-3].tolist())) or lanes(*args))  # fmt: skip
    matrix = substitution_matrix("NUC.4.4")
    targets = ["".join(rng.choice(list("ACGT"), int(rng.integers(20, 70)))) for _ in range(90)]
    queries = [t[2:] + "".join(rng.choice(list("ACGT"), 4)) for t in targets]
    for k in rng.choice(90, 25, replace=False):  # an N in the target or the query of 25 pairs
        side = targets if k % 2 else queries
        at = int(rng.integers(0, len(side[k])))
        side[k] = side[k][:at] + "N" + side[k][at + 1 :]
    result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=5, gap_extend=2, stats=True,
                              cigar=True, threads=2)  # fmt: skip
    scores, positions, counts, cigars = expected(targets, queries, result.pairs, matrix, 5, 2, mode)
    assert result.scores.tolist() == scores and result.positions.tolist() == positions
    assert result.counts.tolist() == counts and result.cigars == cigars
    compared = sum(last - first for first, last, equal in tables if equal)
    by_table = sum(last - first for first, last, equal in tables if not equal)
    assert compared == 65 and by_table == 25


def test_too_few_pairs_for_int32_lanes_take_int64_lanes(rng, monkeypatch):
    """Fewer pairs than int32 lanes (but a group of int64 lanes) take int64 lanes, not the one-pair kernel."""
    import seqcompare.align.mode_kernels as kernels

    calls = []
    lanes = kernels.mode_pairs_lanes
    monkeypatch.setattr(kernels, "mode_pairs_lanes", lambda *args: calls.append(args[-1].dtype) or lanes(*args))
    monkeypatch.setattr(kernels, "mode_pairs", None)  # any call to it fails
    matrix = substitution_matrix("NUC.4.4")
    count = kernels.NARROW_PATH_LANES - 1
    targets = ["".join(rng.choice(list("ACGT"), 50)) for _ in range(count)]
    queries = [t[2:] + "ACG" for t in targets]
    result = seqcompare.align(targets, queries, mode="local", matrix=matrix, gap_open=5, gap_extend=2, stats=True)
    scores, positions, counts, _ = expected(targets, queries, result.pairs, matrix, 5, 2, "local")
    assert result.scores.tolist() == scores and result.positions.tolist() == positions
    assert result.counts.tolist() == counts and set(calls) == {np.dtype(np.int64)}


@pytest.mark.parametrize("mode", ["global", "local"])
def test_short_pairs_whose_scores_could_pass_int32_lanes_take_int64_lanes(rng, mode, monkeypatch):
    """Short pairs take int32 lanes only while no score can reach 2**29: with costs of about 2**24 a cell,
    pairs of 60 letters could, and take int64 lanes, exact."""
    import seqcompare.align.mode_kernels as kernels

    calls = []
    lanes = kernels.mode_pairs_lanes
    monkeypatch.setattr(kernels, "mode_pairs_lanes", lambda *args: calls.append(args[-1].dtype) or lanes(*args))
    scale = 1 << 22
    matrix = SubstitutionMatrix("big", "ACGT", (np.where(np.eye(4, dtype=bool), 5, -4) * scale).astype(np.int64))
    targets = ["".join(rng.choice(list("ACGT"), 60)) for _ in range(12)]
    queries = [t[3:] if k % 2 else "".join(rng.choice(list("ACGT"), 60)) for k, t in enumerate(targets)]
    result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=7 * scale, gap_extend=3 * scale,
                              stats=True, cigar=True)  # fmt: skip
    scores, positions, counts, cigars = expected(targets, queries, result.pairs, matrix, 7 * scale, 3 * scale, mode)
    assert result.scores.tolist() == scores and max(abs(x) for x in scores) > 1 << 29
    assert result.positions.tolist() == positions and result.counts.tolist() == counts and result.cigars == cigars
    assert set(calls) == {np.dtype(np.int64)}


def test_cigars_made_together_equal_cigars_made_one_at_a_time(rng):
    """The lanes' CIGARs are made in one pass over every traced pair's operations (batch.cigar_strings), which lie
    apart in one buffer with bytes of no pair between them: each must equal a plain run-length count of its own
    operations, and so must cigar_string of it alone."""
    import itertools

    from seqcompare.align.batch import cigar_string, cigar_strings

    def plain(ops) -> str:
        return "".join(f"{len(list(run))}{'MID'[op]}" for op, run in itertools.groupby(ops.tolist()))

    for _ in range(300):
        lengths, gaps = rng.integers(0, 12, int(rng.integers(0, 6))), rng.integers(0, 5, 6)
        ops = rng.integers(0, 256, int(lengths.sum() + gaps.sum()) + 3).astype(np.uint8)  # no pair's bytes: any
        firsts, ends, at = [], [], 0
        for length, gap in zip(lengths, gaps):
            at += gap
            ops[at : at + length] = rng.integers(0, 3 if rng.random() < 0.7 else 2, length)  # long runs too
            firsts.append(at)
            ends.append(at + length)
            at += length
        made = cigar_strings(ops, np.array(firsts, np.int64), np.array(ends, np.int64))
        assert made == [plain(ops[a:b]) for a, b in zip(firsts, ends)]
        assert made == [cigar_string(ops[a:b]) for a, b in zip(firsts, ends)]


def test_cigars_of_groups_too_large_to_keep_are_traced_one_pair_at_a_time(rng, monkeypatch):
    """Groups whose direction codes would pass TRACE_BYTES are not traced in the lanes' sweep: their pairs go to
    the one-pair traceback, and every CIGAR, either way, is the oracle's, on both strands."""
    import seqcompare.align.modes as modes

    matrix = substitution_matrix("NUC.4.4")
    targets = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(1, 120, 30)]
    queries = [t[int(rng.integers(0, 5)) :] if k % 2 else "".join(rng.choice(list("ACGT"), 40))
               for k, t in enumerate(targets)]  # fmt: skip
    options = dict(mode="local", matrix=matrix, gap_open=5, gap_extend=2, cigar=True, stats=True)
    _, _, _, cigars = expected(targets, queries, [(k, k) for k in range(30)], matrix, 5, 2, "local")
    for limit in (1, 4 * 60 * 60, modes.TRACE_BYTES):  # none traced in the sweep, some, all
        monkeypatch.setattr(modes, "TRACE_BYTES", limit)
        assert seqcompare.align(targets, queries, **options).cigars == cigars, limit
    both = seqcompare.align(targets, queries, both_strands=True, **options)
    monkeypatch.setattr(modes, "TRACE_BYTES", 1)
    assert seqcompare.align(targets, queries, both_strands=True, **options).cigars == both.cigars


def parasail_rows():
    with open(os.path.join(HERE, "data", "parasail_modes.tsv")) as handle:
        return [line.rstrip("\n").split("\t") for line in handle if not line.startswith("#")]


@pytest.mark.parametrize("device", DEVICES)
def test_scores_ends_and_statistics_equal_parasails(device):
    # Golden values of parasail's serial nw, sg and sw and their _stats versions (tests/data/parasail_modes.tsv,
    # whose first line is the command that made it from parasail's source): every one must come out the same.
    modes = {"nw": "global", "sg": "semi-global", "sw": "local"}
    rows = parasail_rows()
    groups = {}
    for row in rows:
        groups.setdefault((row[0], row[1], int(row[2]), int(row[3])), []).append(row)
    checked = 0
    for (mode, name, gap_open, gap_extend), group in groups.items():
        targets, queries = [row[5] for row in group], [row[4] for row in group]
        result = seqcompare.align(targets, queries, mode=modes[mode], matrix=PARASAIL[name], gap_open=gap_open,
                                  gap_extend=gap_extend, stats=True, device=device)  # fmt: skip
        for k, row in enumerate(group):
            score, end_query, end_ref, matches, similar, length = map(int, row[6:])
            assert result.scores[k] == score, row
            assert (result.positions[k, 1], result.positions[k, 3]) == (end_ref, end_query), row
            assert (result.matches[k], result.counts[k, 1], result.length[k]) == (matches, similar, length), row
            checked += 1
    assert checked == len(rows) == 360


@pytest.mark.parametrize("device", DEVICES)
def test_infix_and_prefix_edit_distances_equal_edlibs(device):
    # edlib 1.3.9's HW and SHW distances and first end locations (tests/data/golden/edlib/make_modes.py).
    with open(os.path.join(HERE, "data", "golden", "edlib", "modes_pairs.tsv")) as handle:
        rows = [line.split("\t") for line in handle.read().splitlines()[1:]]
    for edlib_mode, mode in (("HW", "infix"), ("SHW", "prefix")):
        chosen = [row for row in rows if row[0] == edlib_mode]
        result = seqcompare.align([row[2] for row in chosen], [row[1] for row in chosen], mode=mode, device=device)
        assert result.scores.tolist() == [int(row[3]) for row in chosen]
        assert result.positions[:, 1].tolist() == [int(row[4]) for row in chosen]
        assert len(chosen) == 120


@pytest.mark.parametrize("device", DEVICES)
def test_both_strands_keep_the_better_strand_with_positions_on_the_query(rng, device):
    complement = str.maketrans("ACGTN", "TGCAN")
    targets, queries = [], []
    for _ in range(30):
        target = "".join(rng.choice(list("ACGT"), rng.integers(20, 80)))
        piece = target[int(rng.integers(0, 10)) : int(rng.integers(15, 20))]
        flip = rng.random() < 0.5
        targets.append(target)
        queries.append(piece.translate(complement)[::-1] if flip else piece)
    queries.append("ACGT")  # its own reverse complement: a tie, kept on the forward strand
    targets.append("TTACGTTT")
    result = seqcompare.align(targets, queries, mode="infix", both_strands=True, cigar=True, stats=True,
                              device=device)  # fmt: skip
    forward = seqcompare.align(targets, queries, mode="infix", cigar=True, stats=True)
    backward = seqcompare.align(targets, [q.translate(complement)[::-1] for q in queries], mode="infix",
                                cigar=True, stats=True)  # fmt: skip
    reverse = backward.scores < forward.scores  # costs: the smaller wins, forward on ties
    assert result.reverse.tolist() == reverse.tolist() and reverse.sum() >= 10 and not reverse[-1]
    assert result.scores.tolist() == np.where(reverse, backward.scores, forward.scores).tolist()
    assert result.cigars == [b if r else f for f, b, r in zip(forward.cigars, backward.cigars, reverse)]
    q_len = np.array([len(q) for q in queries])
    flipped = np.stack([backward.positions[:, 0], backward.positions[:, 1], q_len - 1 - backward.positions[:, 3],
                        q_len - 1 - backward.positions[:, 2]], axis=1)  # fmt: skip
    assert result.positions.tolist() == np.where(reverse[:, None], flipped, forward.positions).tolist()
    assert np.all(result.scores[:-1] == 0)  # every planted piece is found exactly on its strand


@pytest.mark.parametrize("device", DEVICES)
def test_protein_and_byte_alphabets_with_match_and_mismatch(rng, device):
    costs = seqcompare.align.Costs.scores(2, -1, -2, -1)  # a gap of L scores -2 - L: parasail's open 3, extend 1
    letters = [chr(c) for c in range(33, 127)]
    targets = ["".join(rng.choice(letters, rng.integers(0, 25))) for _ in range(20)]
    queries = ["".join(rng.choice(letters[:8], rng.integers(0, 25))) for _ in range(20)]
    by_bytes = SubstitutionMatrix("bytes", "".join(letters), np.where(np.eye(len(letters), dtype=bool), 2, -1))
    for mode in MODES:
        result = seqcompare.align(targets, queries, mode=mode, costs=costs, alphabet="bytes", stats=True,
                                  device=device)  # fmt: skip
        scores, positions, counts, _ = expected(targets, queries, result.pairs, by_bytes, 3, 1, mode)
        assert (result.scores.tolist(), result.positions.tolist(), result.counts.tolist()) == (scores, positions,
                                                                                                counts), mode  # fmt: skip
    # Bytes are case-sensitive; protein letters are not.
    assert seqcompare.align(["abc"], ["ABC"], mode="global", alphabet="bytes").scores.tolist() == [3]
    assert seqcompare.align(["mkv"], ["MKV"], mode="global", alphabet="protein").scores.tolist() == [0]


def test_identity_and_derived_statistics():
    result = seqcompare.align(["HEAGAWGHEE"], ["PAWHEAE"], mode="local", matrix="BLOSUM50", gap_open=8,
                              gap_extend=8, stats=True, cigar=True)  # fmt: skip
    # Durbin et al.'s example: AWGHE against AW-HE, score 28.
    assert result.scores.tolist() == [28] and result.cigars == ["2M1I2M"]
    assert result.positions.tolist() == [[4, 8, 1, 4]]
    assert (result.matches[0], result.mismatches[0], result.gap_columns[0], result.length[0]) == (4, 0, 1, 5)
    assert result.identity.tolist() == [0.8]
    empty = seqcompare.align(["WWW"], ["PPP"], mode="local", matrix="BLOSUM62", gap_open=11, gap_extend=1, stats=True)
    assert empty.scores.tolist() == [0] and empty.identity.tolist() == [0.0]
    assert empty.positions.tolist() == [[1, 0, 1, 0]]  # an empty alignment starts one past its end
    with pytest.raises(ValueError, match="stats=True"):
        _ = seqcompare.align(["A"], ["A"]).identity


def test_bad_input_gets_one_clear_line():
    fasta = os.path.join(DATA, "gene_515.fasta")
    with pytest.raises(InputError, match="unknown substitution matrix 'BLOSUM99'"):
        seqcompare.align(["A"], ["A"], mode="local", matrix="BLOSUM99", gap_open=11, gap_extend=1)
    with pytest.raises(InputError, match=r"record #2 'query2' has 'J' at position 3, which is not a letter of BLOSUM62"):
        seqcompare.align(["MKV", "MKV"], ["MKV", "MKJ"], matrix="BLOSUM62", gap_open=11, gap_extend=1)
    with pytest.raises(InputError, match="needs gap_open and gap_extend"):
        seqcompare.align(["A"], ["A"], matrix="BLOSUM62")
    with pytest.raises(InputError, match=r"gap_open \(1\) must be at least gap_extend \(2\)"):
        seqcompare.align(["A"], ["A"], matrix="BLOSUM62", gap_open=1, gap_extend=2)
    with pytest.raises(InputError, match="nucleotide alphabet"):
        seqcompare.align(["MKV"], ["MKV"], matrix="BLOSUM62", gap_open=11, gap_extend=1, both_strands=True)
    for asked in ({"stats": True}, {"cigar": True}, {"both_strands": True}):
        with pytest.raises(InputError, match="positions=False leaves out the alignments' positions"):
            seqcompare.align(["ACGT"], ["ACG"], mode="local", positions=False, **asked)
    with pytest.raises(InputError, match="cannot score the bytes alphabet"):
        seqcompare.align(["A"], ["A"], matrix="BLOSUM62", gap_open=11, gap_extend=1, alphabet="bytes")
    with pytest.raises(InputError, match="DNA only"):
        seqcompare.align(["A"], ["A"], mode="local", alphabet="protein",
                         costs=seqcompare.align.Costs.scores(matrix=np.diag([1, 2, 3, 4, 5])))  # fmt: skip
    with pytest.raises(InputError, match="one gap model"):
        seqcompare.align(["A"], ["A"], mode="local", costs=seqcompare.align.Costs.seed(0, 1, 1, 2))
    with pytest.raises(ValueError, match="mode must be one of"):
        seqcompare.align(["A"], ["A"], mode="glocal")
    huge = SubstitutionMatrix("huge", "AB", np.array([[1 << 28, 0], [0, 1]]))
    with pytest.raises(InputError, match="on the GPU, alignment scores must stay below 2\\*\\*29"):
        seqcompare.align(["AAAA"], ["AAAA"], mode="local", matrix=huge, gap_open=1, gap_extend=1, device="cuda")
    assert os.path.exists(fasta)  # the file for the CLI's errors below


class InProcess:
    """``seqcompare align`` run in this process (the command line's own entry), its output captured."""

    def __init__(self, capsysbinary):
        self.capture = capsysbinary

    def __call__(self, *args, check=True):
        from types import SimpleNamespace

        from seqcompare.cli import main

        status = main(["align", *map(str, args)])
        captured = self.capture.readouterr()
        if check:
            assert status == 0, captured.err.decode()
        return SimpleNamespace(returncode=status, stdout=captured.out.decode(), stderr=captured.err.decode())


def test_cli_modes_statistics_and_matrices(tmp_path, capsysbinary):
    run_cli = InProcess(capsysbinary)
    proteins = tmp_path / "p.fasta"
    proteins.write_text(">a\nHEAGAWGHEE\n>b\nPAWHEAE\n>c\nMKTAYIAKQR\n")
    options = ["--mode", "local", "--matrix", "BLOSUM50", "--gap-open", "8", "--gap-extend", "8", "-q"]
    table = run_cli(str(proteins), "--all-vs-all", *options, "--stats", "--cigar").stdout.splitlines()
    assert table[0].split("\t") == ["target", "query", "score", "target_start", "target_end", "query_start",
                                    "query_end", "matches", "similar", "mismatches", "gap_columns", "length",
                                    "identity", "cigar"]  # fmt: skip
    assert table[1].split("\t") == ["a", "b", "28", "4", "8", "1", "4", "4", "4", "0", "1", "5", "0.8", "2M1I2M"]
    api = seqcompare.align(str(proteins), mode="local", matrix="BLOSUM50", gap_open=8, gap_extend=8, stats=True)
    identity = run_cli(str(proteins), "--all-vs-all", *options, "--format", "matrix", "--value", "identity").stdout
    rows = [line.split("\t") for line in identity.splitlines()]
    assert rows[0] == ["", "a", "b", "c"] and [row[0] for row in rows[1:]] == ["a", "b", "c"]
    values = np.array([[float(x) for x in row[1:]] for row in rows[1:]])
    assert np.array_equal(values, values.T) and np.all(np.diag(values) == 1.0)
    assert [values[0, 1], values[0, 2], values[1, 2]] == api.identity.tolist()
    scores = run_cli(str(proteins), "--all-vs-all", *options, "--format", "matrix").stdout
    score_rows = [[int(x) for x in line.split("\t")[1:]] for line in scores.splitlines()[1:]]
    assert [score_rows[0][1], score_rows[0][2], score_rows[1][2]] == api.scores.tolist()
    dna = tmp_path / "d.fasta"
    dna.write_text(">x\nACGTTGCA\n>y\nTTTTGCAACGTAA\n")
    strands = run_cli(str(dna), str(dna), "--mode", "infix", "--both-strands", "-q").stdout.splitlines()
    assert strands[0].split("\t")[-1] == "strand" and len(strands) == 3


def test_cli_errors_are_one_line_and_leave_no_output(tmp_path, capsysbinary):
    run_cli = InProcess(capsysbinary)
    proteins = tmp_path / "p.fasta"
    proteins.write_text(">a\nMKV\n>b\nMKJV\n")
    out = tmp_path / "out.tsv"
    cases = [
        (["--all-vs-all", "--matrix", "BLOSUM62", "--gap-open", "11", "--gap-extend", "1"],
         "record #2 'b' has 'J' at position 3, which is not a letter of BLOSUM62"),
        (["--all-vs-all", "--matrix", "BLOSUM62"], "--matrix needs --gap-open and --gap-extend"),
        (["--all-vs-all", "--matrix", "NOPE", "--gap-open", "11", "--gap-extend", "1"], "unknown substitution matrix"),
        (["--all-vs-all", "--mode", "local"], "which is not A, C, G, T, N or an IUPAC code"),
        (["--all-vs-all", "--value", "identity"], "--value chooses what --format matrix holds"),
        (["--all-vs-all", "--format", "matrix", "--cigar"], "--cigar needs the TSV output"),
    ]  # fmt: skip
    for options, message in cases:
        done = run_cli(str(proteins), *options, "-o", str(out), check=False)
        assert done.returncode != 0 and message in done.stderr, (options, done.stderr)
        # One line (besides the notice a cold cache prints once while kernels compile).
        lines = [line for line in done.stderr.strip().splitlines() if "compiling kernels (first run only)" not in line]
        assert len(lines) == 1, done.stderr
        assert not out.exists()


@pytest.mark.gpu
def test_gpu_launches_in_pieces_equal_one_launch(rng, monkeypatch):
    # Borders and direction bytes too small for more than a pair or two a launch: the same results.
    from seqcompare.align import modes_gpu

    matrix = random_matrix(rng, "ACDEF")
    targets = ["".join(rng.choice(list("ACDEF"), rng.integers(0, 60))) for _ in range(40)]
    queries = ["".join(rng.choice(list("ACDEF"), rng.integers(0, 60))) for _ in range(40)]
    options = {"mode": "semi-global", "matrix": matrix, "gap_open": 3, "gap_extend": 1, "stats": True, "cigar": True}
    whole = seqcompare.align(targets, queries, device="cuda", **options)
    monkeypatch.setattr(modes_gpu, "BORDER_BYTES", 3000)
    monkeypatch.setattr(modes_gpu, "WAYS_BYTES", 5000)
    pieces = seqcompare.align(targets, queries, device="cuda", **options)
    cpu = seqcompare.align(targets, queries, **options)
    assert pieces.cigars == whole.cigars == cpu.cigars
    assert np.array_equal(pieces.positions, cpu.positions) and np.array_equal(pieces.counts, cpu.counts)


@pytest.mark.parametrize("mode", MODES)
def test_lanes_of_one_query_against_many_targets_equal_the_oracle(rng, mode):
    # All against all: each query meets many targets, so the CPU's scores pass runs them in SIMD lanes that share
    # the query (targets of different lengths padded in one vector); the scores and ends must not move.
    from seqcompare.align import mode_kernels

    letters = "ACDEF"
    matrix = random_matrix(rng, letters)
    sequences = ["".join(rng.choice(list(letters), rng.integers(0, 22))) for _ in range(45)] + ["A" * 40]
    calls = []
    original = mode_kernels.mode_strips

    def counted(*args):
        calls.append(1)
        return original(*args)

    import unittest.mock

    with unittest.mock.patch.object(mode_kernels, "mode_strips", counted):
        result = seqcompare.align(sequences, mode=mode, matrix=matrix, gap_open=3, gap_extend=1)
    assert calls, "the lanes were not used"
    scores, positions, _, _ = expected(sequences, sequences, result.pairs, matrix, 3, 1, mode)
    assert result.scores.tolist() == scores
    assert result.positions[:, [1, 3]].tolist() == [[p[1], p[3]] for p in positions]


@pytest.mark.parametrize("mode", MODES)
def test_lanes_of_pairs_with_their_own_queries_equal_the_oracle(rng, mode):
    # Pairs by order: no two share a query, so the CPU's scores pass gives each lane its own query and target, lanes
    # of unequal query and target lengths padded together, and a few pairs left over for the scalar kernel; the
    # scores and ends must not move. A general table picks each lane's row of scores by its letter; a table of one
    # score for equal letters and one for others (and only those letters in the group) compares the two codes.
    from seqcompare.align import mode_kernels

    count = 3 * 32 + 2  # whole vectors of the widest lanes, and a remainder under MIN_LANE_PAIRS
    for letters, matrix, compared in (("ACDEF", random_matrix(rng, "ACDEF"), False),
                                      ("ACGT", SubstitutionMatrix("mm", "ACGT", np.where(np.eye(4, dtype=bool), 4, -3)),
                                       True),
                                      # mismatches that score: only the padding's score keeps a local best out of a
                                      # lane's padded columns
                                      ("GT", SubstitutionMatrix("mm+", "ACGT", np.where(np.eye(4, dtype=bool), 4, 1)),
                                       True),
                                      ("ACGTN", substitution_matrix("NUC.4.4"), False),
                                      # reads with an N among reads without: those go apart, in groups that compare
                                      ("ACGT", substitution_matrix("NUC.4.4"), "both")):  # fmt: skip
        targets = ["".join(rng.choice(list(letters), rng.integers(0, 40))) for _ in range(count)]
        queries = ["".join(rng.choice(list(letters), rng.integers(0, 40))) for _ in range(count)]
        if compared == "both":
            for k in rng.choice(count, 15, replace=False).tolist():
                queries[k] += "N"
        paths = []
        original = mode_kernels.mode_strips

        def counted(*args):
            paths.append((args[-4].size > 0, args[-1].size > 0))  # lanes of their own queries; codes compared
            return original(*args)

        import unittest.mock

        with unittest.mock.patch.object(mode_kernels, "mode_strips", counted):
            result = seqcompare.align(targets, queries, mode=mode, matrix=matrix, gap_open=3, gap_extend=1)
        assert paths and all(own for own, _ in paths), "the lanes of own queries were not used"
        if compared == "both":  # the 15 pairs with an N fill one group, and straddle at most one more
            assert any(equal for _, equal in paths) and sum(not equal for _, equal in paths) <= 2, paths
        else:
            assert all(equal == compared for _, equal in paths), (letters, paths)
        scores, positions, _, _ = expected(targets, queries, result.pairs, matrix, 3, 1, mode)
        assert result.scores.tolist() == scores
        assert result.positions[:, [1, 3]].tolist() == [[p[1], p[3]] for p in positions]


@pytest.mark.parametrize("mode", [mode for mode in MODES if mode != "local"])
def test_lanes_in_int16_at_the_edge_of_its_bound(rng, monkeypatch, mode):
    # Long pairs whose cells come within a few of the 16-bit lanes' bound (2**13): identical sequences of 1,630
    # (8,150 at the end), all mismatches, and an empty query (the lowest cells). The lanes must take int16 for
    # them and give the scalar kernel's scores and ends. The table scores equal letters 5 and others -4: each
    # lane compares its query's code with its target's (see the test above).
    from seqcompare.align import mode_kernels, modes

    matrix = SubstitutionMatrix("edge", "ACGT", np.where(np.eye(4, dtype=bool), 5, -4))
    length = 1630
    same = "".join(rng.choice(list("ACGT"), length))
    targets = [same, "A" * length, "A" * length, same] + ["".join(rng.choice(list("ACGT"), length)) for _ in range(4)]
    queries = [same, "C" * length, "", same[:10]] + ["".join(rng.choice(list("ACGT"), length)) for _ in range(4)]
    kinds = []
    original = mode_kernels.mode_strips

    def counted(*args):
        kinds.append(args[0].dtype)
        assert args[-1].size > 0, "the lanes did not compare codes"
        return original(*args)

    options = {"mode": mode, "matrix": matrix, "gap_open": 5, "gap_extend": 2}
    with monkeypatch.context() as patched:
        patched.setattr(mode_kernels, "mode_strips", counted)
        lanes = seqcompare.align(targets, queries, **options)
    assert kinds and all(kind == np.int16 for kind in kinds)
    monkeypatch.setattr(modes, "MIN_LANE_PAIRS", 10**9)  # every pair to the scalar kernel
    scalar = seqcompare.align(targets, queries, **options)
    assert lanes.scores.tolist() == scalar.scores.tolist()
    assert lanes.positions.tolist() == scalar.positions.tolist()
    if mode == "global":
        assert lanes.scores[0] == 5 * length
    # Where the bound is passed, int32: the best score past it (1,700 matches), or the gap states' floor
    # (3 x 5 + (1,040 + 1,040) x 4 + 1 with gaps 5/4 and scores +-1; 1,000 each way stays within it).
    unit = SubstitutionMatrix("unit", "ACGT", np.where(np.eye(4, dtype=bool), 1, -1))
    for table, gaps, length, kind in ((matrix, (5, 2), 1700, np.int32), (unit, (5, 4), 1040, np.int32),
                                      (unit, (5, 4), 1000, np.int16)):  # fmt: skip
        kinds.clear()
        with monkeypatch.context() as patched:
            patched.setattr(modes, "MIN_LANE_PAIRS", 4)
            patched.setattr(mode_kernels, "mode_strips", counted)
            seqcompare.align(["A" * length] * 4, ["C" * length] * 4, mode=mode, matrix=table, gap_open=gaps[0],
                             gap_extend=gaps[1])  # fmt: skip
        assert kinds and all(found == kind for found in kinds), (length, kind)


@pytest.mark.parametrize("device", DEVICES)
def test_local_ends_past_int16_columns(rng, device):
    # A short query planted near the end of long targets: local values fit 16 bits (the shorter side is short),
    # the target ends do not. The CPU's 16-bit lanes counted columns in their own type and wrapped the end
    # (-30,517 for 35,019). Twenty matches score 40, which nothing else in the random targets can reach.
    query = "ACGTTGCAACGGTACCATGA"
    targets, planted = [], []
    for k in range(6):
        text = "".join(rng.choice(list("ACGT"), 33000 + 1500 * k))
        at = len(text) - 500 - k
        targets.append(text[:at] + query + text[at + len(query) :])
        planted.append(at + len(query) - 1)
    scoring = {"mode": "local", "costs": seqcompare.Costs.scores(2, -3, -5, -2), "device": device}
    result = seqcompare.align(targets, [query], pairs="all", **scoring)
    assert result.scores.tolist() == [40] * 6
    assert result.positions[:, 1].tolist() == planted
    assert result.positions[:, 3].tolist() == [len(query) - 1] * 6
    # The other way round: the short side as the one target of six long queries, and as each one's own target.
    for pairs, short in (("all", [query]), (None, [query] * 6)):
        result = seqcompare.align(short, targets, pairs=pairs, **scoring)
        assert result.scores.tolist() == [40] * 6
        assert result.positions[:, 3].tolist() == planted
        assert result.positions[:, 1].tolist() == [len(query) - 1] * 6


def test_fastq_reads_align_as_dna(tmp_path, capsysbinary):
    run_cli = InProcess(capsysbinary)
    # Read sets come as FASTQ (16S amplicons, nanopore runs): the scan example's first ten real nanopore reads give
    # the same alignments as the same records written as FASTA.
    reads = os.path.join(DATA, "scan_example", "reads.fastq")
    lines = open(reads).read().splitlines()[:40]
    lines = [line[:300] if k % 2 else line for k, line in enumerate(lines)]  # their first 300 bases (and qualities)
    fastq = tmp_path / "r.fastq"
    fastq.write_text("\n".join(lines) + "\n")
    fasta = tmp_path / "r.fasta"
    fasta.write_text("".join(f">{lines[k][1:].split()[0]}\n{lines[k + 1]}\n" for k in range(0, 40, 4)))
    options = ["--all-vs-all", "--mode", "local", "--stats", "-q"]
    assert run_cli(str(fastq), *options).stdout == run_cli(str(fasta), *options).stdout
    done = run_cli(str(fastq), "--all-vs-all", "--matrix", "BLOSUM62", "--gap-open", "11", "--gap-extend", "1",
                   check=False)  # fmt: skip
    assert done.returncode != 0 and "FASTQ records are read as DNA" in done.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("letters, gaps", [("ACD", (0, 0)), ("ACD", (2, 1)), ("ARNDCQEGHILKMFPSTWYV", (11, 1))])
def test_local_search_kernel_equals_the_cpu_at_every_strip_height(rng, monkeypatch, letters, gaps):
    # A search (every target against every query, local, scores and ends only) runs the GPU's two-targets-a-lane
    # kernel: queries of lengths that pick each strip height and take one to three chunks of rows, an odd count of
    # targets of mixed lengths (so warps pair unequal targets and one half is empty), small alphabets with random
    # tables and zero gap costs for ties everywhere. Scores and ends must equal the CPU's (itself the oracle's,
    # in the tests above), and the kernel must have taken every non-empty pair; so must its form without ends
    # (positions=False), with the same scores.
    from seqcompare.align import modes_gpu

    ran = {True: [], False: []}
    original = modes_gpu._local16

    def counted(*args):
        found = original(*args)
        ran[args[9]].append(len(args[4]))
        return found

    monkeypatch.setattr(modes_gpu, "_local16", counted)
    matrix = substitution_matrix("BLOSUM62") if len(letters) == 20 else random_matrix(rng, letters)
    gap_open, gap_extend = gaps
    base = "".join(rng.choice(list(letters), 1200))
    q_lengths = [1, 3, 100, 140, 200, 260, 330, 400, 470, 520, 700, 800, 950, 1100]
    queries = []
    for length in q_lengths:  # half of them related to the base sequence, half random
        start = int(rng.integers(0, 1200 - length + 1))
        queries.append(base[start : start + length] if len(queries) % 2 else "".join(rng.choice(list(letters), length)))
    targets = [base[(s := int(rng.integers(0, 1000))) : s + int(rng.integers(0, 200))] for _ in range(30)]
    targets += ["".join(rng.choice(list(letters), int(rng.integers(1, 300)))) for _ in range(6)] + [""]
    pairs = np.array([(a, b) for b in range(len(queries)) for a in range(len(targets))])
    options = dict(mode="local", matrix=matrix, gap_open=gap_open, gap_extend=gap_extend, pairs=pairs)
    gpu = seqcompare.align(targets, queries, device="cuda", **options)
    cpu = seqcompare.align(targets, queries, device="cpu", **options)
    scores_alone = seqcompare.align(targets, queries, device="cuda", positions=False, **options)
    every = len(queries) * sum(1 for target in targets if target)
    assert sum(ran[True]) == every and sum(ran[False]) == every, ran
    assert np.array_equal(gpu.scores, cpu.scores)
    assert np.array_equal(gpu.positions, cpu.positions)
    assert np.array_equal(scores_alone.scores, cpu.scores) and scores_alone.positions is None
    assert gpu.scores.max() > 0


@pytest.mark.gpu
def test_local_search_pairs_beyond_16_bits_take_the_32_bit_kernel(rng):
    # Long related pairs whose scores could pass 2**13 go to the 32-bit kernel in the same call as the pairs the
    # 16-bit kernel takes; all must equal the CPU.
    from seqcompare.align import modes_gpu

    matrix = substitution_matrix("BLOSUM62")
    letters = "ARNDCQEGHILKMFPSTWYV"
    base = "".join(rng.choice(list(letters), 1500))
    targets = [base, base[:300], base[200:1400], "W" * 800]
    queries = [base[100:1500], base[:200], "W" * 900]
    t_len = np.array([len(targets[a]) for b in range(3) for a in range(4)])
    q_len = np.array([len(queries[b]) for b in range(3) for a in range(4)])
    fits = modes_gpu.local16_eligible(t_len, q_len, matrix.scores, 11, 1)
    assert fits.any() and not fits.all()
    options = dict(mode="local", matrix=matrix, gap_open=11, gap_extend=1)
    gpu = seqcompare.align(targets, queries, device="cuda", pairs=[(a, b) for b in range(3) for a in range(4)],
                           **options)  # fmt: skip
    cpu = seqcompare.align(targets, queries, device="cpu", pairs=[(a, b) for b in range(3) for a in range(4)],
                           **options)  # fmt: skip
    assert np.array_equal(gpu.scores, cpu.scores) and np.array_equal(gpu.positions, cpu.positions)
    assert gpu.scores.max() > 1 << 13
    scores_alone = seqcompare.align(targets, queries, device="cuda", positions=False,
                                    pairs=[(a, b) for b in range(3) for a in range(4)], **options)  # fmt: skip
    assert np.array_equal(scores_alone.scores, cpu.scores) and scores_alone.positions is None


def test_a_whole_searchs_launch_order_equals_the_general_sort(rng):
    # The search kernel's launch order from one sort of the targets (every query meets them alike) must equal
    # the two sorts of every pair; and only a whole search's plan may take it.
    from seqcompare.align.api import every_pair
    from seqcompare.align.modes_gpu import launch_order
    from seqcompare.align.plans import whole_search_targets

    for trial in range(60):
        n_targets, n_queries = int(rng.integers(1, 50)), int(rng.integers(1, 7))
        target_lengths = rng.integers(1, 5 if trial % 2 else 70_000, n_targets)  # ties, and lengths past 16 bits
        plan = every_pair(n_targets, n_queries)
        assert whole_search_targets(plan, n_queries) == n_targets
        by_rank = rng.permutation(n_queries)
        lengths = target_lengths[plan[:, 0]]
        general = launch_order(plan[:, 1], lengths, by_rank)
        fast = launch_order(plan[:, 1], lengths, by_rank, n_targets)
        assert np.array_equal(fast[0], general[0]) and np.array_equal(fast[1], general[1]), trial
        # by hand: rank, then the longer target, then the earlier pair
        rank = np.argsort(by_rank)
        expected = sorted(range(len(plan)), key=lambda p: (rank[plan[p, 1]], -lengths[p], p))
        assert general[0].tolist() == expected
        # other plans: a query left out, two targets swapped, a query's block repeated
        assert whole_search_targets(plan, n_queries + 1) == 0
        if n_targets > 1:
            swapped = plan.copy()
            swapped[[0, 1], 0] = swapped[[1, 0], 0]
            assert whole_search_targets(swapped, n_queries) == 0
        if n_queries > 1:
            repeated = plan.copy()
            repeated[n_targets:2 * n_targets, 1] = 0
            assert whole_search_targets(repeated, n_queries) == 0


def test_search_launches_cover_every_chosen_pair_once(rng):
    # The host's plan of the search kernel's launches: each block unit holds at most two pairs a warp of one
    # query, every chosen pair lies in exactly one unit, each launch's strip height is its queries' own, and a
    # launch with a query of more than one chunk has a border as wide as its longest target (plus one).
    from seqcompare.align import modes_gpu

    for trial in range(40):
        n_targets, n_queries = int(rng.integers(1, 40)), int(rng.integers(1, 6))
        t_lengths = rng.integers(1, 300, n_targets)
        q_lengths = rng.integers(1, 1500, n_queries)
        plan = np.array([(t, q) for q in range(n_queries) for t in range(n_targets)], dtype=np.int64)
        if trial % 2:  # a listed plan: some pairs, shuffled
            plan = plan[rng.permutation(len(plan))[: int(rng.integers(1, len(plan) + 1))]]
        chosen = np.arange(len(plan)) if trial % 3 else np.flatnonzero(rng.random(len(plan)) < 0.7)
        if not chosen.size:
            continue
        t_len = t_lengths[plan[:, 0]]
        sorted_pairs, launches = modes_gpu.search_launches(plan, chosen, t_len, q_lengths)
        assert sorted(sorted_pairs.tolist()) == sorted(chosen.tolist())
        per_unit = 2 * modes_gpu.SEARCH_WARPS
        seen = []
        for launch in launches:
            for query, first, end in zip(launch.unit_query, launch.unit_first, launch.unit_end):
                slots = list(range(int(first), min(int(first) + per_unit, int(end))))
                assert slots and all(plan[sorted_pairs[slot], 1] == query for slot in slots)
                assert modes_gpu.search_rows(q_lengths[[query]])[0] == launch.rows
                seen += slots
            queries = set(launch.unit_query.tolist())
            if max(q_lengths[list(queries)]) > 32 * launch.rows:
                widest = max(t_len[sorted_pairs[slot]] for slot in range(len(sorted_pairs))
                             if plan[sorted_pairs[slot], 1] in queries)  # fmt: skip
                assert launch.border_stride == widest + 1
            else:
                assert launch.border_stride == 0
        assert sorted(seen) == list(range(len(sorted_pairs))), trial


def test_local_search_layout_rules():
    # The GPU search kernel's host-side rules (they need no GPU): the profile stride keeps a warp's 8-byte loads
    # in distinct banks (16 lanes a phase, 2 banks each), the strip height is the least work per column, and
    # the 16-bit test admits exactly the pairs whose values stay within +-2**13.
    from seqcompare.align import modes_gpu

    for rows in modes_gpu.SEARCH_ROWS:
        stride = modes_gpu.profile_stride(rows)
        assert stride % 2 == 0 and stride >= rows // 2 + rows % 2
        banks = [(lane * stride) % 32 for lane in range(16)]
        assert len(set(banks)) == 16, (rows, stride)
        kept = modes_gpu.kept_stride(rows)  # a thread's kept rows: both halves' 16-bit rows, an odd stride
        assert kept >= rows and kept % 2 == 1 and len({(lane * kept) % 32 for lane in range(32)}) == 32
    lengths = np.array([1, 128, 129, 144, 512, 553, 5478])
    picked = modes_gpu.search_rows(lengths)
    for length, rows in zip(lengths, picked):
        costs = {r: -(-length // (32 * r)) * (r + modes_gpu.SEARCH_STEP_ROWS) for r in modes_gpu.SEARCH_ROWS}
        assert costs[rows] == min(costs.values())
    blosum = substitution_matrix("BLOSUM62").scores
    fits = modes_gpu.local16_eligible(np.array([700, 744, 745, 0, 5]), np.array([800, 800, 800, 9, 0]), blosum, 11, 1)
    # 744 * 11 + 12 = 8,196 is past 2**13 = 8,192; 743 * 11 + 12 = 8,185 is not.
    assert fits.tolist() == [True, False, False, False, False]
    assert modes_gpu.local16_eligible(np.array([743]), np.array([800]), blosum, 11, 1).tolist() == [True]
    assert not modes_gpu.local16_eligible(np.array([10]), np.array([10]), blosum, 11, -1).any()
    # the test as written in the docstring, on random lengths, tables and gaps (zero and huge ones included)
    rng = np.random.default_rng(13)
    for trial in range(200):
        t_len, q_len = rng.integers(0, 3000, 300), rng.integers(0, 3000, 300)
        gap_open, gap_extend = int(rng.integers(0, 9000)), int(rng.integers(0, 50))
        table = blosum if trial % 3 else rng.integers(-5, int(rng.integers(0, 30)) + 1, (5, 5))
        top = max(0, int(table.max()))
        plain = (t_len > 0) & (q_len > 0) & (np.minimum(t_len, q_len) * top + gap_open + gap_extend < 1 << 13)
        assert np.array_equal(modes_gpu.local16_eligible(t_len, q_len, table, gap_open, gap_extend), plain), trial
