"""seqcompare scan within k mismatches or k edits, --coverage and the read selection, against plain oracles."""

import gzip
import os

import numpy as np
import pytest
from conftest import DATA
from test_scan import device  # noqa: F401  (the fixture: the compiled index, the NumPy sweep, the GPU)

from seqcompare.cli import main
from seqcompare.errors import InputError
from seqcompare.io.sequences import SequenceSet, iupac_codes
from seqcompare.scan.api import scan
from seqcompare.scan.api import coverage
from seqcompare.scan.reference import edit_occurrences, reference_scan

LAMBDA_READS = os.path.join(DATA, "scan_example", "reads.fastq")
COVERAGE = os.path.join(DATA, "coverage_example")
COMPLEMENT = str.maketrans("ACGTN", "TGCAN")


def mutated(text, count, rng, indels):
    letters = list(text)
    for _ in range(count):
        at = int(rng.integers(len(letters)))
        kind = int(rng.integers(3)) if indels else 0
        if kind == 0:
            letters[at] = "ACGT"[rng.integers(4)]
        elif kind == 1 and len(letters) > 1:
            del letters[at]
        else:
            letters.insert(at, "ACGT"[rng.integers(4)])
    return "".join(letters)


def planted_case(rng, n_ratio, indels, n_signatures=4, n_samples=6, longest=60):
    """Signatures of 8 to ``longest`` bases with N at ``n_ratio``; samples carrying mutated copies (0-4 changes,
    either strand) in random flanks, then N at ``n_ratio`` over the whole sample."""
    signatures = ["".join(rng.choice(list("ACGT"), int(rng.integers(8, longest)))) for _ in range(n_signatures)]
    signatures = ["".join("N" if rng.random() < n_ratio else c for c in s) for s in signatures]
    samples = []
    for _ in range(n_samples):
        sample = "".join(rng.choice(list("ACGT"), int(rng.integers(0, 200))))
        for _ in range(2):
            copy = mutated(signatures[rng.integers(n_signatures)].replace("N", "A"), int(rng.integers(5)), rng, indels)
            if rng.random() < 0.5:
                copy = copy.translate(COMPLEMENT)[::-1]
            at = int(rng.integers(len(sample) + 1))
            sample = sample[:at] + copy + sample[at:]
        samples.append("".join("N" if rng.random() < n_ratio else c for c in sample))
    qualities = [rng.integers(0, 41, len(s)).tolist() for s in samples]
    return SequenceSet.from_strings(samples, qualities=qualities), SequenceSet.from_strings(signatures)


def rows(result):
    return [tuple(int(x) for x in row) for row in zip(result.sample, result.signature, result.strand, result.offset,
                                                      result.quality_sum, result.distance, result.end)]  # fmt: skip


@pytest.mark.parametrize("metric", ["max_mismatches", "max_edits"])
@pytest.mark.parametrize("n_ratio", [0.0, 0.1, 0.3])
def test_every_occurrence_within_k_equals_the_brute_force_oracle(device, metric, n_ratio):
    rng = np.random.default_rng(int(n_ratio * 10) + (metric == "max_edits"))
    # (the edit oracle computes every substring's distance on its own: shorter signatures keep it quick)
    samples, signatures = planted_case(rng, n_ratio, metric == "max_edits", longest=40 if metric == "max_edits" else 60)
    found = 0
    for errors in range(5):
        for report, min_score in (("first", None), ("best", None), ("all", None), ("all", 20.0)):
            options = {"report": report, "both_strands": True, "min_score": min_score, metric: errors}
            expected = reference_scan(samples, signatures, **options)
            assert rows(scan(samples, signatures, threads=2, device=device, k=[12, 5][errors % 2], **options)) == expected
            found += len(expected)
    assert found > 50  # the planted copies are found at every k


def test_k_zero_is_the_exact_scan():
    rng = np.random.default_rng(5)
    samples, signatures = planted_case(rng, 0.1, False)
    exact = scan(samples, signatures, both_strands=True, report="all", method="index")
    for metric in ("max_mismatches", "max_edits"):
        zero = scan(samples, signatures, both_strands=True, report="all", method="index", **{metric: 0})
        assert rows(zero) == rows(exact) and zero.distance.sum() == 0


