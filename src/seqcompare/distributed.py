"""The all-pairs engines on a Dask cluster (``pip install 'seqcompare[distributed]'``).

The work is cut into tasks that each run the single-process engine on a part of the problem:

- Hamming: the lower triangle of blocks of rows (or every block pair of a rectangular problem); a task is one
  tile, a rectangular (or, on the diagonal, symmetric) sub-problem of two row blocks.
- CCC 2-way: slabs of rows (each pair once: ``blas`` pairs a slab's rows with every later row, ``bitmma`` with
  every earlier one); CCC 3-way: slabs of pivots (triples ``i < j < k`` with ``i`` in the slab).

The rows are cut into blocks, placed once, and reused by every task that needs them: on a local cluster in
files in shared memory that every worker maps; on other clusters scattered (Dask moves a block to a worker the
first time a task there asks for it and keeps it). Results come back to the caller's sink as
tasks finish: matrices are written by the workers straight into the output ``.npy`` (a path every worker can
reach), pairs and nearest-neighbour candidates come back selected, CCC tasks send their entries with a partial
checksum. Every tile is handed to the sink exactly once. When a worker dies, Dask reruns its tasks elsewhere;
blocks that died with it are scattered again and their tasks resubmitted.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .engine import Tile, default_threads, plan_tiles
from .errors import InputError

_log = logging.getLogger(__name__)

# A task that keeps failing because workers die under it is given up on after this many attempts.
_ATTEMPTS = 4


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise InputError("the Dask engine needs dask.distributed: pip install 'seqcompare[distributed]'") from exc
    return distributed


def local_cluster(workers: int | None = None, *, device: str = "cpu", threads: int | None = None,
                  dashboard_address: str = ":0"):  # fmt: skip
    """A cluster of worker processes on this machine, sized to it.

    Parameters
    ----------
    workers : int, optional
        Worker processes. Default: one per visible GPU with ``device="cuda"``, else one.
    device : {"cpu", "cuda"}
        With ``"cuda"`` every worker is pinned to its own GPU (``CUDA_VISIBLE_DEVICES``).
    threads : int, optional
        Cores in all (default: every core this process may use), shared evenly by the workers; each worker runs
        one task at a time, and the task's engine uses the worker's cores (BLAS and Numba threads included).
    dashboard_address : str
        Where the dashboard listens (``":0"``: any free port).

    Returns
    -------
    distributed.SpecCluster
    """
    distributed = _require_distributed()
    cores = threads or default_threads()
    gpus = None
    if device == "cuda":
        from .gpu._runtime import device_count

        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        gpus = visible.split(",") if visible else [str(g) for g in range(device_count())]
        gpus = gpus[: workers or len(gpus)]
        workers = len(gpus)
    workers = workers or 1
    per_worker = max(1, cores // workers)
    # Thread pools size themselves when NumPy/BLAS load, before a Nanny's env reaches the worker; Dask's
    # default spawn environment would pin them to one thread.
    import dask

    spawn_env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    spawn_env.update({name: per_worker for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                                    "NUMBA_NUM_THREADS")})  # fmt: skip
    specs = {}
    for number in range(workers):
        env = {"SEQCOMPARE_WORKER_THREADS": str(per_worker)}
        if gpus is not None:
            env["CUDA_VISIBLE_DEVICES"] = gpus[number]
        options = {"nthreads": 1, "env": env, "memory_limit": 0, "silence_logs": 40}
        specs[f"worker-{number}" if gpus is None else f"gpu-{gpus[number]}"] = {"cls": distributed.Nanny,
                                                                                  "options": options}  # fmt: skip
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": dashboard_address}}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}):
        return distributed.SpecCluster(workers=specs, scheduler=scheduler, silence_logs=40)


def connect(scheduler: str | None = None, *, workers: int | None = None, device: str = "cpu",
            threads: int | None = None, log=None, timeout: str = "20s"):  # fmt: skip
    """A ``Client``: of the cluster at ``scheduler`` (e.g. ``tcp://host:8786``, started by dask-jobqueue or
    dask-mpi), or of a new :func:`local_cluster` (``workers``, ``device``, ``threads`` as there). The
    dashboard's address goes to ``log`` (default: stderr); ``timeout`` bounds reaching a scheduler.

    Returns
    -------
    distributed.Client
        Give it to :func:`close` at the end, which also stops a local cluster.
    """
    distributed = _require_distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    else:
        cluster = local_cluster(workers, device=device, threads=threads)
        client = distributed.Client(cluster)
        client.wait_for_workers(len(cluster.workers))
        # Closing the client closes the cluster it started.
        client._seqcompare_cluster = cluster
        # Its workers share this machine's memory: blocks go through files there, not through sockets.
        client._seqcompare_shared = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
    (log or (lambda text: print(text, file=sys.stderr, flush=True)))(
        f"dask: {len(client.scheduler_info()['workers'])} workers, dashboard {client.dashboard_link}"
    )
    return client


def close(client) -> None:
    """Close ``client`` and the local cluster :func:`connect` started for it, if any."""
    cluster = getattr(client, "_seqcompare_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def _worker_threads() -> int:
    return int(os.environ.get("SEQCOMPARE_WORKER_THREADS", "0")) or default_threads()


def _n_workers(client) -> int:
    return max(1, len(client.scheduler_info()["workers"]))


def _lost_worker(error: BaseException) -> bool:
    """Errors that mean a worker (or data on it) went away, not that the task is wrong."""
    from concurrent.futures import CancelledError

    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    return isinstance(error, (CancelledError, FutureCancelledError, KilledWorker))


@dataclass(frozen=True)
class _SharedBlock:
    """Rows of an array in a file that every worker maps (a local cluster's shared memory)."""

    path: str
    offset: int
    shape: tuple
    dtype: str

    def open(self) -> np.ndarray:
        if 0 in self.shape:
            return np.empty(self.shape, self.dtype)
        return np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)


