"""Bad input and bad options end in one ``seqcompare: error:`` line naming the file or option, a non-zero exit and
no output file; the Python API raises TypeError or ValueError naming the argument."""

import gzip
import io
import os
import sys

import numpy as np
import pytest
from conftest import small_vcf

import seqcompare
from seqcompare.cli import main

HERE = os.path.dirname(__file__)
GOOD = os.path.join(HERE, "data", "good.aln")


def fails(capsysbinary, tmp_path, *argv, naming: str, code: int | None = None) -> str:
    """Run the command line with ``-o`` into ``tmp_path`` (unless argv names outputs) and check the failure."""
    target = tmp_path / "never.out"
    argv = [str(a) for a in argv]
    if not any(a in ("-o", "--npy", "--output") for a in argv) and argv[0] != "simulate":
        argv += ["-o", str(target)]
    before = set(os.listdir(tmp_path))
    status = main(argv)
    captured = capsysbinary.readouterr()
    err = captured.err.decode()
    assert status != 0 and (code is None or status == code), err
    assert captured.out == b""
    assert err.count("\n") == 1 and err.startswith("seqcompare: error: "), err
    assert naming in err, err
    assert set(os.listdir(tmp_path)) == before and not target.exists()
    return err


@pytest.fixture
def vcf(tmp_path):
    return small_vcf(tmp_path / "g.vcf", ids=("snp0", "snp1", "snp2", "snp3", "snp0"))


# ------------------------------------------------------------------------------------------------------- ccc


@pytest.mark.parametrize("value", ["abc", "", "nan", "inf", "0.1,0.2", "0.1,x,0.3,0.4"])
def test_ccc_threshold_that_is_not_numbers(capsysbinary, tmp_path, vcf, value):
    fails(capsysbinary, tmp_path, "ccc", vcf, "--threshold", value, naming="--threshold")


def test_ccc_bitmma_without_a_gpu(capsysbinary, tmp_path, vcf, monkeypatch):
    from seqcompare.errors import DeviceError
    from seqcompare.cuda import runtime as _runtime

    def no_gpu():
        raise DeviceError("device='cuda' needs CuPy and an NVIDIA GPU")

    monkeypatch.setattr(_runtime, "require_cupy", no_gpu)
    fails(capsysbinary, tmp_path, "ccc", vcf, "--method", "bitmma", naming="CuPy and an NVIDIA GPU")
    fails(capsysbinary, tmp_path, "ccc", vcf, "--method", "bitmma", "--device", "cpu", naming="--method bitmma")


@pytest.mark.parametrize("option, value", [("--multiplier", "0"), ("--multiplier", "-1"), ("--multiplier", "nan"),
                                           ("--param", "-0.1"), ("--param", "1.5"), ("--param", "inf")])  # fmt: skip
def test_ccc_constants_outside_the_formulas_range(capsysbinary, tmp_path, vcf, option, value):
    fails(capsysbinary, tmp_path, "ccc", vcf, option, value, naming=option)


def test_ccc_analytic_with_an_input_file_is_a_conflict(capsysbinary, tmp_path, vcf):
    fails(capsysbinary, tmp_path, "ccc", vcf, "--analytic", "5", "10", naming="--analytic")


def test_ccc_reads_a_vcf_from_standard_input(vcf, monkeypatch, capsysbinary):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(vcf.read_bytes()))))
    assert main(["ccc", "-q", "-", "--threshold", "0.1"]) == 0
    piped = capsysbinary.readouterr().out
    assert main(["ccc", "-q", str(vcf), "--threshold", "0.1"]) == 0
    assert piped == capsysbinary.readouterr().out and piped.count(b"\n") > 3


def test_ccc_api_takes_a_path_and_picks_duo_for_haploid_genotypes():
    path = os.path.join(HERE, os.pardir, "data", "ccc_example", "sarscov2_422.vcf.gz")
    result = seqcompare.ccc(path, threshold=0.9)
    assert result.metric.name == "duo"
    genotypes = seqcompare.read_genotypes(path)
    assert np.array_equal(result.entry_value, seqcompare.ccc(genotypes, metric="duo", threshold=0.9).entry_value)


# ------------------------------------------------------------------------------------------------------- dtw


def _npy(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, array, allow_pickle=True)
    return path


@pytest.mark.parametrize("case", ["directory", "binary junk", "fasta", "empty file .npy", "no rows .npy",
                                  "object .npy", "1-D .npy", "3-D .npy", "nan"])  # fmt: skip