def test_edit_occurrences_are_local_minima_at_the_rightmost_end():
    """Sassy's documented example: ABC in XXXABCXXX has costs 3 3 3 2 1 0 1 2 3 along the ends; within 1 edit
    only the minimum is an occurrence (here in DNA: ACG in TTTACGTTT)."""
    codes = SequenceSet.from_strings(["TTTACGTTT", "ACG", "AACCGG"]).codes
    sample, signature = codes[:9], codes[9:12]
    starts, ends, costs = edit_occurrences(sample, signature, 1)
    assert (starts.tolist(), ends.tolist(), costs.tolist()) == ([3], [6], [0])
    # AACCGG: costs 3 2 1 1 1 1 2 along ends 0..6 (ACG against AAC, AACC, AACCG...): one plateau, reported at its
    # rightmost end 5, with the shortest alignment of cost 1 ending there (CG: A deleted).
    starts, ends, costs = edit_occurrences(codes[12:], signature, 2)
    assert ends.tolist() == [5] and costs.tolist() == [1] and starts.tolist() == [3]


def test_lines_and_tsv_name_the_distance():
    samples = SequenceSet.from_strings(["GGGGACTTGGGG"], ["s"], [[30] * 12])
    result = scan(samples, ["ACGT"], max_mismatches=1)
    assert list(result.lines()) == ["s: seq1 (30.000) mismatches=1"]
    assert list(result.lines(tsv=True)) == ["sample\tsignature\toffset\tscore\tend\tmismatches", "s\tseq1\t4\t30.000\t8\t1"]
    result = scan(samples, ["ACGT"], max_edits=1, report="all")
    # ACT (end 7) and ACTT (end 8) both cost 1: one plateau, one occurrence at its rightmost end.
    assert list(result.lines()) == ["s: seq1 (30.000) edits=1 offset=4 end=8"]


def test_bad_k_is_one_line_naming_the_signature(tmp_path, capsys):
    samples = SequenceSet.from_strings(["ACGTACGT"], qualities=[[30] * 8])
    with pytest.raises(InputError, match=r"--max-edits 4 is too large for signatures: signature #2 'seq2' has 4 bases"):
        scan(samples, ["ACGTAC", "ACGT"], max_edits=4)
    with pytest.raises(InputError, match="not both"):
        scan(samples, ["ACGT"], max_edits=1, max_mismatches=1)
    signatures = tmp_path / "s.fa"
    signatures.write_text(">short\nACG\n")
    assert main(["scan", LAMBDA_READS, str(signatures), "--max-mismatches", "3", "-q"]) == 1
    assert capsys.readouterr().err.strip() == (f"seqcompare: error: --max-mismatches 3 is too large for {signatures}: "
                                               "signature #1 'short' has 3 bases, so at most 2 mismatches leave it "
                                               "anything to match")  # fmt: skip
    for options, refused in ((["--report", "all"], "--report all"), (["--max-edits", "2"], "--max-edits"),
                             (["--min-score", "5"], "--min-score")):  # fmt: skip
        assert main(["scan", LAMBDA_READS, str(signatures), "--coverage", *options, "-o", str(tmp_path / "o")]) == 1
        assert capsys.readouterr().err.strip() == (f"seqcompare: error: --coverage counts k-mer hits per signature "
                                                   f"and cannot take {refused}")  # fmt: skip
    assert main(["scan", LAMBDA_READS, str(signatures), "--coverage", "--coverage-kmer", "3", "--max-mismatches", "3"]) == 1
    assert "too large for k-mers of 3 bases" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "o")


def coverage_oracle(reads, signatures, kmer, mismatches, both_strands):
    """Every read window against every signature window, N-free windows only."""
    depth = [np.zeros(len(s), np.int64) for s in signatures]
    carried = np.zeros((len(reads), len(signatures)), bool)
    for r, read in enumerate(reads):
        for s, signature in enumerate(signatures):
            covered = np.zeros(len(signature), bool)
            strands = [(signature, False)] + [(signature.translate(COMPLEMENT)[::-1], True)] * both_strands
            for text, reverse in strands:
                for p in range(len(text) - kmer + 1):
                    window = text[p : p + kmer]
                    for q in range(len(read) - kmer + 1):
                        other = read[q : q + kmer]
                        if "N" in window or "N" in other or sum(a != b for a, b in zip(window, other)) > mismatches:
                            continue
                        at = len(text) - p - kmer if reverse else p
                        covered[at : at + kmer] = True
                        carried[r, s] = True
            depth[s] += covered
    return depth, carried


