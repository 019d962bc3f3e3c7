"""The command line: snp-dists-identical output, every output layout, and clean failures."""

import os
import subprocess
import sys

import numpy as np
import pytest

import seqcompare

from seqcompare.cli import main
from seqcompare.io.fasta import read_alignment
from seqcompare.hamming.reference import snp_dists_distance

HERE = os.path.dirname(__file__)
GOOD = os.path.join(HERE, "data", "good.aln")
AMBIG = os.path.join(HERE, "data", "ambig.aln")
LOWER = os.path.join(HERE, "data", "lowercase.aln")


def run(capsysbinary, *argv):
    code = main(list(argv))
    captured = capsysbinary.readouterr()
    return code, captured.out.decode(), captured.err.decode()


def snp_dists_text(path, sep="\t", corner="snp-dists 0.8.2", **semantics):
    """snp-dists 0.8.2's matrix layout with plain str formatting, from the character-level definition
    (small files) or from the vector oracle (the real alignment, too big for a Python character loop)."""
    aln = read_alignment(path)
    if aln.n_sequences * aln.n_sequences * aln.length > 10**7:
        alphabet = "all" if semantics.get("all_chars") else "acgt"
        matrix = seqcompare.hamming(aln, method="vector", alphabet=alphabet,
                                    keep_case=semantics.get("keep_case", False))  # fmt: skip
    else:
        seqs = [bytes(r).decode() for r in aln.sequences]
        matrix = [[snp_dists_distance(a, b, **semantics) for b in seqs] for a in seqs]
    lines = [sep.join([corner, *aln.names])]
    for name, row in zip(aln.names, matrix):
        lines.append(sep.join([name, *(str(int(d)) for d in row)]))
    return "\n".join(lines) + "\n"


def test_snp_dists_documented_example(capsysbinary):
    code, out, _ = run(capsysbinary, "hamming", "-q", GOOD)
    assert code == 0
    assert out == (
        "snp-dists 0.8.2\tseq1\tseq2\tseq3\tseq4\n"
        "seq1\t0\t1\t2\t3\nseq2\t1\t0\t3\t4\nseq3\t2\t3\t0\t4\nseq4\t3\t4\t4\t0\n"
    )


def test_snp_dists_csv_molten(capsysbinary):
    _, out, _ = run(capsysbinary, "hamming", "-q", "-c", "-m", GOOD)
    expected = [
        "seq1,seq1,0", "seq1,seq2,1", "seq1,seq3,2", "seq1,seq4,3", "seq2,seq1,1", "seq2,seq2,0",
        "seq2,seq3,3", "seq2,seq4,4", "seq3,seq1,2", "seq3,seq2,3", "seq3,seq3,0", "seq3,seq4,4",
        "seq4,seq1,3", "seq4,seq2,4", "seq4,seq3,4", "seq4,seq4,0",
    ]  # fmt: skip
    assert out == "\n".join(expected) + "\n"


def test_snp_dists_lower_triangle_blank_corner(capsysbinary):
    _, out, _ = run(capsysbinary, "hamming", "-q", "-c", "-b", "-L", GOOD)
    assert out == ",seq1,seq2,seq3,seq4\nseq1,0\nseq2,1,0\nseq3,2,3,0\nseq4,3,4,4,0\n"


SNP_DISTS_FLAGS = [[], ["-a"], ["-k"], ["-a", "-k"], ["-c"], ["-b"], ["-c", "-b", "-a"]]
CASES = [(p, f) for p in (AMBIG, LOWER) for f in SNP_DISTS_FLAGS]  # the real alignment: tests/test_peers.py


@pytest.mark.parametrize("path, flags", CASES)
def test_byte_identical_to_snp_dists_layout(capsysbinary, path, flags):
    _, out, _ = run(capsysbinary, "hamming", "-q", *flags, path)
    expected = snp_dists_text(
        path, sep="," if "-c" in flags else "\t", corner="" if "-b" in flags else "snp-dists 0.8.2",
        all_chars="-a" in flags, keep_case="-k" in flags,
    )  # fmt: skip
    assert out == expected


def test_corner_label_and_methods_agree(capsysbinary):
    outputs = set()
    for method in ("vector", "matrix", "tiled", "bitpack", "sparse"):
        _, out, _ = run(capsysbinary, "hamming", "-q", "--method", method, "--corner-label", "x", AMBIG)
        outputs.add(out)
    assert len(outputs) == 1 and outputs.pop().startswith("x\tseq1")


