"""CCC/DUO (CoMet's metrics): golden vectors of spec/ccc.md, every fast path against the oracle, checksums."""

import numpy as np
import pytest

from seqcompare.ccc.analytic import all_items, analytic_problem, closed_form_products
from seqcompare.ccc.api import Threshold, ccc
from seqcompare.ccc.formulas import Metric, tables, values
from seqcompare.errors import InputError
from seqcompare.io.genotypes import Genotypes

GOLDEN_NON_SPARSE = [[0, 1], [2, 3], [1, 0], [3, 2]]  # spec 2.5 (a): v0 = [00, 01], v1 = [10, 11], ...


class Codes:
    """Genotypes given as CoMet codes (what the readers return)."""

    def __init__(self, codes):
        self.codes = np.asarray(codes, dtype=np.uint8)
        self.names = [f"snp{i + 1}" for i in range(len(self.codes))]
        self.alleles = [("A", "B")] * len(self.codes)


def test_golden_non_sparse_2way_and_3way():
    result = ccc(Codes(GOLDEN_NON_SPARSE), sparse=False, method="reference")
    by_pair = {tuple(p): v.ravel() for p, v in zip(result.index, result.values)}
    np.testing.assert_allclose(by_pair[(0, 1)], [0.46875, 0.5625, 0, 0.46875], rtol=0, atol=1e-15)
    np.testing.assert_allclose(by_pair[(1, 2)], [0.234375, 0.390625, 0.703125, 0.234375], rtol=0, atol=1e-15)
    three = ccc(Codes(GOLDEN_NON_SPARSE), way=3, sparse=False, method="reference")
    expected = [0.1171875, 0.1953125, 0.2109375, 0.1171875, 0, 0, 0.234375, 0]
    np.testing.assert_allclose(three.values[0].ravel(), expected, rtol=0, atol=1e-15)


def test_golden_sparse_2way_with_intermediates():
    codes = [[1, 3, 3, 2, 2], [0, 1, 0, 2, 1]]
    result = ccc(Codes(codes), method="reference", keep_tables=True)
    assert result.tables[0].ravel().tolist() == [2, 0, 8, 2]
    np.testing.assert_allclose(result.values[0].ravel(), [1 / 3, 0, 2 / 3, 0.27777778], atol=1e-8)


def test_golden_sparse_3way():
    code = {"AA": 0, "AT": 1, "TT": 3, "-": 2}
    rows = ["AA AT TT - AT AT - - AA AA", "AT AA AA AT AT AA AT - - AA", "AA AA AA AT AT AA - AA AA -"]
    result = ccc(Codes([[code[x] for x in row.split()] for row in rows]), way=3, method="reference")
    expected = [0.17410714, 0.02946429, 0.11160714, 0.04910714, 0.30357143, 0.03928571, 0.02976190, 0.06547619]
    np.testing.assert_allclose(result.values[0].ravel(), expected, atol=5e-9)


def test_maximum_2way_value_is_one_with_comets_constants():
    # f_ij = f_i = f_j = 1/2 gives 9/2 * 1/2 * (2/3)**2 = 1 exactly.
    metric = Metric("ccc", sparse=False)
    value = values(np.array([[[1, 0], [1, 2]]]), [np.array([1])] * 2, [np.array([1])] * 2, metric)
    assert value[0, 1, 1] == pytest.approx(1.0, abs=1e-15)


def random_genotypes(rng, n, m, metric="ccc", missing=0.1):
    ploidy = 2 if metric == "ccc" else 1
    g = rng.integers(0, ploidy + 1, size=(n, m))
    g[rng.random((n, m)) < missing] = -1
    return g


