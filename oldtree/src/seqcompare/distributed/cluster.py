"""Dask clusters for seqcompare: a local cluster sized to this machine (one worker per GPU), or an existing one."""

from __future__ import annotations

import os
import sys
import tempfile

from ..allpairs import default_threads
from ..errors import InputError
from .placement import SharedPool


def require_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise InputError("the Dask engine needs dask.distributed: pip install 'seqcompare[distributed]'") from exc
    return distributed


def local_cluster(workers: int | None = None, *, device: str = "cpu", threads: int | None = None,
                  dashboard_address: str = ":0", tasks_per_worker: int | None = None):  # fmt: skip
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
    tasks_per_worker : int, optional
        Tasks a worker runs at once (Dask's ``nthreads``). Default: 2 for GPU workers, which then page-lock and
        upload one task's blocks while the other task's kernels run (on 4 H200s, 400,000 x 30,000 Hamming pairs
        per GPU: 6.16 s against 6.48 s with one; bench/RESULTS.md, session 35), else 1. The tasks share the
        worker's cores.

    Returns
    -------
    distributed.SpecCluster
    """
    distributed = require_distributed()
    cores = threads or default_threads()
    gpus = None
    if device == "cuda":
        from ..cuda.runtime import device_count

        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        gpus = visible.split(",") if visible else [str(g) for g in range(device_count())]
        gpus = gpus[: workers or len(gpus)]
        workers = len(gpus)
    workers = workers or 1
    per_worker = max(1, cores // workers)
    if tasks_per_worker is None:
        tasks_per_worker = 2 if gpus is not None else 1
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
        options = {"nthreads": tasks_per_worker, "env": env, "memory_limit": 0, "silence_logs": 40}
        specs[f"worker-{number}" if gpus is None else f"gpu-{gpus[number]}"] = {"cls": distributed.Nanny,
                                                                                  "options": options}  # fmt: skip
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard_address": dashboard_address}}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": spawn_env}):
        return distributed.SpecCluster(workers=specs, scheduler=scheduler, silence_logs=40)


def connect(scheduler: str | None = None, *, workers: int | None = None, device: str = "cpu",
            threads: int | None = None, log=None, timeout: str = "20s", tasks_per_worker: int | None = None):  # fmt: skip
    """A ``Client``: of the cluster at ``scheduler`` (e.g. ``tcp://host:8786``, started by dask-jobqueue or
    dask-mpi), or of a new :func:`local_cluster` (``workers``, ``device``, ``threads``, ``tasks_per_worker`` as
    there). The
    dashboard's address goes to ``log`` (default: stderr); ``timeout`` bounds reaching a scheduler.

    Returns
    -------
    distributed.Client
        Give it to :func:`close` at the end, which also stops a local cluster.
    """
    distributed = require_distributed()
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    else:
        cluster = local_cluster(workers, device=device, threads=threads, tasks_per_worker=tasks_per_worker)
        client = distributed.Client(cluster)
        client.wait_for_workers(len(cluster.workers))
        # Closing the client closes the cluster it started.
        client._seqcompare_cluster = cluster
        # Its workers share this machine's memory: blocks go through files there, not through sockets.
        client._seqcompare_shared = "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()
        # Large files of one run stay mapped for the next (writing fresh shared pages is slow).
        client._seqcompare_pool = SharedPool()
    (log or (lambda text: print(text, file=sys.stderr, flush=True)))(
        f"dask: {len(client.scheduler_info()['workers'])} workers, dashboard {client.dashboard_link}"
    )
    return client


def close(client) -> None:
    """Close ``client`` and the local cluster :func:`connect` started for it, if any."""
    cluster = getattr(client, "_seqcompare_cluster", None)
    pool = getattr(client, "_seqcompare_pool", None)
    if pool is not None:
        pool.clear()
    client.close()
    if cluster is not None:
        cluster.close()
