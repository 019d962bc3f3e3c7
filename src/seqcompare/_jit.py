"""One place for Numba options, so every kernel compiles the same way, and compiles only when first called.

``@jit`` makes a :class:`Kernel`: Numba itself is imported, and the function compiled (or loaded from Numba's
on-disk cache), on its first call, so that a command whose input is small enough for NumPy alone never pays
Numba's import and start-up (about 0.3 s of every run). Kernels call one another as usual: Numba types a
:class:`Kernel` as the dispatcher it stands for.

Set ``SEQCOMPARE_DISABLE_NUMBA_CACHE=1`` to stop Numba writing its on-disk cache (read-only installs).

Processes that share the on-disk cache (``pytest -n``, Dask workers, several commands at once) take turns on
each kernel's cache files (:func:`_take_turns_on_cache_files`): Numba's own writes are not safe between
processes, and could pair one specialization's key with another's machine code.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading

from .progress import notice_compilation

# A forced SIMD width (seqcompare._simd) changes compiled code that Numba's cache key cannot see.
_USE_CACHE = os.environ.get("SEQCOMPARE_DISABLE_NUMBA_CACHE", "") in ("", "0") and not os.environ.get(
    "SEQCOMPARE_VECTOR_BYTES"
)

# fastmath stays off: every kernel here is integer or must propagate NaN exactly.
DEFAULT_OPTIONS = {"nogil": True, "cache": _USE_CACHE, "fastmath": False}

_LOCK = threading.RLock()
_NJIT: list = []


def _njit():
    """Numba's ``njit``, importing Numba the first time (and telling it how to type a :class:`Kernel`, and
    :mod:`seqcompare.progress` when it compiles)."""
    if not _NJIT:
        with _LOCK:
            if not _NJIT:
                import numba
                from numba.core import event
                from numba.extending import typeof_impl

                class CompileListener(event.Listener):
                    """Fires only on a cache miss, not on a load from the on-disk cache."""

                    def on_start(self, ev):
                        notice_compilation()

                    def on_end(self, ev):
                        pass

                event.register("numba:compile", CompileListener())

                @typeof_impl.register(Kernel)
                def _typeof_kernel(value, context):
                    return numba.types.Dispatcher(value.dispatcher)

                _NJIT.append(numba.njit)
    return _NJIT[0]


@contextlib.contextmanager
def _file_lock(path: str):
    """An exclusive ``flock`` on ``path`` (created if need be), or no lock where none can be had (a read-only
    cache directory, which then holds nothing to protect, or a platform without ``fcntl``)."""
    try:
        import fcntl

        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
    except OSError:  # a file system without locks
        pass
    try:
        yield
    finally:
        os.close(handle)  # releases the lock


def _take_turns_on_cache_files(dispatcher) -> None:
    """Make ``dispatcher``'s on-disk cache reads and writes exclusive between processes.

    Numba saves a new specialization by reading the function's index file, giving the specialization the first
    unused data file number, writing the index back and then the data file. Two processes compiling different
    specializations of one function at once both take number 1; the index can end with one's key and the data
    file with the other's machine code, which a later process then runs with the wrong argument types (a wrong
    result or a crash; ``tests/test_jit.py`` replays it). Holding a lock beside the index file over each whole
    save and load removes the interleaving. Within one process Numba's compiler lock already serialises them.
    """
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    index_path = getattr(cache_file, "_index_path", None)
    if index_path is None:  # no cache (disabled), or a Numba whose cache is laid out otherwise
        return
    lock_path = index_path + ".lock"

    def in_turn(method):
        @functools.wraps(method)
        def run(*args, **kwargs):
            with _file_lock(lock_path):
                return method(*args, **kwargs)

        return run

    cache_file.save = in_turn(cache_file.save)
    cache_file.load = in_turn(cache_file.load)


def compiler_started() -> bool:
    """Whether this process has started Numba (imported it for a first kernel call): after that, a compiled
    kernel costs only its own load, and before it NumPy alone often beats Numba's start-up."""
    return bool(_NJIT)


class Kernel:
    """A function compiled by Numba on its first call. Attributes other than the call (``signatures``,
    ``inspect_asm``...) are the Numba dispatcher's."""

    def __init__(self, function, options: dict):
        functools.update_wrapper(self, function)
        self.py_func = function
        self._options = options
        self._dispatcher = None

    @property
    def dispatcher(self):
        """The Numba dispatcher (made on first use)."""
        if self._dispatcher is None:
            njit = _njit()
            with _LOCK:
                if self._dispatcher is None:
                    dispatcher = njit(**self._options)(self.py_func)
                    _take_turns_on_cache_files(dispatcher)
                    self._dispatcher = dispatcher
        return self._dispatcher

    def __call__(self, *args, **kwargs):
        return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_dispatcher", "_options", "py_func"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)


def jit(function=None, **options):
    """Compile ``function`` on first call with the package's Numba defaults (``nogil``, cached, no fastmath)."""
    merged = {**DEFAULT_OPTIONS, **options}

    def decorate(fn):
        return Kernel(fn, merged)

    return decorate if function is None else decorate(function)
