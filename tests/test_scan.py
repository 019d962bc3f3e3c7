"""seqcompare scan: the index method against the brute-force oracle, line for line."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, DEVICES, planted_with_dense_ns, run_command, unpack
from hypothesis import given
from hypothesis import strategies as st

from seqcompare.errors import InputError
from seqcompare.io.sequences import SequenceSet
from seqcompare.scan.api import scan
from seqcompare.scan.reference import occurrence_offsets, reference_scan
from seqcompare.simulate import simulate_scan

EXAMPLE = os.path.join(DATA, "scan_example")


@pytest.fixture(params=["cpu", "sweep", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request, monkeypatch):
    """Where the scan runs: the CPU's compiled index ("cpu", small scans too), the NumPy sweep that small scans
    take by default (seqcompare.scan.sweep, made to take every scan), or the GPU."""
    import seqcompare.scan.api as api
    from seqcompare.scan import sweep

    every = request.param == "sweep"
    monkeypatch.setattr(sweep, "SMALL_COMPARISONS", 1 << 62 if every else -1)
    monkeypatch.setattr(sweep, "SMALL_SIGNATURES", 1 << 62)
    monkeypatch.setattr(api, "DEFERRED_INDEX_BASES", 1 << 62 if every else api.DEFERRED_INDEX_BASES)
    return "cpu" if every else request.param


def lines(result, **options):
    return list(result.lines(**options))


def as_set(data, reader):
    return reader(data) if isinstance(data, str) else data


def assert_same_as_oracle(samples, signatures, device="cpu", **options):
    """The fast path's rows equal the oracle's (:func:`reference_scan`), and its lines the reference method's."""
    from seqcompare.io.fasta import read_sequences
    from seqcompare.io.fastq import read_fastq

    fast = scan(samples, signatures, threads=2, device=device, **options)
    expected = reference_scan(as_set(samples, read_fastq), as_set(signatures, read_sequences),
                              **{name: options[name] for name in ("report", "min_score", "both_strands")
                                 if name in options})  # fmt: skip
    got = [tuple(int(x) for x in row) for row in zip(fast.sample, fast.signature, fast.strand, fast.offset,
                                                     fast.quality_sum, fast.distance, fast.end)]  # fmt: skip
    assert got == expected
    reference = scan(samples, signatures, method="reference", **options)
    for tsv in (False, True):
        assert lines(fast, tsv=tsv, integrity=True) == lines(reference, tsv=tsv, integrity=True)
    return fast


def test_the_worked_example_of_the_spec():
    samples = SequenceSet.from_strings(["NATCGGTT", "GGGGATNGGGG", "GGGGATGGGG"], ["s1", "s2", "s3"],
                                       [[0, 10, 20, 30, 10, 20, 30, 5], [30] * 11, [20] * 10])  # fmt: skip
    result = scan(samples, SequenceSet.from_strings(["ATC", "ATN"], ["ATC", "ATN"]), k=2)
    assert lines(result) == ["s1: ATC (20.000)", "s1: ATN (20.000)", "s2: ATC (30.000)", "s2: ATN (30.000)",
                             "s3: ATN (20.000)"]  # fmt: skip
    assert result.offset.tolist() == [1, 1, 4, 4, 4]
    assert lines(result, tsv=True)[:2] == ["sample\tsignature\toffset\tscore", "s1\tATC\t1\t20.000"]


def test_method_index_takes_the_index_even_for_a_small_scan(monkeypatch):
    from seqcompare.scan import sweep

    samples = SequenceSet.from_strings(["NATCGGTT", "GGGGATNGGGG"], qualities=[[0, 10, 20, 30, 10, 20, 30, 5], [30] * 11])
    assert len(scan(samples, ["ATC"], k=2)) == 2  # "auto": the sweep

    def refuse(*args):
        raise AssertionError("the sweep ran for method='index'")

    monkeypatch.setattr(sweep, "sweep_rows", refuse)
    assert lines(scan(samples, ["ATC"], k=2, method="index")) == ["seq1: seq1 (20.000)", "seq2: seq1 (30.000)"]