def test_dtw_bad_signals(capsysbinary, tmp_path, case):
    inputs = tmp_path / "in"
    inputs.mkdir()
    if case == "directory":
        path = inputs / "dir"
        path.mkdir()
    elif case == "binary junk":
        path = inputs / "junk.csv"
        path.write_bytes(bytes(range(256)) * 4)
    elif case == "fasta":
        path = inputs / "a.csv"
        path.write_text(">seq1\nACGT\n")
    elif case == "empty file .npy":
        path = inputs / "empty.npy"
        path.write_bytes(b"")
    elif case == "no rows .npy":
        path = _npy(inputs, "rows.npy", np.zeros((0, 5)))
    elif case == "object .npy":
        path = _npy(inputs, "object.npy", np.array([[1, "a"], [2, None]], dtype=object))
    elif case == "1-D .npy":
        path = _npy(inputs, "one.npy", np.arange(5.0))
    elif case == "3-D .npy":
        path = _npy(inputs, "three.npy", np.zeros((2, 3, 4)))
    else:
        path = inputs / "nan.csv"
        path.write_text("1,2,3\n4,nan,6\n")
    fails(capsysbinary, tmp_path, "dtw", path, naming=str(path))


def test_dtw_skip_columns_negative_or_past_the_line(capsysbinary, tmp_path):
    signals = tmp_path / "s.csv"
    signals.write_text("1,2,3\n4,5\n")
    fails(capsysbinary, tmp_path, "dtw", signals, "--skip-columns", "-1", naming="--skip-columns", code=2)
    err = fails(capsysbinary, tmp_path, "dtw", signals, "--skip-columns", "3", naming=str(signals))
    assert "line 2" in err and "--skip-columns 3" in err


def test_dtw_reads_text_from_standard_input(monkeypatch, capsysbinary, tmp_path):
    text = b"1,2,3\n2,3,5\n3,1,2\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    assert main(["dtw", "-q", "-"]) == 0
    piped = capsysbinary.readouterr().out
    (tmp_path / "s.csv").write_bytes(text)
    assert main(["dtw", "-q", str(tmp_path / "s.csv")]) == 0
    assert piped == capsysbinary.readouterr().out
    assert piped.splitlines()[1:] == [b"0\t1\t3", b"0\t2\t3", b"1\t2\t6"]


# ---------------------------------------------------------------------------------------------- outputs


def test_output_that_is_a_directory_empty_or_in_a_missing_directory(capsysbinary, tmp_path):
    fails(capsysbinary, tmp_path, "hamming", GOOD, "-o", tmp_path, naming="is a directory")
    fails(capsysbinary, tmp_path, "hamming", GOOD, "-o", "", naming="-o: empty file name")
    fails(capsysbinary, tmp_path, "hamming", GOOD, "--npy", tmp_path / "nowhere" / "d.npy", naming="does not exist")
    fails(capsysbinary, tmp_path, "hamming", GOOD, "--npy", "", naming="--npy: empty file name")


@pytest.mark.parametrize("option", ["--substitution-rate", "--n-rate", "--private-rate"])
@pytest.mark.parametrize("value", ["-0.1", "nan", "1.5"])
def test_simulate_rates_outside_zero_to_one(capsysbinary, tmp_path, option, value):
    fails(capsysbinary, tmp_path, "simulate", "alignment", "-n", "3", "-l", "10", option, value, "-o",
          tmp_path / "sim.fa", naming=option, code=2)  # fmt: skip


def test_simulate_scan_n_ratio_outside_zero_to_one(capsysbinary, tmp_path):
    fails(capsysbinary, tmp_path, "simulate", "scan", "--n-ratio", "2", "--samples-out", tmp_path / "s.fq",
          "--signatures-out", tmp_path / "v.fa", naming="--n-ratio", code=2)  # fmt: skip


def test_align_all_vs_all_with_a_second_file_is_a_conflict(capsysbinary, tmp_path):
    fasta = tmp_path / "a.fa"
    fasta.write_text(">a\nACGT\n>b\nACGA\n")
    fails(capsysbinary, tmp_path, "align", fasta, fasta, "--all-vs-all", naming="--all-vs-all")


def test_hamming_max_dist_selects_on_the_true_distance_and_max_count_caps_the_value(capsysbinary):
    # good.aln's distances: seq1-seq2 1, seq1-seq3 2, seq1-seq4 3, seq2-seq3 3, seq2-seq4 4, seq3-seq4 4
    assert main(["hamming", "-q", GOOD, "--max-dist", "3", "-x", "2"]) == 0
    assert capsysbinary.readouterr().out.decode() == (
        "seq1\tseq2\t1\nseq1\tseq3\t2\nseq1\tseq4\t2\nseq2\tseq3\t2\n"
    )
    assert main(["hamming", "-q", GOOD, "--max-dist", "3", "-x", "9"]) == 0
    assert capsysbinary.readouterr().out.decode() == "seq1\tseq2\t1\nseq1\tseq3\t2\nseq1\tseq4\t3\nseq2\tseq3\t3\n"