def _opened(blocks) -> list:
    return [b.open() if isinstance(b, _SharedBlock) else b for b in blocks]


def _joined(blocks) -> np.ndarray:
    """Consecutive row blocks as one array: one mapping when they are adjacent in one shared file (no copy)."""
    first = blocks[0]
    if all(isinstance(b, _SharedBlock) for b in blocks) and len({b.path for b in blocks}) == 1:
        row = int(np.prod(first.shape[1:], dtype=np.int64)) * np.dtype(first.dtype).itemsize
        if all(b.offset == a.offset + a.shape[0] * row for a, b in itertools.pairwise(blocks)):
            rows = sum(b.shape[0] for b in blocks)
            return _SharedBlock(first.path, first.offset, (rows, *first.shape[1:]), first.dtype).open()
    opened = _opened(blocks)
    return np.concatenate(opened) if len(opened) > 1 else np.asarray(opened[0])


_removals: list = []  # threads removing earlier runs' shared-memory files


def finish_removals() -> None:
    """Wait until the shared-memory files of earlier runs are gone (the interpreter also waits at exit)."""
    while _removals:
        _removals.pop().join()


class _Placement:
    """Where a run's row blocks live: in files in shared memory for a local cluster (each worker maps them,
    nothing is copied through sockets), else in this process, to be scattered. Files go on :meth:`close`."""

    def __init__(self, client):
        self.directory = getattr(client, "_seqcompare_shared", None)
        self.paths: list = []
        self.arrays: list = []

    def empty(self, shape, dtype) -> np.ndarray:
        """An array to build the operands in (filled by the caller, who drops it before :meth:`close`)."""
        if self.directory is None or 0 in tuple(shape):
            return np.empty(shape, dtype)
        path = os.path.join(self.directory, f"seqcompare-{uuid.uuid4().hex}.bin")
        self.paths.append(path)
        array = np.memmap(path, dtype=dtype, mode="w+", shape=tuple(shape))
        self.arrays.append(array)
        return array

    def copy(self, array: np.ndarray) -> np.ndarray:
        if self.directory is None:
            return array
        out = self.empty(array.shape, array.dtype)
        bounds = np.linspace(0, len(array), 2 * default_threads() + 1).astype(int)
        with ThreadPoolExecutor() as pool:
            list(pool.map(lambda k: np.copyto(out[bounds[k] : bounds[k + 1]], array[bounds[k] : bounds[k + 1]]),
                          range(len(bounds) - 1)))  # fmt: skip
        return out

    def blocks(self, array: np.ndarray, bounds) -> list:
        """Row blocks ``array[a:b]`` for ``(a, b)`` in ``bounds``, as tasks will receive them."""
        return [self.block(array, a, b) for a, b in bounds]

    def block(self, array: np.ndarray, start: int, stop: int):
        """Rows ``start:stop`` of ``array`` (written) as a task will receive them."""
        if not isinstance(array, np.memmap):
            return array[start:stop]
        array.flush()
        row = int(np.prod(array.shape[1:], dtype=np.int64)) * array.dtype.itemsize
        return _SharedBlock(array.filename, array.offset + start * row, (stop - start, *array.shape[1:]),
                            array.dtype.str)  # fmt: skip

    def close(self) -> None:
        """Unmap and remove the files in a background thread: giving gigabytes of pages back to the system takes
        a good part of a second (0.3 s for 2 GB measured), which the caller's result need not wait for."""
        arrays, paths = self.arrays, self.paths
        self.arrays, self.paths = [], []

        def remove():
            arrays.clear()
            for path in paths:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

        _removals[:] = [thread for thread in _removals if thread.is_alive()]
        thread = threading.Thread(target=remove, name="seqcompare-remove-blocks")
        thread.start()
        _removals.append(thread)