@pytest.mark.parametrize("n_ratio", [0.0, 0.2])
def test_coverage_equals_the_all_windows_oracle(n_ratio):
    rng = np.random.default_rng(int(n_ratio * 10) + 11)
    signatures = ["".join("N" if rng.random() < n_ratio else c for c in rng.choice(list("ACGT"), int(rng.integers(5, 80))))
                  for _ in range(3)]  # fmt: skip
    reads = []
    for _ in range(8):
        source = signatures[rng.integers(3)].replace("N", "C")
        a = int(rng.integers(len(source)))
        piece = mutated(source[a : a + int(rng.integers(10, 60))], int(rng.integers(3)), rng, False)
        if rng.random() < 0.5:
            piece = piece.translate(COMPLEMENT)[::-1]
        flank = "".join(rng.choice(list("ACGT"), int(rng.integers(20))))
        reads.append("".join("N" if rng.random() < n_ratio else c for c in flank + piece))
    read_set = SequenceSet.from_strings(reads, qualities=[[30] * len(r) for r in reads])
    hits = 0
    for kmer, mismatches in ((4, 0), (7, 1), (12, 2)):
        for both_strands in (False, True):
            result = coverage(read_set, SequenceSet.from_strings(signatures), kmer=kmer, max_mismatches=mismatches,
                              both_strands=both_strands, threads=2)  # fmt: skip
            depth, carried = coverage_oracle(reads, signatures, kmer, mismatches, both_strands)
            assert all(np.array_equal(a, b) for a, b in zip(result.depth, depth))
            assert np.array_equal(result.carried, carried)
            hits += int(carried.sum())
    assert hits > 15


def test_coverage_of_real_nanopore_reads_finds_lambda_and_nothing_else(tmp_path):
    """The bundled ONT lambda reads: the lambda genome is covered, the other 81 viral references are not."""
    reads = os.path.join(COVERAGE, "lambda_ont_reads.fastq.gz")
    references = os.path.join(COVERAGE, "viral_refs.fasta.gz")
    out = tmp_path / "coverage.tsv"
    assert main(["scan", reads, references, "--coverage", "--both-strands", "--iupac-as-n", "--tsv", "-q",
                 "-o", str(out)]) == 0  # fmt: skip
    table = [line.split("\t") for line in out.read_text().splitlines()[1:]]
    breadth = {row[1]: float(row[3]) for row in table}
    assert len(breadth) == 82 and breadth.pop("Lambda_NC_001416.1") > 0.95
    assert max(breadth.values()) < 0.01