def test_argparse_errors_are_one_line_too(capsysbinary, tmp_path):
    fails(capsysbinary, tmp_path, "hamming", GOOD, "--knn", "0", naming="--knn", code=2)
    fails(capsysbinary, tmp_path, "hamming", GOOD, "--method", "magic", naming="--method", code=2)


def test_device_cuda_is_checked_before_the_inputs_are_read(capsysbinary, tmp_path, monkeypatch):
    from seqcompare.errors import DeviceError
    from seqcompare.cuda import runtime as _runtime

    def no_gpu():
        raise DeviceError("device='cuda' needs CuPy and an NVIDIA GPU")

    monkeypatch.setattr(_runtime, "require_cupy", no_gpu)
    monkeypatch.setattr(_runtime, "require_gpu_quickly", no_gpu)
    missing = tmp_path / "missing.fa"
    for argv in (["hamming", missing], ["scan", missing, missing], ["align", missing, missing], ["dtw", missing],
                 ["ccc", missing]):  # fmt: skip
        fails(capsysbinary, tmp_path, *argv, "--device", "cuda", naming="needs CuPy")


# ----------------------------------------------------------------------------------- names and formats


def test_duplicate_names_warn_once_with_a_count_in_every_command(capsysbinary, tmp_path, vcf):
    fasta = tmp_path / "dup.fa"
    fasta.write_text(">a\nACGTACGTAC\n>a\nACGAACGTAC\n>b\nACGAACGTAA\n>b\nACGAACGTAT\n")
    fastq = tmp_path / "dup.fq"
    fastq.write_text("@r\nACGTACGTACGT\n+\nIIIIIIIIIIII\n@r\nACGAACGTACGT\n+\nIIIIIIIIIIII\n")
    runs = {
        "hamming": ["hamming", fasta],
        "scan": ["scan", fastq, fasta],
        "align": ["align", fasta, fasta],
        "ccc": ["ccc", vcf],
    }
    for name, argv in runs.items():
        assert main([str(a) for a in argv]) == 0, name
        err = capsysbinary.readouterr().err.decode()
        warnings = [line for line in err.splitlines() if line.startswith("seqcompare: warning:")]
        assert warnings, name
        assert all("duplicated" in line for line in warnings)
    assert main(["hamming", "-q", str(fasta)]) == 0
    assert "2 duplicated name(s): a, b" in capsysbinary.readouterr().err.decode()
    assert main(["ccc", "-q", str(vcf)]) == 0
    assert "1 duplicated SNP name(s): snp0" in capsysbinary.readouterr().err.decode()


def test_csv_quotes_names_with_commas_or_quotes(capsysbinary, tmp_path):
    fasta = tmp_path / "q.fa"
    fasta.write_text('>a,b\nACGT\n>say"hi"\nACGA\n>plain\nACGG\n')
    assert main(["hamming", "-q", "-c", str(fasta)]) == 0
    assert capsysbinary.readouterr().out.decode() == (
        'snp-dists 0.8.2,"a,b","say""hi""",plain\n"a,b",0,1,1\n"say""hi""",1,0,1\nplain,1,1,0\n'
    )
    assert main(["hamming", "-q", "-c", "-m", str(fasta)]) == 0
    assert capsysbinary.readouterr().out.decode().splitlines()[1] == '"a,b","say""hi""",1'
    assert main(["hamming", "-q", str(fasta)]) == 0  # tab-separated: names as they are, as snp-dists writes them
    assert capsysbinary.readouterr().out.decode().splitlines()[0] == 'snp-dists 0.8.2\ta,b\tsay"hi"\tplain'


# ---------------------------------------------------------------------------------------------- the API


