"""A GPU scan run by a forked helper process, so CUDA's start-up overlaps the parsing of the samples.

Importing CuPy, creating the CUDA context and indexing the signatures take about half a second of Python work
that holds the GIL; so do the first calls of the compiled FASTQ parser. In one process the two take turns (a
0.1 s parse then takes 0.8 s). The command line therefore forks a helper that starts CUDA and builds the
signature index while the parent parses the samples and packs them (3 bits a base) into a shared ``memfd``
mapping; the helper uploads the packed words, runs the kernels of :mod:`seqcompare.gpu.scan` and sends back
the occurrences. Qualities never leave the parent, which sums the scores, so the output is the same as
:func:`seqcompare.scan.api.scan`'s with ``device="cuda"``.

Linux only (``fork`` and ``memfd_create``); :func:`supported` says whether it can be used.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import sys
import time

import numpy as np

from ..errors import DeviceError, InputError
from .scan import pack_records, sample_layout


def supported() -> bool:
    """True where a helper can be forked and share memory with its parent (Linux)."""
    return hasattr(os, "memfd_create") and "fork" in multiprocessing.get_all_start_methods()


class ScanHelper:
    """A forked process that owns the GPU for one scan; start it before the samples are parsed.

    Parameters
    ----------
    signatures : path
        FASTA signatures; the helper reads and indexes them (errors come back from :meth:`prepared`).
    k, both_strands, iupac_as_n
        As for :func:`seqcompare.scan.api.scan`.
    """

    def __init__(self, signatures, *, k: int, both_strands: bool, iupac_as_n: bool):
        context = multiprocessing.get_context("fork")
        self._memory = os.memfd_create("seqcompare-scan-samples")
        self._connection, child_end = context.Pipe()
        self._process = context.Process(
            target=_serve, daemon=True,
            args=(child_end, self._connection, self._memory, signatures, k, both_strands, iupac_as_n),
        )  # fmt: skip
        self._process.start()
        child_end.close()
        self._prepared = None

    def prepared(self):
        """The signatures as :func:`~seqcompare.scan.api.prepare_signatures` gives them (without the index,
        which stays in the helper); waits for the helper to have CUDA up and the index built."""
        if self._prepared is None:
            self._prepared = self._receive()
        return self._prepared

    def rows(self, samples, report_all: bool, threshold: float, threads: int):
        """``(sample, signature row, offset, quality sum)`` occurrence rows of ``samples`` (a
        :class:`~seqcompare.io.sequences.SequenceSet` with qualities), as :func:`~seqcompare.gpu.scan.scan_on_gpu`
        returns them."""
        from .scan import host_rows

        prepared = self.prepared()
        lengths = samples.lengths
        _, total = sample_layout(lengths)
        words = total + 1
        os.ftruncate(self._memory, 12 * words)
        shared = mmap.mmap(self._memory, 12 * words)
        places = {np.dtype(np.uint64): 0, np.dtype(np.uint32): 8 * words}
        pack_records(samples.codes, samples.offsets, threads,
                     allocate=lambda shape, dtype: np.frombuffer(shared, dtype, words, places[np.dtype(dtype)]))  # fmt: skip
        self._connection.send((lengths, report_all or threshold >= 0))
        sample, signature, offset = self._receive()
        return host_rows(samples, np.diff(prepared.offsets), sample, signature, offset, report_all, threshold)

    def _receive(self):
        try:
            kind, value = self._connection.recv()
        except (EOFError, OSError):
            self.close()
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
    """Import CuPy and create GPU 0's context (the helper's first job, timed on its own)."""
    from ._runtime import require_cupy

    cupy = require_cupy()
    cupy.cuda.Device(0).use()
    cupy.cuda.runtime.free(cupy.cuda.runtime.malloc(1))


def _serve(connection, parent_end, memory: int, signatures, k: int, both_strands: bool, iupac_as_n: bool) -> None:
    """The helper: index the signatures on the GPU, then scan each batch of packed samples it is sent."""
    parent_end.close()
    try:
        from ..scan.api import PreparedSignatures, prepare_signatures
        from .scan import device_occurrences

        started = time.perf_counter()
        _start_cuda()
        cuda_ready = time.perf_counter()
        prepared = prepare_signatures(signatures, k=k, both_strands=both_strands, iupac_as_n=iupac_as_n,
                                      device="cuda")  # fmt: skip
        shipped = PreparedSignatures(prepared.signatures, prepared.codes, prepared.offsets, k, both_strands, "cuda",
                                     timings={"cuda_start_s": cuda_ready - started, "index_s": time.perf_counter() - cuda_ready})
        connection.send(("ready", shipped))
        while True:
            try:
                lengths, find_all = connection.recv()
            except EOFError:
                break
            word0, total = sample_layout(lengths)
            words = total + 1
            shared = mmap.mmap(memory, 12 * words, access=mmap.ACCESS_READ)
            bases = np.frombuffer(shared, np.uint64, words)
            nmask = np.frombuffer(shared, np.uint32, words, 8 * words)
            occurrences = device_occurrences(bases, nmask, word0, lengths, prepared.index, find_all)
            connection.send(("rows", occurrences))
    except BaseException as exc:  # every failure goes back to the parent, which reports it
        try:
            connection.send(("error", exc if isinstance(exc, (InputError, DeviceError)) else
                             DeviceError(f"GPU helper process: {type(exc).__name__}: {exc}")))  # fmt: skip
        except Exception:
            pass
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip CuPy's teardown; the parent has what it needs
