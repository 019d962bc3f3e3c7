"""The all-pairs engine on its own: plans, executors, reductions and the native-capability contract.

A toy work (a known symmetric matrix read tile by tile) goes through every executor into every shared reduction;
each result is compared with what plain NumPy makes of the whole matrix.
"""

import itertools
import pickle

import numpy as np
import pytest
from conftest import DEVICES

import seqcompare
from seqcompare.allpairs import (
    Combined,
    Concatenation,
    KnnReduction,
    LowerTriangleReduction,
    MatrixReduction,
    PairsReduction,
    Reduction,
    SerialExecutor,
    ThreadExecutor,
    Work,
    executor_for_client,
    plan_tiles,
    run,
)
from seqcompare.allpairs.executors import windowed_map


@pytest.mark.parametrize("n, tile", [(1, 1), (5, 2), (17, 4), (64, 64), (65, 64), (100, 7)])
def test_symmetric_plan_covers_every_pair_once(n, tile):
    seen = []
    for t in plan_tiles(n, None, tile):
        for i in range(t.row_start, t.row_stop):
            for j in range(t.col_start, t.col_stop):
                if not t.diagonal or j < i:
                    seen.append((i, j))
    assert sorted(seen) == [(i, j) for i in range(n) for j in range(i)]
    assert sum(t.n_pairs for t in plan_tiles(n, None, tile)) == n * (n - 1) // 2


def test_rectangular_plan_covers_every_cell_once_and_carries_offsets():
    cells = [(i, j) for t in plan_tiles(7, 5, 3)
             for i in range(t.row_start, t.row_stop) for j in range(t.col_start, t.col_stop)]  # fmt: skip
    assert sorted(cells) == list(itertools.product(range(7), range(5)))
    shifted = plan_tiles(7, 5, 3, row_offset=100, col_offset=10)
    assert [(t.row_start - 100, t.row_stop - 100, t.col_start - 10, t.col_stop - 10) for t in shifted] == [
        (t.row_start, t.row_stop, t.col_start, t.col_stop) for t in plan_tiles(7, 5, 3)
    ]
    assert plan_tiles(0, None, 4) == [] and plan_tiles(3, 0, 4) == []
    with pytest.raises(ValueError):
        plan_tiles(3, None, 0)


def symmetric_values(n, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 9, size=(n, n))
    values = values + values.T
    np.fill_diagonal(values, 0)
    return values


class MatrixWork(Work):
    """Tiles of a known matrix; counts the kernels it ran."""

    def __init__(self, values, symmetric=True, tile=4):
        self.values, self.symmetric, self.tile = values, symmetric, tile
        self.kernel_calls = 0

    def parts(self, backend):
        n_cols = None if self.symmetric else self.values.shape[1]
        return plan_tiles(self.values.shape[0], n_cols, self.tile)

    def size(self, part):
        return part.n_pairs

    def cpu_kernel(self, threads):
        def kernel(tile):
            self.kernel_calls += 1
            return self.values[tile.row_start : tile.row_stop, tile.col_start : tile.col_stop].copy()

        return kernel


EXECUTORS = [SerialExecutor(), ThreadExecutor(1), ThreadExecutor(3)]


@pytest.mark.parametrize("executor", EXECUTORS, ids=["serial", "threads1", "threads3"])
@pytest.mark.parametrize("n", [1, 2, 23])
def test_every_reduction_equals_numpy_on_the_whole_matrix(executor, n):
    values = symmetric_values(n)
    work = MatrixWork(values)
    matrix, pairs, (knn_idx, knn_dist) = run(
        work, Combined(MatrixReduction((n, n), True, np.int64), PairsReduction(7, True), KnnReduction(3, n, None)),
        executor,
    )  # fmt: skip
    np.testing.assert_array_equal(matrix, values)
    expected = [(i, j, values[i, j]) for i in range(n) for j in range(i + 1, n) if values[i, j] <= 7]
    assert list(zip(*(a.tolist() for a in pairs))) == expected
    for i in range(n):
        order = sorted((values[i, j], j) for j in range(n) if j != i)[:3]
        assert knn_dist[i].tolist() == [d for d, _ in order]
        assert knn_idx[i].tolist() == [j for _, j in order]
    assert work.kernel_calls == len(plan_tiles(n, None, 4))  # each block computed once for all three