def _run_tasks(client, blocks, tasks: dict, consume, priorities: dict | None = None) -> None:
    """Run ``tasks`` (``id -> (function, block ids, *arguments)``: ``function(list of blocks, *arguments)``)
    on the cluster and hand each result to ``consume(id, result)`` once, as tasks finish.

    ``blocks`` is a list, or a function making block ``b`` when a task first needs it: tasks are submitted in
    order, so the first ones run while later blocks are still being made. Among tasks ready to run, workers
    take those of higher ``priorities[id]`` (default 0) first, then those submitted first."""
    from concurrent.futures import CancelledError

    distributed = _require_distributed()
    token = uuid.uuid4().hex[:8]
    made: dict = {}
    scattered: dict = {}

    def block(b):
        if b not in made:
            made[b] = blocks(b) if callable(blocks) else blocks[b]
        return made[b]

    def scatter(values):
        attempt = 1
        while True:
            try:
                return client.scatter(values, hash=False)
            except OSError:  # a worker picked to hold them went away meanwhile
                if attempt == _ATTEMPTS:
                    raise
                time.sleep(0.2 * attempt)
                attempt += 1

    def futures_of(ids):
        """What a task gets for its blocks: shared-memory handles as they are, other blocks scattered (again
        if they were lost with a worker)."""
        missing = [b for b in ids if not isinstance(block(b), _SharedBlock)
                   and (b not in scattered or scattered[b].status != "finished")]  # fmt: skip
        if missing:
            scattered.update(zip(missing, scatter([block(b) for b in missing])))
        return [made[b] if isinstance(made[b], _SharedBlock) else scattered[b] for b in ids]

    start = time.perf_counter()
    attempts: dict = {}

    def submit(task_id):
        function, ids, *arguments = tasks[task_id]
        attempts[task_id] = attempts.get(task_id, 0) + 1
        key = f"seqcompare-{function.__name__.strip('_')}-{token}-{task_id}-{attempts[task_id]}"
        priority = priorities.get(task_id, 0) if priorities else 0
        return client.submit(function, futures_of(ids), *arguments, key=key, pure=False, priority=priority)

    pending = {}
    for task_id in tasks:
        pending[submit(task_id)] = task_id
    done: set = set()
    queue = distributed.as_completed(list(pending))
    for future in queue:
        task_id = pending.pop(future)
        try:
            if future.status == "error":
                raise future.exception()
            if future.status != "finished":  # cancelled or lost with its worker
                raise CancelledError(f"{future.key}: {future.status}")
            result = future.result()  # may still find the result gone with its worker
        except Exception as error:
            if not _lost_worker(error):
                raise
            if attempts[task_id] >= _ATTEMPTS:
                raise RuntimeError(f"task {task_id} was lost {attempts[task_id]} times with its workers") from error
            retry = submit(task_id)
            pending[retry] = task_id
            queue.add(retry)
            continue
        future.release()
        if task_id not in done:
            done.add(task_id)
            consume(task_id, result)
    if len(done) != len(tasks):
        raise RuntimeError(f"{len(tasks) - len(done)} tasks never finished")
    _log.info("%d tasks (%d resubmitted) in %.2f s", len(tasks), sum(attempts.values()) - len(tasks),
              time.perf_counter() - start)  # fmt: skip