@pytest.mark.parametrize("n_ratio", [0.0, 0.01, 0.1, 0.3, 0.6])
@pytest.mark.parametrize("report", ["first", "best", "all"])
def test_generated_data_equals_the_oracle(device, n_ratio, report):
    data = simulate_scan(n_signatures=25, signature_length=(20, 400), n_clean=12, n_infected=10, max_per_sample=3,
                         sample_length=(300, 4000), n_ratio=n_ratio, seed=int(n_ratio * 100))  # fmt: skip
    result = assert_same_as_oracle(data.samples, data.signatures, device, report=report, both_strands=True)
    found = {(int(i), int(s)) for i, s in zip(result.sample, result.signature)}
    assert {(i, s) for i, s, _ in data.planted} <= found


@pytest.mark.parametrize("k", [1, 2, 5, 8, 11, 12, 13])
def test_the_result_does_not_depend_on_k(device, k):
    data = simulate_scan(n_signatures=15, signature_length=(5, 200), n_clean=6, n_infected=6, sample_length=(0, 2000),
                         n_ratio=0.2, seed=k)  # fmt: skip
    assert_same_as_oracle(data.samples, data.signatures, device, k=k, report="all")


def test_ns_inside_planted_copies_force_the_fallback(rng, device):
    """Every 12-window of each planted copy holds an N (sample side), so no index hit can find them."""
    lengths = (12, 13, 31, 32, 33, 40, 64, 65, 300, 1000)
    samples, signatures = planted_with_dense_ns(rng, lengths, 3000)
    for report in ("first", "all"):
        result = assert_same_as_oracle(samples, signatures, device, report=report)
        assert {(i, i) for i in range(len(lengths))} <= set(zip(result.sample.tolist(), result.signature.tolist()))


def test_short_all_n_and_oversized_signatures_and_empty_samples(device):
    samples = SequenceSet.from_strings(["ACGTACGTNNACGT", "", "A", "NNNNNNNNNNNNNNNNNNNN", "ACGTTTTTTTTTTTTTTTTTTTTTA"],
                                       qualities=[[7] * 14, [], [3], [0] * 20, list(range(25))])  # fmt: skip
    signatures = SequenceSet.from_strings(["A", "GT", "NNN", "N" * 20, "N" * 21, "ACGTACGTACGTACGTACGTACGTACGT",
                                           "TTTTTTTTTTTTTTTTTTTTT", "CGTN"])  # fmt: skip
    for report in ("first", "best", "all"):
        for min_score in (None, 5.0, 30.0):
            result = assert_same_as_oracle(samples, signatures, device, report=report, both_strands=True,
                                           min_score=min_score)  # fmt: skip
        result = assert_same_as_oracle(samples, signatures, device, report=report, both_strands=True)
    assert ("seq4", "seq5") not in {(result.sample_names[i], result.signature_names[s])
                                    for i, s in zip(result.sample, result.signature)}  # fmt: skip


@pytest.mark.parametrize("device", DEVICES)
def test_real_viral_genomes_planted_in_real_nanopore_reads(device):
    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    result = scan(reads, signatures, both_strands=True, threads=2, device=device)
    with open(os.path.join(EXAMPLE, "planted.tsv")) as handle:
        planted = [line.rstrip("\n").split("\t") for line in handle][1:]
    assert [[result.sample_names[i], result.signature_names[s], str(o), "-" if strand else "+"]
            for i, s, o, strand in zip(result.sample, result.signature, result.offset, result.strand)] == planted
    assert lines(result)[:3] == [
        "channel_72_read_0_twodirections:R73_Lambda/minion_pc_Lambda_73d_3408_1_ch72_file0_strand.fast5: H1N1pdm-np (12.055)",
        "channel_70_read_4_twodirections:R73_Lambda/minion_pc_Lambda_73d_3408_1_ch70_file7_strand.fast5: FluB-Brisbane2008-mp (14.610)",
        "channel_108_read_10_twodirections:R73_Lambda/minion_pc_Lambda_73d_3408_1_ch108_file11_strand.fast5: FluB-Brisbane2008-ns (9.442)",
    ]  # fmt: skip
    for report in ("first", "all"):
        assert_same_as_oracle(reads, signatures, device, report=report, both_strands=True)


