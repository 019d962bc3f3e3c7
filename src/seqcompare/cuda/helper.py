"""A forked helper process that owns the GPU for one command, so that CUDA's start overlaps the reading of the input.

Importing CuPy, creating the CUDA contexts and loading a command's kernels is about half a second of work, much
of it Python that holds the GIL. In one process it takes turns with the reading of the input: on an H200 host
the background thread that did it while a 1 GB FASTA was read finished 0.67 s after it began
(``bench/RESULTS.md``, session 31). The command line therefore forks a helper before it reads anything. The
helper starts CUDA and runs a warm-up (loading the command's kernels, say) on another core, while the parent
reads into arrays of one anonymous shared file (``memfd``, :meth:`GpuHelper.empty`). The parent then sends it a
function and its arguments (:meth:`GpuHelper.call`): arrays that lie in the shared file travel as references to
it, so gigabytes of sequences are never copied between the processes; everything else is pickled (sequences
left in place in their file, :class:`~seqcompare.io.fasta.FileRows`, pickle as the file's path). The helper
runs the function and sends back its result. Once the command has what it needs it kills the helper, so the
helper's CUDA teardown (a tenth of a second or more with gigabytes on the device) costs the command nothing.

Linux only (``fork`` and ``memfd_create``); :func:`supported` says whether a helper can be used.
"""

from __future__ import annotations

import io
import mmap
import multiprocessing
import os
import pickle
import sys
import time

from ..errors import DeviceError, InputError

_PAGE = mmap.ALLOCATIONGRANULARITY
# Arrays of at least this many bytes made by GpuHelper.empty are page-locked by the helper, so that uploads from
# them are direct copies rather than ones staged by the driver: a 1 GB alignment's command took 1.10-1.52 s with
# them locked against 1.20-1.50 s with staged copies (medians 1.135 and 1.381 s), alternating on one H200 host
# (bench/RESULTS.md, session 31).
LOCK_SHARED_FROM = 64 << 20
# Whether the helper locks such an array as soon as it is made, while the parent writes it, rather than just
# before the call that reads it. Beside the reading, locking a 1 GB alignment's array took 0.195 s on an H200
# host, slowed the reading and left the helper no idle time to warm up in; on another, alternating fresh
# commands took 1.11-1.26 s that way against 0.87-0.98 s locking before the call (bench/RESULTS.md, session 31).
EARLY_LOCK = False
# Whether the helper lets go of the standard streams it inherited (its stdout and stderr then go to /dev/null, and
# what Python writes to ``sys.stderr`` there travels back with each reply, for the parent to write). A killed
# helper holds its descriptors until the kernel has torn down its CUDA context; the command's stdout and stderr,
# when they are pipes (``| gzip``, a workflow manager capturing logs, ``subprocess.run``), would stay open, and
# the reader would wait, for that long after the command itself has exited.
DETACH_STDIO = True


def supported() -> bool:
    """True where a helper can be forked and share memory with its parent (Linux), and this process has not
    imported CuPy: a fork of a process that has started CUDA cannot use it (``cudaErrorInitializationError``), as
    when the command line runs inside a program that used the GPU already."""
    return (hasattr(os, "memfd_create") and "fork" in multiprocessing.get_all_start_methods()
            and "cupy" not in sys.modules)  # fmt: skip


class SharedArrays:
    """NumPy arrays in one anonymous shared file (``memfd``), each in a region of its own at a page boundary,
    which another process maps from the file and the references that :class:`SharedPickler` writes for them."""

    def __init__(self, descriptor: int):
        self.descriptor = descriptor
        self.size = 0
        self._mappings: list[tuple[int, int, int]] = []  # (address, length, offset in the file) of each region

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised array in a new region of the shared file (the signature of ``np.empty``)."""
        import numpy as np

        dtype = np.dtype(dtype)
        count = int(np.prod(shape))
        length = -(-max(1, count * dtype.itemsize) // _PAGE) * _PAGE
        offset = self.size
        self.size += length
        os.ftruncate(self.descriptor, self.size)
        array = np.frombuffer(mmap.mmap(self.descriptor, length, offset=offset), dtype, count).reshape(shape)
        self._mappings.append((array.__array_interface__["data"][0], length, offset))
        return array

    def region_of(self, array: np.ndarray) -> tuple[int, int]:
        """``(offset, length)`` of the region :meth:`empty` made ``array`` in."""
        address = array.__array_interface__["data"][0]
        return next((offset, length) for start, length, offset in self._mappings if start == address)

    def reference(self, array: np.ndarray):
        """``((region offset, region length), offset in the region, dtype, shape, strides)`` locating ``array``
        (any view of an array made by :meth:`empty`), or None for an array that lies elsewhere."""
        if array.size == 0 or not self._mappings:
            return None
        address = array.__array_interface__["data"][0]
        low = address + sum(min(0, (n - 1) * s) for n, s in zip(array.shape, array.strides))
        high = address + sum(max(0, (n - 1) * s) for n, s in zip(array.shape, array.strides)) + array.itemsize
        for start, length, offset in self._mappings:
            if start <= low and high <= start + length:
                return (offset, length), address - start, array.dtype, array.shape, array.strides
        return None


class SharedPickler(pickle.Pickler):
    """Pickles ``arrays``' arrays by reference to their place in the shared file, everything else as usual."""

    def __init__(self, file, arrays: SharedArrays):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._arrays = arrays

    def persistent_id(self, obj):
        numpy = sys.modules.get("numpy")  # (no arrays before NumPy is imported: the helper forks before it is)
        if numpy is not None and type(obj) is numpy.ndarray:
            return self._arrays.reference(obj)
        return None


