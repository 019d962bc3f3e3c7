"""The Dask engine against the single-process one: identical results with 1, 2 and 4 workers, and when a worker
is killed mid-run (LocalClusters of worker processes on this machine)."""

import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from conftest import DATA, random_alignment

import seqcompare.distributed as seqcompare_distributed
from seqcompare.ccc.api import ccc
from seqcompare.hamming.api import hamming, hamming_knn, hamming_pairs


def quiet(_):
    pass


@pytest.fixture(scope="module", params=[1, 2, 4], ids=lambda n: f"{n}-workers")
def client(request):
    # One core per worker, whatever this machine has: the tests are about results, not speed.
    dask_client = seqcompare_distributed.connect(workers=request.param, threads=request.param, log=quiet)
    yield dask_client
    seqcompare_distributed.close(dask_client)


def test_hamming_matrix_pairs_knn_and_npy_are_identical(client, rng, tmp_path):
    rows = random_alignment(rng, 157, 333)  # edges not multiples of the task tile; ambiguity codes, gaps, case
    sequences = [row.tobytes().decode() for row in rows]
    assert np.array_equal(hamming(sequences, client=client, tile_size=40), hamming(sequences))
    for got, expected in zip(hamming_pairs(sequences, max_dist=150, client=client, tile_size=40),
                             hamming_pairs(sequences, max_dist=150), strict=True):  # fmt: skip
        assert np.array_equal(got, expected)
    for got, expected in zip(hamming_knn(sequences, k=7, client=client, tile_size=40), hamming_knn(sequences, k=7),
                             strict=True):  # fmt: skip
        assert np.array_equal(got, expected)
    left, right = sequences[:60], sequences[60:]
    assert np.array_equal(hamming(left, right, client=client, tile_size=25), hamming(left, right))
    hamming(sequences, out=tmp_path / "local.npy")
    hamming(sequences, out=tmp_path / "dask.npy", client=client, tile_size=40)
    assert (tmp_path / "dask.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["dask.npy", "local.npy"]


def test_hamming_edge_cases(client):
    assert hamming(["ACGT"], client=client).tolist() == [[0]]
    indices, distances = hamming_knn(["ACGT", "ACGA"], k=5, client=client)
    assert indices.tolist() == [[1], [0]] and distances.tolist() == [[1], [1]]
    all_n = ["N" * 70, "N" * 70, "A" * 70]
    assert np.array_equal(hamming(all_n, client=client, tile_size=1), hamming(all_n))


@pytest.mark.parametrize("way", [2, 3])
def test_ccc_is_identical(client, rng, way):
    counts = rng.integers(0, 3, (61 if way == 2 else 23, 90))
    counts[rng.random(counts.shape) < 0.1] = -1
    full = ccc(counts, way=way, histogram=8, comet_checksum=True)
    distributed = ccc(counts, way=way, histogram=8, client=client, comet_checksum=True)
    assert str(distributed.checksum) == str(full.checksum)
    assert str(distributed.comet_checksum) == str(full.comet_checksum) and full.comet_checksum.total > 0
    assert np.array_equal(distributed.index, full.index) and np.array_equal(distributed.values, full.values)
    assert np.array_equal(distributed.histogram["counts"], full.histogram["counts"])
    threshold = 0.5 if way == 2 else 0.21  # about the top 10% of values
    entries = ccc(counts, way=way, threshold=threshold, client=client, comet_checksum=True)
    expected = ccc(counts, way=way, threshold=threshold, comet_checksum=True)
    assert str(entries.checksum) == str(expected.checksum) and len(expected.entry_value) > 0
    assert str(entries.comet_checksum) == str(expected.comet_checksum)
    assert np.array_equal(entries.entry_index, expected.entry_index)
    assert np.array_equal(entries.entry_bits, expected.entry_bits)
    assert np.array_equal(entries.entry_value, expected.entry_value)


def killing_after(results: int, monkeypatch):
    """Make the next distributed run SIGKILL one worker process once ``results`` tasks have come back."""
    original = seqcompare_distributed._run_tasks

    def run_tasks(client, blocks, tasks, consume, *priorities):
        seen = []

        def consume_and_kill(task_id, result):
            seen.append(task_id)
            if len(seen) == results:
                victim = min(client.run(os.getpid, on_error="ignore").values())
                os.kill(victim, signal.SIGKILL)
            consume(task_id, result)

        client.wait_for_workers(2)  # the worker killed in a previous run is back
        original(client, blocks, tasks, consume_and_kill, *priorities)
        assert len(seen) == len(tasks)  # every task's result handed on exactly once

    monkeypatch.setattr(seqcompare_distributed, "_run_tasks", run_tasks)


@pytest.fixture(params=["shared-memory blocks", "scattered blocks"])
def fresh_pair(request):
    dask_client = seqcompare_distributed.connect(workers=2, threads=2, log=quiet)
    if request.param == "scattered blocks":  # as on a cluster of other machines (--scheduler)
        dask_client._seqcompare_shared = None
    yield dask_client
    seqcompare_distributed.close(dask_client)


def test_a_killed_worker_loses_and_duplicates_nothing(fresh_pair, rng, tmp_path, monkeypatch):
    rows = random_alignment(rng, 400, 200)
    expected = hamming_pairs(rows, max_dist=120)
    killing_after(5, monkeypatch)
    got = hamming_pairs(rows, max_dist=120, client=fresh_pair, tile_size=25)
    assert all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True)) and len(expected[0]) > 0
    killing_after(20, monkeypatch)
    hamming(rows, out=tmp_path / "dask.npy", client=fresh_pair, tile_size=25)
    hamming(rows, out=tmp_path / "local.npy")
    assert (tmp_path / "dask.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    counts = rng.integers(0, 3, (300, 64))
    killing_after(3, monkeypatch)
    result = ccc(counts, way=2, threshold=0.4, client=fresh_pair)
    assert str(result.checksum) == str(ccc(counts, way=2, threshold=0.4).checksum)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "seqcompare", *args], capture_output=True, text=True)