def test_reference_max_dist_knn_npy(capsysbinary, tmp_path):
    ref = tmp_path / "ref.fa"
    ref.write_text(">r1\nAGTCAGTA\n>r2\nTTTTTTTT\n")
    _, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "--ref", str(ref))
    expected = "".join(f"{q}\t{snp_dists_distance(a, 'AGTCAGTA')}\t{snp_dists_distance(a, 'TTTTTTTT')}\n"
                       for q, a in zip(["seq1", "seq2", "seq3", "seq4"], ["AGTCAGTC", "AGGCAGTC", "AGTGAGTA", "TGTTAGAC"]))
    assert out == "snp-dists 0.8.2\tr1\tr2\n" + expected
    _, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "--max-dist", "2")
    assert out == "seq1\tseq2\t1\nseq1\tseq3\t2\n"
    _, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "--knn", "1", "-c")
    assert out == "seq1,seq2,1\nseq2,seq1,1\nseq3,seq1,2\nseq4,seq1,3\n"
    npy = tmp_path / "d.npy"
    code, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "--npy", str(npy))
    assert code == 0 and out == ""
    np.testing.assert_array_equal(np.load(npy), [[0, 1, 2, 3], [1, 0, 3, 4], [2, 3, 0, 4], [3, 4, 4, 0]])
    names = (tmp_path / "d.npy.names.tsv").read_text().splitlines()
    assert names[0] == "axis\tindex\tname" and names[1:] == [f"row\t{i}\tseq{i + 1}" for i in range(4)]
    _, out, _ = run(capsysbinary, "hamming", "-q", GOOD, "-x", "2", "-L")
    assert out.endswith("seq4\t2\t2\t2\t0\n")


def test_output_file_and_iupac(capsysbinary, tmp_path):
    target = tmp_path / "out.tsv"
    code, out, _ = run(capsysbinary, "hamming", "-q", "--iupac", AMBIG, "-o", str(target))
    assert code == 0 and out == ""
    assert target.read_text().splitlines()[1] == "seq1\t0\t0\t2\t1\t1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.tsv"]


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        (b"", "contains no FASTA records"),
        (b"hello world\n", "not a FASTA file"),
        (b">a\nACGT\n>b\nACG\n", "record #2 'b' has length 3 but record #1 'a' has length 4"),
        (b">a\nAC@T\n", "illegal character '@' at position 3"),
    ],
)
def test_bad_input_one_line_nonzero_no_output(capsysbinary, tmp_path, content, message):
    path = tmp_path / "in.fa"
    if content is not None:
        path.write_bytes(content)
    target = tmp_path / "out.tsv"
    code, out, err = run(capsysbinary, "hamming", "-q", str(path), "-o", str(target))
    assert code == 1
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("seqcompare: error: ") and message in err
    assert str(path) in err
    assert not target.exists() and [p.name for p in tmp_path.iterdir()] == ([] if content is None else ["in.fa"])


def test_reference_of_other_length_and_conflicting_options(capsysbinary, tmp_path):
    ref = tmp_path / "ref.fa"
    ref.write_text(">r\nACGT\n")
    code, _, err = run(capsysbinary, "hamming", "-q", GOOD, "--ref", str(ref), "-o", str(tmp_path / "o"))
    assert code == 1 and "have length 4 but the query alignment" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
    code, _, err = run(capsysbinary, "hamming", "-q", GOOD, "--knn", "2", "--max-dist", "3")
    assert code == 1 and "choose one output layout" in err


def test_duplicate_names_warn(capsysbinary, tmp_path):
    path = tmp_path / "dup.fa"
    path.write_text(">a\nACGT\n>a\nACGA\n")
    code, out, err = run(capsysbinary, "hamming", str(path))
    assert code == 0 and "1 duplicated name(s): a" in err
    assert out.splitlines()[0] == "snp-dists 0.8.2\ta\ta"


def test_console_script_stdin_gzip_and_simulate(tmp_path):
    sim = tmp_path / "sim.fa"
    subprocess.run([sys.executable, "-m", "seqcompare", "simulate", "alignment", "-n", "5", "-l", "99",
                    "--seed", "3", "--width", "60", "-o", str(sim)], check=True)  # fmt: skip
    assert read_alignment(str(sim)).sequences.shape == (5, 99)
    result = subprocess.run([sys.executable, "-m", "seqcompare", "hamming", "-q", "-"],
                            input=sim.read_bytes(), capture_output=True, check=True)  # fmt: skip
    expected = snp_dists_text(str(sim))
    assert result.stdout.decode() == expected
    result = subprocess.run([sys.executable, "-m", "seqcompare", "hamming", "/no/such.fa"], capture_output=True)
    assert result.returncode == 1 and result.stderr.decode() == "seqcompare: error: /no/such.fa: no such file\n"


def test_blas_probe_guard_is_lifted_after_the_command(capsysbinary):
    # The CLI hides SciPy's BLAS from Numba's start-up probe; the guard must not outlive the command, or a
    # later `import scipy.linalg` in the same process would fail.
    name = "scipy.linalg.cython_blas"
    had = name in sys.modules
    assert run(capsysbinary, "hamming", GOOD)[0] == 0
    assert (name in sys.modules) == had
    assert sys.modules.get(name, "absent") is not None