class _Regions:
    """The helper's side of the shared file ``descriptor``: each region mapped once, where it stays (so that a
    region page-locked by :meth:`lock` is the memory later calls read)."""

    def __init__(self, descriptor: int):
        self.descriptor = descriptor
        self._mapped: dict = {}  # (offset, length): mmap
        self._locked: set = set()

    def mapping(self, region: tuple[int, int]) -> mmap.mmap:
        if region not in self._mapped:
            offset, length = region
            # Writable (MAP_SHARED), so that pages locked before the parent has written them are real pages; the
            # arrays made over it are read-only.
            self._mapped[region] = mmap.mmap(self.descriptor, length, offset=offset)
        return self._mapped[region]

    def lock(self, region: tuple[int, int]) -> bool:
        """Page-lock ``region`` for every GPU, so that uploads from it are direct copies, not copies staged by
        the driver through its own buffers. Its pages are faulted in here if the parent has not written them
        yet (the same pages it then writes). Never unlocked: the helper is killed when done. False where CUDA
        refuses (the uploads then stay staged)."""
        if region in self._locked:
            return True
        from .runtime import require_cupy

        import numpy as np

        cupy = require_cupy()
        address = np.frombuffer(self.mapping(region), np.uint8).ctypes.data
        try:
            cupy.cuda.runtime.hostRegister(address, region[1], 1)  # cudaHostRegisterPortable
        except cupy.cuda.runtime.CUDARuntimeError:
            return False
        self._locked.add(region)
        return True


class _SharedUnpickler(pickle.Unpickler):
    """Unpickles :class:`SharedPickler`'s references as read-only views of the helper's mapped regions."""

    def __init__(self, file, regions: _Regions):
        super().__init__(file)
        self._regions = regions

    def persistent_load(self, reference):
        import numpy as np

        region, offset, dtype, shape, strides = reference
        array = np.ndarray(shape, dtype, buffer=self._regions.mapping(region), offset=offset, strides=strides)
        array.flags.writeable = False
        return array


class GpuHelper:
    """A forked process that starts CUDA at once, then runs the functions the parent sends it on the GPU.

    Create it before reading the input, allocate the arrays the GPU work will read with :meth:`empty`, then
    :meth:`call`. Use as a context manager: leaving it stops the helper. Failures of the helper (no CuPy, no
    GPU, an error in the function) are raised by :meth:`call`: :class:`~seqcompare.errors.InputError`,
    :class:`~seqcompare.errors.DeviceError`, ``ValueError`` and ``TypeError`` as they were raised, anything else
    as a ``DeviceError`` naming it.

    Parameters
    ----------
    start : callable, optional
        The helper's first act, with no arguments: starting CUDA and loading what the command will launch
        (default :func:`~seqcompare.cuda.runtime.start_devices`: a context on every visible device). It may
        return a dict of its stages' seconds, which join :attr:`timings`. A failure is reported by the first
        :meth:`call`.
    warm_up : callable, optional
        Run with no arguments once, when the started helper first finds no message waiting (loading what the
        command will launch, by a run on a tiny input, say): where the parent reads for longer than CUDA takes
        to start, that work is done before the call comes; where the call is already waiting, the call goes
        first and loads what it needs itself. A failure is left for the call to meet.
    name : str
        Names the shared file (seen in ``/proc/PID/fd``).
    """

    def __init__(self, start=None, warm_up=None, name: str = "seqcompare-gpu"):
        context = multiprocessing.get_context("fork")
        self._memory = os.memfd_create(name)
        self.shared = SharedArrays(self._memory)
        self._connection, child_end = context.Pipe()
        arguments = (child_end, self._connection, self._memory, start, warm_up)
        self._process = context.Process(target=_serve, args=arguments, daemon=True)
        self._process.start()
        child_end.close()
        self.timings: dict = {}  # seconds of the helper's stages, by name, as its calls report them
        self._to_lock: list = []  # regions of large arrays, page-locked by the helper before the next call

    def empty(self, shape, dtype) -> np.ndarray:
        """An uninitialised array the helper reads without a copy (the signature of ``np.empty``). One of
        :data:`LOCK_SHARED_FROM` bytes or more is page-locked by the helper before the next :meth:`call` (with
        :data:`EARLY_LOCK`, as soon as the helper has started, while this process fills it): the GPU then reads
        it by direct copies."""
        array = self.shared.empty(shape, dtype)
        if array.nbytes >= LOCK_SHARED_FROM:
            self._to_lock.append(self.shared.region_of(array))
            if EARLY_LOCK:
                self._send(("lock", self._to_lock.pop()))
        return array

    def _send(self, message) -> None:
        buffer = io.BytesIO()
        SharedPickler(buffer, self.shared).dump(message)
        try:
            self._connection.send_bytes(buffer.getbuffer())
        except OSError:
            pass  # the helper has ended: what it sent before, or its exit code, says why (see call)

    def call(self, function, /, *args, **kwargs):
        """``function(*args, **kwargs)`` run in the helper; its result. ``function`` is found by name there (a
        module-level function: the helper is a fork of this process)."""
        while self._to_lock:
            self._send(("lock", self._to_lock.pop()))
        self._send(("call", function, args, kwargs))
        try:
            kind, value, timings, said = self._connection.recv()
        except (EOFError, OSError):
            self._process.join(1)
            code = self._process.exitcode
            raise DeviceError(f"the GPU helper process ended unexpectedly (exit code {code})") from None
        if said:  # what the helper wrote to sys.stderr (warnings, say), in order, after this process's own lines
            sys.stderr.write(said)
            sys.stderr.flush()
        self.timings.update(timings)
        if kind == "error":
            raise value
        return value

    @property
    def pid(self) -> int:
        """The helper's process id."""
        return self._process.pid

    def close(self) -> None:
        """Stop the helper (killed at once: its CUDA teardown is not waited for)."""
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


