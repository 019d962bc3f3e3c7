"""The Dask engine with one worker per GPU (each pinned to its GPU) gives the CPU's results exactly."""

import numpy as np
import pytest
from conftest import random_alignment

# Without the [distributed] extra these tests are skipped, not errors.
pytest.importorskip("distributed")

import seqcompare.distributed as seqcompare_distributed  # noqa: E402
from seqcompare.ccc.api import ccc  # noqa: E402
from seqcompare.hamming.api import hamming, hamming_knn, hamming_pairs  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def gpu_client():
    client = seqcompare_distributed.connect(device="cuda", log=lambda _: None)
    yield client
    seqcompare_distributed.close(client)


def test_every_worker_has_its_own_gpu(gpu_client):
    import os

    visible = gpu_client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"])
    assert sorted(visible.values()) == sorted(set(visible.values()))


def test_hamming_on_gpu_workers_equals_the_cpu(gpu_client, rng, tmp_path):
    rows = random_alignment(rng, 1500, 700, alphabet=b"ACGTN-")
    for method in ("auto", "matrix"):
        got = hamming(rows, client=gpu_client, device="cuda", method=method, tile_size=500)
        assert np.array_equal(got, hamming(rows))
    for got, expected in zip(hamming_pairs(rows, max_dist=400, client=gpu_client, device="cuda", tile_size=500),
                             hamming_pairs(rows, max_dist=400), strict=True):  # fmt: skip
        assert np.array_equal(got, expected)
    for got, expected in zip(hamming_knn(rows, k=4, client=gpu_client, device="cuda", tile_size=500),
                             hamming_knn(rows, k=4), strict=True):  # fmt: skip
        assert np.array_equal(got, expected)
    hamming(rows, out=tmp_path / "gpu.npy", client=gpu_client, device="cuda", tile_size=500)
    assert np.array_equal(np.load(tmp_path / "gpu.npy"), hamming(rows))


@pytest.mark.parametrize("way, n", [(2, 1100), (3, 150)])
def test_ccc_on_gpu_workers_equals_the_cpu(gpu_client, rng, way, n):
    counts = rng.integers(0, 3, (n, 300))
    counts[rng.random(counts.shape) < 0.05] = -1
    threshold = 0.5 if way == 2 else 0.21
    got = ccc(counts, way=way, threshold=threshold, client=gpu_client, device="cuda")
    expected = ccc(counts, way=way, threshold=threshold)
    assert str(got.checksum) == str(expected.checksum) and len(expected.entry_value) > 0
    assert np.array_equal(got.entry_index, expected.entry_index)
    assert np.array_equal(got.entry_bits, expected.entry_bits)
    np.testing.assert_allclose(got.entry_value, expected.entry_value, rtol=1e-12)
    full = ccc(counts[: n // 2], way=way, client=gpu_client, device="cuda")
    assert str(full.checksum) == str(ccc(counts[: n // 2], way=way).checksum)


def _kept_blocks():
    import sys

    gpu = sys.modules.get("seqcompare.hamming.gpu")
    return (0, 0) if gpu is None else (gpu.RESIDENT.hits, len(gpu.RESIDENT))


def _set_kept_budget(budget):
    from seqcompare.hamming.gpu import RESIDENT

    RESIDENT._budgets = {} if budget is None else {0: budget}


@pytest.mark.parametrize("budget", [None, 1, 2_500_000])
def test_gpu_workers_keep_blocks_between_tiles(gpu_client, rng, budget):
    """Workers reuse row blocks on their GPU across tiles (or, with no room, upload them again): the same
    pairs and matrix either way, and nothing stays on the GPU after the run."""
    rows = random_alignment(rng, 2300, 1900, alphabet=b"ACGTN-")
    gpu_client.run(_set_kept_budget, budget)
    try:
        before = gpu_client.run(_kept_blocks)
        pairs = hamming_pairs(rows, max_dist=1300, client=gpu_client, device="cuda", tile_size=300)
        matrix = hamming(rows, client=gpu_client, device="cuda", tile_size=300)
        after = gpu_client.run(_kept_blocks)
    finally:
        gpu_client.run(_set_kept_budget, None)
    for got, expected in zip(pairs, hamming_pairs(rows, max_dist=1300), strict=True):
        assert np.array_equal(got, expected)
    assert np.array_equal(matrix, hamming(rows))
    hits = sum(after[w][0] - before[w][0] for w in after)
    assert all(count == 0 for _, count in after.values())
    if budget is None:  # room for every block: each worker's later tiles found theirs
        assert hits > 0
    elif budget == 1:  # room for none: every tile uploaded its blocks
        assert hits == 0
