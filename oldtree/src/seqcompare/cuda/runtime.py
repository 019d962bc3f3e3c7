"""CuPy access, device discovery, run-time compiled CUDA modules (one per source file and device), and page-locked
host memory: what every engine's GPU code shares."""

from __future__ import annotations

import mmap
import os
import threading
from functools import lru_cache

from .._jit import jit
from ..errors import DeviceError

_HERE = os.path.dirname(os.path.abspath(__file__))  # the shared headers (bitgemm.cuh, warp_append.cuh)
_MODULES: dict = {}
_LOCK = threading.Lock()
COPY_THREADS = min(8, os.cpu_count() or 1)  # host threads filling page-locked buffers
_COPIERS = None
_UPLOAD_PIECE_BYTES = 64 << 20


def require_cupy():
    """Return the ``cupy`` module, or raise :class:`~seqcompare.errors.DeviceError` saying what is missing."""
    try:
        import cupy
    except ImportError as exc:
        raise DeviceError(
            "device='cuda' needs CuPy and an NVIDIA GPU: pip install 'seqcompare[cuda]' "
            "(or the cupy-cudaXXx wheel matching your CUDA driver)"
        ) from exc
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as exc:
        raise DeviceError(f"CuPy is installed but no CUDA device can be used: {exc}") from exc
    if count == 0:
        raise DeviceError("CuPy is installed but no CUDA device is visible")
    return cupy


_STARTED: list = []


def start_in_background(warm_up=None) -> None:
    """Import CuPy and create the CUDA context of every visible device in a background thread, so that this fixed
    cost (0.5-1 s: CuPy's import, the driver's start-up, one context per device) overlaps work that needs no GPU,
    such as reading the input. Calls that need CuPy meanwhile wait for the import; failures are left for
    :func:`require_cupy` to report where the GPU is first used. Later calls do nothing.

    Parameters
    ----------
    warm_up : callable, optional
        Called with no arguments on each device (as the current one) once its context exists, in the same
        thread: loading the kernels a command will launch, say. Its errors are ignored (the command meets them
        again where it needs what failed).
    """
    with _LOCK:
        if _STARTED:
            return
        thread = threading.Thread(target=_start_devices, args=(warm_up,), name="seqcompare-cuda-start", daemon=True)
        _STARTED.append(thread)
    thread.start()


def start_devices(warm_up=None) -> None:
    """Import CuPy and create the CUDA context (and CuPy's memory pool) of every visible device, then call
    ``warm_up`` with no arguments on each device, as the current one. Raises what fails (:func:`require_cupy`'s
    :class:`~seqcompare.errors.DeviceError` where there is no usable GPU)."""
    cupy = require_cupy()
    devices = range(cupy.cuda.runtime.getDeviceCount())
    for device in devices:
        with cupy.cuda.Device(device):
            cupy.empty(1, dtype=cupy.uint8)  # creates the device's context and CuPy's memory pool
    for device in devices if warm_up is not None else ():
        with cupy.cuda.Device(device):
            warm_up()


def start_driver_in_background() -> threading.Thread:
    """Start the CUDA driver (``cuInit``) and the primary context of every visible device through the driver API
    in a thread, and return it (join it before using CuPy). The calls go through ``ctypes``, which releases the
    GIL while they run, so they overlap CuPy's import (Python that holds the GIL) in the calling thread; CuPy's
    runtime API then finds the contexts made (it uses each device's primary context). In a GPU helper process
    on an H200 host, creating the context after CuPy's import took 0.10-0.11 s of 0.58 s (session 31). Failures
    are left for :func:`require_cupy` to report."""

    def start() -> None:
        import ctypes

        try:
            driver = ctypes.CDLL("libcuda.so.1")
            if driver.cuInit(0) != 0:
                return
            count = ctypes.c_int()
            if driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
                return
            for ordinal in range(count.value):
                device, context = ctypes.c_int(), ctypes.c_void_p()
                if driver.cuDeviceGet(ctypes.byref(device), ordinal) == 0:
                    driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)  # kept until the process ends
        except OSError:
            pass  # no driver library: CuPy says so

    thread = threading.Thread(target=start, name="seqcompare-cuda-driver", daemon=True)
    thread.start()
    return thread