def test_gpu_requests_without_a_gpu_fail_cleanly(capsysbinary):
    from conftest import has_gpu

    from seqcompare.hamming.methods import resolve_method

    with pytest.raises(ValueError, match="GPU only"):
        resolve_method("bitmma", "cpu")
    code, out, err = run(capsysbinary, "hamming", "--method", "bitmma", GOOD)
    assert code == 1 and out == "" and "runs on a GPU only" in err
    if not has_gpu():  # where a GPU is present, tests/test_gpu_hamming.py covers --device cuda
        code, out, err = run(capsysbinary, "hamming", "-q", "--device", "cuda", GOOD)
        assert code == 1 and out == "" and err.count("\n") == 1 and "CuPy" in err


@pytest.mark.parametrize("separator", ["\t", ","])
def test_small_tables_are_written_as_the_compiled_formatter_writes_them(rng, monkeypatch, separator):
    import io

    import seqcompare.io.tables as tables

    names = tables.NameTable(["a", "b,c", 'say"hi"', "ünï", "e"], separator)
    matrix = rng.integers(-(2**31), 2**31, size=(5, 5)).astype(np.int64)
    matrix[0, :2] = 0
    left, right = rng.integers(0, 5, 40), rng.integers(0, 5, 40)
    values = rng.integers(0, 10**6, 40)
    written = []
    for cells in (tables.SMALL_CELLS, 0):  # Python's str, then the compiled formatter
        monkeypatch.setattr(tables, "SMALL_CELLS", cells)
        out = io.BytesIO()
        tables.write_rows(out, matrix, 0, names, separator)
        tables.write_rows(out, matrix[2:], 2, names, separator, lower_triangle=True)
        tables.write_long(out, left, right, values, names, names, separator)
        tables.write_long(out, left[:0], right[:0], values[:0], names, names, separator)
        written.append(out.getvalue())
    assert written[0] == written[1] and written[0].count(b"\n") == 5 + 3 + 40


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_rows_formatted_by_threads_equal_rows_formatted_by_one(rng, monkeypatch, threads):
    # hamming -L formats a block row's rows in parts, each part by a thread into its own buffer: the bytes must
    # be those of one thread, for lower triangles (parts of unequal row counts) and whole rows, in any blocks.
    import io

    import seqcompare.io.tables as tables

    monkeypatch.setattr(tables, "SMALL_CELLS", 0)
    monkeypatch.setattr(tables, "_PARALLEL_FORMAT_CELLS", 0)
    names = tables.NameTable([f"s{k}" for k in range(57)], "\t")
    matrix = rng.integers(0, 10**5, size=(57, 57)).astype(np.int32)
    for block_cells in (1 << 22, 300):
        monkeypatch.setattr(tables, "_BLOCK_CELLS", block_cells)
        written = []
        for parts in (1, threads):
            out = io.BytesIO()
            tables.write_rows(out, matrix, 0, names, "\t", threads=parts)
            tables.write_rows(out, matrix[:20], 0, names, "\t", lower_triangle=True, threads=parts)
            tables.write_rows(out, matrix[20:], 20, names, "\t", lower_triangle=True, threads=parts)
            written.append(out.getvalue())
        assert written[0] == written[1] and written[0].count(b"\n") == 57 * 2


@pytest.mark.parametrize("separator", ["\t", ","])
def test_pairs_written_by_numpy_equal_plain_text_and_the_compiled_formatter(rng, monkeypatch, separator):
    import io

    import seqcompare.io.tables as tables

    names = ["a", "b,c", 'say"hi"', "ünï", "e" * 40, "", "x y"]
    table = tables.NameTable(names, separator)
    shown = [tables.csv_field(name, separator) for name in names]
    for case in range(40):
        size = int(rng.integers(1, 300))
        left, right = rng.integers(0, len(names), size), rng.integers(0, len(names), size)
        scale = 10 ** int(rng.integers(1, 19))
        values = rng.integers(-scale if case % 3 == 0 else 0, scale, size, dtype=np.int64)
        values[: size // 5] = rng.choice([0, 1, 9, 10, 99, 100, -1, -10, 10**18 - 1, -(10**18) + 1], size // 5)
        if scale < 2**31 and values.min() >= 0:
            values = values.astype(rng.choice([np.int64, np.int32, np.uint32]))
        plain = "".join(f"{shown[i]}{separator}{shown[j]}{separator}{v}\n" for i, j, v in
                        zip(left.tolist(), right.tolist(), values.tolist())).encode()  # fmt: skip
        assert tables._long_lines(left, right, values, table, table, ord(separator)).tobytes() == plain
        out = io.BytesIO()
        tables.write_long(out, left, right, values, table, table, separator)
        monkeypatch.setattr(tables, "SMALL_CELLS", 0)  # the compiled formatter
        compiled = io.BytesIO()
        tables.write_long(compiled, left, right, values, table, table, separator)
        monkeypatch.undo()
        assert out.getvalue() == compiled.getvalue() == plain


def test_a_small_alignment_needs_no_compiled_kernel():
    # Parsing, the matrix method on informative sites and the table all run on NumPy: no Numba start-up.
    from conftest import DATA

    code = ("import sys; from seqcompare.cli import main; "
            f"main(['hamming', '-q', {os.path.join(DATA, 'sarscov2_338.fasta.gz')!r}, '-o', '/dev/null']); "
            "print('numba' in sys.modules)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
