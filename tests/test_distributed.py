"""Every command on Dask against one process: identical results with 1, 2 and 4 CPU workers and with one worker
per GPU, and when a worker is SIGKILLed mid-run (LocalClusters of worker processes on this machine)."""

import os
import signal
import sys
import time

import numpy as np
import pytest
from conftest import DATA, random_alignment

# Without the [distributed] extra these tests are skipped, not errors.
pytest.importorskip("distributed")

import seqcompare.distributed as seqcompare_distributed  # noqa: E402
import seqcompare.distributed.executor as dask_executor  # noqa: E402
from seqcompare.align.api import align, dtw  # noqa: E402
from seqcompare.align.costs import Costs  # noqa: E402
from seqcompare.ccc.api import ccc  # noqa: E402
from seqcompare.hamming.api import hamming, hamming_knn, hamming_pairs  # noqa: E402
from seqcompare.scan.api import scan  # noqa: E402
from seqcompare.simulate import simulate_scan  # noqa: E402

EXAMPLE = os.path.join(DATA, "scan_example")
RUN_TASKS = dask_executor.run_tasks


def quiet(_):
    pass


CPU_TWO = pytest.param(("cpu", 2), id="cpu-2-workers")
GPUS = pytest.param(("cuda", None), id="cuda-worker-per-gpu", marks=pytest.mark.gpu)
# The engine's tile and slab tasks run on 1, 2 and 4 workers; what only splits differently (scan chunks, pair
# batches) runs on two workers and on the GPUs, to keep the suite's time.
TWO_WORKERS_AND_GPUS = pytest.mark.parametrize("cluster", [CPU_TWO, GPUS], indirect=True)


@pytest.fixture(scope="module", params=[pytest.param(("cpu", 1), id="cpu-1-worker"), CPU_TWO,
                                        pytest.param(("cpu", 4), id="cpu-4-workers"), GPUS])  # fmt: skip
def cluster(request):
    """``(client, device)``: CPU workers (one core each, whatever this machine has: the tests are about results,
    not speed), or one worker per GPU, each pinned to its GPU."""
    device, workers = request.param
    if device == "cpu":
        dask_client = seqcompare_distributed.connect(workers=workers, threads=workers, log=quiet)
    else:
        dask_client = seqcompare_distributed.connect(device="cuda", log=quiet)
    yield dask_client, device
    seqcompare_distributed.close(dask_client)


def same(got, expected):
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a, b)