def test_cli_cluster_local_writes_the_same_bytes(tmp_path):
    fasta = os.path.join(DATA, "sarscov2_338.fasta.gz")
    for extra in ([], ["--cluster", "local", "--workers", "2", "-j", "2"]):
        done = run_cli("hamming", fasta, "--max-dist", "3", "-o", str(tmp_path / f"pairs{len(extra)}.tsv"), *extra)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "pairs0.tsv").read_bytes() == (tmp_path / "pairs6.tsv").read_bytes()
    assert "dashboard http" in done.stderr
    vcf = os.path.join(DATA, "ccc_example", "sarscov2_422.vcf.gz")
    for extra in ([], ["--cluster", "local", "--workers", "2", "-j", "2"]):
        done = run_cli("ccc", vcf, "--threshold", "0.6", "-o", str(tmp_path / f"ccc{len(extra)}.tsv"), *extra)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "ccc0.tsv").read_bytes() == (tmp_path / "ccc6.tsv").read_bytes()
    done = run_cli("hamming", fasta, "--workers", "2")
    assert done.returncode == 1 and done.stderr.strip() == (
        "seqcompare: error: --workers sizes a Dask cluster: add --cluster local"
    )


def test_an_unreachable_scheduler_is_a_one_line_error():
    from seqcompare.errors import InputError

    with pytest.raises(InputError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        seqcompare_distributed.connect("tcp://127.0.0.1:9", timeout="1s", log=quiet)


def _entry(nbytes: int) -> dict:
    return {"source": np.zeros(nbytes, np.uint8), "n": 1}


def test_blocks_kept_on_a_gpu_go_least_recently_used_first_and_by_run(monkeypatch):
    from seqcompare.hamming.gpu import ResidentBlocks

    monkeypatch.setenv("SEQCOMPARE_GPU_RESIDENT_BYTES", "300")
    kept = ResidentBlocks()
    for block in range(3):
        kept.keep(0, ("run-a", block), _entry(100))
    assert kept.take(0, ("run-a", 0)) is not None  # now the most recently used
    kept.keep(0, ("run-a", 3), _entry(100))  # over budget: block 1 goes
    assert kept.take(0, ("run-a", 1)) is None
    assert [kept.take(0, ("run-a", b)) is not None for b in (0, 2, 3)] == [True, True, True]
    assert kept.take(1, ("run-a", 0)) is None  # another device
    kept.keep(0, ("run-a", 4), _entry(301))  # larger than the budget: not kept, nothing else dropped
    assert len(kept) == 3
    kept.keep(0, ("run-b", 0), _entry(10))  # a new run: the old run's blocks go
    assert len(kept) == 1 and kept.take(0, ("run-b", 0)) is not None
    kept.release("run-b")
    assert len(kept) == 0 and kept.hits == 5 and kept.misses == 2


def test_shared_memory_files_are_removed_after_each_run(client, rng):
    import glob

    def files():
        return set(glob.glob(os.path.join(client._seqcompare_shared, "seqcompare-*.bin")))

    before = files()
    rows = random_alignment(rng, 300, 150)
    hamming(rows, client=client, tile_size=100)
    ccc(rng.integers(0, 3, (200, 40)), client=client)
    seqcompare_distributed.finish_removals()
    assert files() <= before


def test_a_scatter_that_meets_a_departing_worker_is_tried_again(client, rng, monkeypatch):
    from distributed.comm.core import CommClosedError

    rows = random_alignment(rng, 200, 90)
    scatter, failures = client.scatter, []

    def flaky_scatter(*args, **kwargs):
        if not failures:
            failures.append(1)
            raise CommClosedError("the worker went away")
        return scatter(*args, **kwargs)

    monkeypatch.setattr(client, "scatter", flaky_scatter)
    monkeypatch.setattr(client, "_seqcompare_shared", None)  # blocks are scattered, as to a remote cluster
    assert np.array_equal(hamming(rows, client=client, tile_size=70), hamming(rows))
    assert failures == [1]
