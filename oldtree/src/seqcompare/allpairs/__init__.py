"""The all-pairs engine: plans, executors and reductions, written once for every command and backend.

- :mod:`.plan`: :class:`Tile` and :func:`plan_tiles` (the lower triangle of a symmetric problem, or the whole
  rectangle), thread and tile-size defaults.
- :mod:`.work`: :class:`Work`, what a command's computation tells the engine (its parts, how to compute a part
  on the CPU and on a GPU, what it runs natively, how it splits for Dask).
- :mod:`.reductions`: :class:`Reduction` (``reduce`` where the block is, ``merge`` and ``finish`` in the
  caller) and the shared ones: the matrix (in memory or ``.npy``), the streamed lower triangle, pairs within a
  distance, k nearest neighbours, concatenation. CCC's reductions (entries, checksums, histogram) live with CCC.
- :mod:`.executors`: serial, threads, GPUs; Dask plugs in from ``seqcompare.distributed``.
- :func:`run`: the engine itself; :func:`run_collapsed` runs it once per group of identical items
  (:mod:`.duplicates`) and expands the result.
"""

from .duplicates import Duplicates
from .engine import run, run_collapsed
from .executors import (
    GpuExecutor,
    SerialExecutor,
    ThreadExecutor,
    copy_rows,
    executor_for_client,
    over_row_blocks,
    register_client_backend,
)
from .plan import Tile, default_threads, default_tile_size, plan_tiles, region_tile_size
from .reductions import (
    ClusterReduction,
    Combined,
    Concatenation,
    Field,
    KnnReduction,
    LowerTriangleReduction,
    MatrixReduction,
    PairsReduction,
    Reduction,
    array_module,
    to_host,
)
from .work import DataBlock, Region, Split, Work

__all__ = [
    "ClusterReduction", "Combined", "Concatenation", "DataBlock", "Duplicates", "Field", "GpuExecutor", "KnnReduction",
    "LowerTriangleReduction", "MatrixReduction", "PairsReduction", "Reduction", "Region", "SerialExecutor", "Split",
    "ThreadExecutor", "Tile", "Work", "array_module", "copy_rows", "default_threads", "default_tile_size",
    "executor_for_client", "over_row_blocks", "plan_tiles", "region_tile_size", "register_client_backend", "run",
    "run_collapsed", "to_host",
]  # fmt: skip