def test_real_reads_against_real_lambda_pieces():
    """Exact 30-base pieces of the lambda genome against real lambda reads (sequencing errors included)."""
    from seqcompare.io.fasta import read_sequences
    from seqcompare.io.fastq import read_fastq

    reads = read_fastq(os.path.join(EXAMPLE, "reads.fastq"))
    genome = SequenceSet.from_strings([reads.text(0)[q : q + 30] for q in range(100, 1600, 150)])
    result = assert_same_as_oracle(reads, genome, report="all", both_strands=True)
    assert len(result) >= 10
    del read_sequences


def test_integrity_fields_are_each_rows_quality_sum_modulo_97(rng, tmp_path):
    """The integrity field of a row is its sample's quality sum modulo 97, summed here one base at a time: rows
    repeat samples in any order, and samples may be empty (between, first and last); the samples read or kept
    in the file's bytes (FastqRecords)."""
    from seqcompare.io.fastq import read_fastq
    from seqcompare.scan.api import INTEGRITY_MODULUS, _integrity

    lengths = rng.integers(0, 40, 60)
    lengths[[0, 7, 8, 59]] = 0
    qualities = [rng.integers(0, 94, n).astype(np.uint8) for n in lengths]
    samples = SequenceSet.from_strings(["A" * int(n) for n in lengths], qualities=qualities)
    path = tmp_path / "s.fq"
    path.write_bytes(b"".join(b"@r%d\n%s\n+\n%s\n" % (r, b"A" * int(n), (q + 33).tobytes())
                              for r, (n, q) in enumerate(zip(lengths, qualities))))  # fmt: skip
    kept = read_fastq(path, pack_into=np.empty)
    for rows in (rng.integers(0, 60, 200), np.array([0, 59, 8, 7, 1, 1]), np.arange(60), np.empty(0, np.int64)):
        expected = [sum(int(q) for q in qualities[r]) % INTEGRITY_MODULUS for r in rows]
        assert _integrity(samples, rows).tolist() == expected
        assert _integrity(kept, rows).tolist() == expected


def test_min_score_best_and_integrity():
    samples = SequenceSet.from_strings(["ACGTTACGTTACGT"], ["s"], [[5, 5, 5, 5, 0, 30, 30, 30, 30, 0, 9, 9, 9, 9]])
    signatures = SequenceSet.from_strings(["ACGT"], ["sig"])
    assert scan(samples, signatures).offset.tolist() == [0]
    assert scan(samples, signatures, report="best").offset.tolist() == [5]
    assert scan(samples, signatures, report="all").offset.tolist() == [0, 5, 10]
    assert scan(samples, signatures, min_score=9).offset.tolist() == [5]
    assert scan(samples, signatures, min_score=9, report="all").offset.tolist() == [5, 10]
    assert scan(samples, signatures, min_score=31).offset.tolist() == []
    result = scan(samples, signatures, report="all")
    assert lines(result, integrity=True) == [f"s: sig ({x}) [{(20 + 120 + 36) % 97}] offset={o}"
                                              for x, o in (("5.000", 0), ("30.000", 5), ("9.000", 10))]  # fmt: skip