def _as_reported(exc: BaseException) -> BaseException:
    """``exc`` as the parent raises it: the errors a command reports as they are, anything else named."""
    if isinstance(exc, (InputError, DeviceError, ValueError, TypeError)):
        return exc
    return DeviceError(f"GPU helper process: {type(exc).__name__}: {exc}")


def _detach_stdio() -> io.StringIO:
    """Point this process's standard descriptors at /dev/null (see :data:`DETACH_STDIO`); ``sys.stdout`` then
    writes nowhere and ``sys.stderr`` into the buffer returned, which :func:`_serve` empties into each reply."""
    quiet = os.open(os.devnull, os.O_RDWR)
    for descriptor in (0, 1, 2):
        os.dup2(quiet, descriptor)
    os.close(quiet)
    sys.stdin = sys.stdout = open(os.devnull, "r+")  # noqa: SIM115 (the helper ends by os._exit)
    sys.stderr = io.StringIO()
    return sys.stderr


def _serve(connection, parent_end, memory: int, start, warm_up) -> None:
    """The helper: start CUDA, then lock regions and run calls as the parent sends them until it closes the pipe;
    warm up when first idle."""
    parent_end.close()
    said = _detach_stdio() if DETACH_STDIO else None

    def reply(kind, value, timings) -> None:  # with what was written to sys.stderr since the last reply
        text = ""
        if said is not None:
            text = said.getvalue()
            said.seek(0)
            said.truncate()
        connection.send((kind, value, timings, text))

    try:
        started = time.perf_counter()
        try:
            if start is None:
                from .runtime import start_devices as start
            stages = start()
        except BaseException as exc:  # reported where the parent first calls
            reply("error", _as_reported(exc), {})
            return
        timings = {"helper_cuda_start_s": time.perf_counter() - started, **(stages or {})}
        regions = _Regions(memory)
        while True:
            if warm_up is not None and not connection.poll():
                started = time.perf_counter()
                try:
                    warm_up()
                except BaseException as exc:  # the call meets it again, where it is reported
                    timings["helper_warm_up_error"] = repr(exc)
                warm_up = None
                timings["helper_warm_up_s"] = time.perf_counter() - started
            try:
                message = connection.recv_bytes()
            except EOFError:
                return
            started = time.perf_counter()
            try:
                kind, *content = _SharedUnpickler(io.BytesIO(message), regions).load()
            except BaseException as exc:  # a message that cannot be read here: the call it was fails
                reply("error", _as_reported(exc), timings)
                continue
            if kind == "lock":
                try:
                    if regions.lock(content[0]):
                        timings["helper_lock_s"] = timings.get("helper_lock_s", 0.0) + time.perf_counter() - started
                except BaseException as exc:  # the uploads stay staged
                    timings["helper_lock_error"] = repr(exc)
                continue
            function, args, kwargs = content
            try:
                result = ("result", function(*args, **kwargs))
            except BaseException as exc:
                result = ("error", _as_reported(exc))
            timings["helper_call_s"] = time.perf_counter() - started
            try:
                reply(*result, timings)
            except Exception as exc:  # an unpicklable result or error
                reply("error", _as_reported(exc), timings)
            timings = {}
    finally:
        os._exit(0)  # skip CuPy's teardown; the parent has what it needs