def test_api_arguments_are_checked_by_type_and_value():
    from seqcompare import Costs

    X = ["ACGT", "ACGA", "ACGG"]
    cases = [
        (TypeError, "threads", lambda: seqcompare.hamming(X, threads="2")),
        (ValueError, "threads", lambda: seqcompare.hamming(X, threads=0)),
        (TypeError, "k", lambda: seqcompare.hamming_knn(X, k=1.5)),
        (ValueError, "k", lambda: seqcompare.hamming_knn(X, k=0)),
        (TypeError, "max_dist", lambda: seqcompare.hamming_pairs(X, max_dist=None)),
        (TypeError, "max_dist", lambda: seqcompare.hamming_pairs(X, max_dist=1.5)),
        (ValueError, "max_count", lambda: seqcompare.hamming(X, max_count=-1)),
        (TypeError, "threads", lambda: seqcompare.align(X, X, threads=True)),
        (ValueError, "threads", lambda: seqcompare.dtw([[1, 2], [3, 4]], threads=0)),
        (TypeError, "window", lambda: seqcompare.dtw([[1, 2], [3, 4]], window=1.5)),
        (TypeError, "match", lambda: Costs.seed(0.5, 1, 1, 1)),
        (TypeError, "gap_open", lambda: Costs.scores(1, -1, "2", -1)),
        (ValueError, "matrix", lambda: Costs.scores(matrix=np.zeros((4, 4), int))),
        (ValueError, "matrix", lambda: Costs.scores(matrix=np.full((5, 5), 0.5))),
        (ValueError, "substitution", lambda: Costs(np.zeros((3, 3), int))),
        (TypeError, "costs", lambda: seqcompare.align(X, X, costs="edit")),
        (ValueError, "param", lambda: seqcompare.ccc(np.zeros((3, 4), int), param=2.0)),
        (ValueError, "multiplier", lambda: seqcompare.ccc(np.zeros((3, 4), int), multiplier=0)),
        (ValueError, "threshold", lambda: seqcompare.ccc(np.zeros((3, 4), int), threshold="abc")),
        (ValueError, "way", lambda: seqcompare.ccc(np.zeros((3, 4), int), way=4)),
        (TypeError, "k", lambda: seqcompare.scan([], X, k=2.0)),
    ]
    for error, name, call in cases:
        with pytest.raises(error) as raised:
            call()
        assert name in str(raised.value), (name, raised.value)


# ----------------------------------------------------------------------------------- help and progress


def test_help_shows_defaults_and_no_jargon(capsys):
    for command in ("hamming", "scan", "ccc", "align", "dtw"):
        assert main([command, "--help"]) == 0
        text = capsys.readouterr().out
        assert "the seed" not in text and "the course" not in text
        assert "default: cpu" in text, command
    assert main(["scan", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--kmer K" in text and " -k" not in text.split("options:")[1]


def test_a_long_run_without_a_terminal_logs_progress_now_and_then(monkeypatch, capsysbinary):
    from seqcompare.progress import PeriodicLog

    lines = []
    log = PeriodicLog(1000, "pair", "hamming", lines.append, interval=0.0)
    log.update(250)
    log.update(750)
    assert lines == ["hamming: 25% (250 of 1000 pairs)", "hamming: 100% (1000 of 1000 pairs)"]
    quiet = PeriodicLog(1000, "pair", "hamming", lines.append, interval=3600.0)
    quiet.update(10)
    assert len(lines) == 2

    import seqcompare.progress as progress

    made = []
    original = progress.PeriodicLog.__init__

    def fast_log(self, total, unit, what, log, interval=10.0):
        made.append(what)
        original(self, total, unit, what, log, 0.0)

    monkeypatch.setattr(progress.PeriodicLog, "__init__", fast_log)
    for argv in (["hamming", GOOD], ["align", GOOD, GOOD], ["dtw", os.path.join(HERE, "data", "plaid_10.csv")]):
        assert main(argv) == 0
        err = capsysbinary.readouterr().err.decode()
        assert "100% (" in err, argv
        assert main([*argv, "-q"]) == 0
        assert capsysbinary.readouterr().err == b""
    assert made == ["hamming", "align", "dtw"]


@pytest.mark.slow
def test_a_cold_cache_says_kernels_are_compiling_once(capsysbinary):
    from seqcompare import progress

    notices = []
    progress.on_first_compilation(lambda: notices.append(1))
    try:
        progress.notice_compilation()
        progress.notice_compilation()
    finally:
        progress.on_first_compilation(None)
    assert notices == [1]
    code = ("import os, sys, tempfile; os.environ['NUMBA_CACHE_DIR'] = tempfile.mkdtemp(); "
            "from seqcompare.cli import main; "
            "sys.exit(main(['hamming', '--model', 'jc69', sys.argv[1]]))")  # fmt: skip
    import subprocess

    done = subprocess.run([sys.executable, "-c", code, GOOD], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # Two kernels compile (the rows' packing and the models' pair counts: 5-6 s together, where the aligner's
    # scores and traceback took 10 s), and the notice is printed once.
    assert done.stderr.count("compiling kernels (first run only)") == 1