def test_both_strands_prefers_the_leftmost_then_the_given_strand():
    samples = SequenceSet.from_strings(["TTGCAAAAACGT", "AAAAACGT"], ["a", "b"], [[10] * 12, [10] * 8])
    signatures = SequenceSet.from_strings(["ACGT", "TTGC"], ["palindrome", "other"])
    result = scan(samples, signatures, both_strands=True, report="all")
    assert lines(result, tsv=True) == ["sample\tsignature\toffset\tscore\tstrand", "a\tpalindrome\t8\t10.000\t+",
                                       "a\tpalindrome\t8\t10.000\t-", "a\tother\t0\t10.000\t+",
                                       "a\tother\t2\t10.000\t-", "b\tpalindrome\t4\t10.000\t+",
                                       "b\tpalindrome\t4\t10.000\t-"]  # fmt: skip
    first = scan(samples, signatures, both_strands=True)
    assert lines(first) == ["a: palindrome (10.000)", "a: other (10.000)", "b: palindrome (10.000)"]


@given(st.data())
def test_random_n_placement_property(data):
    alphabet = st.sampled_from("ACGTN")
    sample_texts = data.draw(st.lists(st.text(alphabet, max_size=60), min_size=1, max_size=4))
    signature_texts = data.draw(st.lists(st.text(alphabet, min_size=1, max_size=20), min_size=1, max_size=4))
    k = data.draw(st.integers(1, 6))
    samples = SequenceSet.from_strings(sample_texts, qualities=[[len(t) % 40] * len(t) for t in sample_texts])
    signatures = SequenceSet.from_strings(signature_texts)
    report = data.draw(st.sampled_from(["first", "all"]))
    assert_same_as_oracle(samples, signatures, k=k, report=report)


def test_plain_python_brute_force_agrees_with_the_oracle_kernel(rng):
    for _ in range(200):
        sample = rng.integers(0, 5, int(rng.integers(0, 30))).astype(np.uint8)
        signature = rng.integers(0, 5, int(rng.integers(1, 6))).astype(np.uint8)
        expected = [o for o in range(sample.size - signature.size + 1)
                    if all(a == b or 4 in (a, b) for a, b in zip(signature, sample[o : o + signature.size]))]  # fmt: skip
        assert occurrence_offsets(sample, signature).tolist() == expected


def test_empty_signature_is_an_input_error():
    samples = SequenceSet.from_strings(["ACGT"], qualities=[[1] * 4])
    with pytest.raises(InputError, match="signature #2 'seq2' is empty"):
        scan(samples, SequenceSet.from_strings(["AC", ""]))


def run_cli(*args):
    return run_command(*args)


def test_cli_default_output_tsv_and_errors(tmp_path):
    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    out = tmp_path / "matches.txt"
    done = run_cli("scan", reads, signatures, "-o", str(out), "-q", "--integrity-hash")
    assert done.returncode == 0, done.stderr
    text = out.read_text().splitlines()
    assert len(text) == 16 and all(line.endswith("]") for line in text)  # the 16 forward plantings
    assert text[0].startswith("channel_72_read_0_") and ": H1N1pdm-np (12.055) [" in text[0]

    bad = tmp_path / "bad.fq"
    bad.write_bytes(b"@r\nACGT\n+\nIII\n")
    target = tmp_path / "never.txt"
    done = run_cli("scan", str(bad), signatures, "-o", str(target), "-q")
    assert done.returncode == 1
    assert done.stderr.startswith("seqcompare: error: ") and done.stderr.count("\n") == 1
    assert "record #1 'r' is truncated" in done.stderr
    assert not target.exists() and not any(p.name.startswith(".seqcompare-") for p in tmp_path.iterdir())
    done = run_cli("scan", reads, str(tmp_path / "missing.fa"))
    assert done.returncode == 1 and "no such file" in done.stderr


