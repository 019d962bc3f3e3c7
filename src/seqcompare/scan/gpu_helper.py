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

import mmap
import multiprocessing
import os
import time

import numpy as np

from ..errors import DeviceError, InputError

_PAGE = mmap.ALLOCATIONGRANULARITY


def supported() -> bool:
    """True where a helper can be forked and share memory with its parent (Linux)."""
    return hasattr(os, "memfd_create") and "fork" in multiprocessing.get_all_start_methods()


class SharedArrays:
    """NumPy arrays in one anonymous shared file (``memfd``), each at a page boundary, that another process
    maps from the file and a small description (:meth:`describe`, :func:`attach`)."""

    def __init__(self, descriptor: int):
        self.descriptor = descriptor
        self.size = 0
        self._offsets: dict[int, int] = {}  # data address -> offset in the file

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised array in the shared file (the signature of ``np.empty``)."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        length = -(-max(1, count * dtype.itemsize) // _PAGE) * _PAGE
        offset = self.size
        self.size += length
        os.ftruncate(self.descriptor, self.size)
        array = np.frombuffer(mmap.mmap(self.descriptor, length, offset=offset), dtype, count).reshape(shape)
        self._offsets[array.__array_interface__["data"][0]] = offset
        return array

    def describe(self, arrays: dict) -> dict:
        """``{name: ("shared", offset, dtype, shape)}`` for arrays made by :meth:`empty`; other arrays are
        carried as they are (``("inline", array)``)."""
        described = {}
        for name, array in arrays.items():
            offset = self._offsets.get(array.__array_interface__["data"][0])
            if offset is None or not array.flags.c_contiguous:
                described[name] = ("inline", np.ascontiguousarray(array))
            else:
                described[name] = ("shared", offset, array.dtype.str, array.shape)
        return described


def attach(descriptor: int, size: int, described: dict) -> dict:
    """The arrays of :meth:`SharedArrays.describe`, read-only views of the shared file (or inline copies)."""
    shared = mmap.mmap(descriptor, size, access=mmap.ACCESS_READ) if size else None
    arrays = {}
    for name, entry in described.items():
        if entry[0] == "inline":
            arrays[name] = entry[1]
        else:
            _, offset, dtype, shape = entry
            arrays[name] = np.frombuffer(shared, np.dtype(dtype), int(np.prod(shape)), offset).reshape(shape)
    return arrays


class ScanHelper:
    """A forked process that owns the GPU for one scan; start it before reading the inputs.

    Use as a context manager: leaving it stops the helper. Errors of the helper (no CuPy, no GPU, a failed
    kernel) are raised by :meth:`rows` as :class:`~seqcompare.errors.DeviceError`.
    """

    def __init__(self):
        context = multiprocessing.get_context("fork")
        self._memory = os.memfd_create("seqcompare-scan")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(target=_serve, args=(child_end, self._connection, self._memory), daemon=True)
        self._process.start()
        child_end.close()
        self.timings: dict = {}

    def rows(self, samples, prepared, report_all: bool, threshold: float, threads: int):
        """``(sample, signature row, offset, quality sum)`` occurrence rows of ``samples`` (a
        :class:`~seqcompare.io.sequences.SequenceSet` with qualities) against ``prepared`` signatures
        (:func:`~seqcompare.scan.api.prepare_signatures` with ``device=None``), as
        :func:`~seqcompare.scan.gpu.scan_on_gpu` returns them."""
        from .packed import host_rows, index_host_parts, pack_records

        started = time.perf_counter()
        shared = SharedArrays(self._memory)
        index_parts = index_host_parts(prepared.codes, prepared.offsets, prepared.k, allocate=shared.empty)
        bases, nmask, word0 = pack_records(samples.codes, samples.offsets, threads, allocate=shared.empty)
        packed = {"bases": bases, "nmask": nmask, "word0": word0, "lengths": samples.lengths}
        self.timings["host_passes_s"] = time.perf_counter() - started
        try:
            self._connection.send((shared.size, shared.describe(index_parts), shared.describe(packed), prepared.k,
                                   report_all or threshold >= 0))  # fmt: skip
        except OSError:
            pass  # the helper has ended: what it sent before, or its exit code, says why
        (sample, signature, offset), helper_timings = self._receive()
        self.timings.update(helper_timings)
        return host_rows(samples, np.diff(prepared.offsets), sample, signature, offset, report_all, threshold)

    def _receive(self):
        try:
            kind, value = self._connection.recv()
        except (EOFError, OSError):
            self._process.join(1)
            raise DeviceError(f"the GPU helper process ended unexpectedly (exit code {self._process.exitcode})") from None
        if kind == "error":
            raise value
        return value

    def close(self) -> None:
        """Stop the helper (it exits at once: its CUDA teardown is not waited for)."""
        if self._memory < 0:
            return
        if self._process.is_alive():
            self._process.kill()
        self._connection.close()
        os.close(self._memory)
        self._memory = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _start_cuda() -> None:
    """Import CuPy, create GPU 0's context and load what the scan will use (kernels, CuPy's sort)."""
    from ..cuda.runtime import module, require_cupy
    from .common import lookup_tables
    from .gpu import _SOURCE

    cupy = require_cupy()
    with cupy.cuda.Device(0):
        module(_SOURCE, ())
        tiny = cupy.arange(3, dtype=cupy.int64)
        lookup_tables(tiny, tiny.astype(cupy.int32), tiny.astype(cupy.int32), 2, cupy)
        cupy.cuda.Device(0).synchronize()


def _serve(connection, parent_end, memory: int) -> None:
    """The helper: start CUDA, then scan what the parent shares."""
    parent_end.close()
    try:
        from .gpu import device_occurrences, upload_index

        started = time.perf_counter()
        _start_cuda()
        timings = {"helper_cuda_start_s": time.perf_counter() - started}
        try:
            size, index_parts, packed, k, find_all = connection.recv()
        except EOFError:
            return
        index_parts = attach(memory, size, index_parts)
        packed = attach(memory, size, packed)
        started = time.perf_counter()
        index = upload_index(index_parts, k)
        timings["helper_index_s"] = time.perf_counter() - started
        occurrences = device_occurrences(packed["bases"], packed["nmask"], packed["word0"], packed["lengths"], index,
                                         find_all)  # fmt: skip
        timings["helper_scan_s"] = time.perf_counter() - started - timings["helper_index_s"]
        connection.send(("rows", (occurrences, timings)))
    except BaseException as exc:  # every failure goes back to the parent, which reports it
        try:
            connection.send(("error", exc if isinstance(exc, (InputError, DeviceError)) else
                             DeviceError(f"GPU helper process: {type(exc).__name__}: {exc}")))  # fmt: skip
        except Exception:
            pass
    finally:
        os._exit(0)  # skip CuPy's teardown; the parent has what it needs