@pytest.mark.parametrize("way", [2, 3])
@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_fields", [1, 31, 33, 64, 65, 97, 255, 257])
def test_blas_equals_the_oracle(rng, way, metric, sparse, n_fields):
    genotypes = random_genotypes(rng, 7 if way == 3 else 11, n_fields, metric, missing=0.15 if sparse else 0)
    options = dict(way=way, metric=metric, sparse=sparse, keep_tables=True)
    oracle = ccc(genotypes, method="reference", **options)
    fast = ccc(genotypes, method="blas", **options)
    assert np.array_equal(oracle.index, fast.index)
    assert np.array_equal(oracle.tables, fast.tables)
    assert np.array_equal(oracle.values, fast.values)  # bit for bit: same tallies, same float64 sequence
    assert oracle.checksum.total == fast.checksum.total


@pytest.mark.parametrize("way", [2, 3])
def test_thresholds_keep_exactly_the_entries_above_them(rng, way):
    genotypes = random_genotypes(rng, 12, 80)
    everything = ccc(genotypes, way=way)
    flat = everything.values.reshape(len(everything.index), -1)
    for threshold in (0.2, "0.1,0.3,0.25,0.5" if way == 2 else "0.05,0.1,0.15,0.2,0.3"):
        kept = ccc(genotypes, way=way, threshold=threshold, method="blas")
        oracle = ccc(genotypes, way=way, threshold=threshold, method="reference")
        passed = Threshold.parse(threshold, way).passed(flat, way)
        item, entry = np.nonzero(passed)
        assert np.array_equal(kept.entry_index, everything.index[item])
        assert np.array_equal(kept.entry_value, flat[item, entry])
        bits = (entry[:, None] >> np.arange(way - 1, -1, -1)) & 1
        assert np.array_equal(kept.entry_bits, bits)
        assert np.array_equal(oracle.entry_value, kept.entry_value) and oracle.checksum.total == kept.checksum.total


def test_combined_threshold_passes_ll_and_hh_together():
    limits = Threshold.parse("9,9,9,0.5", 2)
    passed = limits.passed(np.array([[0.3, 0.9, 0.9, 0.3], [0.6, 0, 0, 0.0], [0.2, 0, 0, 0.2]]), 2)
    assert passed.tolist() == [[True, False, False, True], [False] * 4, [False] * 4]


def test_checksum_is_independent_of_blocking(rng):
    from seqcompare.ccc import api

    genotypes = random_genotypes(rng, 40, 130)
    reference = ccc(genotypes)
    for block_items in (1, 7, 40, 1000):
        sink_checksum = api.Checksum()
        sink = api._Sink(2, Metric(), None, None, sink_checksum, False)
        codes = Genotypes.from_counts(genotypes).codes
        from seqcompare.ccc.formulas import counts, marginals

        a, d = counts(codes, Metric())
        api._run_blas(a, d, *marginals(a, d), Metric(), 2, sink, block_items=block_items)
        assert sink_checksum.total == reference.checksum.total
    # and it does change when one value changes
    changed = genotypes.copy()
    changed[3, 5] = (changed[3, 5] + 1) % 3
    assert ccc(changed).checksum.total != reference.checksum.total


@pytest.mark.parametrize("way", [2, 3])
@pytest.mark.parametrize("metric,sparse", [("ccc", True), ("ccc", False), ("duo", True), ("duo", False)])
def test_analytic_problem_matches_its_closed_form(way, metric, sparse):
    m = Metric(metric, sparse)
    codes, groups = analytic_problem(13 if way == 3 else 30, 1001, m)
    result = ccc(Codes(codes), way=way, metric=metric, sparse=sparse, keep_tables=True)
    index = all_items(codes.shape[0], way)
    assert np.array_equal(result.index, index)
    assert np.array_equal(result.tables, tables(closed_form_products(index, codes.shape[0], groups, m, way), way,
                                                m.counted_bits))  # fmt: skip