def fastq_records(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as handle:
        lines = handle.read().splitlines()
    return ["\n".join(lines[i : i + 4]) for i in range(0, len(lines), 4)]


def test_matched_and_unmatched_reads_are_the_input_records(tmp_path, capsys, monkeypatch):
    from seqcompare.io import output

    monkeypatch.setattr(output, "GZIP_PIECE_BYTES", 5000)  # gzip output in many members, compressed by threads
    signatures = os.path.join(DATA, "scan_example", "signatures.fasta")
    matched, unmatched = tmp_path / "hit.fastq.gz", tmp_path / "miss.fastq"
    assert main(["scan", LAMBDA_READS, signatures, "--both-strands", "--max-edits", "3", "--tsv", "-q", "-j", "3",
                 "--matched-out", str(matched), "--unmatched-out", str(unmatched)]) == 0  # fmt: skip
    assert main(["scan", LAMBDA_READS, signatures, "--both-strands", "--max-edits", "3", "-q", "-j", "1", "-o",
                 os.devnull, "--matched-out", str(tmp_path / "hit1.fastq.gz")]) == 0  # fmt: skip
    assert (tmp_path / "hit1.fastq.gz").read_bytes() == matched.read_bytes()
    packed = tmp_path / "reads.fastq.gz"  # gzip samples: inflated once for the scan and the selection
    packed.write_bytes(gzip.compress(open(LAMBDA_READS, "rb").read()))
    assert main(["scan", str(packed), signatures, "--both-strands", "--max-edits", "3", "-q", "-o", os.devnull,
                 "--matched-out", str(tmp_path / "hit2.fastq.gz")]) == 0  # fmt: skip
    assert (tmp_path / "hit2.fastq.gz").read_bytes() == matched.read_bytes()
    names = {line.split("\t")[0] for line in capsys.readouterr().out.splitlines()[1:]}
    records = fastq_records(LAMBDA_READS)
    hits, misses = fastq_records(matched), fastq_records(unmatched)
    assert len(hits) == len(names) == 20 and len(hits) + len(misses) == len(records) == 40
    assert {h.split("\n")[0][1:].split()[0] for h in hits} == names
    assert [r for r in records if r in hits] == hits and [r for r in records if r in misses] == misses
    assert main(["scan", "-", signatures, "--matched-out", str(tmp_path / "x.fq")]) == 1
    assert "standard input cannot be read twice" in capsys.readouterr().err
    assert main(["scan", LAMBDA_READS, signatures, "--matched-out", LAMBDA_READS]) == 1
    assert "refusing to overwrite an input" in capsys.readouterr().err


def test_coverage_selects_the_reads_with_k_mer_hits(tmp_path, capsys):
    lambda_genome = tmp_path / "lambda.fasta"
    with gzip.open(os.path.join(COVERAGE, "viral_refs.fasta.gz"), "rt") as handle:
        records = handle.read().split(">")
    lambda_genome.write_text(">" + next(r for r in records if r.startswith("Lambda_NC_001416.1")))
    matched = tmp_path / "lambda.fastq"
    assert main(["scan", LAMBDA_READS, str(lambda_genome), "--coverage", "--both-strands", "-q",
                 "--matched-out", str(matched)]) == 0  # fmt: skip
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{LAMBDA_READS}: Lambda_NC_001416.1 (breadth ")
    reads = int(line.rsplit(",", 1)[1].split()[0])
    assert len(fastq_records(matched)) == reads > 30


def test_a_percentage_allows_each_signature_its_share_of_errors(capsys):
    """5% of 20 bases is 1 edit, of 60 bases 3; the oracle takes the same fraction per signature."""
    rng = np.random.default_rng(8)
    signatures = ["".join(rng.choice(list("ACGT"), n)) for n in (20, 39, 60)]
    samples = []
    for s in signatures:
        for changes in (1, 2, 3, 4):
            samples.append("".join(rng.choice(list("ACGT"), 30)) + mutated(s, changes, rng, True) + "GGGG")
    sample_set = SequenceSet.from_strings(samples, qualities=[[25] * len(s) for s in samples])
    for options in ({"max_edits": 0.05}, {"max_mismatches": 0.07}):
        result = scan(sample_set, signatures, report="all", method="index", **options)
        assert rows(result) == reference_scan(sample_set, SequenceSet.from_strings(signatures), report="all", **options)
    assert set(scan(sample_set, signatures, max_edits=0.05).distance.tolist()) <= {0, 1, 2, 3}
    with pytest.raises(InputError, match=r"max_edits as a fraction of each signature's length must be in \[0, 1\)"):
        scan(sample_set, ["AC", "ACGT"], max_edits=1.5)
    assert main(["scan", LAMBDA_READS, os.path.join(DATA, "scan_example", "signatures.fasta"), "--max-edits", "101%"]) == 2
    assert "expected a percentage from 0% to below 100%, not '101%'" in capsys.readouterr().err


@pytest.mark.parametrize("metric", [None, "max_mismatches", "max_edits"])
def test_iupac_codes_match_as_base_sets_on_either_side(device, metric):
    """Ambiguity codes in the signatures and the samples, exact and within k, both strands: the oracle's own
    table of which letters share a base decides."""
    rng = np.random.default_rng(21 + (metric is not None) + (metric == "max_edits"))
    samples, signatures = planted_case(rng, 0.0, metric == "max_edits", n_samples=12)
    bases = {"R": "AG", "Y": "CT", "K": "GT", "M": "AC", "S": "CG", "W": "AT", "B": "CGT", "D": "AGT", "H": "ACT",
             "V": "ACG"}  # fmt: skip

    def sprinkle(text, rate):
        """Some letters become an ambiguity code: one standing for that base or, a third of the time, any."""
        out = []
        for c in text:
            if rng.random() < rate:
                codes = [code for code, members in bases.items() if c in members or rng.random() < 0.33]
                c = codes[rng.integers(len(codes))]
            out.append(c)
        return "".join(out)

    sample_texts = [sprinkle(samples.text(i), 0.1) for i in range(len(samples))]
    signature_texts = [sprinkle(signatures.text(i), 0.15) for i in range(len(signatures))]
    iupac = SequenceSet.from_strings(sample_texts, qualities=[samples.quality[a:b].tolist() for a, b in
                                                              zip(samples.offsets[:-1], samples.offsets[1:])],
                                     alphabet=iupac_codes())  # fmt: skip
    signature_set = SequenceSet.from_strings(signature_texts, alphabet=iupac_codes())
    found = 0
    for errors in ([0] if metric is None else [0, 2, 4]):
        options = {"report": "all", "both_strands": True} | ({} if metric is None else {metric: errors})
        expected = reference_scan(iupac, signature_set, **options)
        got = scan(iupac, signature_set, threads=2, device=device, iupac=True, method="index", **options)
        assert rows(got) == expected
        found += len(expected)
    assert found >= 2
    if metric is None:  # read as N instead, the codes match more: the base-set occurrences are some of those
        as_n = scan(SequenceSet.from_strings(sample_texts, qualities=[[20] * len(t) for t in sample_texts],
                                             iupac_as_n=True),
                    SequenceSet.from_strings(signature_texts, iupac_as_n=True), report="all", both_strands=True)
        assert {r[:4] for r in rows(got)} < {r[:4] for r in rows(as_n)}


def test_iupac_on_the_command_line(tmp_path, capsys):
    reads = tmp_path / "r.fastq"
    reads.write_text("@r1\nGGGACRTGGG\n+\nIIIIIIIIII\n@r2\nGGGACYTGGG\n+\nIIIIIIIIII\n")
    signatures = tmp_path / "s.fa"
    signatures.write_text(">s\nACGT\n>w\nAWGT\n")
    assert main(["scan", str(reads), str(signatures), "--iupac", "--report", "all", "-q"]) == 0
    # ACGT meets ACRT (R = A or G) but not ACYT (Y = C or T); AWGT (W = A or T) meets neither at the W.
    assert capsys.readouterr().out == "r1: s (40.000) offset=3\n"
    assert main(["scan", str(reads), str(signatures), "--iupac-as-n", "--report", "all", "-q"]) == 0
    assert capsys.readouterr().out == "r1: s (40.000) offset=3\nr1: w (40.000) offset=3\nr2: s (40.000) offset=3\nr2: w (40.000) offset=3\n"
    assert main(["scan", str(reads), str(signatures), "--iupac", "--iupac-as-n"]) == 1
    assert capsys.readouterr().err.strip() == "seqcompare: error: give --iupac (ambiguity codes as base sets) or --iupac-as-n, not both"


def test_the_merge_of_a_reads_intervals_sorts_stably_as_numpy_does(rng):
    from seqcompare.scan.kmer_coverage import _stable_order

    for n in (0, 1, 2, 3, 7, 64, 65, 300):
        keys = rng.integers(0, 6, n).astype(np.int64)  # many ties: stability is what is checked
        assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
    keys = np.arange(50, dtype=np.int64)[::-1].copy()
    assert np.array_equal(_stable_order(keys), np.arange(50)[::-1])


def _meets(signature_codes, sample_codes):
    from seqcompare.io.sequences import BASE_MASKS

    return (BASE_MASKS[signature_codes][:, None] & BASE_MASKS[sample_codes][None, :]) != 0


def _last_row(signature, text, pinned):
    """The last row of the edit DP of the whole ``signature`` against ``text``: entry ``t`` is the least cost of
    ``text[s:t]`` (any ``s``; with ``pinned``, ``s = 0``). Row by row in NumPy: a row's left-to-right step is
    ``D[t] = min over u <= t of (T[u] + t - u)``, a running minimum."""
    meets = _meets(signature, text)
    columns = np.arange(text.size + 1)
    row = columns.copy() if pinned else np.zeros(text.size + 1, np.int64)
    for i in range(1, signature.size + 1):
        step = np.empty_like(row)
        step[0] = i
        step[1:] = np.minimum(row[:-1] + ~meets[i - 1], row[1:] + 1)
        row = columns + np.minimum.accumulate(step - columns)
    return row


def edit_occurrences_by_rows(sample, signature, errors):
    """``(start, end, cost)`` occurrences as the module defines them (see ``edit_occurrences``), computed row by
    row (quick for signatures of hundreds of bases, where the plain oracle takes seconds a pair)."""
    profile = np.minimum(_last_row(signature, sample, pinned=False), errors + 1)
    found = []
    for end in range(sample.size + 1):
        cost = profile[end]
        if cost > errors or (end < sample.size and profile[end + 1] == cost):
            continue
        left = end
        while left > 0 and profile[left - 1] == cost:
            left -= 1
        if left == 0 or profile[left - 1] < cost or (end < sample.size and profile[end + 1] < cost):
            continue
        # The largest start of an alignment of that cost: the reversed strings, the start pinned at the end.
        backwards = _last_row(signature[::-1], sample[:end][::-1], pinned=True)
        found.append((end - int(np.flatnonzero(backwards == cost)[0]), end, int(cost)))
    return found


@pytest.mark.parametrize("errors", [3, 9, 20])
def test_edits_of_signatures_over_64_bases_equal_the_row_by_row_oracle(errors):
    """Signatures of one to five 64-bit words (lengths at and around the words' edges) with N, planted with up to
    ``errors`` edits in samples, against the row-by-row oracle, every occurrence with its start and quality."""
    rng = np.random.default_rng(errors)
    lengths = [63, 64, 65, 127, 128, 129, 200, 300]
    signatures = ["".join("N" if rng.random() < 0.03 else rng.choice(list("ACGT")) for _ in range(n)) for n in lengths]
    samples = []
    for _ in range(6):
        sample = "".join(rng.choice(list("ACGT"), 300))
        for _ in range(3):
            copy = mutated(signatures[rng.integers(len(lengths))].replace("N", "C"), int(rng.integers(errors + 3)),
                           rng, indels=True)  # fmt: skip
            at = int(rng.integers(len(sample) + 1))
            sample = sample[:at] + copy + sample[at:]
        samples.append("".join("N" if rng.random() < 0.01 else c for c in sample))
    qualities = [rng.integers(0, 41, len(s)).tolist() for s in samples]
    samples, signatures = SequenceSet.from_strings(samples, qualities=qualities), SequenceSet.from_strings(signatures)
    expected = []
    for i in range(len(samples)):
        codes = samples.codes[samples.offsets[i] : samples.offsets[i + 1]]
        quality = samples.quality[samples.offsets[i] : samples.offsets[i + 1]]
        for j in range(len(signatures)):
            signature = signatures.codes[signatures.offsets[j] : signatures.offsets[j + 1]]
            for start, end, cost in edit_occurrences_by_rows(codes, signature, errors):
                expected.append((i, j, 0, start, int(quality[start:end].sum()), cost, end))
    found = rows(scan(samples, signatures, report="all", max_edits=errors, threads=2))
    assert sorted(found) == sorted(expected) and len(expected) >= 10


def test_the_row_by_row_oracle_equals_the_plain_one(rng):
    samples, signatures = planted_case(rng, 0.1, True, n_signatures=3, n_samples=3, longest=30)
    for i in range(len(samples)):
        for j in range(len(signatures)):
            sample = samples.codes[samples.offsets[i] : samples.offsets[i + 1]]
            signature = signatures.codes[signatures.offsets[j] : signatures.offsets[j + 1]]
            for errors in (1, 3):
                plain = [tuple(int(x) for x in row) for row in zip(*edit_occurrences(sample, signature, errors))]
                assert edit_occurrences_by_rows(sample, signature, errors) == plain
