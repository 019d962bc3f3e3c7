"""Top hits of a search (``PairScores.best``, ``align --top``, ``dtw --query --top``): each query's N best
targets, equal to a plain ranking of the oracle's scores on the CPU and the GPU, with ties in a fixed order."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import DATA, DEVICES

import seqcompare
from seqcompare.align.api import PairScores, best_pairs
from seqcompare.align.matrices import substitution_matrix
from seqcompare.align.reference import dtw_reference, mode_alignment_reference


def ranked_by_hand(pairs, scores, n, maximized, group_column):
    """The oracle: each group's pairs sorted by (better score, other side's index, pair index), the first n."""
    groups = {}
    for index, (pair, score) in enumerate(zip(pairs.tolist(), scores.tolist())):
        groups.setdefault(pair[group_column], []).append((-score if maximized else score, pair[1 - group_column], index))
    return [entry[2] for group in sorted(groups) for entry in sorted(groups[group])[:n]]


@pytest.mark.parametrize("maximized", [False, True])
def test_best_pairs_equal_a_plain_ranking(rng, maximized):
    for trial in range(300):
        k = int(rng.integers(0, 60))
        pairs = np.stack([rng.integers(0, 9, k), rng.integers(0, 5, k)], axis=1).astype(np.int64)
        kind = trial % 4
        if kind == 0:  # few values: ties at every rank
            scores = rng.integers(-3, 3, k).astype(np.int64)
        elif kind == 1:  # a spread beyond 32 bits: the general sort
            scores = rng.integers(-(1 << 40), 1 << 40, k).astype(np.int64)
        elif kind == 2:  # DTW's float distances, with no path (inf) among them
            scores = np.where(rng.random(k) < 0.2, np.inf, rng.integers(0, 4, k) / 2).astype(np.float32)
        else:
            scores = rng.integers(-1000, 1000, k).astype(np.int64)
        for n in (1, 2, 3, 100):
            for column in (0, 1):
                found = best_pairs(pairs, scores, n, maximized, column)
                assert found.tolist() == ranked_by_hand(pairs, scores, n, maximized, column), (trial, n, column)


def test_best_keeps_every_field_of_its_pairs():
    result = PairScores(np.array([[0, 0], [1, 0], [2, 1], [3, 1]]), np.array([5, 9, 9, 1]), cells=40,
                        cigars=["5M", "9M", "3M1I5M", "1M"], positions=np.arange(16).reshape(4, 4),
                        counts=np.arange(16, 32).reshape(4, 4), reverse=np.array([False, True, False, True]),
                        maximized=True)  # fmt: skip
    top = result.best(1)
    assert top.pairs.tolist() == [[1, 0], [2, 1]] and top.scores.tolist() == [9, 9] and top.cells == 40
    assert top.cigars == ["9M", "3M1I5M"] and top.reverse.tolist() == [True, False]
    assert top.positions.tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]] and top.counts[:, 0].tolist() == [20, 24]
    assert result.best(1, per="target").pairs.tolist() == result.pairs.tolist()
    with pytest.raises(ValueError):
        result.best(0)
    with pytest.raises(ValueError):
        result.best(1, per="both")


@pytest.mark.parametrize("device", DEVICES)
def test_protein_search_top_hits_equal_the_oracle(rng, device):
    """Every target against every query (local, BLOSUM62, CUDASW++'s gaps), then each query's best 3, against
    the plain DP oracle's scores ranked by hand; proteins from a small alphabet corner, so scores tie often."""
    matrix = substitution_matrix("BLOSUM62")
    letters = "ACDEGHKLMNPQRSTVWY"
    targets = ["".join(rng.choice(list(letters[:5]), int(rng.integers(1, 40)))) for _ in range(40)]
    queries = ["".join(rng.choice(list(letters[:5]), int(rng.integers(1, 30)))) for _ in range(4)]
    pairs = np.array([(t, q) for q in range(len(queries)) for t in range(len(targets))], dtype=np.int64)
    code = {letter: k for k, letter in enumerate(matrix.letters)}
    oracle = [mode_alignment_reference([code[c] for c in targets[t]], [code[c] for c in queries[q]],
                                       matrix.scores.tolist(), 11, 1, "local") for t, q in pairs]  # fmt: skip
    scores = np.array([found[0] for found in oracle], dtype=np.int64)
    expected = ranked_by_hand(pairs, scores, 3, True, 1)
    result = seqcompare.align(targets, queries, mode="local", matrix="BLOSUM62", gap_open=11, gap_extend=1,
                              pairs="all", device=device)  # fmt: skip
    assert result.pairs.tolist() == pairs.tolist()  # every target against every query, query by query
    top = result.best(3)
    assert top.pairs.tolist() == pairs[expected].tolist()
    assert top.scores.tolist() == scores[expected].tolist()
    ends = [[found[1][1], found[1][3]] for found in oracle]
    assert top.positions[:, [1, 3]].tolist() == [ends[i] for i in expected]
    # the scores alone (a search's first pass): the same scores, no positions
    alone = seqcompare.align(targets, queries, mode="local", matrix="BLOSUM62", gap_open=11, gap_extend=1,
                             pairs="all", device=device, positions=False)  # fmt: skip
    assert alone.scores.tolist() == scores.tolist() and alone.positions is None
    assert alone.best(3).pairs.tolist() == pairs[expected].tolist()


def test_all_pairs_of_one_set_are_every_ordered_pair_of_different_series():
    found = seqcompare.dtw(np.arange(12).reshape(4, 3), pairs="all")
    assert found.pairs.tolist() == [[i, j] for j in range(4) for i in range(4) if i != j]
    assert found.best(1).pairs.tolist() == [[1, 0], [0, 1], [1, 2], [2, 3]]  # the nearer neighbour, the first on ties
    with pytest.raises(ValueError, match="pairs must be one of all"):
        seqcompare.align(["A"], ["A"], pairs="every")


class InProcess:
    """A ``seqcompare`` command run in this process (the command line's own entry), its output captured."""

    def __init__(self, capsysbinary):
        self.capture = capsysbinary

    def __call__(self, *args, status=0):
        from seqcompare.cli import main

        found = main([str(arg) for arg in args])
        captured = self.capture.readouterr()
        assert found == status, captured.err.decode()
        return captured.out.decode(), captured.err.decode()


def test_align_top_writes_each_querys_best_targets(tmp_path, capsysbinary):
    run_cli = InProcess(capsysbinary)
    proteins = os.path.join(DATA, "uniprot_31.fasta")
    with open(proteins) as handle:
        names = [line[1:].split()[0] for line in handle if line.startswith(">")]
    queries = tmp_path / "q.fasta"
    queries.write_text(">q1\nHEAGAWGHEE\n>q2\nMKTAYIAKQRQISFVKSHFSRQ\n>q3\nPAWHEAE\n")
    options = ["--mode", "local", "--matrix", "BLOSUM62", "--gap-open", "11", "--gap-extend", "1", "-q"]
    out, _ = run_cli("align", proteins, queries, *options, "--top", "4")
    lines = [line.split("\t") for line in out.splitlines()]
    assert lines[0] == ["query", "rank", "target", "score", "target_end", "query_end"]
    api = seqcompare.align(proteins, str(queries), mode="local", matrix="BLOSUM62", gap_open=11, gap_extend=1,
                           pairs=np.array([(t, q) for q in range(3) for t in range(len(names))]))  # fmt: skip
    top = api.best(4)
    expected = [[["q1", "q2", "q3"][q], str(r % 4 + 1), names[t], str(s), str(te), str(qe)]
                for r, ((t, q), s, (_, te, _, qe)) in enumerate(zip(top.pairs.tolist(), top.scores.tolist(),
                                                                     top.positions.tolist()))]  # fmt: skip
    assert lines[1:] == expected and len(expected) == 12
    # one file: every record's best others (never itself), with the statistics' columns after the rank
    out, _ = run_cli("align", proteins, "--all-vs-all", *options, "--top", "1", "--stats")
    lines = [line.split("\t") for line in out.splitlines()]
    assert lines[0][:5] == ["query", "rank", "target", "score", "target_start"] and lines[0][-1] == "identity"
    assert [line[0] for line in lines[1:]] == names and all(line[0] != line[2] for line in lines[1:])
    # --pairs: the best among the pairs given
    listed = tmp_path / "pairs.tsv"
    listed.write_text(f"{names[0]}\tq1\n{names[1]}\tq1\n{names[2]}\tq2\n")
    out, _ = run_cli("align", proteins, queries, *options, "--pairs", listed, "--top", "1")
    given = seqcompare.align(proteins, str(queries), mode="local", matrix="BLOSUM62", gap_open=11, gap_extend=1,
                             pairs=np.array([[0, 0], [1, 0], [2, 1]]))  # fmt: skip
    first = names[0] if given.scores[0] >= given.scores[1] else names[1]
    assert [line.split("\t")[:3] for line in out.splitlines()[1:]] == [["q1", "1", first], ["q2", "1", names[2]]]
    # edit distance: the lowest cost first
    out, _ = run_cli("align", queries, queries, "--alphabet", "protein", "--top", "2", "-q")
    assert [line.split("\t")[:4] for line in out.splitlines()[1:3]] == [["q1", "1", "q1", "0"], ["q1", "2", "q3", "6"]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("extra", [[], ["--stats"], ["--cigar"], ["--stats", "--cigar", "--mode", "semi-global"]])
def test_align_top_in_two_passes_equals_one_pass(tmp_path, capsysbinary, device, extra):
    """``--top`` scores every pair alone, then aligns the hits again for their positions, statistics and CIGARs
    (where those are asked, or on the GPU): its lines must equal the best of one pass over every pair with
    everything asked, written by hand here."""
    run_cli = InProcess(capsysbinary)
    with open(os.path.join(DATA, "uniprot_31.fasta")) as handle:
        records = [(record.split("\n", 1)[0].split()[0], record.split("\n", 1)[1].replace("\n", ""))
                   for record in handle.read().split(">")[1:]]  # fmt: skip
    records = sorted(records, key=lambda record: len(record[1]))[:14]  # the shortest: the CPU's oracle runs fast
    names = [name for name, _ in records]
    proteins = tmp_path / "proteins.fasta"
    proteins.write_text("".join(f">{name}\n{sequence}\n" for name, sequence in records))
    options = ["--mode", "local", "--matrix", "BLOSUM62", "--gap-open", "11", "--gap-extend", "1", *extra]
    out, _ = run_cli("align", proteins, "--all-vs-all", *options, "--top", "2", "--device", device, "-q")
    mode = extra[extra.index("--mode") + 1] if "--mode" in extra else "local"
    stats, cigar = "--stats" in extra, "--cigar" in extra
    every = np.array([(t, q) for q in range(14) for t in range(14) if t != q])
    one_pass = seqcompare.align(str(proteins), str(proteins), mode=mode, matrix="BLOSUM62", gap_open=11, gap_extend=1,
                                pairs=every, stats=stats, cigar=cigar).best(2)  # fmt: skip
    expected = []
    for k, ((t, q), score) in enumerate(zip(one_pass.pairs.tolist(), one_pass.scores.tolist())):
        start, end, q_start, q_end = one_pass.positions[k].tolist()
        line = [names[q], str(k % 2 + 1), names[t], str(score)]
        line += [str(start), str(end), str(q_start), str(q_end)] if stats or cigar else [str(end), str(q_end)]
        if stats:
            identity = one_pass.identity[k]
            line += [str(v) for v in (one_pass.matches[k], one_pass.counts[k, 1], one_pass.mismatches[k],
                                      one_pass.gap_columns[k], one_pass.length[k])] + ["%.6g" % identity]  # fmt: skip
        if cigar:
            line.append(one_pass.cigars[k])
        expected.append(line)
    assert [line.split("\t") for line in out.splitlines()[1:]] == expected and len(expected) == 28


def test_top_errors_are_one_line_and_leave_no_output(tmp_path, capsysbinary):
    run_cli = InProcess(capsysbinary)
    proteins = os.path.join(DATA, "uniprot_31.fasta")
    out = tmp_path / "out.tsv"
    _, err = run_cli("align", proteins, "--all-vs-all", "--top", "0", "-o", out, status=2)
    assert "--top" in err and not out.exists()
    _, err = run_cli("align", proteins, "--all-vs-all", "--alphabet", "protein", "--top", "2", "--format", "matrix",
                     "-o", out, status=1)  # fmt: skip
    assert err.strip().endswith("--format matrix writes every pair: give one") and len(err.strip().splitlines()) == 1
    signals = tmp_path / "s.csv"
    signals.write_text("1,2,3\n4,5,6\n")
    _, err = run_cli("dtw", signals, "--top", "1", "-o", out, status=1)
    assert "--top ranks the signals of a search: give the queries with --query" in err and not out.exists()


@pytest.mark.parametrize("device", DEVICES)
def test_dtw_search_top_equals_the_oracle(tmp_path, capsysbinary, rng, device):
    run_cli = InProcess(capsysbinary)
    database = rng.integers(0, 6, (30, 12)).astype(np.int32)
    queries = rng.integers(0, 6, (2, 9)).astype(np.int32)
    np.save(tmp_path / "db.npy", database)
    np.savetxt(tmp_path / "q.csv", queries, fmt="%d", delimiter=",")
    out, _ = run_cli("dtw", tmp_path / "db.npy", "--query", tmp_path / "q.csv", "--top", "3", "--device", device, "-q")
    distances = {(i, j): dtw_reference(database[i].tolist(), queries[j].tolist()) for i in range(30) for j in range(2)}
    expected = [[str(j), str(rank + 1), str(i), str(d)]
                for j in range(2)
                for rank, (d, i) in enumerate(sorted((distances[i, j], i) for i in range(30))[:3])]  # fmt: skip
    assert [line.split("\t") for line in out.splitlines()] == [["j", "rank", "i", "distance"], *expected]
