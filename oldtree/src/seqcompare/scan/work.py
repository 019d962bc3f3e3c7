"""Scanning as a :class:`~seqcompare.allpairs.Work` of the engine: parts are chunks of consecutive samples.

In one process the whole sample set is one part, scanned by the index kernel on every thread (or on the GPU,
the work's native ``concatenation``); on a Dask cluster each worker scans chunks of about equal bases, the
signatures' index built once per worker and kept for the run's later chunks. The occurrence rows of the chunks,
``(sample, signature row, offset, quality sum)``, are put back in sample order by the engine's
:class:`~seqcompare.allpairs.Concatenation`, so the result is byte-identical whatever ran it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..allpairs import DataBlock, Region, Split, Work
from ..io.sequences import SequenceSet

_CHUNKS_PER_WORKER = 4


@dataclass(frozen=True)
class SampleChunk:
    """Samples ``start:stop``."""

    start: int
    stop: int


class ScanWork(Work):
    """Occurrences of the signatures of ``prepared`` (:func:`~seqcompare.scan.api.prepare_signatures`) in
    ``samples`` (a :class:`~seqcompare.io.sequences.SequenceSet` with qualities); ``sample_offset`` is the first
    sample's index in the whole set (a worker's chunk). With a ``verifier``
    (:class:`~seqcompare.scan.approximate.Verifier`) the signatures are the pieces of an approximate scan: each
    chunk's exact rows of the pieces become its verified occurrences where the chunk is scanned (a Dask worker
    verifies its own chunks)."""

    unit = "base"
    native = {"cuda": ("concatenation",)}
    reports_progress = True  # the index kernel reports bases as its threads finish chunks of samples

    def __init__(self, samples: SequenceSet, prepared, report_all: bool, threshold: float, sample_offset: int = 0,
                 verifier=None):  # fmt: skip
        self.samples = samples
        self.prepared = prepared
        self.report_all = report_all
        self.threshold = threshold
        self.sample_offset = sample_offset
        self.verifier = verifier

    def parts(self, backend: str) -> list:
        return [SampleChunk(self.sample_offset, self.sample_offset + len(self.samples))]

    def size(self, part: SampleChunk) -> int:
        offsets = self.samples.offsets
        return int(offsets[part.stop - self.sample_offset] - offsets[part.start - self.sample_offset])

    def _shifted(self, rows):
        """The chunk's rows (verified, for an approximate scan) with sample numbers of the whole set."""
        if self.verifier is not None:
            rows = self.verifier(self.samples, rows)
        return (rows[0] + self.sample_offset, *rows[1:])

    def cpu_kernel(self, threads: int, report=None):
        from ..progress import SILENT

        report = report or SILENT
        prepared = self.prepared
        if prepared.index is None:  # small signatures: no index yet, and none if the sweep will do
            from .sweep import is_small, sweep_rows

            if is_small(self.samples.codes.size, prepared.codes.size, prepared.offsets.size - 1):

                def sweep(part):
                    rows = sweep_rows(self.samples, prepared.codes, prepared.offsets, self.report_all,
                                      self.threshold)  # fmt: skip
                    report.update(self.size(part))
                    return self._shifted(rows)

                return sweep
            prepared.cpu_index()
        from .index import index_rows

        return lambda part: self._shifted(index_rows(self.samples, prepared.index, self.report_all,
                                                     self.threshold, threads, report))  # fmt: skip

    def run_native(self, backend: str, reduction, resources):
        from ..allpairs import default_threads
        from .gpu import scan_on_gpu

        part = self.parts(backend)[0]
        rows = scan_on_gpu(self.samples, self.prepared.index, self.report_all, self.threshold,
                           threads=default_threads())  # fmt: skip
        yield self.size(part), reduction.reduce(part, self._shifted(rows))

    def split(self, regions: int, tile_size: int | None = None) -> Split:
        samples, prepared = self.samples, self.prepared
        n = len(samples)
        chunks = max(1, min(n, regions * _CHUNKS_PER_WORKER))
        cuts = np.searchsorted(samples.offsets, np.linspace(0, samples.offsets[-1], chunks + 1))
        bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n), [n]])).tolist()
        arrays = {"signatures": (prepared.codes.shape, prepared.codes.dtype),
                  "bases": (samples.codes.shape, samples.codes.dtype),
                  "quality": (samples.quality.shape, samples.quality.dtype)}  # fmt: skip
        blocks = [DataBlock("signatures", 0, prepared.codes.size, _Copy(prepared.codes, 0, prepared.codes.size))]
        region_list = []
        for a, b in zip(bounds[:-1], bounds[1:]):
            lo, hi = int(samples.offsets[a]), int(samples.offsets[b])
            blocks.append(DataBlock("bases", lo, hi, _Copy(samples.codes, lo, hi)))
            blocks.append(DataBlock("quality", lo, hi, _Copy(samples.quality, lo, hi)))
            spec = (a, samples.offsets[a : b + 1] - lo)
            region_list.append(Region([0, len(blocks) - 2, len(blocks) - 1], spec, hi - lo))
        return Split(arrays, blocks, region_list, self._template())

    def _template(self):
        """What a worker needs besides its blocks to make its chunk's work."""
        return ScanTemplate(self.prepared.offsets, self.prepared.k, self.report_all, self.threshold, self.verifier)


