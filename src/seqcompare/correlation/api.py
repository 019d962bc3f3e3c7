"""Public CCC/DUO API: 2-way and 3-way tables of genotype vectors, thresholded or in full, with a checksum."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .. import validation
from ..errors import InputError
from ..progress import SILENT, reporter
from .checksum import Checksum, CometChecksum
from .formulas import DEFAULT_PARAM, MAX_EXACT_TALLY, Metric, counts, marginals, max_tally, tables, values

METHODS = ("auto", "reference", "blas", "bitmma")
CLASS_NAMES = {2: ("LL", "LH", "HH", "LLHH"), 3: ("LLL", "LLH", "LHH", "HHH", "LLLHHH")}


@dataclass(frozen=True)
class Threshold:
    """CoMet's thresholds: an entry is kept when its value is **greater** than the threshold of its class.

    Classes count the entry's allele-1 ("H") bits: LL, LH (both off-diagonal entries), HH for 2-way; LLL, LLH,
    LHH, HHH for 3-way. The optional combined threshold also keeps the all-L and all-H entries of a table when
    both are positive and their sum is greater than it (CoMet's ``tLLHH`` / ``tLLLHHH``).

    As in CoMet, values are compared in single precision: ``float32(value) > t``, and the combined test adds the
    two values as float32. So exactly the entries CoMet writes are kept, including those whose float64 value is
    a hair above ``t`` but rounds to ``t`` or below.
    """

    by_class: tuple
    combined: float | None = None

    @classmethod
    def parse(cls, text, way: int) -> Threshold:
        """A number (every class), or ``way + 2`` comma-separated numbers: the classes, then the combined one.

        Raises
        ------
        ValueError
            If a part is not a finite number, or there are neither 1 nor ``way + 2`` parts.
        """
        if isinstance(text, Threshold):
            return text
        if isinstance(text, str):
            parts = text.split(",")
        elif isinstance(text, bool) or not isinstance(text, (int, float, np.integer, np.floating)):
            raise TypeError(f"threshold must be a number or a string of numbers, not {text!r}")
        else:
            parts = [text]
        values = []
        for part in parts:
            try:
                value = float(part)
            except ValueError:
                raise ValueError(f"{str(part).strip()!r} is not a number") from None
            if not np.isfinite(value):
                raise ValueError(f"{str(part).strip()!r} is not a finite number")
            values.append(value)
        if len(values) == 1:
            return cls((values[0],) * (way + 1))
        if len(values) != way + 2:
            names = ",".join("t" + name for name in CLASS_NAMES[way])
            raise ValueError(f"give one value or {way + 2} ({names}), not {len(values)}")
        return cls(tuple(values[:-1]), values[-1])

    def passed(self, flat_values: np.ndarray, way: int) -> np.ndarray:
        """Boolean ``(n, 2**way)``: which entries of each table are kept (compared as CoMet compares them)."""
        single = np.asarray(flat_values).astype(np.float32)
        high_bits = np.array([bin(e).count("1") for e in range(1 << way)])
        limits = np.asarray(self.by_class, dtype=np.float64)[high_bits]
        keep = single > limits
        if self.combined is not None:
            low, high = single[:, 0], single[:, -1]
            # float32 sum (as CoMet adds them), compared with the threshold in float64: a bare Python float
            # would be cast to float32 for the comparison (NumPy's promotion rules), which CoMet does not do.
            both = (low > 0) & (high > 0) & ((low + high).astype(np.float64) > np.float64(self.combined))
            keep[:, 0] |= both
            keep[:, -1] |= both
        return keep


@dataclass
class CCCResult:
    """Result of :func:`ccc`.

    Full results (no threshold): ``index`` ``(n_items, way)`` (pairs ``i < j`` or triples ``i < j < k`` in
    lexicographic order, the condensed order of ``scipy.spatial.distance``), ``values`` float64
    ``(n_items, 2, 2)`` or ``(n_items, 2, 2, 2)`` indexed by allele bits (0 = the vector's allele 0, the
    alphabetically first), and ``tables`` (the integer tallies) when asked for.

    Thresholded results: ``entry_index`` ``(n_entries, way)``, ``entry_bits`` ``(n_entries, way)`` and
    ``entry_value``, in the same order.

    Always: ``checksum`` (:class:`~seqcompare.correlation.checksum.Checksum`), ``comparisons`` (items x fields, as
    CoMet counts), ``seconds``; when asked for, ``histogram`` (``edges``, ``counts`` per class) and
    ``comet_checksum`` (:class:`~seqcompare.correlation.checksum.CometChecksum`, what CoMet prints as
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


class Histogram:
    """Counts of values per class (as CoMet's ``--histograms_file``): ``bins`` equal bins over
    ``[0, upper]``; values above ``upper`` land in the last bin."""

    def __init__(self, bins: int, way: int, upper: float):
        self.way = way
        self.edges = np.linspace(0.0, upper, bins + 1)
        self.counts = np.zeros((way + 2, bins), dtype=np.int64)

    def add(self, flat_values: np.ndarray) -> None:
        bins = self.counts.shape[1]
        high_bits = np.array([bin(e).count("1") for e in range(1 << self.way)])

        def count(values, row):
            at = np.clip(np.searchsorted(self.edges, values, side="right") - 1, 0, bins - 1)
            self.counts[row] += np.bincount(at.ravel(), minlength=bins)

        for klass in range(self.way + 1):
            count(flat_values[:, high_bits == klass], klass)
        count(flat_values[:, 0] + flat_values[:, -1], self.way + 1)

    def as_dict(self) -> dict:
        return {"edges": self.edges, "counts": self.counts, "classes": CLASS_NAMES[self.way]}


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
    from ..gpu._runtime import resolve_device

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
    if comet_checksum:
        result.comet_checksum = CometChecksum(n_vectors)
    hist = Histogram(histogram, way, _value_bound(metric_, way)) if histogram else None
    sink = _Sink(way, metric_, limits, hist, result.checksum, keep_tables, comet=result.comet_checksum)
    start = time.perf_counter()
    items = n_vectors * (n_vectors - 1) // 2 if way == 2 else n_vectors * (n_vectors - 1) * (n_vectors - 2) // 6
    sink.report = reporter(progress, items, "pair" if way == 2 else "triple", f"{way}-way {metric}")
    try:
        if client is not None:
            if method == "reference":
                raise ValueError("the distributed engine runs the 'blas' and 'bitmma' methods, not 'reference'")
            from ..distributed import run_ccc

            run_ccc(client, codes, metric_, way, method, sink)
        else:
            compute(codes, metric_, way, method, sink)
    finally:
        sink.report.close()
    sink.finish(result)
    result.seconds = time.perf_counter() - start
    result.histogram = hist.as_dict() if hist else None
    return result


def compute(codes: np.ndarray, metric: Metric, way: int, method: str, sink, items=None) -> None:
    """Tables and values of ``codes`` into ``sink`` by ``method`` (``reference``, ``blas`` or ``bitmma``).

    ``items = (first, last)`` does part of the work (each part once; the parts of a whole run may go to
    different processes): ``blas`` pairs ``(i, j > i)`` with ``first <= i < last``, ``bitmma`` pairs
    ``(q < r, r)`` with ``first <= r < last`` (``first`` a multiple of
    :func:`seqcompare.gpu.ccc.row_alignment`), and both 3-way pivots ``first <= i < last``."""
    if method == "bitmma":
        from ..gpu.ccc import run_bitmma

        run_bitmma(codes, metric, way, sink, items)
        return
    # Without any missing genotype the sparse and non-sparse tallies coincide, and the non-sparse ones need one
    # product instead of four.
    engine_metric = metric if not metric.sparse or (codes == 2).any() else replace(metric, sparse=False)
    a, d = counts(codes, engine_metric)
    defined, ones = marginals(a, d)
    if method == "reference":
        from .reference import reference_tables

        if items is not None:
            raise ValueError("the reference method computes everything at once")
        index, table, _, _ = reference_tables(codes, way, metric)
        sink.add(index, table, defined, ones)
        sink.report.update(len(index))
    else:
        _run_blas(a, d, defined, ones, engine_metric, way, sink, items=items)


def _value_bound(metric: Metric, way: int) -> float:
    """max over f in [0, 1] of M f (1 - g f)**way: the largest value when the joint frequency equals the
    marginal ones (1 for 2-way CCC with CoMet's constants)."""
    gamma = metric.param
    peak = 1.0 if gamma <= 0 else min(1.0, 1.0 / (gamma * (way + 1)))
    return max(1e-12, metric.multiplier * peak * (1 - gamma * peak) ** way)


class _Sink:
    """Turns blocks of tables into values and hands them to the requested outputs. Indices handed in are
    local to the rows computed; ``offset`` (the first row's global index) makes them global."""

    def __init__(self, way, metric, limits, histogram, checksum, keep_tables, offset: int = 0, comet=None):
        self.way, self.metric, self.limits = way, metric, limits
        self.histogram, self.checksum, self.keep_tables = histogram, checksum, keep_tables
        self.comet = comet
        self.offset = offset
        self.parts: list = []
        self.report = SILENT

    def add(self, index: np.ndarray, table: np.ndarray, defined: np.ndarray, ones: np.ndarray) -> None:
        """Items ``index`` (``(n, way)``, ascending per row) with their integer tables."""
        way = self.way
        value = values(table, [defined[index[:, x]] for x in range(way)], [ones[index[:, x]] for x in range(way)],
                       self.metric)  # fmt: skip
        self.add_values(index, value, table)

    def add_values(self, index, value, table=None) -> None:
        self._keep_values(index + self.offset if self.offset else index, value, table)

    def add_entries(self, index, entry, value) -> None:
        """Entries that passed the threshold (computed where the values are, e.g. on a GPU)."""
        self._keep_entries(index + self.offset if self.offset else index, entry, value)

    def _keep_values(self, index, value, table=None) -> None:
        way = self.way
        flat = value.reshape(len(index), 1 << way)
        if self.histogram is not None:
            self.histogram.add(flat)
        if self.limits is None:
            self.checksum.add(index, flat, way)
            if self.comet is not None:
                self.comet.add_entries(index, flat, way)
            self.parts.append((index, value, table if self.keep_tables else None))
            return
        keep = self.limits.passed(flat, way)
        item, entry = np.nonzero(keep)
        self._keep_entries(index[item], entry, flat[item, entry])

    def _keep_entries(self, index, entry, value) -> None:
        self.checksum.add_entries(index, value, self.way, entry)
        if self.comet is not None:
            self.comet.add_entries(index, value, self.way, entry)
        self.parts.append((index, entry, value))

    def finish(self, result: CCCResult) -> None:
        way = self.way
        if self.limits is None:
            parts = self.parts
            index = np.concatenate([p[0] for p in parts]) if parts else np.empty((0, way), np.int64)
            # Blocks may arrive in any order (e.g. a GPU's row blocks): lexicographic order, as documented.
            order = np.lexsort(tuple(index[:, x] for x in reversed(range(way))))
            shape = (0,) + (2,) * way
            result.index = index[order]
            result.values = (np.concatenate([p[1] for p in parts]) if parts else np.empty(shape))[order]
            if self.keep_tables:
                tallies = np.concatenate([p[2] for p in parts]) if parts else np.empty(shape, np.int64)
                result.tables = tallies[order]
            return
        index = np.concatenate([p[0] for p in self.parts]) if self.parts else np.empty((0, way), np.int64)
        entry = np.concatenate([p[1] for p in self.parts]) if self.parts else np.empty(0, np.int64)
        value = np.concatenate([p[2] for p in self.parts]) if self.parts else np.empty(0)
        order = np.lexsort((entry,) + tuple(index[:, x] for x in reversed(range(way))))
        result.entry_index = index[order]
        result.entry_bits = ((entry[order, None] >> np.arange(way - 1, -1, -1)) & 1).astype(np.uint8)
        result.entry_value = value[order]


def _run_blas(a, d, defined, ones, metric, way, sink, block_items: int = 1 << 22, items=None) -> None:
    from .cpu import CpuProducts

    n = a.shape[0]
    first, last = (0, n) if items is None else (int(items[0]), min(n, int(items[1])))
    products = CpuProducts(a, d, metric, way)
    if way == 2:
        rows_per_block = max(1, block_items // max(1, n))
        for r0 in range(first, last, rows_per_block):
            r1 = min(last, r0 + rows_per_block)
            block = products.pairs(slice(r0, r1), slice(r0, n))
            i, j = np.nonzero(np.arange(r0, n)[None, :] > np.arange(r0, r1)[:, None])
            index = np.stack([i + r0, j + r0], axis=1)
            sink.add(index, tables(block[i, j], 2, metric.counted_bits), defined, ones)
            sink.report.update(len(index))
        return
    for i in range(first, min(last, n - 2)):
        block = products.pivot(i)
        j, k = np.triu_indices(n - i - 1, 1)
        index = np.stack([np.full(j.size, i), j + i + 1, k + i + 1], axis=1)
        sink.add(index, tables(block[j, k], 3, metric.counted_bits), defined, ones)
        sink.report.update(len(index))
