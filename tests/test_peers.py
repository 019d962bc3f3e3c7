"""Exact agreement with the tools users come from: snp-dists and CoMet through golden files their own builds
wrote (tests/data/golden/README.md), dtaidistance live, and substitution matrices read as documented."""

import functools
import gzip
import os
import shlex

import numpy as np
import pytest
from conftest import DATA

import seqcompare
from seqcompare.cli import main
from seqcompare.io.ccc import write_comet_records
from seqcompare.io.genotypes import read_comet

HERE = os.path.dirname(__file__)
GOLDEN = os.path.join(HERE, "data", "golden")


def golden_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        raw = handle.read()
    return gzip.decompress(raw) if path.endswith(".gz") else raw


# ---------------------------------------------------------------------------------------------- snp-dists

SNP_DISTS = {  # golden suffix -> our flags
    "L-m.tsv": ["-L", "-m"],
    "L-m-c.csv": ["-L", "-m", "-c"],
    "L-m-t.tsv": ["-L", "-m", "-t"],
    "m-t-c.csv": ["-m", "-t", "-c"],
    "L.tsv": ["-L", "--corner-label", "snp-dists 1.2.0"],
    "x2.tsv": ["-x", "2", "--corner-label", "snp-dists 1.2.0"],
    "tsv": [],
    "a.tsv": ["-a"],
    "k.tsv": ["-k"],
    "c-b.csv": ["-c", "-b"],
}
SNP_DISTS_CASES = [(os.path.join(HERE, "data", f"{name}.aln"), f"{name}.{suffix}")
                   for name in ("good", "ambig", "lowercase") for suffix in SNP_DISTS]  # fmt: skip
SNP_DISTS_CASES += [(os.path.join(DATA, "sarscov2_338.fasta.gz"), f"sarscov2_338.{suffix}.gz")
                    for suffix in ("L-m.tsv", "tsv", "a.tsv")]  # fmt: skip


@pytest.mark.parametrize("alignment, golden", SNP_DISTS_CASES, ids=[g for _, g in SNP_DISTS_CASES])
def test_byte_identical_to_snp_dists(capsysbinary, alignment, golden):
    suffix = golden.split(".", 1)[1].removesuffix(".gz")
    assert main(["hamming", "-q", *SNP_DISTS[suffix], alignment]) == 0
    assert capsysbinary.readouterr().out == golden_bytes(os.path.join(GOLDEN, "snp-dists", golden))


@pytest.mark.parametrize("golden", ["sarscov2_338.tsv.gz", "sarscov2_338.a.tsv.gz", "sarscov2_338.L-m.tsv.gz"])
def test_sparse_method_byte_identical_to_snp_dists(capsysbinary, golden):
    """The real genomes run through the consensus lists too (``auto`` takes the matrix method on so few)."""
    suffix = golden.split(".", 1)[1].removesuffix(".gz")
    alignment = os.path.join(DATA, "sarscov2_338.fasta.gz")
    assert main(["hamming", "-q", "--method", "sparse", *SNP_DISTS[suffix], alignment]) == 0
    assert capsysbinary.readouterr().out == golden_bytes(os.path.join(GOLDEN, "snp-dists", golden))


# -------------------------------------------------------------------------------------------------- CoMet


def _manifest():
    with open(os.path.join(GOLDEN, "comet", "MANIFEST.tsv")) as handle:
        header, *rows = [line.rstrip("\n").split("\t") for line in handle]
    return [dict(zip(header, row)) for row in rows]


COMET = _manifest()


def _comet_options(options: str) -> dict:
    """CoMet's options as ``seqcompare.ccc`` keywords."""
    words = shlex.split(options)
    given = dict(zip(words[::2], words[1::2]))
    keywords = {"way": int(given["--num_way"]), "metric": given["--metric_type"],
                "sparse": given["--sparse"] == "yes"}  # fmt: skip
    if "--threshold" in given:
        keywords["threshold"] = given["--threshold"]
    if "--ccc_multiplier" in given:
        keywords["multiplier"] = float(given["--ccc_multiplier"])
    if "--ccc_param" in given:
        keywords["param"] = float(given["--ccc_param"])
    return keywords


def _comet_input(run: dict):
    ploidy = 1 if "duo" in run["options"] else 2
    return read_comet(os.path.join(GOLDEN, "comet", run["input"]), int(run["num_vector"]), int(run["num_field"]),
                      ploidy=ploidy)  # fmt: skip


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("run", COMET, ids=[run["name"] for run in COMET])
def test_ccc_records_and_checksum_identical_to_comet(run, device):
    import io

    result = seqcompare.ccc(_comet_input(run), **_comet_options(run["options"]), device=device, comet_checksum=True)
    assert str(result.comet_checksum) == run["checksum"]
    written = io.BytesIO()
    write_comet_records(written, result)
    assert written.getvalue() == golden_bytes(os.path.join(GOLDEN, "comet", f"{run['name']}.records.bin.gz"))


@pytest.mark.parametrize("run", [r for r in COMET if r["name"] in ("ccc2_sparse_multi", "ccc3_sparse", "duo2_sparse")],
                         ids=lambda r: r["name"])  # fmt: skip