def test_cli_simulate_scan_plants_what_scan_finds(tmp_path):
    fq, fa, truth = tmp_path / "s.fastq", tmp_path / "g.fasta", tmp_path / "t.tsv"
    done = run_cli("simulate", "scan", "--signatures", "20", "--signature-length", "50", "300", "--clean-samples", "5",
                   "--infected-samples", "4", "--sample-length", "1000", "3000", "--seed", "3", "--samples-out",
                   str(fq), "--signatures-out", str(fa), "--truth", str(truth))  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = run_cli("scan", str(fq), str(fa), "--tsv", "-q")
    found = {tuple(line.split("\t")[:2]) for line in done.stdout.splitlines()[1:]}
    planted = {tuple(line.split("\t")[:2]) for line in truth.read_text().splitlines()[1:]}
    assert planted and planted <= found
    assert open(fq).readline().startswith("@sample_3_")


def cpu_stand_in_for_upload_index(parts, k):
    """A CPU index of the signatures as the helper received them, packed (see the fixture below)."""
    from seqcompare.scan.index import SignatureIndex

    codes, offsets = unpack(parts["sig_bases"], parts["sig_nmask"], parts["sig_word0"], parts["sig_length"])
    return SignatureIndex(codes, offsets, k)


def cpu_stand_in_for_device_occurrences(bases, nmask, word0, lengths, index, find_all, **_):
    """What :func:`seqcompare.scan.gpu.device_occurrences` returns, computed on the CPU from the packed words
    the helper received."""
    from seqcompare.scan.index import index_rows as _index_rows

    codes, offsets = unpack(bases, nmask, word0, lengths)
    unpacked = SequenceSet([str(i) for i in range(lengths.size)], codes, offsets, np.zeros(codes.size, np.uint8))
    sample, signature, offset, _ = _index_rows(unpacked, index, find_all, -1.0, 1)
    return sample, signature, offset


@pytest.fixture
def helper_on_cpu(monkeypatch):
    """The command line's GPU helper process with its GPU steps done on the CPU (fork carries the patches),
    so that the sharing of packed samples and signatures between the processes is checked without a GPU."""
    import seqcompare.cuda.runtime
    import seqcompare.scan.gpu
    from seqcompare.scan import gpu_helper as scan_helper

    if not scan_helper.supported():
        pytest.skip("the GPU helper process needs fork and memfd_create (Linux)")
    monkeypatch.setattr(seqcompare.scan.gpu, "upload_index", cpu_stand_in_for_upload_index)
    monkeypatch.setattr(seqcompare.scan.gpu, "device_occurrences", cpu_stand_in_for_device_occurrences)
    monkeypatch.setattr(scan_helper, "_start_cuda", lambda: None)
    monkeypatch.setattr(seqcompare.cuda.runtime, "require_gpu_quickly", lambda: None)
    return monkeypatch


@pytest.mark.parametrize("options", [("--both-strands", "--tsv"), ("--report", "all", "--integrity-hash"),
                                     ("--report", "best", "--min-score", "12"),
                                     ("--max-edits", "3", "--both-strands", "--report", "all", "--integrity-hash"),
                                     ("--iupac", "--max-mismatches", "1", "--report", "best", "--min-score", "12")])  # fmt: skip
def test_cli_gpu_helper_process_output_equals_the_in_process_scan(helper_on_cpu, tmp_path, options):
    from seqcompare.cli import main

    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    helped, plain = tmp_path / "helped.txt", tmp_path / "plain.txt"
    assert main(["scan", reads, signatures, "--device", "cuda", "--kmer", "7", "-q", "-o", str(helped), *options]) == 0
    assert main(["scan", reads, signatures, "--device", "cpu", "-q", "-o", str(plain), *options]) == 0
    assert helped.read_text() == plain.read_text() and helped.read_text().count("\n") >= 5