@pytest.mark.parametrize("executor", EXECUTORS, ids=["serial", "threads1", "threads3"])
def test_lower_triangle_streams_block_rows_in_order(executor):
    n = 23
    values = symmetric_values(n, 1)
    blocks = []
    run(MatrixWork(values), LowerTriangleReduction(n, lambda start, rows: blocks.append((start, rows.copy())),
                                                   np.int64), executor)  # fmt: skip
    assert [s for s, _ in blocks] == list(range(0, n, 4))
    for start, rows in blocks:
        for k, row in enumerate(rows):
            np.testing.assert_array_equal(row[: start + k + 1], values[start + k, : start + k + 1])


def test_lower_triangle_with_missing_tiles_fails_loudly():
    reduction = LowerTriangleReduction(8, lambda *a: None)
    tile = plan_tiles(8, None, 4)[0]
    reduction.merge(reduction.reduce(tile, np.zeros((4, 4))))
    reduction.merge(reduction.reduce(plan_tiles(8, None, 4)[1], np.zeros((4, 4))))
    with pytest.raises(RuntimeError, match="missing tiles"):
        reduction.finish()


def test_rectangular_reductions():
    rng = np.random.default_rng(2)
    values = rng.integers(0, 20, size=(9, 6))
    matrix, pairs, (idx, dist) = run(
        MatrixWork(values, symmetric=False, tile=4),
        Combined(MatrixReduction((9, 6), False, np.int64), PairsReduction(5, False, value_cap=3),
                 KnnReduction(10, 9, 6)), ThreadExecutor(2))  # fmt: skip
    np.testing.assert_array_equal(matrix, values)
    expected = [(i, j, min(values[i, j], 3)) for i in range(9) for j in range(6) if values[i, j] <= 5]
    assert list(zip(*(a.tolist() for a in pairs))) == expected
    assert idx.shape == (9, 6)  # k capped at the candidates
    for i in range(9):
        assert list(zip(dist[i].tolist(), idx[i].tolist())) == sorted((values[i, j], j) for j in range(6))


def test_matrix_to_npy_appears_only_when_finished(tmp_path):
    n = 10
    values = symmetric_values(n, 3)
    path = tmp_path / "d.npy"
    reduction = MatrixReduction((n, n), True, np.int64, path=path)
    assert not path.exists()
    result = run(MatrixWork(values), reduction, ThreadExecutor(2))
    np.testing.assert_array_equal(np.load(path), values)
    np.testing.assert_array_equal(result, values)
    aborted = MatrixReduction((n, n), True, np.int64, path=tmp_path / "e.npy")
    aborted.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npy"]


def test_reductions_travel_as_their_parameters():
    reduction = KnnReduction(2, 1000, None)
    copy = pickle.loads(pickle.dumps(reduction))
    assert not hasattr(copy, "best") and copy.k == 2 and copy.symmetric
    tile = plan_tiles(4, None, 4)[0]
    block = symmetric_values(4)
    reduction_partial = KnnReduction(2, 4, None).reduce(tile, block)
    copy_partial = copy.reduce(tile, block)
    for ours, theirs in zip(reduction_partial[1:], copy_partial[1:]):
        np.testing.assert_array_equal(ours, theirs) if ours is not None else None
    assert len(pickle.dumps(reduction)) < 1000  # the (1000, 2) state stays home


def test_concatenation_puts_pieces_back_in_part_order():
    class Piece:
        def __init__(self, start):
            self.start = start

    reduction = Concatenation()
    for start in (6, 0, 3):
        reduction.merge(reduction.reduce(Piece(start), (np.arange(start, start + 3), np.arange(3) + 10 * start)))
    rows, other = reduction.finish()
    assert rows.tolist() == list(range(9))
    assert other.tolist() == [0, 1, 2, 30, 31, 32, 60, 61, 62]
    assert Concatenation().finish().shape == (0,)