def test_ccc_command_line_writes_comets_file_and_prints_its_checksum(tmp_path, capsysbinary, run):
    keywords = _comet_options(run["options"])
    argv = ["ccc", os.path.join(GOLDEN, "comet", run["input"]), "--num-vector", run["num_vector"], "--num-field",
            run["num_field"], "--way", str(keywords["way"]), "--metric", keywords["metric"], "--checksum", "-q",
            "-o", str(tmp_path / "out.bin")]  # fmt: skip
    if not keywords["sparse"]:
        argv.append("--no-sparse")
    if "threshold" in keywords:
        argv += ["--threshold", keywords["threshold"]]
    assert main(argv) == 0
    err = capsysbinary.readouterr().err.decode()
    assert f"comet metrics checksum {run['checksum']}\n" in err
    assert (tmp_path / "out.bin").read_bytes() == golden_bytes(
        os.path.join(GOLDEN, "comet", f"{run['name']}.records.bin.gz"))


def test_comet_values_are_bit_identical_where_a_double_comparison_would_differ():
    """CoMet compares single-precision values with a double threshold: a threshold equal to a value whose float32
    rounding lies above it keeps that value (a float64 comparison would drop it)."""
    genotypes = _comet_input(COMET[0])
    values = seqcompare.ccc(genotypes).values.reshape(-1)
    above = next(float(v) for v in values if v > 0.3 and float(np.float32(v)) > v)
    kept = seqcompare.ccc(genotypes, threshold=above)
    single = values.astype(np.float32).astype(np.float64)  # float32 values, compared in float64 as CoMet does
    assert np.count_nonzero(single > above) == len(kept.entry_value)
    assert np.count_nonzero(values > above) < len(kept.entry_value)


# ---------------------------------------------------------------------------------------------- dtaidistance


def _plaid():
    with open(os.path.join(HERE, "data", "plaid_10.csv")) as handle:
        return [np.array([float(x) for x in line.split(",")[1:]]) for line in handle]


@functools.lru_cache(maxsize=None)
def _peer_distances(window: int) -> dict:
    """dtaidistance's distances of every pair of the real series (computed once per window for both modes), by its
    C library: its pure-Python ``distance`` gives the same bits at every window here (checked with dtaidistance
    2.5.1) and takes 20 s for the six windows on two cores, against 0.1 s."""
    from dtaidistance import dtw as peer

    series = _plaid()
    return {(i, j): peer.distance(series[i], series[j], window=window + 1, inner_dist="euclidean", use_pruning=False,
                                  use_c=True) for i in range(len(series)) for j in range(i + 1, len(series))}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("window", [0, 1, 7, 40, 100, 5000])
@pytest.mark.parametrize("mode", ["api", "cli"])
def test_dtw_window_equals_dtaidistance_on_real_unequal_series(window, mode, capsysbinary):
    dtaidistance = pytest.importorskip("dtaidistance")

    series = _plaid()
    if mode == "api":
        result = seqcompare.dtw(series, window=window)
        ours = dict(zip(map(tuple, result.pairs.tolist()), result.scores.tolist()))
    else:
        assert main(["dtw", "-q", os.path.join(HERE, "data", "plaid_10.csv"), "--skip-columns", "1", "--window",
                     str(window)]) == 0  # fmt: skip
        lines = capsysbinary.readouterr().out.decode().splitlines()[1:]
        ours = {(int(i), int(j)): float(d) for i, j, d in (line.split("\t") for line in lines)}
    assert len(ours) == 45 and dtaidistance.__version__
    assert ours == _peer_distances(window)


def test_dtw_window_equals_dtaidistance_on_random_integer_series_both_ways(rng):
    pytest.importorskip("dtaidistance")
    from dtaidistance import dtw as peer

    series = [rng.integers(-50, 50, size=int(n)) for n in rng.integers(1, 40, size=12)]
    for window in (0, 2, 5):
        result = seqcompare.dtw(series, window=window)
        for (i, j), distance in zip(result.pairs.tolist(), result.scores.tolist()):
            for a, b in ((series[i], series[j]), (series[j], series[i])):
                expected = peer.distance(a.astype(float), b.astype(float), window=window + 1,
                                         inner_dist="euclidean", use_pruning=False)  # fmt: skip
                assert float(distance) == expected


# -------------------------------------------------------------------------------------- substitution matrices


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_an_asymmetric_matrix_is_read_as_target_code_then_query_code(rng, device):
    from seqcompare.align.reference import cigar_cost, nw_reference

    matrix = np.array([[5, -4, -7, -2, 0], [-1, 5, -3, -6, 0], [-8, -2, 5, -5, 0], [-3, -9, -1, 5, 0],
                       [0, 0, 0, 0, 1]])  # fmt: skip
    assert not np.array_equal(matrix, matrix.T)
    costs = seqcompare.Costs.scores(gap_open=-3, gap_extend=-2, matrix=matrix)
    targets = ["".join("ACGT"[c] for c in rng.integers(0, 4, int(n))) for n in rng.integers(5, 60, 40)]
    queries = ["".join("ACGT"[c] for c in rng.integers(0, 4, int(n))) for n in rng.integers(5, 60, 40)]
    result = seqcompare.align(targets, queries, costs=costs, cigar=device == "cpu", device=device)
    codes = {c: i for i, c in enumerate("ACGTN")}
    for k, (t, q) in enumerate(zip(targets, queries)):
        tc, qc = [codes[c] for c in t], [codes[c] for c in q]
        assert result.scores[k] == -nw_reference(tc, qc, costs)
        if device == "cpu":
            assert -cigar_cost(tc, qc, result.cigars[k], costs) == result.scores[k]
    # the transposed model gives other scores: the test can tell the two readings apart
    transposed = seqcompare.align(targets, queries, costs=seqcompare.Costs.scores(gap_open=-3, gap_extend=-2,
                                                                                  matrix=matrix.T))  # fmt: skip
    assert not np.array_equal(result.scores, transposed.scores)