def start_cupy_beside_the_driver(finish, finish_stage: str) -> dict:
    """A GPU helper process's start: CuPy imported while the CUDA driver and every device's context start in a
    thread (:func:`start_driver_in_background`), then ``finish()`` (the command's own part: its kernels, CuPy's
    side of each device). Returns the seconds of each stage, as ``helper_cupy_import_s``,
    ``helper_driver_wait_s`` and ``helper_<finish_stage>_s``."""
    import time

    began = time.perf_counter()
    driver = start_driver_in_background()
    require_cupy()
    imported = time.perf_counter()
    driver.join()
    joined = time.perf_counter()
    finish()
    return {"helper_cupy_import_s": imported - began, "helper_driver_wait_s": joined - imported,
            f"helper_{finish_stage}_s": time.perf_counter() - joined}  # fmt: skip


# GIL switch interval while CUDA starts in the background. CuPy's import is Python that holds the GIL for long
# stretches; a thread reading the input gives up the GIL for each large NumPy call and must get it back after,
# which under the default 5 ms interval can cost it up to 5 ms a call. On an H200 host the 1 GB FASTA of
# bench/hamming_gpu_e2e.py read in 1.07 s beside the start before this and the reader's strided copies, 0.72 s
# after both (bench/RESULTS.md, issue 17, fourth session); the start itself then ends later, still before the
# GPU is first needed.
_SWITCH_INTERVAL_S = 0.0002


def _start_devices(warm_up=None) -> None:
    import sys

    previous = sys.getswitchinterval()
    sys.setswitchinterval(min(previous, _SWITCH_INTERVAL_S))
    try:
        start_devices(warm_up)
    except Exception:  # noqa: BLE001 - reported by require_cupy() where the GPU is first used
        pass
    finally:
        sys.setswitchinterval(previous)


def require_gpu_quickly() -> None:
    """Fail now, without importing CuPy or starting CUDA, where a GPU plainly cannot be used: CuPy is not
    installed, or (Linux) no NVIDIA device node exists. For callers that start CUDA in another process.

    Raises
    ------
    DeviceError
        Saying what is missing.
    """
    import importlib.util
    import sys

    if importlib.util.find_spec("cupy") is None:
        raise DeviceError(
            "device='cuda' needs CuPy and an NVIDIA GPU: pip install 'seqcompare[cuda]' "
            "(or the cupy-cudaXXx wheel matching your CUDA driver)"
        )
    if sys.platform.startswith("linux") and not os.path.exists("/dev/nvidiactl"):
        raise DeviceError("CuPy is installed but this machine has no NVIDIA GPU (no /dev/nvidiactl)")


def available() -> bool:
    """True when CuPy imports and at least one CUDA device is visible."""
    try:
        require_cupy()
    except DeviceError:
        return False
    return True


def device_count() -> int:
    """Visible CUDA devices (0 without CuPy or a GPU)."""
    try:
        return require_cupy().cuda.runtime.getDeviceCount()
    except DeviceError:
        return 0


def free_bytes(cupy) -> int:
    """Device memory the current device can still allocate: the driver's free memory plus what CuPy's pool
    holds unused (an earlier run's arrays, returned to the pool but not to the driver)."""
    return cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()


