"""Executors: where the parts of a :class:`~seqcompare.allpairs.Work` are computed and reduced.

An executor turns ``(work, reduction)`` into a stream of ``(size, partial)``: each part's block is computed on
the executor's resources and reduced there (``reduction.reduce``); the engine merges the partials in the caller.
``backend`` names the kind of resource ("cpu" or "cuda"): a work plans its parts for it and may run a reduction
its own way there (:attr:`~seqcompare.allpairs.Work.native`).

- :class:`SerialExecutor`: the calling thread.
- :class:`ThreadExecutor`: a pool of threads (the kernels release the GIL), a bounded number of parts in flight.
- :class:`GpuExecutor`: one thread per visible GPU, each with the work's session on its device.
- Dask: ``seqcompare.distributed.DaskExecutor``, a layer on top; the public functions find it from their
  ``client=`` argument through :func:`executor_for_client` (the distributed package registers itself, so that
  nothing here imports it).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .plan import default_threads


def windowed_map(function: Callable, items: Iterable, workers: int, window: int,
                 name: str = "seqcompare") -> Iterator[tuple]:  # fmt: skip
    """``(item, function(item))`` in submission order from a pool of ``workers`` threads, with at most ``window``
    items in flight (memory stays flat however many there are). Items not started when an exception (or an
    interrupt) leaves are cancelled."""
    with ThreadPoolExecutor(workers, thread_name_prefix=name) as pool:
        pending: deque = deque()
        try:
            for item in items:
                pending.append((item, pool.submit(function, item)))
                if len(pending) >= window:
                    done_item, future = pending.popleft()
                    yield done_item, future.result()
            while pending:
                done_item, future = pending.popleft()
                yield done_item, future.result()
        finally:
            for _, future in pending:
                future.cancel()


def over_row_blocks(kernel: Callable, n: int, before: tuple = (), after: tuple = ()) -> list:
    """``kernel(*before, lo, hi, *after)`` over blocks of ``n`` rows on the CPU's threads (for kernels that
    release the GIL), about four blocks a thread; the results in block order."""
    threads = default_threads()
    step = max(64, -(-n // (4 * threads)))
    blocks = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
    if len(blocks) <= 1:
        return [kernel(*before, lo, hi, *after) for lo, hi in blocks]
    return [result for _, result in windowed_map(lambda block: kernel(*before, *block, *after), blocks, threads,
                                                 len(blocks))]  # fmt: skip


def copy_rows(out: np.ndarray, source: np.ndarray) -> None:
    """``out[...] = source`` in row blocks on every thread: filling a fresh page of shared memory costs a fault,
    and one thread filling gigabytes held a Dask run's first tasks back (NumPy's copy releases the GIL)."""
    if len(out) != len(source):
        raise ValueError(f"copy_rows: {len(source)} rows into {len(out)}")
    over_row_blocks(lambda lo, hi: np.copyto(out[lo:hi], source[lo:hi]), len(out))


def _cpu_kernel(work, threads: int, report):
    """``(kernel, size)``: the work's CPU kernel, and what each part counts for progress (nothing for a work whose
    kernel reports its own progress to ``report``)."""
    if report is not None and work.reports_progress:
        return work.cpu_kernel(threads, report), lambda part: 0
    return work.cpu_kernel(threads), work.size


def _native(work, reduction, backend: str, resources):
    """The work's own way of running ``reduction`` on ``backend``, if it declares one for a kind of partial the
    reduction merges (its :attr:`~seqcompare.allpairs.Reduction.accepts`); else None."""
    declared = work.native.get(backend, ())
    if any(kind in declared for kind in reduction.accepts):
        return work.run_native(backend, reduction, resources)
    return None


class SerialExecutor:
    """Computes and reduces the parts one after another in the calling thread."""

    backend = "cpu"

    def __init__(self, threads: int = 1):
        self.threads = threads

    def partials(self, work, reduction, report=None) -> Iterator[tuple]:
        """``(size, partial)`` of every part, in plan order (``report``: see :func:`_cpu_kernel`)."""
        native = _native(work, reduction, self.backend, self.threads)
        if native is not None:
            yield from native
            return
        kernel, size = _cpu_kernel(work, self.threads, report)
        for part in work.parts(self.backend):
            yield size(part), reduction.reduce(part, kernel(part))


class ThreadExecutor:
    """Computes and reduces parts on ``threads`` threads (default: every core), results in plan order with a
    bounded number in flight. Kernels must release the GIL (Numba ``nogil``, BLAS) to scale."""

    backend = "cpu"

    def __init__(self, threads: int | None = None):
        self.threads = threads or default_threads()

    def partials(self, work, reduction, report=None) -> Iterator[tuple]:
        """``(size, partial)`` of every part, in plan order (``report``: see :func:`_cpu_kernel`)."""
        if self.threads == 1:
            yield from SerialExecutor(1).partials(work, reduction, report)
            return
        native = _native(work, reduction, self.backend, self.threads)
        if native is not None:
            yield from native
            return
        kernel, size = _cpu_kernel(work, self.threads, report)
        parallel = getattr(work, "parallel_parts", True)
        workers = self.threads if parallel else 1

        def compute(part):
            return reduction.reduce(part, kernel(part))

        for part, partial in windowed_map(compute, work.parts(self.backend), workers, 4 * workers):
            yield size(part), partial


class GpuExecutor:
    """Computes and reduces parts on GPUs: one thread per device (default: every visible one), parts dealt in
    plan order. Each thread holds the work's session on its device (``work.gpu_session(device)``), whose
    ``reduce(part, function)`` computes the part's block there and applies ``function(part, block)`` on the
    device before the partial comes back."""

    backend = "cuda"

    def __init__(self, devices=None):
        from ..cuda.runtime import device_count

        self.devices = list(range(device_count())) if devices is None else list(devices)
        if not self.devices:
            from ..cuda.runtime import require_cupy

            require_cupy()  # raises, saying what is missing

    def partials(self, work, reduction, report=None) -> Iterator[tuple]:
        """``(size, partial)`` of every part (``report`` is not used: GPU parts count their size)."""
        native = _native(work, reduction, self.backend, self.devices)
        if native is not None:
            yield from native
            return
        local = threading.local()
        lock = threading.Lock()
        dealt = iter(self.devices * (1 + len(self.devices)))
        sessions = []

        def session():
            found = getattr(local, "session", None)
            if found is None:
                with lock:
                    device = next(dealt)
                found = local.session = work.gpu_session(device)
                sessions.append(found)
            return found

        def compute(part):
            return session().reduce(part, reduction.reduce)

        workers = len(self.devices)
        try:
            for part, partial in windowed_map(compute, work.parts(self.backend), workers, 2 * workers,
                                              "seqcompare-gpu"):  # fmt: skip
                yield work.size(part), partial
        finally:
            for opened in sessions:
                opened.close()


_CLIENT_BACKENDS: list = []


def register_client_backend(accepts: Callable, make_executor: Callable) -> None:
    """Let the public functions' ``client=`` argument reach an executor: ``make_executor(client, device=...,
    tile_size=...)`` is used for clients that ``accepts(client)``. (``seqcompare.distributed`` registers the Dask
    executor when it is imported, so that the engines never import it.)"""
    _CLIENT_BACKENDS.append((accepts, make_executor))


def executor_for_client(client, **options):
    """The executor of a registered backend for ``client`` (a Dask ``Client``).

    Raises
    ------
    TypeError
        If no registered backend accepts it.
    """
    for accepts, make in _CLIENT_BACKENDS:
        if accepts(client):
            return make(client, **options)
    raise TypeError(
        f"client must be a Dask Client made by seqcompare.distributed.connect() (or any Client once "
        f"seqcompare.distributed is imported), not {type(client).__name__}"
    )
