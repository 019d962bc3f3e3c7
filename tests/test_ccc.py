"""CCC/DUO (CoMet's metrics): golden vectors of spec/ccc.md, every fast path against the oracle, checksums."""

import gzip

import numpy as np
import pytest
from conftest import DEVICES, run_command

from seqcompare.ccc.analytic import all_items, analytic_problem, closed_form_products
from seqcompare.ccc.api import Threshold, ccc
from seqcompare.ccc.formulas import Metric, tables, values
from seqcompare.ccc.reference import reference_ccc, reference_entries
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


def oracle(genotypes, way=2, metric="ccc", sparse=True, threshold=None):
    """The oracle's result (:mod:`seqcompare.ccc.reference`): ``(index, tables, values)``, or the kept
    ``(index, bits, value)`` with a threshold."""
    codes = Genotypes.from_counts(genotypes).codes if not hasattr(genotypes, "codes") else genotypes.codes
    index, tables, values = reference_ccc(codes, way, Metric(metric, sparse))
    if threshold is None:
        return index, tables, values
    limits = Threshold.parse(threshold, way)
    return reference_entries(index, values, way, limits.by_class, limits.combined)


def assert_equals_oracle(result, expected, threshold=None):
    if threshold is None:
        index, tables, values = expected
        assert np.array_equal(result.index, index)
        if result.tables is not None:
            assert np.array_equal(result.tables, tables)
        assert np.array_equal(result.values, values)  # bit for bit: CoMet's float64 sequence
    else:
        index, bits, value = expected
        assert np.array_equal(result.entry_index, index)
        assert np.array_equal(result.entry_bits, bits)
        assert np.array_equal(result.entry_value, value)