class NativeWork(MatrixWork):
    """A work that claims the pairs reduction on the CPU: the executor must hand it over, not compute blocks."""

    native = {"cpu": ("pairs",)}

    def run_native(self, backend, reduction, resources):
        yield 1, (np.array([0]), np.array([1]), np.array([42]))


@pytest.mark.parametrize("executor", EXECUTORS, ids=["serial", "threads1", "threads3"])
def test_a_declared_native_reduction_is_run_by_the_work(executor):
    work = NativeWork(symmetric_values(8))
    rows, cols, values = run(work, PairsReduction(3, True), executor)
    assert (rows.tolist(), cols.tolist(), values.tolist()) == ([0], [1], [42]) and work.kernel_calls == 0
    # Another reduction of the same work is not claimed, so it goes through the kernels.
    np.testing.assert_array_equal(run(work, MatrixReduction((8, 8), True, np.int64), executor), work.values)
    assert work.kernel_calls > 0


def test_kernel_errors_reach_the_caller_and_stop_the_plan():
    started = []

    def compute(item):
        started.append(item)
        if item == 2:
            raise ValueError("bad part")
        return item

    with pytest.raises(ValueError, match="bad part"):
        for _ in windowed_map(compute, range(1000), workers=2, window=4):
            pass
    assert len(started) < 20  # items not started when the error left were cancelled


def test_progress_counts_every_unit():
    seen = {}

    class Recorder:
        def __init__(self, total, unit, what):
            seen.update(total=total, unit=unit, what=what, done=0, closed=False)

        def update(self, size):
            seen["done"] += size

        def close(self):
            seen["closed"] = True

    run(MatrixWork(symmetric_values(20)), MatrixReduction((20, 20), True, np.int64), ThreadExecutor(2),
        progress=Recorder, what="toy")  # fmt: skip
    assert seen == {"total": 190, "unit": "pair", "what": "toy", "done": 190, "closed": True}


class SelfReportingWork(MatrixWork):
    """One part whose kernel reports progress itself, row by row."""

    reports_progress = True

    def parts(self, backend):
        n = self.values.shape[0]
        return plan_tiles(n, None, n)

    def cpu_kernel(self, threads, report=None):
        def kernel(tile):
            for row in range(tile.n_rows):  # row i closes i pairs of the lower triangle
                if report is not None:
                    report.update(row)
            return self.values.copy()

        return kernel


@pytest.mark.parametrize("executor", EXECUTORS, ids=["serial", "threads1", "threads3"])
def test_a_kernel_that_reports_its_own_progress_is_not_counted_twice(executor):
    updates = []

    class Recorder:
        def __init__(self, total, unit, what):
            updates.append(("total", total))

        def update(self, size):
            updates.append(("update", size))

        def close(self):
            pass

    values = symmetric_values(6)
    run(SelfReportingWork(values), MatrixReduction((6, 6), True, np.int64), executor, progress=Recorder)
    assert updates[0] == ("total", 15)
    assert [size for kind, size in updates[1:] if size] == [1, 2, 3, 4, 5]  # the kernel's own reports only
    # Without progress the kernel gets no report and the result is the same.
    assert np.array_equal(run(SelfReportingWork(values), MatrixReduction((6, 6), True, np.int64), executor), values)


def test_base_reduction_and_client_errors_are_explicit():
    with pytest.raises(NotImplementedError):
        Reduction().reduce(None, None)
    with pytest.raises(TypeError, match="Dask Client"):
        executor_for_client(object())
    with pytest.raises(ValueError, match="k must be"):
        KnnReduction(0, 3, None)


def test_import_does_not_load_heavy_modules():
    import subprocess
    import sys

    code = "import sys, seqcompare; print(sorted(m for m in ('numba', 'cupy', 'dask', 'tqdm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert seqcompare.__version__


