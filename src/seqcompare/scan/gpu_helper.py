"""A GPU scan run by a forked helper process, so CUDA's start-up overlaps the parsing of the inputs.

Importing CuPy and creating the CUDA context take about 0.4 s of Python work that holds the GIL; so do the first
calls of the compiled parsers (Numba loading its cached machine code). In one process the two take turns. The
command line therefore forks a helper that only starts CUDA and loads the GPU kernels, while the parent reads
the signatures and the samples and does every compiled CPU pass (window keys, clean runs, packing at 3 bits a
base) straight into a shared ``memfd``. The helper then sorts the keys and scans on the GPU
(:func:`seqcompare.scan.gpu.upload_index`, :func:`~seqcompare.scan.gpu.device_occurrences`) and sends back the
occurrences. Qualities never leave the parent, which sums the scores, so the output is that of
:func:`seqcompare.scan.api.scan` with ``device="cuda"``.

Linux only (``fork`` and ``memfd_create``); :func:`supported` says whether it can be used.
"""

from __future__ import annotations

import time

from ..cuda.helper import GpuHelper, supported  # noqa: F401 - supported() is this module's too


class ScanHelper:
    """A forked process that owns the GPU for one scan (a :class:`~seqcompare.cuda.helper.GpuHelper`); start it
    before reading the inputs.

    Use as a context manager: leaving it stops the helper. Errors of the helper (no CuPy, no GPU, a failed
    kernel) are raised by :meth:`rows` as :class:`~seqcompare.errors.DeviceError`.
    """

    def __init__(self):
        self._helper = GpuHelper(start=lambda: _start_cuda(), name="seqcompare-scan")
        self.timings: dict = {}

    def empty(self, shape, dtype) -> np.ndarray:
        """An array in memory the helper reads without a copy (shared and page-locked): give it as
        :func:`~seqcompare.io.fastq.read_fastq`'s ``pack_into``."""
        return self._helper.empty(shape, dtype)

    def rows(self, samples, prepared, report_all: bool, threshold: float, threads: int, packed=None):
        """The occurrences of ``prepared`` signatures (:func:`~seqcompare.scan.api.prepare_signatures` with
        ``device=None``) in ``samples`` (a :class:`~seqcompare.io.sequences.SequenceSet` with qualities, or a
        :class:`~seqcompare.io.fastq.FastqRecords`), as :func:`~seqcompare.scan.gpu.scan_on_gpu` finds them.

        ``packed`` is ``(bases, nmask, word0)`` of the samples already packed in :meth:`empty` memory (by
        :func:`~seqcompare.io.fastq.read_fastq`), or None to pack them here. Returns ``(matched, chosen, rows)``:
        - ``rows``, the ``(sample, signature row, offset, quality sum)`` rows, whose sample numbers index
          ``chosen``;
        - ``chosen``: with ``packed``, ``samples.select(matched)``, the samples with an occurrence (the only ones
          whose bases and qualities are ever translated); otherwise ``samples`` itself;
        - ``matched``, the index in ``samples`` of each of ``chosen``.
        """
        import numpy as np

        from .packed import host_rows, index_host_parts, pack_records

        started = time.perf_counter()
        allocate = self._helper.empty
        index_parts = index_host_parts(prepared.codes, prepared.offsets, prepared.k, allocate=allocate)
        select = packed is not None
        if packed is None:
            packed = pack_records(samples.codes, samples.offsets, threads, allocate=allocate)
        bases, nmask, word0 = packed
        packed = {"bases": bases, "nmask": nmask, "word0": word0, "lengths": samples.lengths}
        self.timings["host_passes_s"] = time.perf_counter() - started
        sample, signature, offset, device = self._helper.call(_scan, index_parts, packed, prepared.k,
                                                              report_all or threshold >= 0)  # fmt: skip
        self.timings.update(self._helper.timings)
        self.timings.update({f"helper_{name}": value for name, value in device.items()})
        if select:
            started = time.perf_counter()
            matched, sample = np.unique(sample, return_inverse=True)
            chosen = samples.select(matched)
            sample = sample.reshape(-1)
            self.timings["select_s"] = time.perf_counter() - started
        else:
            matched, chosen = np.arange(len(samples)), samples
        return matched, chosen, host_rows(chosen, np.diff(prepared.offsets), sample, signature, offset, report_all,
                                          threshold)  # fmt: skip

    def close(self) -> None:
        """Stop the helper (it exits at once: its CUDA teardown is not waited for)."""
        self._helper.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _start_cuda() -> dict:
    """Import CuPy, create GPU 0's context and load what the scan will use (kernels, CuPy's sort): the helper's
    start (:func:`~seqcompare.cuda.runtime.start_cupy_beside_the_driver`). Returns the stages' seconds."""
    from ..cuda.runtime import start_cupy_beside_the_driver

    return start_cupy_beside_the_driver(_load_scan_kernels, "kernels")


def _load_scan_kernels() -> None:
    from ..cuda.runtime import module, require_cupy
    from .common import lookup_tables
    from .gpu import _SOURCE

    cupy = require_cupy()
    with cupy.cuda.Device(0):
        module(_SOURCE, ())
        tiny = cupy.arange(3, dtype=cupy.int64)
        lookup_tables(tiny, tiny.astype(cupy.int32), tiny.astype(cupy.int32), 2, cupy)
        cupy.cuda.Device(0).synchronize()


def _scan(index_parts: dict, packed: dict, k: int, find_all: bool):
    """In the helper: the signatures' index on the GPU, then every sample's occurrences, and the seconds of the
    upload and of each kernel (CUDA events)."""
    from .gpu import device_occurrences, upload_index

    index = upload_index(index_parts, k)
    timings: dict = {}
    rows = device_occurrences(packed["bases"], packed["nmask"], packed["word0"], packed["lengths"], index, find_all,
                              timings=timings)  # fmt: skip
    kept = ("upload_s", "kernel_index_s", "kernel_ladder_s", "kernel_fallback_s")
    return (*rows, {name: value for name, value in timings.items() if name in kept})