def test_edge_cases():
    assert len(ccc(np.zeros((1, 5), dtype=int)).index) == 0
    assert len(ccc(np.zeros((2, 5), dtype=int), way=3).index) == 0
    empty = ccc(np.zeros((3, 0), dtype=int), keep_tables=True)
    assert np.all(empty.values == 0) and np.all(empty.tables == 0)
    all_missing = ccc(np.full((3, 10), -1), keep_tables=True)
    assert np.all(all_missing.values == 0)
    with pytest.raises(InputError, match=r"count 3 at \(vector 0, field 1\)"):
        ccc(np.array([[0, 3]]))
    with pytest.raises(InputError, match=r"count 2 at \(vector 0, field 0\)"):
        ccc(np.array([[2, 0]]), metric="duo")


def test_tallies_that_would_overflow_are_refused():
    from seqcompare.ccc.formulas import MAX_EXACT_TALLY, max_tally

    assert max_tally(2**28, 3, Metric()) > MAX_EXACT_TALLY >= max_tally(2**28 - 1, 3, Metric())
    with pytest.raises(InputError, match="beyond the exact 32-bit range"):
        ccc(np.broadcast_to(np.zeros(1, dtype=np.int8), (2, 2**28)), way=3)


# ------------------------------------------------------------------------------------------ real data, CLI

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from conftest import DATA  # noqa: E402

KG_VCF = os.path.join(DATA, "ccc_example", "1kg_chr1_2504.vcf.gz")
SARS_VCF = os.path.join(DATA, "ccc_example", "sarscov2_422.vcf.gz")


@pytest.fixture(scope="module")
def kg():
    from seqcompare.io.genotypes import read_vcf

    return read_vcf(KG_VCF)


def subset(genotypes, rows):
    return type(genotypes)(genotypes.codes[rows], [genotypes.names[r] for r in rows],
                           [genotypes.alleles[r] for r in rows], genotypes.samples, genotypes.ploidy,
                           genotypes.source)  # fmt: skip


@pytest.mark.parametrize("way", [2, 3])
def test_real_1kg_genotypes_equal_the_oracle(kg, way):
    rows = list(range(0, 4294, 4294 // (24 if way == 2 else 9)))
    chosen = subset(kg, rows)
    for sparse in (True, False):
        oracle = ccc(chosen, way=way, sparse=sparse, method="reference", keep_tables=True)
        fast = ccc(chosen, way=way, sparse=sparse, method="blas", keep_tables=True)
        assert np.array_equal(oracle.tables, fast.tables) and np.array_equal(oracle.values, fast.values)
        assert oracle.checksum.total == fast.checksum.total


def test_real_haploid_sarscov2_duo_equals_the_oracle():
    from seqcompare.io.genotypes import read_vcf

    chosen = subset(read_vcf(SARS_VCF), list(range(0, 404, 13)))
    assert chosen.ploidy == 1
    oracle = ccc(chosen, metric="duo", method="reference", keep_tables=True)
    fast = ccc(chosen, metric="duo", method="blas", keep_tables=True)
    assert np.array_equal(oracle.tables, fast.tables) and np.array_equal(oracle.values, fast.values)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "seqcompare", "ccc", *args], capture_output=True, text=True)