@pytest.mark.parametrize("row_edge,col_edge", [(1, 1), (128, 128), (256, 128), (64, 64)])
def test_gpu_micro_tile_lists_cover_exactly_the_blocks_that_reach_the_lower_triangle(row_edge, col_edge):
    from seqcompare.cuda.bitgemm import micro_tiles  # plain NumPy: imports no CuPy

    for rows in (range(0), range(1), range(3, 9), range(12)):
        got = micro_tiles(rows, None, True, row_edge, col_edge)
        expected = [(r, c) for r in rows for c in range(10_000) if c * col_edge <= (r + 1) * row_edge - 1]
        assert got.dtype == np.int32 and got.shape == (len(expected), 2)
        assert [tuple(t) for t in got.tolist()] == expected
    rectangular = micro_tiles(range(2, 5), range(1, 4), False)
    assert [tuple(t) for t in rectangular.tolist()] == [(r, c) for r in range(2, 5) for c in range(1, 4)]


@pytest.mark.parametrize("device", DEVICES)
def test_the_worked_example_of_the_developer_guide_is_true(monkeypatch, sarscov2_oracle, device):
    from conftest import developing_example

    example = developing_example(monkeypatch)
    pairs = sarscov2_oracle[np.tril_indices(sarscov2_oracle.shape[0], -1)]
    expected = np.bincount(np.minimum(pairs, 51), minlength=52)
    assert example["counts"].tolist() == expected.tolist() and expected[:51].sum() > 0
    on_device = example["run_hamming"](example["encoded"], example["DistanceHistogram"](50), device=device)
    assert on_device.tolist() == expected.tolist()
    assert "counts" not in example["DistanceHistogram"](50).__getstate__()  # its state stays home


def test_an_interrupt_swallowed_where_it_arrived_ends_the_run_at_the_next_part():
    # A signal's exception raised inside a finaliser (Numba compiling on a cold cache) is discarded by Python;
    # the command line records it, and the engine raises it between parts.
    from seqcompare.progress import raise_if_stopped, request_stop

    work = MatrixWork(symmetric_values(12))
    request_stop(KeyboardInterrupt("SIGINT"))
    with pytest.raises(KeyboardInterrupt, match="SIGINT"):
        run(work, MatrixReduction((12, 12), True, np.int64), SerialExecutor())
    assert work.kernel_calls == 1  # stopped after the first part
    raise_if_stopped()  # raised once: nothing left


class _RecordingRuntime:
    """CUDA's host-registration calls, recorded (a stand-in for ``cupy.cuda.runtime`` on machines without a GPU)."""

    class CUDARuntimeError(RuntimeError):
        pass

    def __init__(self, refuse=False):
        self.refuse = refuse
        self.registered = {}  # address -> size
        self.calls = []

    def hostRegister(self, address, size, flags):  # noqa: N802 (CUDA's name)
        self.calls.append(("register", address, size, flags))
        if self.refuse:
            raise self.CUDARuntimeError("cudaErrorHostMemoryAlreadyRegistered")
        self.registered[address] = size

    def hostUnregister(self, address):  # noqa: N802
        self.calls.append(("unregister", address, _mapped(address)))
        del self.registered[address]