@lru_cache(maxsize=None)
def _source(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def module(path: str, name_expressions: tuple[str, ...] = (), options: tuple[str, ...] = ()):
    """The compiled CUDA source at ``path`` (an engine's ``.cu`` file) for the current device, built on first use.

    CuPy has NVRTC compile straight to machine code for the device's own architecture (``-arch=sm_90`` on an
    H100/H200), so inline PTX that needs it (1-bit MMA, ``cp.async``, ``ldmatrix``) is available; the module
    is cached here per device (and CuPy caches the binary on disk). ``options`` are extra NVRTC options (e.g.
    ``--fmad=false`` where float results must equal the CPU's bit for bit). Sources may include the shared
    headers of this package (``#include "bitgemm.cuh"``) and files beside themselves.
    """
    cupy = require_cupy()
    device = cupy.cuda.Device()
    key = (path, device.id, name_expressions, options)
    with _LOCK:
        compiled = _MODULES.get(key)
        if compiled is None:
            compiled = cupy.RawModule(
                code=_source(path),
                options=("-std=c++17", f"-I{_HERE}", f"-I{os.path.dirname(path)}", *options),
                name_expressions=name_expressions or None,
            )
            _MODULES[key] = compiled
    return compiled


def pinned_empty(shape, dtype):
    """A NumPy array in page-locked host memory (asynchronous, unstaged copies to and from the GPU)."""
    import numpy as np

    cupy = require_cupy()
    count = int(np.prod(shape))
    nbytes = max(1, count * np.dtype(dtype).itemsize)
    memory = cupy.cuda.alloc_pinned_memory(nbytes)
    return np.frombuffer(memory, dtype=dtype, count=count).reshape(shape)


# One-off buffers from this size up are locked where they are made (locked_empty); smaller ones, and buffers that
# calls reuse, come from CuPy's pool of page-locked memory (pinned_empty).
_LOCK_IN_PLACE_FROM = 16 << 20
_PAGE = mmap.PAGESIZE
_LOCKED = {"buffers": 0, "bytes": 0}  # buffers locked in place and not yet unlocked (for tests)
# Its own lock, and reentrant: the unlocking finalizer may run from the garbage collector in a thread that holds
# it (or :data:`_LOCK`, which it therefore never takes).
_LOCKED_LOCK = threading.RLock()


def locked_empty(shape, dtype):
    """A NumPy array in page-locked host memory, for a large buffer filled and copied to the GPU once.

    ``cudaHostAlloc`` (what :func:`pinned_empty` draws on) faults in and locks its pages in one thread: a 369 MB
    buffer took 0.29 s of a 2.4 s GPU Hamming run on an H200 host (bench/RESULTS.md, issue 17, fourth session).
    Here the pages are mapped for the array, faulted in by :data:`COPY_THREADS` threads, and then locked where
    they are (``cudaHostRegister``, 20-30 ms a GB there): the same buffer took 0.09-0.10 s this way
    (bench/RESULTS.md, session 19). They are unlocked when the array (and every view of it) is gone, before
    they are unmapped. Buffers under
    :data:`_LOCK_IN_PLACE_FROM`, and any that CUDA will not register, come from :func:`pinned_empty`.
    """
    import weakref

    import numpy as np

    cupy = require_cupy()
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    nbytes = count * dtype.itemsize
    if nbytes < _LOCK_IN_PLACE_FROM:
        return pinned_empty(shape, dtype)
    size = -(-nbytes // _PAGE) * _PAGE
    memory = mmap.mmap(-1, size)
    if hasattr(memory, "madvise") and hasattr(mmap, "MADV_HUGEPAGE"):
        try:
            memory.madvise(mmap.MADV_HUGEPAGE)  # fewer faults and page-table entries where the kernel allows
        except OSError:
            pass
    whole = np.frombuffer(memory, dtype=np.uint8, count=size)
    _for_each_piece(lambda a, b: whole[a:b:_PAGE].fill(0), size // _PAGE * _PAGE)  # fault in, in parallel
    address = whole.ctypes.data
    try:
        cupy.cuda.runtime.hostRegister(address, size, 1)  # cudaHostRegisterPortable: every GPU's context
    except cupy.cuda.runtime.CUDARuntimeError:
        del whole
        memory.close()
        return pinned_empty(shape, dtype)
    with _LOCKED_LOCK:
        _LOCKED["buffers"] += 1
        _LOCKED["bytes"] += size
    # ``whole`` holds ``memory``; the finalizer runs as ``whole`` is freed, before ``memory`` is unmapped.
    unlock = weakref.finalize(whole, _unlock, address, size, memory)
    unlock.atexit = False  # at exit the process's pages go anyway, and CUDA may be gone first
    return whole[:nbytes].view(dtype).reshape(shape)


# Memory the GPU only reads (a side a call uploads from where it lies) is registered read-only where the device
# allows it (cudaHostRegisterReadOnly): on an H200's host, unregistering 320 MB then took 2.7-3.4 ms against
# 5.8-6.6 ms, and registering 6.5-8.5 against 7.4-10.5 (bench/RESULTS.md, session 26). Unregistering waits for
# an idle GPU, so it is on a call's critical path. bench/dp_api.py compares both by setting this.
READ_ONLY_REGISTRATION = True
_HOST_REGISTER_READ_ONLY = 8  # cudaHostRegisterReadOnly
_READ_ONLY_SUPPORTED: dict = {}  # device number: cudaDevAttrHostRegisterReadOnlySupported


def read_only_flags(cupy) -> int:
    """``cudaHostRegister`` flags for host memory the current device will only read: read-only where the device
    supports it (and :data:`READ_ONLY_REGISTRATION` is set), else none."""
    if not READ_ONLY_REGISTRATION:
        return 0
    device = cupy.cuda.Device().id
    if device not in _READ_ONLY_SUPPORTED:
        attribute = getattr(cupy.cuda.runtime, "cudaDevAttrHostRegisterReadOnlySupported", 113)  # CUDA's enum
        try:
            _READ_ONLY_SUPPORTED[device] = bool(cupy.cuda.runtime.deviceGetAttribute(attribute, device))
        except cupy.cuda.runtime.CUDARuntimeError:
            _READ_ONLY_SUPPORTED[device] = False
    return _HOST_REGISTER_READ_ONLY if _READ_ONLY_SUPPORTED[device] else 0


_MAPPINGS_LOCKED: dict = {}  # id of an array whose memory lock_mapping page-locked: its finalizer
# How often lock_mapping locked a mapping, and how often CUDA refused (uploads from it then go through the
# driver's staging): a Dask worker's count is read with ``client.run`` (bench/dask_bench.py logs it).
MAPPINGS = {"locked": 0, "refused": 0}


def lock_mapping(array) -> bool:
    """Page-lock the memory of ``array`` (a read-only mapping of a file, say) for every GPU, once, so that uploads
    from it are direct copies; it is unlocked when ``array`` is freed. False where CUDA refuses (uploads from it
    are then staged by the driver)."""
    import weakref

    key = id(array)
    if key in _MAPPINGS_LOCKED:
        return _MAPPINGS_LOCKED[key] is not None
    cupy = require_cupy()
    address, size = array.ctypes.data, array.nbytes
    flags = 1 | (0 if array.flags.writeable else _HOST_REGISTER_READ_ONLY)  # portable (and read-only)
    try:
        cupy.cuda.runtime.hostRegister(address, size, flags)
    except cupy.cuda.runtime.CUDARuntimeError:
        _MAPPINGS_LOCKED[key] = None
        MAPPINGS["refused"] += 1
        weakref.finalize(array, _MAPPINGS_LOCKED.pop, key, None)
        return False
    with _LOCKED_LOCK:
        _LOCKED["buffers"] += 1
        _LOCKED["bytes"] += size
    MAPPINGS["locked"] += 1
    unlock = weakref.finalize(array, _unlock_mapping, key, address, size)
    unlock.atexit = False  # at exit the process's pages go anyway, and CUDA may be gone first
    _MAPPINGS_LOCKED[key] = unlock
    return True


def _unlock_mapping(key: int, address: int, size: int) -> None:
    _MAPPINGS_LOCKED.pop(key, None)
    _unlock(address, size, None)


def _unlock(address: int, size: int, memory) -> None:
    """Unlock the pages of a :func:`locked_empty` buffer (``memory``, their mapping, is held until then)."""
    try:
        require_cupy().cuda.runtime.hostUnregister(address)
    finally:
        with _LOCKED_LOCK:
            _LOCKED["buffers"] -= 1
            _LOCKED["bytes"] -= size


def _for_each_piece(function, size: int) -> None:
    """``function(a, b)`` over :data:`COPY_THREADS` contiguous pieces of ``range(size)`` (page multiples), on the
    copy threads (NumPy releases the GIL)."""
    import numpy as np

    pieces = max(1, min(COPY_THREADS, size // (1 << 20)))
    cuts = (np.linspace(0, size // _PAGE, pieces + 1).astype(np.int64) * _PAGE).tolist()
    if pieces == 1:
        function(0, size)
        return
    list(_copiers().map(lambda ab: function(*ab), zip(cuts[:-1], cuts[1:])))


def _copiers():
    global _COPIERS
    with _LOCK:
        if _COPIERS is None:
            from concurrent.futures import ThreadPoolExecutor

            _COPIERS = ThreadPoolExecutor(COPY_THREADS, thread_name_prefix="seqcompare-staging")
    return _COPIERS


def resolve_device(device: str = "cpu") -> str:
    """``"cpu"`` or ``"cuda"``; ``"auto"`` is ``"cuda"`` when CuPy sees a GPU, else ``"cpu"``."""
    if device == "auto":
        return "cuda" if available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'auto'; got {device!r}")
    if device == "cuda":
        require_cupy()  # fail now, with the fix in the message, rather than after the work on the CPU
    return device


def copy_in_parallel(destination, source) -> None:
    """``destination[...] = source`` (flat NumPy arrays) by :data:`COPY_THREADS` threads (NumPy releases the GIL
    while it copies): one thread fills page-locked memory at a fraction of the bus's speed."""
    import numpy as np

    if source.nbytes < (4 << 20) or COPY_THREADS == 1:
        np.copyto(destination, source)
        return
    cuts = np.linspace(0, source.size, COPY_THREADS + 1).astype(np.int64).tolist()
    list(_copiers().map(lambda ab: np.copyto(destination[ab[0] : ab[1]], source[ab[0] : ab[1]]), zip(cuts[:-1], cuts[1:])))


@jit
def _narrow_and_measure(destination, source):
    """``destination[i] = source[i]`` cast to the destination's narrower integer type (wrapping where a value
    does not fit), and ``(minimum, maximum)`` of ``source``, in one pass (``source`` not empty)."""
    low = source[0]
    high = source[0]
    for i in range(source.size):
        value = source[i]
        low = min(low, value)
        high = max(high, value)
        destination[i] = value
    return low, high


_NARROWING: dict = {}  # "ready": the compiled pass is loaded


def prepare_narrowing() -> None:
    """Load (or compile) :func:`narrow_in_parallel`'s compiled pass for int32 and int64 sources, starting Numba
    if it has not started in this process: after it, every call that could narrow does (benchmarks and tests
    call it; so may a program that makes many GPU DTW calls of int64 signals)."""
    import numpy as np

    for dtype in (np.int32, np.int64):
        _narrow_and_measure(np.empty(1, np.int16), np.zeros(1, dtype))
    _NARROWING["ready"] = True


def narrowing_ready() -> bool:
    """Whether :func:`narrow_in_parallel` can run with no start-up cost in the caller's call: its pass is
    loaded, or Numba has started in this process (a compiled kernel has run), so that loading it costs little.

    In a process where Numba has not started, a call does not narrow: Numba's start-up (0.3-0.4 s on the
    hosts measured) is more than narrowing saves on any size measured (10-90 ms a call). Starting it in a
    background thread instead made a one-off call 0.23-0.25 s slower, and the next one too, on an H200's host
    (bench/RESULTS.md, session 25)."""
    from .._jit import compiler_started

    if not _NARROWING.get("ready") and compiler_started():
        prepare_narrowing()
    return bool(_NARROWING.get("ready"))


def narrow_in_parallel(destination, source):
    """``destination[...] = source`` into a narrower integer dtype, by :data:`COPY_THREADS` threads, if every
    value of ``source`` fits it.

    Each thread narrows its part and measures its range in one compiled pass (no GIL held), so the check costs
    no pass of its own: 18 GB/s of int32 a thread on a Zen 4 core, against 13.5 for NumPy's plain copy.

    Parameters
    ----------
    destination : ndarray
        Flat, of a signed integer dtype, as long as ``source``.
    source : ndarray
        Flat, of a wider signed integer dtype.

    Returns
    -------
    tuple of int or None
        ``(minimum, maximum)`` of ``source`` when every value fits (the copy is then exact); None when some
        value does not (``destination`` then holds wrapped values). An empty ``source`` gives ``(0, 0)``.
    """
    import numpy as np

    if source.size == 0:
        return 0, 0
    count = max(1, min(COPY_THREADS, source.size // (1 << 18)))
    cuts = np.linspace(0, source.size, count + 1).astype(np.int64).tolist()
    parts = list(zip(cuts[:-1], cuts[1:]))

    def part(bounds):
        return _narrow_and_measure(destination[bounds[0] : bounds[1]], source[bounds[0] : bounds[1]])

    ranges = [part(parts[0])] if count == 1 else list(_copiers().map(part, parts))
    low, high = min(int(low) for low, _ in ranges), max(int(high) for _, high in ranges)
    limits = np.iinfo(destination.dtype)
    return (low, high) if limits.min <= low and high <= limits.max else None


def lock_if_mapped(array) -> bool:
    """Page-lock ``array`` where it lies (:func:`lock_mapping`) if it is a large mapping of a file (a Dask task's
    block in shared memory): uploads from it are then direct copies, not staged by the driver. True if it is
    locked now."""
    import numpy as np

    if not isinstance(array, np.memmap) or array.nbytes < _LOCK_IN_PLACE_FROM:
        return False
    return lock_mapping(array)


def to_device(host):
    """A device copy of the NumPy array ``host``, by its fastest route: a large contiguous file mapping is
    page-locked where it lies and copied directly (:func:`lock_if_mapped`); another large array is staged through
    page-locked buffers by the copy threads (:func:`upload`). Returns once the copy is complete.

    ``cupy.asarray`` would first copy every byte into one new page-locked buffer, in one thread: on a 4 x H200
    host, the 2-way CCC slab that uploaded 8.6 GB of codes that way computed 14.4 s and the one that uploaded a
    quarter of them 13.5 s; through this function, 13.2-13.4 s for all four slabs (bench/RESULTS.md, session
    34)."""
    cupy = require_cupy()
    if host.flags.c_contiguous and lock_if_mapped(host):
        out = cupy.empty(host.shape, dtype=host.dtype)
        out.set(host)
        return out
    return upload(host)


def upload(host, stream=None):
    """A device copy of a C-contiguous NumPy array, through two page-locked buffers in pieces of 64 MB: a piece is
    copied to the device while the threads stage the next (a pageable copy of a few GB runs at a third of the
    speed). Returns once the copy is complete."""
    import numpy as np

    cupy = require_cupy()
    host = np.ascontiguousarray(host)
    out = cupy.empty(host.shape, dtype=host.dtype)
    flat_host, flat_out = host.reshape(-1), out.reshape(-1)
    piece = max(1, _UPLOAD_PIECE_BYTES // max(1, host.itemsize))
    if host.nbytes <= 2 * _UPLOAD_PIECE_BYTES:
        out.set(host)
        return out
    stream = stream or cupy.cuda.Stream(non_blocking=True)
    buffers = [pinned_empty((piece,), host.dtype) for _ in range(2)]
    copied = [None, None]
    for number, start in enumerate(range(0, flat_host.size, piece)):
        slot = number % 2
        if copied[slot] is not None:
            copied[slot].synchronize()
        stop = min(flat_host.size, start + piece)
        staged = buffers[slot][: stop - start]
        copy_in_parallel(staged, flat_host[start:stop])
        flat_out[start:stop].set(staged, stream=stream)
        copied[slot] = stream.record()
    stream.synchronize()
    return out