def test_cli_threshold_tsv_names_snps_and_alleles(tmp_path, kg):
    out = tmp_path / "entries.tsv"
    done = run_cli(KG_VCF, "--threshold", "0.7", "--checksum", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "skipped 2 records that are not biallelic SNPs" in done.stderr and "checksum " in done.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "snp_i\tallele_i\tsnp_j\tallele_j\tvalue"
    expected = ccc(kg, threshold=0.7)
    assert len(lines) - 1 == len(expected.entry_value) > 0
    first = lines[1].split("\t")
    i, j = expected.entry_index[0]
    a, b = expected.entry_bits[0]
    assert first == [kg.names[i], kg.alleles[i][a], kg.names[j], kg.alleles[j][b], repr(float(expected.entry_value[0]))]
    assert f"checksum {expected.checksum}" in done.stderr


def test_cli_npy_comet_records_histogram_and_analytic(tmp_path):
    genotypes = np.random.default_rng(5).integers(-1, 3, size=(9, 40))
    from seqcompare.io.genotypes import Genotypes, write_comet

    codes = Genotypes.from_counts(genotypes).codes
    binary = tmp_path / "in.bin"
    write_comet(str(binary), codes)
    common = ["--num-vector", "9", "--num-field", "40"]
    done = run_cli(str(binary), *common, "-o", str(tmp_path / "all.npy"), "--histogram", str(tmp_path / "h.tsv"))
    assert done.returncode == 0, done.stderr
    expected = ccc(genotypes)
    assert np.array_equal(np.load(tmp_path / "all.npy"), expected.values)
    histogram = (tmp_path / "h.tsv").read_text().splitlines()
    assert histogram[0] == "class\tlow\thigh\tcount" and len(histogram) == 1 + 4 * 100
    assert sum(int(line.split("\t")[3]) for line in histogram[1:] if line.startswith("LH\t")) == 2 * 36
    done = run_cli(str(binary), *common, "--threshold", "0.4", "-o", str(tmp_path / "e.bin"))
    assert done.returncode == 0, done.stderr
    records = np.fromfile(tmp_path / "e.bin", dtype=[("i0", "<u4"), ("i1", "<u4"), ("value", "<f4")])
    kept = ccc(genotypes, threshold=0.4)
    # CoMet's order: pairs by their second vector, then the first
    order = np.lexsort((kept.entry_bits[:, 1], kept.entry_bits[:, 0], kept.entry_index[:, 0], kept.entry_index[:, 1]))
    assert np.array_equal(records["i0"], 2 * kept.entry_index[order, 0] + kept.entry_bits[order, 0])
    assert np.array_equal(records["i1"], 2 * kept.entry_index[order, 1] + kept.entry_bits[order, 1])
    assert np.array_equal(records["value"], kept.entry_value[order].astype(np.float32))
    for way in ("2", "3"):
        done = run_cli("--analytic", "25", "300", "--way", way)
        assert done.returncode == 0 and "equal the closed form exactly" in done.stderr, done.stderr


def test_cli_bad_input_is_one_line_and_leaves_no_file(tmp_path):
    vcf = tmp_path / "multi.vcf"
    vcf.write_text("##fileformat=VCFv4.2\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\ts2\n"
                   "1\t5\trs1\tA\tC,G\t.\t.\t.\tGT\t0/1\t1/2\n1\t9\trs2\tA\tC\t.\t.\t.\tGT\t0/1\t1/1\n")  # fmt: skip
    target = tmp_path / "never.tsv"
    done = run_cli(str(vcf), "--strict", "-o", str(target))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "multi-allelic" in done.stderr
    assert not target.exists()
    done = run_cli(SARS_VCF, "--metric", "ccc", "-o", str(target))
    assert done.returncode == 1 and "haploid" in done.stderr and "--metric duo" in done.stderr
    done = run_cli(str(tmp_path / "missing.vcf"))
    assert done.returncode == 1 and "no such file" in done.stderr
    done = run_cli(SARS_VCF, "--threshold", "1,2")
    assert done.returncode == 1 and "give one value or 4" in done.stderr
    short = tmp_path / "short.bin"
    short.write_bytes(b"\x00" * 5)
    done = run_cli(str(short), "--num-vector", "3", "--num-field", "8", "-o", str(target))
    assert done.returncode == 1 and "short.bin" in done.stderr and not target.exists()


def test_free_device_memory_is_read_afresh_each_time():
    """GPU buffers are sized by this: a stale reading would size them for memory that is no longer free."""
    from types import SimpleNamespace

    from seqcompare.cuda.runtime import free_bytes

    state = {"driver": 100, "pool": 20}
    runtime = SimpleNamespace(memGetInfo=lambda: (state["driver"], 1000))
    fake_cupy = SimpleNamespace(cuda=SimpleNamespace(runtime=runtime),
                                get_default_memory_pool=lambda: SimpleNamespace(free_bytes=lambda: state["pool"]))  # fmt: skip
    assert free_bytes(fake_cupy) == 120
    state["driver"], state["pool"] = 50, 5
    assert free_bytes(fake_cupy) == 55
