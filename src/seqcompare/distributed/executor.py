"""The engine's Dask executor: any :class:`~seqcompare.allpairs.Work` that can split itself runs on a cluster.

The work cuts itself into regions (:meth:`~seqcompare.allpairs.Work.split`): Hamming tiles, CCC slabs of pairs or
pivots, chunks of scan samples, batches of pairs to align. Its data arrays are cut into blocks, placed once
(:mod:`.placement`: shared memory on a local cluster, scattered elsewhere) and reused by every task that needs
them. A task is one region: on its worker it makes the region's work from the blocks (the split's template),
runs it through the worker's own executor (its GPU, or its threads) with the run's reduction, and sends back the
partials, in global coordinates, which the caller merges as tasks finish. Each region's partials are merged
exactly once; a task lost with a worker is resubmitted, and its blocks scattered again if they died too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import threading
import time
import traceback
import uuid

import numpy as np

from ..allpairs import GpuExecutor, ThreadExecutor, default_threads
from .cluster import require_distributed
from .placement import Placement, SharedBlock, joined, opened

_log = logging.getLogger(__name__)

# A task that keeps failing because workers die under it is given up on after this many attempts.
_ATTEMPTS = 4


def worker_threads() -> int:
    """Cores of this worker (set by :func:`~seqcompare.distributed.local_cluster`), else every core."""
    return int(os.environ.get("SEQCOMPARE_WORKER_THREADS", "0")) or default_threads()


def n_workers(client) -> int:
    return max(1, len(client.scheduler_info()["workers"]))


def _lost_worker(error: BaseException) -> bool:
    """Errors that mean a worker (or data on it) went away, not that the task is wrong."""
    from concurrent.futures import CancelledError

    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    return isinstance(error, (CancelledError, FutureCancelledError, KilledWorker))


class TaskFailure:
    """An exception a task raised, sent back as the task's result: the caller raises it again.

    Dask's worker would log its own traceback of a failed task ("Compute Failed"), beside the one error the
    caller reports, and also for a task still running when its run was interrupted, whose files the caller has
    already removed. Returned as a value, the failure reaches the caller alone, once, or nobody."""

    def __init__(self, error: Exception, trace: str):
        try:
            pickle.dumps(error)
        except Exception:  # the exception's type cannot travel: its text does
            error = RuntimeError(f"{type(error).__name__}: {error}")
        self.error = error
        self.trace = trace


def _quietly(function, *arguments):
    """``function(*arguments)`` on a worker, its exception returned as a :class:`TaskFailure`."""
    try:
        return function(*arguments)
    except Exception as error:
        return TaskFailure(error, traceback.format_exc())


def run_tasks(client, blocks, tasks: dict, priorities: dict | None = None, workers: dict | None = None):
    """Run ``tasks`` (``id -> (function, block ids, *arguments)``: ``function(list of blocks, *arguments)``) on
    the cluster and yield ``(id, result)`` once per task, as tasks finish.

    ``blocks`` is a list, or a function making block ``b`` when a task first needs it: tasks are submitted in
    order, so the first ones run while later blocks are still being made. Among tasks ready to run, workers take
    those of higher ``priorities[id]`` (default 0) first, then those submitted first. ``workers[id]``, if given,
    is the address of the worker that should run the task (another may, once that one is gone)."""
    from concurrent.futures import CancelledError

    distributed = require_distributed()
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
        """What a task gets for its blocks: shared-memory handles as they are, other blocks scattered (again if
        they were lost with a worker)."""
        missing = [b for b in ids if not isinstance(block(b), SharedBlock)
                   and (b not in scattered or scattered[b].status != "finished")]  # fmt: skip
        if missing:
            scattered.update(zip(missing, scatter([block(b) for b in missing])))
        return [made[b] if isinstance(made[b], SharedBlock) else scattered[b] for b in ids]

    start = time.perf_counter()
    attempts: dict = {}

    def submit(task_id):
        function, ids, *arguments = tasks[task_id]
        attempts[task_id] = attempts.get(task_id, 0) + 1
        key = f"seqcompare-{function.__name__.strip('_')}-{token}-{task_id}-{attempts[task_id]}"
        priority = priorities.get(task_id, 0) if priorities else 0
        where = {}
        if workers and task_id in workers and attempts[task_id] == 1:
            where = {"workers": [workers[task_id]], "allow_other_workers": True}
        return client.submit(_quietly, function, futures_of(ids), *arguments, key=key, pure=False,
                             priority=priority, **where)  # fmt: skip

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
            if isinstance(result, TaskFailure):
                _log.debug("task %s failed on its worker:\n%s", task_id, result.trace)
                raise result.error
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
            yield task_id, result
    if len(done) != len(tasks):
        raise RuntimeError(f"{len(tasks) - len(done)} tasks never finished")
    _log.info("%d tasks (%d resubmitted) in %.2f s", len(tasks), sum(attempts.values()) - len(tasks),
              time.perf_counter() - start)  # fmt: skip


# A GPU worker may run two tasks at once (local_cluster's tasks_per_worker). Works whose GPU code sizes its buffers
# by the device's free memory (CCC, alignment) run one at a time; a work that sets ``takes_device_turns`` shares
# the device itself (Hamming: kernels in turns, uploads between them).
_ONE_GPU_TASK = threading.Lock()


def _run_region(blocks, template, spec, reduction, device: str, keys: tuple, join: bool):
    """One task on a worker: the region's work from its blocks, through the worker's own executor."""
    from ..cuda.runtime import resolve_device

    arrays = [joined(blocks)] if join else opened(blocks)
    backend = resolve_device(device)
    work = template.attach(spec, arrays, list(keys), backend)
    if backend == "cuda":
        executor = GpuExecutor([0])  # the worker's GPU: CUDA_VISIBLE_DEVICES pins one per worker
    else:
        executor = ThreadExecutor(worker_threads())
    alone = backend == "cuda" and not getattr(work, "takes_device_turns", False)
    with _ONE_GPU_TASK if alone else contextlib.nullcontext():
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            return [partial for _, partial in executor.partials(work, reduction)]
        with threadpool_limits(worker_threads()):  # BLAS keeps to the worker's cores
            return [partial for _, partial in executor.partials(work, reduction)]


# The last regions in block order, up to this share of the work, are dealt to no worker: whichever frees up first
# takes them, which evens out the workers' ends (each starts when its first blocks exist, one block apart).
UNDEALT_SHARE = 0.2


def assign_regions(regions, workers: int, order: list | None = None, undealt_share: float = UNDEALT_SHARE) -> list:
    """The worker (``0 .. workers - 1``) of each region, for equal shares of work; ``None`` for a region left to
    whichever worker frees up first.

    ``order`` is the order in which the regions become ready to run (their blocks are made in turn; default:
    their own order). With more than one worker:

    - the first ``workers`` regions in that order go one to each worker, so that every worker starts as soon as
      the first blocks exist;
    - the last regions in that order, up to ``undealt_share`` of the work, are dealt to none: they even out the
      workers' ends, whatever each one's start and speed;
    - the rest go largest first, each to the least loaded worker (loads counted in steps of 1/16 of the median
      region, so that regions that differ by a row count the same), among those the one that already needs most
      of the region's blocks (fewer uploads), then the lowest number.

    Dask's own dealing, task by task as workers free up, left 11 to 14 half-tiles on each of 4 GPUs (12.25 the
    mean), and their uploads made it slower (bench/RESULTS.md, session 35).
    """
    if not regions:
        return []
    order = list(range(len(regions))) if order is None else list(order)
    if workers == 1:
        return [0] * len(regions)
    sizes = sorted(region.size for region in regions)
    step = max(1, sizes[len(sizes) // 2] // 16)
    load = [0] * workers
    held = [set() for _ in range(workers)]
    owner: list = [None] * len(regions)

    def deal(number, worker):
        owner[number] = worker
        load[worker] += regions[number].size
        held[worker].update(regions[number].blocks)

    for worker, number in enumerate(order[:workers]):
        deal(number, worker)
    undealt, total, tail = set(), sum(sizes), 0
    for number in reversed(order[workers:]):
        if tail + regions[number].size > undealt_share * total:
            break
        tail += regions[number].size
        undealt.add(number)
    rest = [number for number in order[workers:] if number not in undealt]
    for number in sorted(rest, key=lambda n: (-regions[n].size, n)):
        needs = set(regions[number].blocks)
        deal(number, min(range(workers), key=lambda w: (load[w] // step, -len(needs & held[w]), w)))
    return owner


def balanced_order(regions, workers: int, order: list) -> list:
    """The order in which a run whose regions are dealt up front (:func:`assign_regions`) submits them:
    ``order`` (the order their blocks are made in) for the first ``workers``, which start the workers as soon
    as the first blocks exist; the rest largest first, in ``order`` among equals.

    The smallest regions (Hamming's half-size diagonal tiles, a short last block's tiles) then run last, in
    the undealt tail, and the workers' ends even out to within one of them rather than within one whole tile:
    on 4 H200s, the workers' last tasks ended 0.52 s apart with whole tiles at the end, where a whole tile
    takes its GPU 0.55 s (bench/RESULTS.md, session 44). Every block is still made while the tasks are
    submitted, long before the tail runs."""
    head, rest = list(order[:workers]), list(order[workers:])
    return head + sorted(rest, key=lambda number: -regions[number].size)


def _balanced_by_default(device: str) -> bool:
    """GPU workers are alike: deal them equal shares of regions (:func:`assign_regions`). CPU workers may not be
    (other jobs share their cores): they take regions as they free up."""
    return device == "cuda"


class DaskExecutor:
    """Runs works on a Dask cluster through ``client`` (see the module).

    Parameters
    ----------
    client : distributed.Client
    device : {"cpu", "cuda", "auto"}
        What each worker computes on (``auto``: each worker's own choice).
    tile_size : int, optional
        Region size, where the work takes one (the task tile of Hamming); default: the work's choice (a few
        regions per worker).
    balance : bool, optional
        Deal every worker an equal share of the regions up front (:func:`assign_regions`), each run in the order
        its blocks are made, rather than let workers take regions as they free up. Default: with
        ``device="cuda"``.
    """

    backend = "cpu"

    def __init__(self, client, *, device: str = "cpu", tile_size: int | None = None, balance: bool | None = None):
        self.client = client
        self.device = device
        self.tile_size = tile_size
        self.balance = _balanced_by_default(device) if balance is None else balance

    def partials(self, work, reduction, report=None):
        """``(size, partial)`` as regions finish (``report`` is not used: each region counts its size)."""
        start = time.perf_counter()
        split = work.split(n_workers(self.client), self.tile_size)
        run = uuid.uuid4().hex
        placement = Placement(self.client)
        shared = placement.directory is not None
        arrays = {name: placement.empty(shape, dtype) if shared else np.empty(shape, dtype)
                  for name, (shape, dtype) in split.arrays.items()}  # fmt: skip

        filling = [0.0]  # the caller's seconds making blocks (packing or copying rows into shared memory)

        def make_block(number):
            began = time.perf_counter()
            block = split.blocks[number]
            target = arrays[block.array]
            block.fill(target[block.start : block.stop])
            placed = placement.block(target, block.start, block.stop)
            filling[0] += time.perf_counter() - began
            return placed

        for_workers = reduction.for_workers()
        join = bool(split.notes.get("join_blocks"))
        tasks, priorities, owners = {}, {}, None
        # Blocks are made in order as tasks are submitted: a task goes in as soon as the last block it needs
        # exists.
        order = sorted(range(len(split.regions)),
                       key=lambda n: (max(split.regions[n].blocks, default=-1), -split.regions[n].priority, n))
        addresses = sorted(self.client.scheduler_info()["workers"]) if self.balance else []
        if addresses:
            order = balanced_order(split.regions, len(addresses), order)
            dealt = assign_regions(split.regions, len(addresses), order)
            owners = {number: addresses[dealt[number]] for number in order if dealt[number] is not None}
        for position, number in enumerate(order):
            region = split.regions[number]
            keys = tuple((run, b) for b in region.blocks)
            tasks[number] = (_run_region, region.blocks, split.template, region.spec, for_workers, self.device, keys,
                             join)  # fmt: skip
            # A worker dealt its share runs it in the order the blocks are made.
            priorities[number] = len(order) - position if owners else region.priority
        completed = False
        try:
            for number, partials in run_tasks(self.client, make_block, tasks, priorities, owners):
                sizes = [split.regions[number].size] + [0] * (len(partials) - 1)
                yield from zip(sizes, partials)
            completed = True
        finally:
            arrays.clear()
            placement.close(completed)
            if split.release is not None and self.device != "cpu":
                self._release(split.release, run)
        _log.info("%s: %d regions, %.2f s in all, %.2f s of it making %d blocks", type(work).__name__,
                  len(split.regions), time.perf_counter() - start, filling[0], len(split.blocks))  # fmt: skip

    def _release(self, release, run: str) -> None:
        """Have every worker free what it kept of the run (GPU memory of resident blocks)."""
        try:
            self.client.run(release, run, on_error="ignore")
        except (OSError, TimeoutError, RuntimeError) as error:  # a cluster going down: its memory goes with it
            _log.debug("could not release the run's blocks on the workers: %s", error)