class _Copy:
    def __init__(self, array, start: int, stop: int):
        self.array, self.start, self.stop = array, start, stop

    def __call__(self, out) -> None:
        out[...] = self.array[self.start : self.stop]


# The signatures' index of the runs a worker takes part in, built once per run and device (key: the run's
# signature block).
_INDEXES: dict = {}
_INDEX_LOCK = threading.Lock()


@dataclass(frozen=True)
class _WorkerSignatures:
    codes: np.ndarray
    offsets: np.ndarray
    k: int
    index: object


@dataclass(frozen=True)
class ScanTemplate:
    """What a Dask worker needs besides its blocks to make its chunk's :class:`ScanWork`: a chunk's spec is
    ``(first sample, sample offsets within the chunk's bases)``."""

    signature_offsets: np.ndarray
    k: int
    report_all: bool
    threshold: float
    verifier: object = None

    def attach(self, spec: tuple, blocks: list, keys: list, device: str) -> ScanWork:
        first, offsets = spec
        signatures, bases, quality = (np.asarray(b) for b in blocks)
        key = (keys[0], device)
        with _INDEX_LOCK:
            for old in [k for k in _INDEXES if k[0][0] != keys[0][0]]:  # another run's index
                del _INDEXES[old]
            prepared = _INDEXES.get(key)
            if prepared is None:
                if device == "cuda":
                    from .gpu import device_index

                    index = device_index(np.array(signatures), self.signature_offsets, self.k)
                else:
                    from .index import SignatureIndex

                    index = SignatureIndex(np.array(signatures), self.signature_offsets, self.k)
                prepared = _INDEXES[key] = _WorkerSignatures(signatures, self.signature_offsets, self.k, index)
        names = [str(i) for i in range(len(offsets) - 1)]
        samples = SequenceSet(names, np.asarray(bases), np.asarray(offsets), np.asarray(quality), "chunk")
        return ScanWork(samples, prepared, self.report_all, self.threshold, first, self.verifier)


class CoverageWork(ScanWork):
    """The covered intervals of every read against the signatures of ``prepared`` (see
    :mod:`~seqcompare.scan.kmer_coverage`): ``(read, signature, start, stop)`` rows, in read order. It splits
    over Dask workers as a scan does (chunks of reads, the signatures' index built once per worker)."""

    native: dict = {}

    def __init__(self, samples: SequenceSet, prepared, kmer: int, max_mismatches: int, sample_offset: int = 0,
                 n_forward: int | None = None):  # fmt: skip
        super().__init__(samples, prepared, True, -1.0, sample_offset)
        self.kmer = kmer
        self.max_mismatches = max_mismatches
        self.n_forward = len(prepared.signatures) if n_forward is None else n_forward

    def cpu_kernel(self, threads: int, report=None):
        from .kmer_coverage import coverage_intervals

        prepared = self.prepared
        index = prepared.index if prepared.index is not None else prepared.cpu_index()
        return lambda part: self._shifted(coverage_intervals(self.samples, index, self.n_forward, self.kmer,
                                                             self.max_mismatches, threads, report))  # fmt: skip

    def _template(self):
        return CoverageTemplate(self.prepared.offsets, self.prepared.k, self.n_forward, self.kmer,
                                self.max_mismatches)  # fmt: skip


@dataclass(frozen=True)
class CoverageTemplate:
    """A worker's :class:`CoverageWork` from its blocks, as :class:`ScanTemplate` makes a scan's (the index
    always on the worker's CPU: coverage has no GPU kernel)."""

    signature_offsets: np.ndarray
    k: int
    n_forward: int
    kmer: int
    max_mismatches: int

    def attach(self, spec: tuple, blocks: list, keys: list, device: str) -> CoverageWork:
        scan = ScanTemplate(self.signature_offsets, self.k, True, -1.0).attach(spec, blocks, keys, "cpu")
        return CoverageWork(scan.samples, scan.prepared, self.kmer, self.max_mismatches, scan.sample_offset,
                            self.n_forward)  # fmt: skip
