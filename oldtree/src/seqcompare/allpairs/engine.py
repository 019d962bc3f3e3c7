"""The engine: a work, a reduction and an executor make a result.

``run(work, reduction, executor)`` asks the executor for the partials of every part (computed and reduced
where the executor computes), merges them in the calling thread as they come, reports progress, and returns
``reduction.finish()``. Every command's all-pairs work (Hamming, CCC) and every batch work (scan, align, dtw)
runs through it, on CPU threads, GPUs or Dask workers, with the same reductions.
"""

from __future__ import annotations

import numpy as np

from ..progress import raise_if_stopped, reporter


def run(work, reduction, executor, progress=False, what: str = "work"):
    """Run ``work`` through ``executor`` into ``reduction`` and return its result.

    Parameters
    ----------
    work : Work
    reduction : Reduction
    executor : SerialExecutor, ThreadExecutor, GpuExecutor or a Dask executor
    progress : bool or callable
        As the public functions take it (:mod:`seqcompare.progress`).
    what : str
        What the progress report calls the work.
    """
    report = reporter(progress, work.total(executor.backend), work.unit, what) if progress else None
    try:
        for size, partial in executor.partials(work, reduction, report):
            raise_if_stopped()  # an interrupt whose exception was swallowed where it arrived
            reduction.merge(partial)
            if report is not None:
                report.update(size)
    finally:
        if report is not None:
            report.close()
    return reduction.finish()


def run_collapsed(work, reduction, executor, left, right=None, progress=False, what: str = "work"):
    """:func:`run` with each group of identical items computed once: ``work`` is the problem of the groups'
    representatives (row ``g`` is group ``g``'s first member), and ``reduction`` is for the whole problem, whose
    result this returns, identical to an uncollapsed run's.

    Parameters
    ----------
    work : Work
        With :meth:`~seqcompare.allpairs.Work.self_pairs` for a symmetric problem.
    reduction : Reduction
        One that can :meth:`~seqcompare.allpairs.Reduction.expand`.
    executor, progress, what
        As for :func:`run`.
    left, right : Duplicates
        The groups of the rows and of the columns (``right`` None: a symmetric problem).
    """
    result = run(work, reduction.collapsed(left, right), executor, progress, what)
    self_pairs = None
    if right is None:
        groups = np.flatnonzero(left.sizes > 1)
        self_pairs = (groups, work.self_pairs(groups))
    return reduction.expand(result, left, right, self_pairs)
