"""CCC/DUO on the GPU (1-bit tensor cores) against the CPU path and the oracle: values equal bit for bit."""

import os

import numpy as np
import pytest
from conftest import DATA

from seqcompare.ccc.api import ccc

pytestmark = pytest.mark.gpu


def random_genotypes(rng, n, m, metric="ccc", missing=0.1):
    ploidy = 2 if metric == "ccc" else 1
    g = rng.integers(0, ploidy + 1, size=(n, m))
    g[rng.random((n, m)) < missing] = -1
    return g


def assert_same(cpu, gpu):
    for name in ("index", "values", "tables", "entry_index", "entry_bits", "entry_value"):
        a, b = getattr(cpu, name), getattr(gpu, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert np.array_equal(a, b), name
    assert cpu.checksum.total == gpu.checksum.total


@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n_fields", [1, 63, 64, 65, 255, 257, 1100])
def test_full_results_equal_the_cpu(rng, metric, sparse, n_fields):
    g = random_genotypes(rng, 131, n_fields, metric, 0.2 if sparse else 0.0)
    options = dict(metric=metric, sparse=sparse, keep_tables=True)
    assert_same(ccc(g, method="blas", **options), ccc(g, device="cuda", **options))


@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("threshold", ["0.5", "0.3,0.6,0.4,0.9"])
def test_thresholded_entries_equal_the_cpu(rng, metric, sparse, threshold):
    g = random_genotypes(rng, 300, 517, metric, 0.15 if sparse else 0.0)
    options = dict(metric=metric, sparse=sparse, threshold=threshold)
    assert_same(ccc(g, method="blas", **options), ccc(g, device="cuda", **options))


def test_small_and_edge_inputs(rng):
    for n, m in [(1, 5), (2, 1), (3, 0), (129, 64)]:
        g = random_genotypes(rng, n, m)
        assert_same(ccc(g, method="reference", keep_tables=True), ccc(g, device="cuda", keep_tables=True))
    all_missing = np.full((5, 70), -1)
    assert_same(ccc(all_missing, threshold=-1.0), ccc(all_missing, threshold=-1.0, device="cuda"))


def test_several_row_blocks_and_many_entries(rng, monkeypatch):
    import seqcompare.ccc.gpu as gpu_ccc

    monkeypatch.setattr(gpu_ccc, "_BLOCK_CELLS", 128 * 256)  # 128-row blocks over 256 columns
    g = random_genotypes(rng, 250, 300)
    assert_same(ccc(g, method="blas", threshold=0.0), ccc(g, device="cuda", threshold=0.0))
    assert_same(ccc(g, method="blas", keep_tables=True), ccc(g, device="cuda", keep_tables=True))


def test_real_vcf_equals_the_cpu():
    from seqcompare.io.genotypes import read_vcf

    genotypes = read_vcf(os.path.join(DATA, "ccc_example", "1kg_chr1_2504.vcf.gz"))
    subset = type(genotypes)(genotypes.codes[:700], genotypes.names[:700], genotypes.alleles[:700],
                             genotypes.samples, 2, genotypes.source)  # fmt: skip
    assert_same(ccc(subset, method="blas", threshold=0.6), ccc(subset, device="cuda", threshold=0.6))


@pytest.mark.parametrize("threshold", ["-1", "0.55", "0.2,0.5,0.3,0.8", "0.6,0.6,0.6,0.0"])
def test_dense_thresholds_through_the_float_screen(rng, threshold):
    g = random_genotypes(rng, 260, 333, missing=0.0)
    options = dict(sparse=False, threshold=threshold)
    assert_same(ccc(g, method="blas", **options), ccc(g, device="cuda", **options))


@pytest.mark.parametrize("metric", ["ccc", "duo"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("n,m", [(3, 1), (40, 65), (131, 200)])
def test_3way_full_results_equal_the_cpu(rng, metric, sparse, n, m):
    g = random_genotypes(rng, n, m, metric, 0.2 if sparse else 0.0)
    options = dict(way=3, metric=metric, sparse=sparse, keep_tables=True)
    assert_same(ccc(g, method="blas", **options), ccc(g, device="cuda", **options))


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("threshold", ["0.3", "0.1,0.2,0.25,0.3,0.5", "-1"])
def test_3way_thresholds_equal_the_cpu(rng, sparse, threshold, monkeypatch):
    g = random_genotypes(rng, 150, 301, "ccc", 0.1 if sparse else 0.0)
    options = dict(way=3, sparse=sparse, threshold=threshold)
    assert_same(ccc(g, method="blas", **options), ccc(g, device="cuda", **options))


def test_3way_several_pivot_batches(rng, monkeypatch):
    g = random_genotypes(rng, 70, 100)
    cpu = ccc(g, way=3, threshold=0.2, method="blas")
    import seqcompare.ccc.gpu as gpu_ccc

    monkeypatch.setattr(gpu_ccc, "_PIVOT_BATCH_BYTES", 1)  # one pivot per batch
    assert_same(cpu, ccc(g, way=3, threshold=0.2, device="cuda"))