def assert_same(one, other):
    for name in ("index", "values", "tables", "entry_index", "entry_bits", "entry_value"):
        a, b = getattr(one, name), getattr(other, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert np.array_equal(a, b), name
    assert one.checksum.total == other.checksum.total


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("way", [2, 3])
@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_fields", [1, 31, 33, 64, 65, 97, 255, 257, 1100])
def test_fast_path_equals_the_oracle(rng, device, way, metric, sparse, n_fields):
    # The GPU's row tiles are 128 vectors: it gets enough vectors to cross one.
    n = {("cpu", 2): 11, ("cpu", 3): 7, ("cuda", 2): 131, ("cuda", 3): 23}[(device, way)]
    genotypes = random_genotypes(rng, n, n_fields, metric, missing=0.15 if sparse else 0)
    fast = ccc(genotypes, way=way, metric=metric, sparse=sparse, keep_tables=True, device=device)
    assert_equals_oracle(fast, oracle(genotypes, way, metric, sparse))
    reference = ccc(genotypes, way=way, metric=metric, sparse=sparse, keep_tables=True, method="reference")
    assert_same(reference, fast)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("way", [2, 3])
@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
def test_thresholds_keep_exactly_the_oracles_entries(rng, device, way, metric, sparse):
    n = {"cpu": 12, "cuda": 150 if way == 3 else 300}[device]
    genotypes = random_genotypes(rng, n, 517 if device == "cuda" else 80, metric, missing=0.15 if sparse else 0)
    expected = oracle(genotypes, way, metric, sparse) if device == "cpu" else None
    for threshold in (0.2, "0.1,0.3,0.25,0.5" if way == 2 else "0.05,0.1,0.15,0.2,0.3", "-1"):
        kept = ccc(genotypes, way=way, metric=metric, sparse=sparse, threshold=threshold, device=device)
        if device == "cpu":
            limits = Threshold.parse(threshold, way)
            assert_equals_oracle(kept, reference_entries(*expected[::2], way, limits.by_class, limits.combined),
                                 threshold)  # fmt: skip
        else:  # too many items for the oracle: against the CPU, which is held to it above
            assert_same(ccc(genotypes, way=way, metric=metric, sparse=sparse, threshold=threshold), kept)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("threshold", ["-1", "0.55", "0.2,0.5,0.3,0.8", "0.6,0.6,0.6,0.0"])
def test_dense_thresholds(rng, device, threshold):
    # Without missing data the GPU screens values in single precision before the exact test.
    genotypes = random_genotypes(rng, 40 if device == "cpu" else 260, 333, missing=0.0)
    kept = ccc(genotypes, sparse=False, threshold=threshold, device=device)
    if device == "cpu":
        assert_equals_oracle(kept, oracle(genotypes, sparse=False, threshold=threshold), threshold)
    else:
        assert_same(ccc(genotypes, sparse=False, threshold=threshold), kept)


def test_combined_threshold_passes_ll_and_hh_together():
    limits = Threshold.parse("9,9,9,0.5", 2)
    passed = limits.passed(np.array([[0.3, 0.9, 0.9, 0.3], [0.6, 0, 0, 0.0], [0.2, 0, 0, 0.2]]), 2)
    assert passed.tolist() == [[True, False, False, True], [False] * 4, [False] * 4]
    index, bits, value = reference_entries(np.array([[0, 1], [0, 2], [1, 2]]), np.array(
        [[0.3, 0.9, 0.9, 0.3], [0.6, 0, 0, 0.0], [0.2, 0, 0, 0.2]]), 2, (9, 9, 9), 0.5)  # fmt: skip
    assert index.tolist() == [[0, 1], [0, 1]] and bits.tolist() == [[0, 0], [1, 1]]


def test_checksum_is_independent_of_blocking(rng):
    from seqcompare.allpairs import SerialExecutor, run
    from seqcompare.ccc.reductions import Checksum as ChecksumReduction
    from seqcompare.ccc.work import CCCWork

    genotypes = random_genotypes(rng, 40, 130)
    reference = ccc(genotypes)
    codes = Genotypes.from_counts(genotypes).codes
    for block_items in (1, 7, 40, 1000):
        work = CCCWork(codes, Metric(), 2, "blas", block_items=block_items)
        assert len(work.parts("cpu")) >= (2 if block_items < 40 else 1)
        assert run(work, ChecksumReduction(2), SerialExecutor()).total == reference.checksum.total
    # and it does change when one value changes
    changed = genotypes.copy()
    changed[3, 5] = (changed[3, 5] + 1) % 3
    assert ccc(changed).checksum.total != reference.checksum.total


def test_gpu_vector_factors_equal_comets_frequencies(rng):
    """The per-vector factors the GPU kernels read are made on the host: CoMet's frequencies, from scratch."""
    from seqcompare.ccc.gpu import vector_factors

    for metric_name, sparse, way in [("ccc", True, 2), ("ccc", True, 3), ("ccc", False, 2), ("duo", True, 3),
                                     ("duo", False, 3), ("duo", True, 2)]:  # fmt: skip
        metric = Metric(metric_name, sparse)
        counted = metric.counted_bits
        defined = rng.integers(0, 50, 9)
        defined[2] = 0
        ones = np.array([rng.integers(0, counted * c + 1) for c in defined])
        if not sparse:
            defined[:] = 50
        freq, weight, recip_sum = vector_factors(defined, ones, metric, way)
        for v in range(9):
            c, s1 = int(defined[v]), int(ones[v])
            for bit, copies in ((0, counted * c - s1), (1, s1)):
                got = freq[2 * v + bit]
                if c == 0:
                    assert np.isnan(got)
                    continue
                if sparse and way == 2:  # the kernels' screens only: s_b / (C c)
                    expected = copies / (counted * c)
                else:
                    expected = ((1.0 / counted) * (1.0 / c)) * copies
                assert got == expected and weight[2 * v + bit] == 1.0 - metric.param * expected
        assert recip_sum == (0.0 if sparse else (1.0 / counted**way) * (1.0 / 50))


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


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("way", [2, 3])
def test_real_1kg_genotypes_equal_the_oracle(kg, device, way):
    rows = list(range(0, 4294, 4294 // (24 if way == 2 else 9)))
    chosen = subset(kg, rows)
    for sparse in (True, False):
        fast = ccc(chosen, way=way, sparse=sparse, keep_tables=True, device=device)
        assert_equals_oracle(fast, oracle(chosen, way, "ccc", sparse))
    if device == "cuda":  # hundreds of vectors, thresholded on the device, against the CPU
        many = subset(kg, list(range(700)))
        assert_same(ccc(many, threshold=0.6), ccc(many, threshold=0.6, device="cuda"))


@pytest.mark.parametrize("device", DEVICES)
def test_real_haploid_sarscov2_duo_equals_the_oracle(device):
    from seqcompare.io.genotypes import read_vcf

    chosen = subset(read_vcf(SARS_VCF), list(range(0, 404, 13)))
    assert chosen.ploidy == 1
    fast = ccc(chosen, metric="duo", keep_tables=True, device=device)
    assert_equals_oracle(fast, oracle(chosen, 2, "duo"))


@pytest.mark.parametrize("device", DEVICES)
def test_small_and_edge_inputs(rng, device):
    for n, m in [(1, 5), (2, 1), (3, 0), (4, 64)]:
        g = random_genotypes(rng, n, m)
        for way in (2, 3):
            assert_equals_oracle(ccc(g, way=way, keep_tables=True, device=device), oracle(g, way))
    all_missing = np.full((5, 70), -1)
    kept = ccc(all_missing, threshold=-1.0, device=device)
    assert_equals_oracle(kept, oracle(all_missing, threshold=-1.0), -1.0)
    assert len(kept.entry_value) == 40 and not kept.entry_value.any()


@pytest.mark.gpu
def test_gpu_several_row_blocks_and_pivot_batches(rng, monkeypatch):
    import seqcompare.ccc.gpu as gpu_ccc

    g = random_genotypes(rng, 250, 300)
    cpu = [ccc(g, threshold=0.0), ccc(g, keep_tables=True), ccc(g[:70, :100], way=3, threshold=0.2)]
    monkeypatch.setattr(gpu_ccc, "_BLOCK_CELLS", 128 * 256)  # 128-row blocks over 256 columns
    monkeypatch.setattr(gpu_ccc, "_PIVOT_BATCH_BYTES", 1)  # one pivot per batch
    gpu = [ccc(g, threshold=0.0, device="cuda"), ccc(g, keep_tables=True, device="cuda"),
           ccc(g[:70, :100], way=3, threshold=0.2, device="cuda")]  # fmt: skip
    for one, other in zip(cpu, gpu):
        assert_same(one, other)


def run_cli(*args):
    return run_command("ccc", *args)


@pytest.mark.slow
def test_cli_threshold_tsv_names_snps_and_alleles(tmp_path):
    from seqcompare.io.genotypes import read_vcf

    # The real file's header, its first 500 records and both of its records that are not biallelic SNPs (#899 and
    # #4096): the whole file's CCC takes 6 s on two cores, and every line checked here is in this part of it.
    kept = {*range(1, 501), *range(895, 905), *range(4090, 4100)}
    with gzip.open(KG_VCF, "rt") as handle:
        lines = handle.readlines()
    header = [line for line in lines if line.startswith("#")]
    records = [line for line in lines if not line.startswith("#")]
    part = tmp_path / "part.vcf.gz"
    with gzip.open(part, "wt") as handle:
        handle.writelines(header + [line for number, line in enumerate(records, 1) if number in kept])
    out = tmp_path / "entries.tsv"
    done = run_cli(str(part), "--threshold", "0.7", "--checksum", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "skipped 2 records that are not biallelic SNPs" in done.stderr and "checksum " in done.stderr
    lines = out.read_text().splitlines()
    assert lines[0] == "snp_i\tallele_i\tsnp_j\tallele_j\tvalue"
    kg = read_vcf(str(part))
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


@pytest.mark.parametrize("way", [2, 3])
@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
def test_compiled_tables_and_values_equal_numpys_and_the_oracle(rng, monkeypatch, kg, way, metric, sparse):
    # Large CPU problems make their blocks' tables and values in compiled passes: bit for bit NumPy's formulas
    # and the oracle, including empty tables, vectors without a defined field and NaN frequencies.
    from seqcompare.ccc import cpu
    from seqcompare.ccc.formulas import Metric, values

    monkeypatch.setattr(cpu, "COMPILED_MIN_ITEMS", 0)
    chosen = subset(kg, list(range(0, 4294, 4294 // (24 if way == 2 else 9))))
    for genotypes in (random_genotypes(rng, 13, 97, metric, missing=0.4 if sparse else 0), chosen):
        fast = ccc(genotypes, way=way, metric=metric, sparse=sparse, keep_tables=True)
        assert_equals_oracle(fast, oracle(genotypes, way, metric, sparse))
    # Several row blocks: the pairs of each block start at its first row.
    from seqcompare.allpairs import SerialExecutor, run
    from seqcompare.ccc.reductions import Values
    from seqcompare.ccc.work import CCCWork

    genotypes = random_genotypes(rng, 40, 130, metric, missing=0.2 if sparse else 0)
    codes = Genotypes.from_counts(genotypes).codes
    genotypes = genotypes[:14] if way == 3 else genotypes
    work = CCCWork(codes[: len(genotypes)], Metric(metric, sparse), way, "blas", block_items=7)
    assert len(work.parts("cpu")) > 2
    index, blocked_values, blocked_tables = run(work, Values(way, keep_tables=True), SerialExecutor())
    expected_index, expected_tables, expected_values = oracle(genotypes, way, metric, sparse)
    assert np.array_equal(index, expected_index) and np.array_equal(blocked_tables, expected_tables)
    assert np.array_equal(blocked_values, expected_values)
    table = rng.integers(0, 5, (3000,) + (2,) * way)
    table[:40] = 0
    defined = [rng.integers(0, 4, 3000) for _ in range(way)]
    ones = [np.minimum(rng.integers(0, 9, 3000), 2 * c) for c in defined]
    chosen_metric = Metric(metric, sparse)
    expected = values(table, defined, ones, chosen_metric)
    got = cpu.block_values(table, defined, ones, chosen_metric, compiled=True)
    assert np.isnan(expected).sum() == np.isnan(got).sum()
    assert np.array_equal(got.view(np.uint64), expected.view(np.uint64))
