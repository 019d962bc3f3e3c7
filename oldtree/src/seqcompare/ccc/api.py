"""Public CCC/DUO API: 2-way and 3-way tables of genotype vectors, thresholded or in full, with checksums.

:func:`ccc` makes a :class:`~seqcompare.ccc.work.CCCWork` and the reductions asked for
(:mod:`seqcompare.ccc.reductions`) and runs them through the all-pairs engine: on the CPU, a GPU, or a Dask
cluster (``client``), with the same results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import validation
from ..allpairs import SerialExecutor, executor_for_client, run
from ..errors import InputError
from .checksum import Checksum, CometChecksum
from .formulas import DEFAULT_PARAM, MAX_EXACT_TALLY, Metric, max_tally
from .reductions import CLASS_NAMES, Checksum as ChecksumReduction, CometChecksum as CometReduction, Entries, \
    Histogram, Outputs, Threshold, Values
from .work import CCCWork

METHODS = ("auto", "reference", "blas", "bitmma")
__all__ = ["CCCResult", "CLASS_NAMES", "METHODS", "Threshold", "ccc"]


@dataclass
class CCCResult:
    """Result of :func:`ccc`.

    Full results (no threshold): ``index`` ``(n_items, way)`` (pairs ``i < j`` or triples ``i < j < k`` in
    lexicographic order, the condensed order of ``scipy.spatial.distance``), ``values`` float64
    ``(n_items, 2, 2)`` or ``(n_items, 2, 2, 2)`` indexed by allele bits (0 = the vector's allele 0, the
    alphabetically first), and ``tables`` (the integer tallies) when asked for.

    Thresholded results: ``entry_index`` ``(n_entries, way)``, ``entry_bits`` ``(n_entries, way)`` and
    ``entry_value``, in the same order.

    Always: ``checksum`` (:class:`~seqcompare.ccc.checksum.Checksum`), ``comparisons`` (items x fields, as
    CoMet counts), ``seconds``; when asked for, ``histogram`` (``edges``, ``counts`` per class) and
    ``comet_checksum`` (:class:`~seqcompare.ccc.checksum.CometChecksum`, what CoMet prints as
    "metrics checksum").
    """

    way: int
    metric: Metric
    n_vectors: int
    n_fields: int
    checksum: Checksum
    index: np.ndarray | None = None
    values: np.ndarray | None = None
    tables: np.ndarray | None = None
    entry_index: np.ndarray | None = None
    entry_bits: np.ndarray | None = None
    entry_value: np.ndarray | None = None
    histogram: dict | None = None
    comet_checksum: CometChecksum | None = None
    seconds: float = 0.0
    method: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def comparisons(self) -> int:
        """Vector pairs (triples) times fields: CoMet's "element comparisons"."""
        n = self.n_vectors
        items = n * (n - 1) // 2 if self.way == 2 else n * (n - 1) * (n - 2) // 6
        return items * self.n_fields

    @property
    def rate(self) -> float:
        """Comparisons per second."""
        return self.comparisons / self.seconds if self.seconds > 0 else float("inf")


def _codes_of(genotypes, metric_name: str) -> np.ndarray:
    """CoMet codes of a :class:`~seqcompare.io.genotypes.Genotypes` (or anything with ``codes``), or of an array
    of allele-1 counts (diploid for CCC, haploid for DUO)."""
    codes = getattr(genotypes, "codes", None)
    if codes is not None:
        return np.ascontiguousarray(codes, dtype=np.uint8)
    from ..io.genotypes import Genotypes

    try:
        return Genotypes.from_counts(genotypes, ploidy=2 if metric_name == "ccc" else 1).codes
    except ValueError as exc:
        raise InputError(str(exc)) from None


def _genotypes_of(genotypes):
    """A path is read (:func:`~seqcompare.io.genotypes.read_genotypes`); anything else is used as it is."""
    if isinstance(genotypes, (str, bytes)) or hasattr(genotypes, "__fspath__"):
        from ..io.genotypes import read_genotypes

        return read_genotypes(genotypes)
    return genotypes