def test_hamming_matrix_pairs_knn_and_npy_are_identical(cluster, rng, tmp_path):
    client, device = cluster
    rows = random_alignment(rng, 157, 333)  # edges not multiples of the task tile; ambiguity codes, gaps, case
    sequences = [row.tobytes().decode() for row in rows]
    on = {"client": client, "device": device, "tile_size": 40}
    assert np.array_equal(hamming(sequences, **on), hamming(sequences))
    for method in ("bitpack", "matrix") + (("sparse",) if device == "cpu" else ()):  # sparse: a CPU method
        assert np.array_equal(hamming(sequences, method=method, **on), hamming(sequences))
    same(hamming_pairs(sequences, max_dist=150, **on), hamming_pairs(sequences, max_dist=150))
    same(hamming_knn(sequences, k=7, **on), hamming_knn(sequences, k=7))
    left, right = sequences[:60], sequences[60:]
    assert np.array_equal(hamming(left, right, **{**on, "tile_size": 25}), hamming(left, right))
    hamming(sequences, out=tmp_path / "local.npy")
    hamming(sequences, out=tmp_path / "dask.npy", **on)
    assert (tmp_path / "dask.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["dask.npy", "local.npy"]


def test_hamming_edge_cases(cluster):
    client, device = cluster
    assert hamming(["ACGT"], client=client, device=device).tolist() == [[0]]
    indices, distances = hamming_knn(["ACGT", "ACGA"], k=5, client=client, device=device)
    assert indices.tolist() == [[1], [0]] and distances.tolist() == [[1], [1]]
    all_n = ["N" * 70, "N" * 70, "A" * 70]
    assert np.array_equal(hamming(all_n, client=client, device=device, tile_size=1), hamming(all_n))


@pytest.mark.parametrize("way", [2, 3])
def test_ccc_is_identical(cluster, rng, way):
    client, device = cluster
    counts = rng.integers(0, 3, (61 if way == 2 else 23, 90))
    counts[rng.random(counts.shape) < 0.1] = -1
    full = ccc(counts, way=way, histogram=8, comet_checksum=True)
    distributed = ccc(counts, way=way, histogram=8, client=client, device=device, comet_checksum=True)
    assert str(distributed.checksum) == str(full.checksum)
    assert str(distributed.comet_checksum) == str(full.comet_checksum) and full.comet_checksum.total > 0
    assert np.array_equal(distributed.index, full.index) and np.array_equal(distributed.values, full.values)
    assert np.array_equal(distributed.histogram["counts"], full.histogram["counts"])
    threshold = 0.5 if way == 2 else 0.21  # about the top 10% of values
    entries = ccc(counts, way=way, threshold=threshold, client=client, device=device, comet_checksum=True)
    expected = ccc(counts, way=way, threshold=threshold, comet_checksum=True)
    assert str(entries.checksum) == str(expected.checksum) and len(expected.entry_value) > 0
    assert str(entries.comet_checksum) == str(expected.comet_checksum)
    same((entries.entry_index, entries.entry_bits, entries.entry_value),
         (expected.entry_index, expected.entry_bits, expected.entry_value))  # fmt: skip


def scan_rows(result):
    return list(result.lines(tsv=True, integrity=True))


@TWO_WORKERS_AND_GPUS
@pytest.mark.parametrize("report", ["first", "best", "all"])
def test_scan_is_identical(cluster, report):
    client, device = cluster
    data = simulate_scan(n_signatures=20, signature_length=(20, 300), n_clean=25, n_infected=15, max_per_sample=3,
                         sample_length=(200, 3000), n_ratio=0.1, seed=7)  # fmt: skip
    options = {"report": report, "both_strands": True, "k": 8}
    expected = scan(data.samples, data.signatures, **options)
    got = scan(data.samples, data.signatures, client=client, device=device, **options)
    assert scan_rows(got) == scan_rows(expected) and len(expected) >= 15
    reads, signatures = os.path.join(EXAMPLE, "reads.fastq"), os.path.join(EXAMPLE, "signatures.fasta")
    assert scan_rows(scan(reads, signatures, client=client, device=device, min_score=10)) == scan_rows(
        scan(reads, signatures, min_score=10))  # fmt: skip
    if report == "all":  # coverage: chunks of reads over the workers, the same intervals
        from seqcompare.scan.api import coverage

        for options in ({"kmer": 15}, {"kmer": 12, "max_mismatches": 1, "both_strands": True}):
            expected = coverage(data.samples, data.signatures, **options)
            got = coverage(data.samples, data.signatures, client=client, **options)
            assert all(np.array_equal(a, b) for a, b in zip(got.depth, expected.depth))
            assert np.array_equal(got.carried, expected.carried) and expected.carried.sum() >= 15
    if report == "best":  # approximate scans: the workers verify their own chunks' candidates
        for errors in ({"max_mismatches": 3}, {"max_edits": 2}):
            expected = scan(data.samples, data.signatures, **options, **errors)
            got = scan(data.samples, data.signatures, client=client, device=device, **options, **errors)
            assert scan_rows(got) == scan_rows(expected) and len(expected) >= 15


@TWO_WORKERS_AND_GPUS
def test_align_and_dtw_are_identical(cluster, rng):
    client, device = cluster
    sequences = ["".join(rng.choice(list("ACGTN"), rng.integers(0, 120))) for _ in range(40)]
    for costs in (Costs.edit(), Costs.scores(2, -3, -5, -2)):
        expected = align(sequences, costs=costs)
        got = align(sequences, costs=costs, client=client, device=device)
        assert np.array_equal(got.pairs, expected.pairs) and np.array_equal(got.scores, expected.scores)
    with_cigars = align(sequences[:20], sequences[20:], cigar=True, client=client, device=device)
    assert with_cigars.cigars == align(sequences[:20], sequences[20:], cigar=True).cigars
    for mode in ("local", "infix"):  # the modes: positions, statistics, both strands and CIGARs, batch by batch
        options = {"mode": mode, "both_strands": True, "stats": True, "cigar": True, "costs": Costs.scores(2, -3, -5, -2)}
        expected = align(sequences[:20], sequences[20:], **options)
        got = align(sequences[:20], sequences[20:], client=client, device=device, **options)
        for field in ("pairs", "scores", "positions", "counts", "reverse"):
            assert np.array_equal(getattr(got, field), getattr(expected, field)), field
        assert got.cigars == expected.cigars and expected.reverse.any()
    # a search's hits: every target against every query, each query's best 3
    search = {"mode": "local", "costs": Costs.scores(2, -3, -5, -2), "pairs": "all"}
    expected = align(sequences[:30], sequences[30:], **search).best(3)
    got = align(sequences[:30], sequences[30:], client=client, device=device, **search).best(3)
    for field in ("pairs", "scores", "positions"):
        assert np.array_equal(getattr(got, field), getattr(expected, field)), field
    alone = align(sequences[:30], sequences[30:], client=client, device=device, positions=False, **search).best(3)
    assert np.array_equal(alone.pairs, expected.pairs) and np.array_equal(alone.scores, expected.scores)
    assert alone.positions is None  # a search's scores alone
    signals = [rng.integers(-50, 50, rng.integers(1, 80)) for _ in range(30)]
    for mode in ("full", "subsequence"):
        assert np.array_equal(dtw(signals, mode=mode, client=client, device=device).scores,
                              dtw(signals, mode=mode).scores)  # fmt: skip
    floats = [rng.normal(size=rng.integers(1, 60)) for _ in range(20)]
    assert np.array_equal(dtw(floats, client=client, device=device).scores, dtw(floats).scores)


@TWO_WORKERS_AND_GPUS
def test_the_developer_guides_reduction_runs_on_workers(cluster, monkeypatch):
    from conftest import developing_example

    client, device = cluster
    example = developing_example(monkeypatch)
    on_workers = example["run_hamming"](example["encoded"], example["DistanceHistogram"](50), client=client,
                                        device=device, tile_size=100)  # fmt: skip
    assert on_workers.tolist() == example["counts"].tolist()


def test_a_failed_task_is_raised_in_the_caller_alone(cluster):
    """The task's exception comes back to the caller, and the worker logs no traceback of its own (the one that
    a task still running when its run is interrupted would print, its files gone)."""
    import operator

    client, _ = cluster
    with pytest.raises(IndexError, match="list index out of range"):
        list(RUN_TASKS(client, [np.zeros(3)], {0: (operator.getitem, [0], 5)}))
    logs = client.get_worker_logs()
    assert logs and not any("Compute Failed" in message for lines in logs.values() for _, message in lines)


# -- a worker SIGKILLed mid-run costs a rerun of its tasks, never a lost or doubled result ------------------------


_KILLED: dict = {}  # id(client) -> addresses of the workers killed in its runs


def killing_after(results: int, monkeypatch, client):
    """Make the next distributed run SIGKILL one worker process once ``results`` tasks have come back, and check
    that every task's result is still handed on exactly once (and that the kill came before the last one)."""
    original = RUN_TASKS
    # The worker killed in a previous run is back before the run is cut into tasks (by the workers it sees): the
    # scheduler may still list the dead worker for a moment after its nanny starts another, so two workers are
    # not enough; none of them may be a killed one.
    killed = _KILLED.setdefault(id(client), set())
    deadline = time.monotonic() + 60
    while True:
        workers = set(client.scheduler_info()["workers"])
        if len(workers) >= 2 and not workers & killed:
            break
        assert time.monotonic() < deadline, f"the workers did not come back: {sorted(workers)}"
        time.sleep(0.05)

    def run_tasks(client, blocks, tasks, priorities=None, workers=None):
        seen = []
        for task_id, result in original(client, blocks, tasks, priorities, workers):
            seen.append(task_id)
            if len(seen) == results:
                address, victim = min(client.run(os.getpid, on_error="ignore").items(), key=lambda item: item[1])
                killed.add(address)
                os.kill(victim, signal.SIGKILL)
            yield task_id, result
        assert sorted(seen) == sorted(tasks) and len(seen) > results

    monkeypatch.setattr(dask_executor, "run_tasks", run_tasks)


@pytest.fixture(params=["shared-memory blocks", "scattered blocks"])
def fresh_pair(request):
    """Two workers of their own for each test that SIGKILLs one. (Shared between the two tests, a killed worker
    once did not come back within a minute in a fresh clone's CI run: a cluster a test each.)"""
    dask_client = seqcompare_distributed.connect(workers=2, threads=2, log=quiet)
    if request.param == "scattered blocks":  # as on a cluster of other machines (--scheduler)
        dask_client._seqcompare_shared = None
    yield dask_client
    seqcompare_distributed.close(dask_client)


@pytest.mark.slow
def test_a_killed_worker_loses_and_duplicates_nothing(fresh_pair, rng, tmp_path, monkeypatch):
    rows = random_alignment(rng, 400, 200)
    expected = hamming_pairs(rows, max_dist=120)
    killing_after(5, monkeypatch, fresh_pair)
    got = hamming_pairs(rows, max_dist=120, client=fresh_pair, tile_size=25)
    same(got, expected)
    assert len(expected[0]) > 0
    if fresh_pair._seqcompare_shared is not None:
        return  # shared-memory blocks outlive a worker (the easier case): one kill; scattered blocks take them all
    # Shares dealt up front (as to GPU workers): the dead worker's share goes to the others.
    with monkeypatch.context() as dealt:
        dealt.setattr(dask_executor, "_balanced_by_default", lambda device: True)
        killing_after(5, dealt, fresh_pair)
        same(hamming_pairs(rows, max_dist=120, client=fresh_pair, tile_size=25), expected)
    killing_after(20, monkeypatch, fresh_pair)
    hamming(rows, out=tmp_path / "dask.npy", client=fresh_pair, tile_size=25)
    hamming(rows, out=tmp_path / "local.npy")
    assert (tmp_path / "dask.npy").read_bytes() == (tmp_path / "local.npy").read_bytes()
    counts = rng.integers(0, 3, (300, 64))
    killing_after(1, monkeypatch, fresh_pair)
    result = ccc(counts, way=2, threshold=0.4, client=fresh_pair)
    assert str(result.checksum) == str(ccc(counts, way=2, threshold=0.4).checksum)


@pytest.mark.slow
@pytest.mark.parametrize("fresh_pair", ["scattered blocks"], indirect=True)  # the blocks die with the worker
def test_a_killed_worker_costs_scan_align_and_dtw_nothing(fresh_pair, rng, monkeypatch):
    # Each command's run survives a kill; shared-memory blocks, which outlive a worker, are the engine's easier
    # case and are killed under in the test above.
    data = simulate_scan(n_signatures=20, signature_length=(20, 300), n_clean=40, n_infected=20, max_per_sample=2,
                         sample_length=(2000, 6000), n_ratio=0.1, seed=5)  # fmt: skip
    expected = scan(data.samples, data.signatures, report="all")
    killing_after(2, monkeypatch, fresh_pair)
    assert scan_rows(scan(data.samples, data.signatures, report="all", client=fresh_pair)) == scan_rows(expected)
    sequences = ["".join(rng.choice(list("ACGT"), rng.integers(200, 400))) for _ in range(60)]
    killing_after(2, monkeypatch, fresh_pair)
    assert np.array_equal(align(sequences, client=fresh_pair).scores, align(sequences).scores)
    signals = [rng.integers(0, 100, rng.integers(100, 300)) for _ in range(50)]
    killing_after(2, monkeypatch, fresh_pair)
    assert np.array_equal(dtw(signals, client=fresh_pair).scores, dtw(signals).scores)


# -- the command line ---------------------------------------------------------------------------------------


def assert_same_bytes_on_a_cluster(capsys, tmp_path, command, *args, cluster_options):
    from seqcompare.cli import main

    outputs = []
    for extra in ([], cluster_options):
        target = tmp_path / f"{command}{len(extra)}.out"
        assert main([command, *args, "-o", str(target), *extra]) == 0
        outputs.append(target.read_bytes())
    assert outputs[0] == outputs[1] and outputs[0].count(b"\n") > 3
    return capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("cluster", [CPU_TWO], indirect=True)
def test_cli_cluster_local_writes_the_same_bytes(capsys, tmp_path, cluster):
    # One command starts its own cluster (--cluster local); the others join this module's cluster through
    # --scheduler, the way a user joins a running one (each local cluster would cost seconds to start).
    from seqcompare.cli import main

    local = ["--cluster", "local", "--workers", "2", "-j", "2"]
    log = assert_same_bytes_on_a_cluster(capsys, tmp_path, "hamming", os.path.join(DATA, "sarscov2_338.fasta.gz"),
                                         "--max-dist", "3", cluster_options=local)  # fmt: skip
    assert "dashboard http" in log
    joined = ["--scheduler", cluster[0].scheduler.address]
    assert_same_bytes_on_a_cluster(capsys, tmp_path, "ccc", os.path.join(DATA, "ccc_example", "sarscov2_422.vcf.gz"),
                                   "--threshold", "0.6", cluster_options=joined)  # fmt: skip
    reads, signatures = os.path.join(EXAMPLE, "reads.fastq"), os.path.join(EXAMPLE, "signatures.fasta")
    assert_same_bytes_on_a_cluster(capsys, tmp_path, "scan", reads, signatures, "--both-strands", "--tsv",
                                   cluster_options=joined)  # fmt: skip
    fasta = tmp_path / "x.fa"
    rng = np.random.default_rng(3)
    fasta.write_text("".join(f">s{k}\n{''.join(rng.choice(list('ACGT'), 50 + k))}\n" for k in range(12)))
    assert_same_bytes_on_a_cluster(capsys, tmp_path, "align", str(fasta), "--all-vs-all", "--cigar",
                                   cluster_options=joined)  # fmt: skip
    signals = os.path.join(DATA, "dtw_example", "gunpoint_train.csv")
    assert_same_bytes_on_a_cluster(capsys, tmp_path, "dtw", signals, "--skip-columns", "1", "--window", "5",
                                   cluster_options=joined)  # fmt: skip
    assert main(["hamming", os.path.join(DATA, "sarscov2_338.fasta.gz"), "--workers", "2"]) == 1
    assert capsys.readouterr().err.strip() == "seqcompare: error: --workers sizes a Dask cluster: add --cluster local"
    assert main(["scan", reads, signatures, "--method", "reference", "--cluster", "local"]) == 1
    assert "--method reference runs in this process only" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_one_line_error():
    from seqcompare.errors import InputError

    with pytest.raises(InputError, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        seqcompare_distributed.connect("tcp://127.0.0.1:9", timeout="1s", log=quiet)


# -- where blocks live ------------------------------------------------------------------------------------------


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


def test_a_task_prepares_once_the_task_before_it_has_queued_its_kernels():
    """Through a device's gate, a second task prepares only after the first, prepared and waiting for its turn,
    has queued its kernels; and a task that gave up (queued() in a finally) does not hold the next one back."""
    import threading

    from seqcompare.hamming.gpu import DeviceGate

    gate, events = DeviceGate(), []
    with gate.preparing():
        events.append("first prepared")

    def second():
        with gate.preparing():
            events.append("second prepared")

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.3)
    events.append("first queued")
    gate.queued()
    thread.join(5)
    assert events == ["first prepared", "first queued", "second prepared"]
    gate.queued()  # the second gave up before its turn
    began = time.perf_counter()
    with gate.preparing():
        pass
    assert time.perf_counter() - began < 1


@TWO_WORKERS_AND_GPUS
def test_shared_memory_files_are_removed_after_each_run(cluster, rng):
    import glob

    client, device = cluster

    def files():  # this process's blocks only: other tests beside this one (pytest -n) place their own
        return set(glob.glob(os.path.join(client._seqcompare_shared, f"seqcompare-{os.getpid()}-*.bin")))

    before = files()
    rows = random_alignment(rng, 300, 150)
    hamming(rows, client=client, device=device, tile_size=100)
    ccc(rng.integers(0, 3, (200, 40)), client=client, device=device)
    align(["ACGT" * 10] * 8, client=client, device=device)
    seqcompare_distributed.finish_removals()
    assert files() <= before


@pytest.mark.parametrize("cluster", [CPU_TWO], indirect=True)
def test_large_shared_files_wait_mapped_for_the_next_run_and_go_with_the_client(cluster, rng, monkeypatch):
    """A completed run's large files stay mapped for the next run, which writes over all it uses (a smaller
    problem in larger files gives exact results); clearing the pool (as closing the client does) removes them."""
    import glob

    import seqcompare.distributed.placement as placement

    client, device = cluster
    monkeypatch.setattr(placement, "_POOL_FROM", 1)  # every file counts as large

    def files():
        return set(glob.glob(os.path.join(client._seqcompare_shared, f"seqcompare-{os.getpid()}-*.bin")))

    before = files()
    try:
        first = random_alignment(rng, 400, 200)
        same(hamming_pairs(first, max_dist=150, client=client, device=device, tile_size=100),
             hamming_pairs(first, max_dist=150))  # fmt: skip
        kept = files() - before
        assert kept and len(client._seqcompare_pool) == len(kept)
        second = random_alignment(rng, 300, 150)
        same(hamming_pairs(second, max_dist=100, client=client, device=device, tile_size=100),
             hamming_pairs(second, max_dist=100))  # fmt: skip
        assert files() - before == kept  # the same files, written again
    finally:
        client._seqcompare_pool.clear()
    seqcompare_distributed.finish_removals()
    assert files() <= before


@TWO_WORKERS_AND_GPUS
def test_a_scatter_that_meets_a_departing_worker_is_tried_again(cluster, rng, monkeypatch):
    from distributed.comm.core import CommClosedError

    client, device = cluster
    rows = random_alignment(rng, 200, 90)
    scatter, failures = client.scatter, []

    def flaky_scatter(*args, **kwargs):
        if not failures:
            failures.append(1)
            raise CommClosedError("the worker went away")
        return scatter(*args, **kwargs)

    monkeypatch.setattr(client, "scatter", flaky_scatter)
    monkeypatch.setattr(client, "_seqcompare_shared", None)  # blocks are scattered, as to a remote cluster
    assert np.array_equal(hamming(rows, client=client, device=device, tile_size=70), hamming(rows))
    assert failures == [1]


# -- one worker per GPU ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gpu_client():
    client = seqcompare_distributed.connect(device="cuda", log=quiet)
    yield client
    seqcompare_distributed.close(client)


@pytest.mark.gpu
def test_every_worker_has_its_own_gpu(gpu_client):
    visible = gpu_client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"])
    assert sorted(visible.values()) == sorted(set(visible.values()))


@pytest.mark.gpu
def test_gpu_workers_on_larger_problems(gpu_client, rng):
    rows = random_alignment(rng, 1500, 700, alphabet=b"ACGTN-")
    on = {"client": gpu_client, "device": "cuda", "tile_size": 500}
    assert np.array_equal(hamming(rows, **on), hamming(rows))
    same(hamming_pairs(rows, max_dist=400, **on), hamming_pairs(rows, max_dist=400))
    counts = rng.integers(0, 3, (1100, 300))
    counts[rng.random(counts.shape) < 0.05] = -1
    got, expected = ccc(counts, threshold=0.5, client=gpu_client, device="cuda"), ccc(counts, threshold=0.5)
    assert str(got.checksum) == str(expected.checksum) and len(expected.entry_value) > 0
    same((got.entry_index, got.entry_bits, got.entry_value),
         (expected.entry_index, expected.entry_bits, expected.entry_value))  # fmt: skip


def _triangle_regions(edge: int = 100, last: int = 99) -> list:
    """A symmetric Hamming problem's regions over 8 row blocks of ``edge`` rows (the last ``last``): each
    diagonal tile is about half a tile."""
    from seqcompare.allpairs import Region

    regions = []
    for row in range(8):
        for col in range(row + 1):
            rows, cols = (last if row == 7 else edge), (last if col == 7 else edge)
            size = rows * (rows - 1) // 2 if row == col else rows * cols
            regions.append(Region([row] if row == col else [row, col], (row, col), size))
    return regions


def test_regions_are_dealt_in_equal_shares_with_an_undealt_tail():
    """A triangle of 8 row blocks (a diagonal tile is half a tile) over 4 workers, in the order the blocks are
    made: each worker gets one of the first four regions, the last ones (up to a fifth of the work) go to no
    worker, and the dealt shares are equal to a tile, although the last block is a row short."""
    regions = _triangle_regions()
    order = sorted(range(len(regions)), key=lambda n: (max(regions[n].blocks), n))
    owner = dask_executor.assign_regions(regions, 4, order)
    assert sorted(owner[n] for n in order[:4]) == [0, 1, 2, 3]
    undealt = [position for position, n in enumerate(order) if owner[n] is None]
    assert undealt == list(range(len(order) - len(undealt), len(order)))  # the last ones in order
    total = sum(region.size for region in regions)
    tail = sum(regions[order[p]].size for p in undealt)
    assert 0.15 * total < tail <= 0.2 * total
    half_tiles = [0] * 4
    for region, worker in zip(regions, owner, strict=True):
        if worker is not None:
            half_tiles[worker] += 1 if len(region.blocks) == 1 else 2
    assert sum(half_tiles) == 64 - 11 and max(half_tiles) - min(half_tiles) <= 2
    assert None not in dask_executor.assign_regions(regions, 4, order, undealt_share=0)
    assert dask_executor.assign_regions(regions, 1, order) == [0] * len(regions)
    assert dask_executor.assign_regions([], 3) == []


def test_the_smallest_regions_run_last_in_the_undealt_tail():
    """Submitted in balanced order, the first four regions still start the workers in block order, the rest go
    largest first (block order among equals), and the undealt tail ends with every half-size diagonal tile not
    among the first four, so that the workers' ends even out to within a half tile."""
    edge, regions = 100, _triangle_regions()
    block_order = sorted(range(len(regions)), key=lambda n: (max(regions[n].blocks), n))
    order = dask_executor.balanced_order(regions, 4, block_order)
    assert sorted(order) == list(range(len(regions))) and order[:4] == block_order[:4]
    sizes = [regions[n].size for n in order[4:]]
    assert sizes == sorted(sizes, reverse=True)
    whole = [n for n in order[4:] if regions[n].size == edge * edge]
    assert whole == [n for n in block_order[4:] if regions[n].size == edge * edge]  # block order among equals
    owner = dask_executor.assign_regions(regions, 4, order)
    undealt = [position for position, n in enumerate(order) if owner[n] is None]
    assert undealt == list(range(len(order) - len(undealt), len(order)))
    diagonals = {n for n in order[4:] if len(regions[n].blocks) == 1}
    assert len(diagonals) == 6 and diagonals <= {order[p] for p in undealt}
    assert order[-1] == len(regions) - 1  # the last block's diagonal tile, the smallest of all
    assert dask_executor.balanced_order(regions, 4, block_order[:3]) == block_order[:3]


@pytest.mark.parametrize("cluster", [CPU_TWO], indirect=True)
def test_regions_dealt_up_front_give_the_same_results(cluster, rng, monkeypatch):
    """Shares dealt to the workers before the run (what GPU workers get) give what one process gives, and every
    worker runs its share."""
    from distributed import get_task_stream

    client, device = cluster
    monkeypatch.setattr(dask_executor, "_balanced_by_default", lambda device: True)
    rows = random_alignment(rng, 900, 300)
    with get_task_stream(client) as stream:
        pairs = hamming_pairs(rows, max_dist=250, client=client, device=device, tile_size=150)
    same(pairs, hamming_pairs(rows, max_dist=250))
    assert len({record["worker"] for record in stream.data}) == 2
    assert np.array_equal(hamming(rows, client=client, device=device), hamming(rows))


@pytest.mark.gpu
def test_gpu_workers_running_two_tasks_at_once_take_turns_and_agree(rng):
    """Two tasks at once on each GPU worker: one prepares its blocks while the other's kernels run (the device's
    turn), over many tiles that share blocks; pairs and matrix as in one process."""
    client = seqcompare_distributed.connect(device="cuda", tasks_per_worker=2, log=quiet)
    try:
        assert set(client.nthreads().values()) == {2}
        rows = random_alignment(rng, 2300, 1900, alphabet=b"ACGTN-")
        on = {"client": client, "device": "cuda", "tile_size": 300}
        same(hamming_pairs(rows, max_dist=1300, **on), hamming_pairs(rows, max_dist=1300))
        assert np.array_equal(hamming(rows, **on), hamming(rows))
    finally:
        seqcompare_distributed.close(client)


def _kept_blocks():
    gpu = sys.modules.get("seqcompare.hamming.gpu")
    return (0, 0) if gpu is None else (gpu.RESIDENT.hits, len(gpu.RESIDENT))


def _set_kept_budget(budget):
    from seqcompare.hamming.gpu import RESIDENT

    RESIDENT._budgets = {} if budget is None else {0: budget}


@pytest.mark.gpu
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
    same(pairs, hamming_pairs(rows, max_dist=1300))
    assert np.array_equal(matrix, hamming(rows))
    hits = sum(after[w][0] - before[w][0] for w in after)
    assert all(count == 0 for _, count in after.values())
    if budget is None:  # room for every block: each worker's later tiles found theirs
        assert hits > 0
    elif budget == 1:  # room for none: every tile uploaded its blocks
        assert hits == 0


def test_model_distances_sites_and_clusters_are_identical(cluster, rng):
    from seqcompare.hamming.api import clusters, model_distances, model_pairs

    client, device = cluster
    rows = random_alignment(rng, 83, 250, alphabet=b"ACGTACGTACGTRYN-")
    sequences = [row.tobytes().decode() for row in rows]
    on = {"client": client, "device": device, "tile_size": 30}
    for model in ("p", "k2p", "tn93"):
        got = model_distances(sequences, model=model, sites=True, min_overlap=165, **on)
        expected = model_distances(sequences, model=model, sites=True, min_overlap=165)
        for a, b in zip(got, expected, strict=True):
            assert np.array_equal(a, b, equal_nan=True)
    same(model_pairs(sequences, model="tn93", max_dist=0.5, fraction=0.05, **on),
         model_pairs(sequences, model="tn93", max_dist=0.5, fraction=0.05))  # fmt: skip
    assert np.array_equal(clusters(sequences, max_dist=40, **on), clusters(sequences, max_dist=40))
    assert np.array_equal(clusters(sequences, model="tn93", max_dist=0.3, **on),
                          clusters(sequences, model="tn93", max_dist=0.3))  # fmt: skip


def test_collapsed_runs_are_identical(cluster, rng):
    from seqcompare.hamming.api import clusters, model_pairs

    client, device = cluster
    rows = random_alignment(rng, 40, 200, alphabet=b"ACGTACGTACGTRYN-")
    sequences = [rows[k].tobytes().decode() for k in rng.integers(0, 40, 97)]  # about 60% duplicates
    on = {"client": client, "device": device, "tile_size": 16, "collapse": True}
    assert np.array_equal(hamming(sequences, **on), hamming(sequences))
    same(hamming_pairs(sequences, max_dist=60, **on), hamming_pairs(sequences, max_dist=60))
    same(model_pairs(sequences, model="tn93", ambiguities="average", max_dist=0.4, sites=True, **on),
         model_pairs(sequences, model="tn93", ambiguities="average", max_dist=0.4, sites=True))  # fmt: skip
    assert np.array_equal(clusters(sequences, max_dist=50, **on), clusters(sequences, max_dist=50))