def _blocks_for(n_blocks: int, workers: int, per_worker: int) -> int:
    """Blocks per side so that the lower triangle has at least ``per_worker`` tiles per worker."""
    blocks = 1
    while blocks * (blocks + 1) // 2 < per_worker * workers and blocks < n_blocks:
        blocks += 1
    return blocks


@dataclass
class _PackedBlocks:
    """The part of :class:`~seqcompare.metrics.hamming.api.Encoded` that plane-based methods (``bitpack``,
    ``bitmma``) read, for blocks that travel as bit planes (3 bits a DNA site instead of a byte)."""

    left_planes: np.ndarray
    right_planes: np.ndarray | None
    space: object
    n_sites: int
    block_keys: dict | None = None  # {side: (run, block)}: lets a GPU worker keep blocks between tiles
    packed = True  # tells the GPU engine not to stage the planes again

    @property
    def symmetric(self) -> bool:
        return self.right_planes is None

    @property
    def n_left(self) -> int:
        return self.left_planes.shape[0]

    @property
    def n_right(self) -> int | None:
        return None if self.right_planes is None else self.right_planes.shape[0]

    def _side(self, side: str) -> np.ndarray:
        return self.left_planes if side == "left" or self.symmetric else self.right_planes

    def planes(self, side: str = "left", threads: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        if out is None:
            return self._side(side)
        out[...] = self._side(side)
        return out

    def plane_shape(self, side: str = "left") -> tuple:
        return self._side(side).shape

    def codes(self, side: str = "left"):
        raise ValueError("blocks sent as bit planes serve the bitpack and bitmma methods only")


@dataclass(frozen=True)
class _HammingJob:
    space: object
    table: np.ndarray | None
    method: str
    cap: int
    device: str
    output: str  # "matrix", "npy", "pairs" or "knn"
    symmetric: bool
    dtype: object
    max_dist: int = 0
    k: int = 0
    path: str | None = None
    packer: str = "planes"
    planes: bool = False  # blocks are bit planes (else the encoded values)
    n_sites: int = 0
    run: str = ""  # names this run's blocks on the workers' GPUs


def _hamming_tile(blocks, tile: Tile, job: _HammingJob, block_ids: tuple = ()):
    """One tile on a worker: the sub-problem of its row block (and column block) through the local engine.
    ``block_ids`` name the blocks within the run, so that a GPU worker can keep them for its later tiles."""
    from .metrics.hamming.api import Encoded, run_hamming
    from .sinks import KnnSink, MatrixSink, PairsSink

    if job.output == "knn" and job.k == 0:
        return {}
    blocks = _opened(blocks)
    left = blocks[0]
    right = None if tile.diagonal else blocks[-1]
    if job.planes:
        keys = {"left": (job.run, block_ids[0]), "right": (job.run, block_ids[-1])} if block_ids else None
        encoded = _PackedBlocks(left, right, job.space, job.n_sites, keys)
    else:
        encoded = Encoded(left, right, job.space, job.table)
    options = dict(method=job.method, cap=job.cap, device=job.device, threads=_worker_threads(),
                   gpu_packer=job.packer)  # fmt: skip
    if job.output == "pairs":
        i, j, d = run_hamming(encoded, PairsSink(job.max_dist, tile.diagonal), **options)
        i, j = i + tile.row_start, j + tile.col_start
        if job.symmetric and not tile.diagonal:  # row block below column block: report (smaller, larger)
            i, j = j, i
        return i, j, d
    block = run_hamming(encoded, MatrixSink((tile.n_rows, tile.n_cols), tile.diagonal, job.dtype), **options)
    if job.output == "matrix":
        return block
    if job.output == "npy":
        matrix = np.load(job.path, mmap_mode="r+")
        matrix[tile.row_start : tile.row_stop, tile.col_start : tile.col_stop] = block
        if job.symmetric and not tile.diagonal:
            matrix[tile.col_start : tile.col_stop, tile.row_start : tile.row_stop] = block.T
        matrix.flush()
        return None
    # Nearest neighbours: each row's (and, off the diagonal of a symmetric problem, each column's) best k here.
    candidates = {}
    directions = [("rows", block, tile.col_start)]
    if job.symmetric and not tile.diagonal:
        directions.append(("cols", block.T, tile.row_start))
    for name, values, offset in directions:
        local = KnnSink(job.k, values.shape[0], None if tile.diagonal else values.shape[1])
        local.add(Tile(0, values.shape[0], 0, values.shape[1], tile.diagonal), values)
        indices, distances = local.finish()
        candidates[name] = (np.where(indices == np.iinfo(np.int64).max, indices, indices + offset), distances)
    return candidates


def run_hamming_tiles(client, encoded, sink, *, method: str, cap: int, device: str, tile_size: int | None = None,
                      packer: str = "planes"):  # fmt: skip
    """:func:`seqcompare.metrics.hamming.api.run_hamming` on a Dask cluster: same sinks, same result.

    ``tile_size`` is the task tile's edge (default: enough tiles for a few per worker, each still large).
    A :class:`~seqcompare.sinks.MatrixSink` with a ``path`` is written by the workers (the path must be
    shared); :class:`~seqcompare.sinks.LowerTriangleSink` and in-memory matrices get blocks back.
    """
    from .encoding import pack_planes
    from .metrics.hamming.api import distance_dtype
    from .sinks import KnnSink, MatrixSink, PairsSink

    start = time.perf_counter()
    n_left, n_right = encoded.n_left, encoded.n_right
    largest = max(n_left, n_right or 0)
    if tile_size is None:
        # At least 6 tiles per worker; 10 measured slower on 2 GPUs (bench/RESULTS.md, Dask weak scaling).
        blocks = _blocks_for(largest, _n_workers(client), 6)
        tile_size = max(1, -(-largest // blocks))
    tiles = [t for t in plan_tiles(n_left, n_right, tile_size) if t.n_rows and t.n_cols]
    dtype = distance_dtype(encoded.n_sites)
    output = "matrix"
    extra: dict = {}
    if isinstance(sink, PairsSink):
        output, extra = "pairs", {"max_dist": sink.max_dist}
    elif isinstance(sink, KnnSink):
        output, extra = "knn", {"k": sink.k}
    elif isinstance(sink, MatrixSink) and sink.path is not None:
        sink.matrix.flush()
        output, extra = "npy", {"path": sink.temporary_path}
    # Plane-based methods get their operands as bit planes: a third of the bytes to move for DNA.
    planes = method in ("auto", "bitpack", "bitmma") and packer == "planes"
    job = _HammingJob(encoded.space, encoded.table, method, cap, device, output, encoded.symmetric, dtype,
                      packer=packer, planes=planes, n_sites=encoded.n_sites, run=uuid.uuid4().hex, **extra)  # fmt: skip
    threads = default_threads()
    placement = _Placement(client)
    left_starts = sorted({t.row_start for t in tiles})
    # Blocks are packed (or copied) into place when a task first needs one, so packing overlaps the first tiles.
    parts = [("left", encoded.left_values, s, min(s + tile_size, n_left)) for s in left_starts]
    right_offset = len(parts)
    if not encoded.symmetric:
        parts += [("right", encoded.right_values, s, min(s + tile_size, n_right)) for s in range(0, n_right, tile_size)]
    targets = {}
    for side, values, _, _ in parts:
        if side not in targets:
            shape, kind = (encoded.plane_shape(side), np.uint64) if planes else (values.shape, values.dtype)
            targets[side] = placement.empty(shape, kind) if planes or placement.directory else values

    def make_block(number):
        side, values, start, stop = parts[number]
        target = targets[side]
        if planes:
            pack_planes(values[start:stop], encoded.space, encoded.table, threads=threads, out=target[start:stop])
        elif target is not values:
            target[start:stop] = values[start:stop]
        return placement.block(target, start, stop)

    index_of = {s: b for b, s in enumerate(left_starts)}

    def needed(tile):
        row = index_of[tile.row_start]
        if tile.diagonal:
            return [row]
        column = index_of[tile.col_start] if encoded.symmetric else right_offset + tile.col_start // tile_size
        return [row, column]

    tasks = {}
    for number, tile in enumerate(tiles):
        ids = needed(tile)
        tasks[number] = (_hamming_tile, ids, tile, job, tuple(ids))

    def consume(number, result):
        tile = tiles[number]
        if output == "pairs":
            sink.add_pairs(*result)
        elif output == "knn":
            for name, (indices, distances) in result.items():
                span = slice(tile.row_start, tile.row_stop) if name == "rows" else slice(tile.col_start, tile.col_stop)
                sink._merge(span, distances, indices)
        elif output == "matrix":
            sink.add(tile, result)

    # Whole tiles before the half-size diagonal ones: the last tiles to finish are then small, and the workers
    # finish together.
    priorities = {number: 0 if tile.diagonal else 1 for number, tile in enumerate(tiles)}
    try:
        _run_tasks(client, make_block, tasks, consume, priorities)
    finally:
        targets.clear()
        placement.close()
        if device != "cpu":
            _release_device_blocks(client, job.run)
    result = sink.finish()
    _log.info("hamming: %d tiles, %.2f s in all", len(tiles), time.perf_counter() - start)
    return result


def _drop_device_blocks(run: str) -> None:
    gpu = sys.modules.get("seqcompare.gpu.hamming")  # not imported: nothing was kept
    if gpu is not None:
        gpu.RESIDENT.release(run)


def _release_device_blocks(client, run: str) -> None:
    """Free the GPU memory that workers kept a run's blocks in (see :class:`seqcompare.gpu.hamming.ResidentBlocks`)."""
    try:
        client.run(_drop_device_blocks, run, on_error="ignore")
    except (OSError, TimeoutError, RuntimeError) as error:  # a cluster going down: its memory goes with it
        _log.debug("could not release device blocks: %s", error)


@dataclass(frozen=True)
class _CccJob:
    metric: object
    way: int
    method: str
    limits: object
    bins: int
    upper: float
    keep_tables: bool
    n_vectors: int = 0  # for CoMet's checksum (0: not asked for)


def _ccc_slab(blocks, offset: int, items: tuple, job: _CccJob):
    """One slab on a worker: its items of the rows in ``blocks`` (the first at global row ``offset``)."""
    from .correlation.api import Histogram, _Sink, compute
    from .correlation.checksum import Checksum, CometChecksum

    codes = _joined(blocks)
    histogram = Histogram(job.bins, job.way, job.upper) if job.bins else None
    comet = CometChecksum(job.n_vectors) if job.n_vectors else None
    sink = _Sink(job.way, job.metric, job.limits, histogram, Checksum(), job.keep_tables, offset=offset, comet=comet)
    if job.method == "blas":
        threads = _worker_threads()
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            compute(codes, job.metric, job.way, job.method, sink, items)
        else:
            with threadpool_limits(threads):
                compute(codes, job.metric, job.way, job.method, sink, items)
    else:
        compute(codes, job.metric, job.way, job.method, sink, items)
    return sink.parts, sink.checksum, None if histogram is None else histogram.counts, comet


def _equal_work_cuts(work: np.ndarray, parts: int, align: int) -> list:
    """Boundaries ``0 = b0 < b1 < ... = n`` (multiples of ``align`` inside) with about equal total ``work``."""
    n = len(work)
    total = np.cumsum(work, dtype=np.float64)
    targets = total[-1] * np.arange(1, parts) / parts if n else []
    cuts = [int(np.searchsorted(total, t)) // align * align for t in targets]
    return sorted({0, n, *[c for c in cuts if 0 < c < n]})


def run_ccc(client, codes: np.ndarray, metric, way: int, method: str, sink, slabs: int | None = None) -> None:
    """:func:`seqcompare.correlation.api.ccc`'s work on a Dask cluster, into ``sink`` (a ``_Sink``): one slab per
    worker (or ``slabs``), of about equal work. Each task builds its operands from every row it needs, a cost
    that more, smaller slabs would repeat (measured: 4 slabs per GPU worker made 2-way CCC 1.6x slower)."""
    from .gpu.ccc import row_alignment

    start = time.perf_counter()
    n = codes.shape[0]
    parts = slabs or _n_workers(client)
    rows = np.arange(n, dtype=np.float64)
    if way == 3:
        work = (n - 1 - rows) * (n - 2 - rows)
    elif method == "bitmma":
        work = rows
    else:
        work = n - 1 - rows
    align = 2 * row_alignment() if method == "bitmma" else 1
    bounds = _equal_work_cuts(work, parts, align)
    placement = _Placement(client)
    blocks = placement.blocks(placement.copy(codes), list(itertools.pairwise(bounds)))
    _log.info("ccc: rows placed in %.2f s", time.perf_counter() - start)
    job = _CccJob(metric, way, method, sink.limits, 0 if sink.histogram is None else sink.histogram.counts.shape[1],
                  0.0 if sink.histogram is None else float(sink.histogram.edges[-1]), sink.keep_tables,
                  n if sink.comet is not None else 0)  # fmt: skip
    tasks = {}
    for s, (a, b) in enumerate(itertools.pairwise(bounds)):
        if way == 2 and method == "bitmma":  # pairs (q < r, r) for r in the slab: rows 0..b
            tasks[s] = (_ccc_slab, list(range(s + 1)), 0, (a, b), job)
        else:  # pairs (i, j > i) or triples with pivot i in the slab: rows a..n
            tasks[s] = (_ccc_slab, list(range(s, len(blocks))), a, (0, b - a), job)

    slab_items = {}
    for s, (a, b) in enumerate(itertools.pairwise(bounds)):
        rows = np.arange(a, b, dtype=np.int64)
        if way == 3:
            slab_items[s] = int(np.sum((n - 1 - rows) * (n - 2 - rows) // 2))
        else:
            slab_items[s] = int(np.sum(rows if method == "bitmma" else n - 1 - rows))

    def consume(slab, result):
        parts_, checksum, counts, comet = result
        sink.parts.extend(parts_)
        sink.checksum.merge(checksum)
        if comet is not None:
            sink.comet.merge(comet)
        if counts is not None:
            sink.histogram.counts += counts
        sink.report.update(slab_items[slab])

    try:
        _run_tasks(client, blocks, tasks, consume)
    finally:
        placement.close()