def ccc(genotypes, *, way: int = 2, metric: str = "auto", sparse: bool = True, multiplier: float | None = None,
        param: float = DEFAULT_PARAM, threshold=None, method: str = "auto", device: str = "cpu",
        histogram: int | None = None, keep_tables: bool = False, comet_checksum: bool = False, client=None,
        progress=False) -> CCCResult:  # fmt: skip
    """CoMet's Custom Correlation Coefficient (or DUO) between every pair or triple of genotype vectors.

    Parameters
    ----------
    genotypes : Genotypes, path or array_like
        A :class:`~seqcompare.io.genotypes.Genotypes`, a file to read (VCF, PLINK, see
        :func:`~seqcompare.io.genotypes.read_genotypes`), or an integer array ``(n_vectors, n_fields)`` of
        allele-1 copy counts (0..2 for CCC, 0..1 for DUO; -1 = missing).
    way : {2, 3}
        Pairs or triples (``i < j < k`` only).
    metric : {"auto", "ccc", "duo"}
        ``auto``: CCC for diploid genotypes, DUO for haploid ones (as the command line decides); an array of
        counts is taken as diploid.
    sparse : bool
        Treat missing genotypes as missing (CoMet's ``--sparse yes``); otherwise code ``10`` counts as one copy
        of each allele, as in CoMet's non-sparse mode.
    multiplier, param : float
        M > 0 (default 9/2 for CCC, 4 for DUO) and gamma in [0, 1] (default 2/3): in that range every weight
        ``1 - gamma f`` lies in [0, 1] and every value in [0, M].
    threshold : float or str, optional
        Keep only entries whose value is greater than it, compared in single precision as CoMet does;
        ``"tLL,tLH,tHH,tLLHH"`` (3-way: ``"tLLL,tLLH,tLHH,tHHH,tLLLHHH"``) for per-class thresholds (see
        :class:`Threshold`).
    method : {"auto", "reference", "blas", "bitmma"}
        ``reference``: direct loops (the oracle); ``blas``: GEMMs of allele counts on the CPU; ``bitmma``:
        1-bit tensor cores on a GPU (``device="cuda"``).
    device : {"cpu", "cuda", "auto"}
    histogram : int, optional
        Also count values per entry class in this many bins.
    keep_tables : bool
        Keep the integer tallies too (full results only).
    comet_checksum : bool
        Also compute CoMet's own checksum of the values (``result.comet_checksum``).
    client : dask.distributed.Client, optional
        Run on this Dask cluster (slabs of pairs or pivots as tasks; see :mod:`seqcompare.distributed`). The
        results are identical to a single-process run's.
    progress : bool or callable
        Report progress (see :mod:`seqcompare.progress`).

    Returns
    -------
    CCCResult
    """
    from ..cuda.runtime import resolve_device

    way = validation.integer(way, "way")
    validation.choice(way, "way", (2, 3))
    validation.choice(metric, "metric", ("auto", "ccc", "duo"))
    validation.choice(method, "method", METHODS)
    if multiplier is not None:
        multiplier = validation.real(multiplier, "multiplier", above=0.0)
    param = validation.real(param, "param", minimum=0.0, maximum=1.0)
    histogram = validation.optional_integer(histogram, "histogram", minimum=1)
    genotypes = _genotypes_of(genotypes)
    if metric == "auto":
        metric = "duo" if getattr(genotypes, "ploidy", 2) == 1 else "ccc"
    metric_ = Metric(metric, sparse, multiplier, param)
    shape = np.shape(getattr(genotypes, "codes", genotypes))
    largest = max_tally(shape[-1] if len(shape) == 2 else 0, way, metric_)
    if largest > MAX_EXACT_TALLY:
        raise InputError(f"{shape[-1]} fields: {way}-way {metric} tallies could reach {largest}, beyond the exact "
                         f"32-bit range (at most {MAX_EXACT_TALLY // metric_.counted_bits**way} fields)")  # fmt: skip
    codes = _codes_of(genotypes, metric)
    n_vectors, n_fields = codes.shape
    device = resolve_device(device)
    if method == "auto":
        method = "bitmma" if device == "cuda" else "blas"
    if (method == "bitmma") != (device == "cuda"):
        raise ValueError(f"method {method!r} runs on {'cuda' if method == 'bitmma' else 'the cpu'}, not {device!r}")
    try:
        limits = Threshold.parse(threshold, way) if threshold is not None else None
    except ValueError as exc:
        raise ValueError(f"threshold: {exc}") from None
    result = CCCResult(way, metric_, n_vectors, n_fields, Checksum(), method=method)
    reductions = [ChecksumReduction(way, limits)]
    if comet_checksum:
        reductions.append(CometReduction(way, limits, n_vectors))
    reductions.append(Entries(way, limits) if limits is not None else Values(way, keep_tables))
    if histogram:
        reductions.append(Histogram(way, histogram, _value_bound(metric_, way)))
    outputs = Outputs(*reductions, limits=limits)
    if client is not None:
        if method == "reference":
            raise ValueError("the distributed engine runs the 'blas' and 'bitmma' methods, not 'reference'")
        executor = executor_for_client(client, device=device)
    else:
        executor = SerialExecutor() if device == "cpu" else _first_gpu()
    work = CCCWork(codes, metric_, way, method)
    start = time.perf_counter()
    finished = run(work, outputs, executor, progress, f"{way}-way {metric}")
    result.seconds = time.perf_counter() - start
    result.checksum = finished[0]
    rest = list(finished[1:])
    if comet_checksum:
        result.comet_checksum = rest.pop(0)
    kept = rest.pop(0)
    if limits is not None:
        result.entry_index, result.entry_bits, result.entry_value = kept
    else:
        result.index, result.values, result.tables = kept
    if histogram:
        result.histogram = rest.pop(0)
    return result


def _first_gpu():
    from ..allpairs import GpuExecutor

    return GpuExecutor([0])


def _value_bound(metric: Metric, way: int) -> float:
    """max over f in [0, 1] of M f (1 - g f)**way: the largest value when the joint frequency equals the
    marginal ones (1 for 2-way CCC with CoMet's constants)."""
    gamma = metric.param
    peak = 1.0 if gamma <= 0 else min(1.0, 1.0 / (gamma * (way + 1)))
    return max(1e-12, metric.multiplier * peak * (1 - gamma * peak) ** way)
