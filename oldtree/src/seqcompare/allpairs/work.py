"""The contract between a command's computation and the engine: :class:`Work`, and :class:`Split` for Dask.

A work is a computation cut into parts (tiles of an all-pairs problem, slabs of CCC pairs, chunks of samples,
batches of pairs to align). It says how to plan its parts for a backend, how to compute a part's block on the
CPU (``cpu_kernel``) and on a GPU (``gpu_session``), which reductions it runs its own way on a backend
(``native``), and, for Dask, how it splits into regions that workers compute from placed blocks of data
(``split``). Parts and blocks carry global coordinates, so a worker's region reduces exactly as the whole
problem would.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


class Work:
    """Base of the engines' works; subclasses define what they support.

    Attributes
    ----------
    unit : str
        What :meth:`size` counts (for progress): ``"pair"``, ``"triple"``, ``"base"``...
    native : dict
        ``{backend: kinds}``: reductions (by :attr:`~seqcompare.allpairs.Reduction.kind`) this work computes its
        own way on that backend, through :meth:`run_native` (the GPU's pair selection in the kernels' epilogue).
    parallel_parts : bool
        Whether parts may run at once on CPU threads (False where each part already uses every core, as BLAS).
    reports_progress : bool
        Whether the CPU kernel reports progress itself as it goes (``cpu_kernel(threads, report)``), for works
        whose CPU plan is one part that its kernel spreads over the threads (a batch of pairs to align fills SIMD
        lanes best whole); its parts then count for nothing more.
    """

    unit = "pair"
    native: dict = {}
    parallel_parts = True
    reports_progress = False

    def parts(self, backend: str) -> list:
        """The plan: the parts to compute on ``backend`` (``"cpu"`` or ``"cuda"``), in order."""
        raise NotImplementedError

    def size(self, part) -> int:
        """How many :attr:`unit`\\ s a part covers."""
        raise NotImplementedError

    def total(self, backend: str = "cpu") -> int:
        """How many units the whole work covers."""
        return sum(self.size(part) for part in self.parts(backend))

    def cpu_kernel(self, threads: int, report=None) -> Callable:
        """``kernel(part) -> block`` on the CPU; ``threads`` is how many cores the kernel may use itself, and
        ``report`` (with :attr:`reports_progress`) what it calls ``report.update(units)`` on as it goes."""
        raise NotImplementedError

    def gpu_session(self, device: int):
        """A session on GPU ``device``: ``reduce(part, function)`` computes the part's block on the device and
        returns ``function(part, block)``; ``close()`` when done."""
        raise NotImplementedError(f"{type(self).__name__} does not run on a GPU")

    def run_native(self, backend: str, reduction, resources):
        """``(size, partial)`` pairs of a reduction named in :attr:`native` (``resources``: the executor's threads
        or devices)."""
        raise NotImplementedError

    def self_pairs(self, items):
        """The block of each of ``items`` (row indices of a symmetric problem) against itself, 1-D: what the
        pairs inside a group of identical items hold (:func:`~seqcompare.allpairs.engine.run_collapsed`)."""
        raise NotImplementedError(f"{type(self).__name__} cannot run on representatives of duplicates")

    def split(self, regions: int, tile_size: int | None = None) -> Split:
        """Cut the work into about ``regions`` regions for Dask workers (see :class:`Split`)."""
        raise NotImplementedError(f"{type(self).__name__} does not run on Dask")


@dataclass
class DataBlock:
    """Rows ``start:stop`` of the array ``array`` of a :class:`Split`, made by ``fill(out)`` into ``out`` (a view
    of those rows, in shared memory for a local cluster)."""

    array: str
    start: int
    stop: int
    fill: Callable


@dataclass
class Region:
    """One Dask task: the blocks it needs (indices into :attr:`Split.blocks`), what it is (``spec``, picklable),
    its size in units and its scheduling priority (higher first)."""

    blocks: list
    spec: object
    size: int
    priority: int = 0


@dataclass
class Split:
    """A work cut for Dask: the data arrays to place (``{name: (shape, dtype)}``), their blocks, the regions, and
    ``template``, a small picklable object whose ``attach(spec, blocks, keys)`` makes a region's work on a worker
    from the region's opened blocks (``keys``: ``(run, block index)`` of each, for caches on the worker).
    ``release(run)``, if given, runs on every worker at the end (to free what they kept)."""

    arrays: dict
    blocks: list
    regions: list
    template: object
    release: Callable | None = None
    notes: dict = field(default_factory=dict)