def test_cli_gpu_helper_process_failures_are_one_line_errors(helper_on_cpu, tmp_path, capsys):
    import seqcompare.scan.gpu
    import seqcompare.scan.gpu_helper
    from seqcompare.cli import main

    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    target = tmp_path / "never.txt"
    assert main(["scan", reads, str(tmp_path / "missing.fa"), "--device", "cuda", "-o", str(target)]) == 1
    assert "missing.fa: no such file" in capsys.readouterr().err
    helper_on_cpu.setattr(seqcompare.scan.gpu_helper, "_start_cuda", lambda: 1 / 0)
    assert main(["scan", reads, signatures, "--device", "cuda", "-q", "-o", str(target)]) == 1
    assert "GPU helper process: ZeroDivisionError" in capsys.readouterr().err
    helper_on_cpu.setattr(seqcompare.scan.gpu_helper, "_start_cuda", lambda: None)
    helper_on_cpu.setattr(seqcompare.scan.gpu, "device_occurrences", lambda *args, **kwargs: os._exit(3))
    assert main(["scan", reads, signatures, "--device", "cuda", "-q", "-o", str(target)]) == 1
    assert "GPU helper process ended unexpectedly (exit code 3)" in capsys.readouterr().err
    assert not target.exists()


def test_cli_gpu_helper_process_logs_a_failed_page_lock_and_still_scans(helper_on_cpu, tmp_path, capsys):
    # The helper reports a failed page-lock as a note among its stage seconds; the log line must show it, not
    # fail on it (it did: every value was formatted as seconds).
    import seqcompare.cuda.helper
    from seqcompare.cli import main

    def refuse(regions, region):
        raise RuntimeError("no page-locking here")

    helper_on_cpu.setattr(seqcompare.cuda.helper, "LOCK_SHARED_FROM", 0)
    helper_on_cpu.setattr(seqcompare.cuda.helper._Regions, "lock", refuse)
    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    helped, plain = tmp_path / "helped.txt", tmp_path / "plain.txt"
    assert main(["scan", reads, signatures, "--device", "cuda", "--kmer", "7", "-o", str(helped)]) == 0
    assert "helper lock error: RuntimeError('no page-locking here')" in capsys.readouterr().err
    assert main(["scan", reads, signatures, "--device", "cpu", "-q", "-o", str(plain)]) == 0
    assert helped.read_text() == plain.read_text() and helped.read_text().count("\n") >= 5


