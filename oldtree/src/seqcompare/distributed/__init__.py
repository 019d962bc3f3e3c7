"""The engines on a Dask cluster (``pip install 'seqcompare[distributed]'``): a layer on top of the all-pairs
engine, which nothing else imports.

- :func:`connect` / :func:`close`: a client of a new :func:`local_cluster` (one worker per GPU with
  ``device="cuda"``, each pinned to its GPU) or of an existing cluster (``tcp://host:8786``, e.g. started by
  dask-jobqueue or dask-mpi).
- :class:`DaskExecutor`: runs any splittable :class:`~seqcompare.allpairs.Work` (Hamming tiles, CCC slabs, scan
  sample chunks, align/dtw pair batches) as tasks; blocks of data are placed once (:mod:`.placement`).

The public functions take ``client=`` and reach :class:`DaskExecutor` through the engine's registry, which this
package fills when it is imported (it is, by :func:`connect`).
"""

from __future__ import annotations

from ..allpairs import register_client_backend
from .cluster import close, connect, local_cluster, require_distributed
from .executor import DaskExecutor, run_tasks, worker_threads
from .placement import Placement, SharedBlock, finish_removals

__all__ = ["DaskExecutor", "Placement", "SharedBlock", "close", "connect", "finish_removals", "local_cluster",
           "require_distributed", "run_tasks", "worker_threads"]  # fmt: skip


def _is_dask_client(client) -> bool:
    return type(client).__module__.split(".", 1)[0] == "distributed" and hasattr(client, "submit")


register_client_backend(_is_dask_client, DaskExecutor)