def _mapped(address: int) -> bool:
    """Whether ``address`` lies in one of this process's mappings (Linux), as it must while CUDA unlocks it."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            low, high = (int(bound, 16) for bound in line.split()[0].split("-"))
            if low <= address < high:
                return True
    return False


@pytest.fixture
def recording_runtime(monkeypatch):
    import types

    from seqcompare.cuda import runtime

    recorder = _RecordingRuntime()
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=recorder))
    monkeypatch.setattr(runtime, "require_cupy", lambda: fake)
    monkeypatch.setattr(runtime, "pinned_empty", lambda shape, dtype: ("from the pool", shape, np.dtype(dtype)))
    monkeypatch.setattr(runtime, "_LOCK_IN_PLACE_FROM", 1 << 20)
    return recorder


def test_large_one_off_buffers_are_locked_where_they_are_made_and_unlocked_when_gone(recording_runtime):
    import gc

    from seqcompare.cuda import runtime

    before = dict(runtime._LOCKED)
    buffer = runtime.locked_empty((3, 1_000_001), np.uint32)
    assert buffer.shape == (3, 1_000_001) and buffer.dtype == np.uint32 and buffer.flags.c_contiguous
    ((what, address, size, flags),) = recording_runtime.calls
    page = runtime._PAGE
    # whole pages, from the start of the buffer, covering it; portable to every GPU's context
    assert what == "register" and address == buffer.ctypes.data and address % page == 0 and flags == 1
    assert size % page == 0 and buffer.nbytes <= size < buffer.nbytes + page
    assert runtime._LOCKED["buffers"] == before["buffers"] + 1
    buffer[...] = 7  # writable, every byte
    view = buffer[1:, 5:]
    del buffer
    gc.collect()
    assert len(recording_runtime.calls) == 1  # a view still holds the pages
    assert int(view.sum()) == 7 * 2 * 999_996
    del view
    gc.collect()
    # unlocked before its pages are unmapped
    assert recording_runtime.calls[1:] == [("unregister", address, True)] and not recording_runtime.registered
    assert runtime._LOCKED == before
    # the garbage collector may unlock a buffer in a thread that holds the module's lock: the finalizer never
    # takes it (a plain lock taken twice by one thread never returns)
    taken_again = []

    class OneTakeLock:
        held = False

        def __enter__(self):
            taken_again.append(self.held)
            self.held = True

        def __exit__(self, *exc):
            self.held = False

    one_take = OneTakeLock()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runtime, "_LOCK", one_take)
        cycle = [runtime.locked_empty((2 << 20,), np.uint8)]
        cycle.append(cycle)  # freed only by the collector
        del cycle
        with one_take:
            gc.collect()
    assert True not in taken_again and runtime._LOCKED == before
    # small buffers come from CuPy's pool, and so does one CUDA refuses to register
    assert runtime.locked_empty((10,), np.uint8) == ("from the pool", (10,), np.dtype(np.uint8))
    recording_runtime.refuse = True
    assert runtime.locked_empty((2 << 20,), np.uint8)[0] == "from the pool"
    assert runtime._LOCKED == before


def test_large_file_mappings_are_locked_where_they_lie_once_and_unlocked_when_gone(recording_runtime, tmp_path):
    import gc

    from seqcompare.cuda import runtime

    before, counted = dict(runtime._LOCKED), dict(runtime.MAPPINGS)
    path = tmp_path / "block.bin"
    path.write_bytes(bytes(3 << 20))
    # a Dask task's block: rows of a shared file, mapped read-only from an offset that is not a page's start
    block = np.memmap(path, dtype=np.uint64, mode="r", offset=8 * 1001, shape=(2 << 17,))
    assert runtime.lock_if_mapped(block) and runtime.lock_if_mapped(block)  # the second time: already locked
    ((what, address, size, flags),) = recording_runtime.calls
    assert what == "register" and (address, size) == (block.ctypes.data, block.nbytes)
    assert flags == 1 | runtime._HOST_REGISTER_READ_ONLY  # every GPU's context, and the device only reads it
    assert runtime._LOCKED["buffers"] == before["buffers"] + 1
    # neither an array in this process's own memory nor a small mapping is locked
    small = np.memmap(path, dtype=np.uint8, mode="r", shape=(1000,))
    assert not runtime.lock_if_mapped(np.zeros(4 << 20, np.uint8)) and not runtime.lock_if_mapped(small)
    assert len(recording_runtime.calls) == 1
    del block
    gc.collect()
    assert recording_runtime.calls[1:] == [("unregister", address, True)] and not recording_runtime.registered
    assert runtime._LOCKED == before
    # one CUDA refuses stays pageable (uploads from it are staged by the driver)
    recording_runtime.refuse = True
    assert not runtime.lock_if_mapped(np.memmap(path, dtype=np.uint8, mode="r"))
    assert runtime._LOCKED == before
    assert runtime.MAPPINGS == {"locked": counted["locked"] + 1, "refused": counted["refused"] + 1}


@pytest.mark.gpu
def test_arrays_go_to_the_device_equal_by_every_route(monkeypatch, tmp_path):
    from seqcompare.cuda import runtime

    cupy = pytest.importorskip("cupy")
    monkeypatch.setattr(runtime, "_UPLOAD_PIECE_BYTES", 1 << 20)  # staged in many pieces
    monkeypatch.setattr(runtime, "_LOCK_IN_PLACE_FROM", 1 << 20)  # the mappings below are locked where they lie
    rng = np.random.default_rng(4)
    values = rng.integers(0, 256, (3001, 1237), dtype=np.uint8)
    path = tmp_path / "codes.bin"
    path.write_bytes(bytes(5) + values.tobytes())
    mapped = np.memmap(path, dtype=np.uint8, mode="r", offset=5, shape=values.shape)
    for host in (values, mapped, values[::2], values[:3], mapped[1000:2500]):
        on_device = runtime.to_device(host)
        assert on_device.shape == host.shape and np.array_equal(cupy.asnumpy(on_device), np.asarray(host))


@pytest.mark.gpu
def test_gpu_hamming_and_scan_from_buffers_locked_in_place_equal_the_cpu(monkeypatch, sarscov2, sarscov2_oracle):
    import gc

    import seqcompare
    from seqcompare.cuda import runtime
    from seqcompare.simulate import simulate_scan

    monkeypatch.setattr(runtime, "_LOCK_IN_PLACE_FROM", 0)  # every buffer, however small, locked in place
    before = dict(runtime._LOCKED)
    locked = []
    original = runtime.locked_empty
    monkeypatch.setattr(runtime, "locked_empty", lambda shape, dtype: locked.append(shape) or original(shape, dtype))
    for module in ("seqcompare.hamming.gpu", "seqcompare.scan.gpu"):
        monkeypatch.setattr(f"{module}.locked_empty", runtime.locked_empty)
    assert np.array_equal(seqcompare.hamming(sarscov2, device="cuda"), sarscov2_oracle)
    pairs = seqcompare.hamming_pairs(sarscov2, max_dist=5, device="cuda")
    expected = seqcompare.hamming_pairs(sarscov2, max_dist=5)
    assert all(np.array_equal(a, b) for a, b in zip(pairs, expected)) and len(pairs[0]) > 0
    data = simulate_scan(n_signatures=12, signature_length=(200, 900), n_clean=3, n_infected=3,
                         sample_length=(20_000, 40_000), n_ratio=0.05, seed=3)  # fmt: skip
    gpu = seqcompare.scan(data.samples, data.signatures, device="cuda")
    cpu = seqcompare.scan(data.samples, data.signatures, device="cpu")
    assert list(gpu.lines(tsv=True)) == list(cpu.lines(tsv=True))
    assert len(locked) >= 3  # the planes, and the scan's packed bases and N mask
    del pairs
    gc.collect()
    assert runtime._LOCKED == before  # every buffer unlocked once dropped


@pytest.mark.parametrize("shuffled", [False, True])
def test_pairs_finish_in_row_then_column_order_whether_or_not_the_parts_came_sorted(rng, shuffled):
    pairs = sorted({(int(a), int(b)) for a, b in rng.integers(0, 40, (300, 2)) if a != b})
    rows, cols = (np.array(x, dtype=np.int64) for x in zip(*pairs))
    values = rng.integers(0, 9, rows.size)
    order = rng.permutation(rows.size) if shuffled else np.arange(rows.size)
    reduction = PairsReduction(9, False, value_cap=5)
    for part in np.array_split(order, 3):
        reduction.merge((rows[part], cols[part], values[part]))
    got_rows, got_cols, got_values = reduction.finish()
    assert list(zip(got_rows.tolist(), got_cols.tolist())) == pairs
    np.testing.assert_array_equal(got_values, np.minimum(values, 5))
    # equal rows with columns out of order are sorted too
    reduction = PairsReduction(9, False)
    reduction.merge((np.array([1, 1, 2]), np.array([5, 3, 0]), np.array([7, 8, 9])))
    assert [x.tolist() for x in reduction.finish()] == [[1, 1, 2], [3, 5, 0], [8, 7, 9]]