def test_the_gpu_helpers_side_and_the_parser_import_no_numba():
    # The helper process is forked before Numba is imported so that its CUDA start overlaps the parent's work;
    # importing Numba on its side would put ~0.3 s back on the critical path.
    code = ("import sys, seqcompare.cli, seqcompare.scan.gpu, seqcompare.scan.gpu_helper, seqcompare.scan.common; "
            "seqcompare.cli.build_parser(); print('numba' in sys.modules)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_scan_helper_is_forked_before_the_parent_imports_numpy(tmp_path):
    # Up to the helper's fork the command imports no NumPy either: the helper then imports it while the parent
    # does, and starts CUDA about 0.2 s sooner on a lent H200's host (bench/RESULTS.md, session 40).
    code = f"""
import os, sys
import seqcompare.cuda.runtime, seqcompare.scan.gpu_helper
seqcompare.cuda.runtime.require_gpu_quickly = lambda: None
seqcompare.scan.gpu_helper._start_cuda = lambda: {{}}
fork = os.fork
def reporting_fork():
    print("numpy before the fork:", "numpy" in sys.modules, flush=True)
    return fork()
os.fork = reporting_fork
from seqcompare.cli import main
main(["scan", {os.path.join(EXAMPLE, "reads.fastq")!r}, {os.path.join(EXAMPLE, "signatures.fasta")!r}, "--device", "cuda",
      "-q", "-o", {str(tmp_path / "out.txt")!r}])
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "numpy before the fork: False" in done.stdout, done.stdout + done.stderr


# -- the GPU's own limits: launches, lengths, the command line's helper process on a real GPU -----------------


@pytest.mark.gpu
@pytest.mark.parametrize("n_rate", [0.0, 0.05])
def test_gpu_reports_each_occurrence_once_from_its_first_doubly_clean_window(rng, n_rate):
    """Every doubly clean window of an occurrence finds it; only the first reports it. The device's raw rows
    of every occurrence (report all) against the CPU index's rows: the same set, and without Ns (no fallback
    there) each occurrence exactly once."""
    from seqcompare.scan.api import prepare_signatures
    from seqcompare.scan.gpu import scan_on_gpu
    from seqcompare.scan.index import SignatureIndex, index_rows

    signatures = ["".join(rng.choice(list("ACGT"), n)) for n in (19, 40, 300, 2000)]
    signatures.append(signatures[2][:100] + "N" * 7 + signatures[2][107:])  # an N run: windows on both sides
    texts = []
    for _ in range(30):
        sample = list(rng.choice(list("ACGT"), 6000))
        for signature in signatures:
            at = int(rng.integers(0, 6000 - len(signature)))
            sample[at : at + len(signature)] = signature
        sample = ["N" if n_rate and rng.random() < n_rate else c for c in sample]
        texts.append("".join(sample))
    samples = SequenceSet.from_strings(texts, qualities=[[20] * len(t) for t in texts])
    prepared = prepare_signatures(SequenceSet.from_strings(signatures), k=12, device=None)
    cpu_index = SignatureIndex(prepared.codes, prepared.offsets, 12)
    cpu = index_rows(samples, cpu_index, True, -1.0, 2)
    gpu = scan_on_gpu(samples, cpu_index, True, -1.0)
    cpu_rows = set(zip(*(column.tolist() for column in cpu[:3])))
    gpu_rows = list(zip(*(column.tolist() for column in gpu[:3])))
    assert set(gpu_rows) == cpu_rows and len(cpu_rows) > 100  # planted copies (some overlap others)
    if n_rate == 0:
        assert len(gpu_rows) == len(cpu_rows)


@pytest.mark.gpu
def test_gpu_more_samples_than_one_launch_holds(rng):
    # About 93% of these samples hold an N: the fallback's launch over them (every signature) takes two grids;
    # the others get one launch, for the signature without a clean run (NNTT).
    n = 80_000
    texts = ["".join(rng.choice(list("ACGTN"), 12)) for _ in range(n)]
    samples = SequenceSet.from_strings(texts, qualities=[[9] * 12] * n)
    signatures = SequenceSet.from_strings(["ACG", "NNTT", texts[-1][2:9]])
    result = assert_same_as_oracle(samples, signatures, "cuda", k=3)
    assert (result.sample == n - 1).any()


@pytest.mark.gpu
def test_gpu_full_size_like_sample_lengths():
    data = simulate_scan(n_signatures=40, signature_length=(3000, 10000), n_clean=3, n_infected=3,
                         sample_length=(100_000, 200_000), n_ratio=0.1, seed=11)  # fmt: skip
    gpu = scan(data.samples, data.signatures, device="cuda")
    cpu = scan(data.samples, data.signatures, device="cpu")  # too large for the oracle: the CPU, held to it above
    assert list(gpu.lines(tsv=True)) == list(cpu.lines(tsv=True))
    assert {(i, s) for i, s, _ in data.planted} <= set(zip(gpu.sample.tolist(), gpu.signature.tolist()))


@pytest.mark.gpu
def test_gpu_a_long_sample_with_copies_only_the_fallback_finds(rng):
    """1.7 Mb, 20% N, and planted copies with an N every 4 bases (at the start, middle and very end)."""
    sample = rng.integers(0, 4, 1_700_000)
    sample[rng.random(sample.size) < 0.2] = 4
    signatures = []
    for at, length in ((5, 40), (900_000, 300), (1_699_000, 1000)):
        signature = rng.integers(0, 4, length)
        copy = signature.copy()
        copy[1::4] = 4
        sample[at : at + length] = copy
        signatures.append("".join("ACGTN"[c] for c in signature))
    samples = SequenceSet.from_strings(["".join("ACGTN"[c] for c in sample)], qualities=[np.where(sample == 4, 0, 30)])
    result = assert_same_as_oracle(samples, SequenceSet.from_strings(signatures), "cuda", report="all")
    assert {5, 900_000, 1_699_000} <= set(result.offset.tolist())


@pytest.mark.gpu
@pytest.mark.parametrize("options, lines", [((), 21), (("--max-edits", "5%", "--report", "all"), 21),
                                            (("--max-mismatches", "3", "--iupac", "--min-score", "5"), 21)])
def test_gpu_cli_output_identical_to_cpu(tmp_path, options, lines):
    """The command line's GPU helper (exact, or the pieces of an approximate scan) against the CPU path. A fresh
    process each: a process that imported CuPy (this one) scans without the helper."""
    reads = os.path.join(EXAMPLE, "reads.fastq")
    signatures = os.path.join(EXAMPLE, "signatures.fasta")
    outputs = []
    for device in ("cpu", "cuda"):
        target = tmp_path / f"{device}.tsv"
        done = subprocess.run([sys.executable, "-m", "seqcompare", "scan", reads, signatures, "--both-strands", "--tsv",
                               "--device", device, "-o", str(target), "-q", *options], capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") == lines


def test_clean_runs_are_each_signatures_longest_first_then_leftmost(rng):
    from seqcompare.scan.index import LADDER, clean_runs

    k = 4
    texts = ["".join(rng.choice(list("ACGTNNN"), int(n))) for n in rng.integers(0, 60, 40)]
    texts += ["", "NNNN", "ACGTNACGTNACGT", "ACGTACGTNNACGTACGT"]  # equal runs: leftmost first
    codes = [np.array(["ACGTN".index(c) for c in text], np.uint8) for text in texts]
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in codes])]).astype(np.int64)
    run_offsets, starts, levels = clean_runs(np.concatenate(codes + [np.zeros(0, np.uint8)]), offsets, k)
    for s, text in enumerate(texts):
        runs = [(m.start(), m.end() - m.start()) for m in re.finditer(r"[ACGT]+", text)]
        runs = sorted(((start, length) for start, length in runs if length >= k), key=lambda run: (-run[1], run[0]))
        mine = slice(run_offsets[s], run_offsets[s + 1])
        got = list(zip(starts[mine].tolist(), levels[mine].tolist()))
        expected = [(start, int(np.searchsorted(LADDER, length - k + 1, side="right")) - 1) for start, length in runs]
        assert got == expected, text
    assert run_offsets[-1] > 40


def test_candidate_keys_sort_as_python_sorts_them(rng):
    from seqcompare.scan.index import _sort_keys

    cases = [np.zeros(0, np.int64), np.array([7], np.int64), np.arange(50, dtype=np.int64),
             np.arange(50, dtype=np.int64)[::-1].copy(), np.full(9, 3, np.int64)]  # fmt: skip
    for n in rng.integers(2, 300, 60):
        high = int(rng.choice([3, 1000, 1 << 62]))  # many equal keys, a few, none
        cases.append(rng.integers(0, high, int(n)).astype(np.int64))
    for keys in cases:
        expected = sorted(keys.tolist())
        _sort_keys(keys)
        assert keys.tolist() == expected


def test_buffers_grow_between_and_within_samples(device):
    """A read with more index candidates than the CPU engine's first buffer holds (70,000 windows of A that
    never end in the C), a read with more occurrences than its first output holds, after another one's: the
    rows equal the oracle's."""
    samples = SequenceSet.from_strings(["ACGT" * 10, "A" * 70_000 + "C", "ACGT" * 100, "A" * 300, "C" * 5],
                                       qualities=[[20] * 40, [30] * 70_001, [10] * 400, [5] * 300, [9] * 5])  # fmt: skip
    signatures = SequenceSet.from_strings(["A" * 11 + "C", "ACGTACGT"])
    for report, rows in (("all", 109), ("first", 3)):
        assert len(assert_same_as_oracle(samples, signatures, device, report=report, k=8)) == rows
