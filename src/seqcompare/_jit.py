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
import inspect
import os
import threading

from .progress import notice_compilation

_USE_CACHE = os.environ.get("SEQCOMPARE_DISABLE_NUMBA_CACHE", "") in ("", "0")

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
    _compile_one_process_at_a_time(dispatcher, index_path + ".compiling")


_HELD_COMPILE_LOCKS: set[str] = set()


def _compile_one_process_at_a_time(dispatcher, lock_path: str) -> None:
    """Let one process at a time compile ``dispatcher``; the others wait, then load its work from the cache.

    Dask workers on one machine (and ``pytest -n``) often reach a kernel's first call together, and each would
    compile it: several seconds of CPU each, for the same machine code. Numba's ``compile`` looks in the on-disk
    cache before compiling, so holding a file lock over the whole call turns every compile but the first into a
    load. The lock is taken under Numba's own compiler lock (one thread per process compiles at a time), and
    only once per process for a kernel whose compile reaches itself again. Kernels lock their callees while
    holding their own lock, in the order of the call graph, which has no cycles, so two processes cannot wait
    on each other.
    """
    from numba.core.compiler_lock import global_compiler_lock

    compile_here = dispatcher.compile

    @functools.wraps(compile_here)
    def compile_in_turn(sig):
        with global_compiler_lock:
            loaded = _load_from_cache(dispatcher, sig)
            if loaded is not None:
                return loaded
            if lock_path in _HELD_COMPILE_LOCKS:
                return compile_here(sig)
            with _file_lock(lock_path):
                _HELD_COMPILE_LOCKS.add(lock_path)
                try:
                    return compile_here(sig)
                finally:
                    _HELD_COMPILE_LOCKS.discard(lock_path)

    dispatcher.compile = compile_in_turn


def _load_from_cache(dispatcher, sig):
    """The entry point of ``sig`` loaded from the on-disk cache as Numba's own ``compile`` loads it, but without
    first installing Numba's typing and lowering registries; None on a miss (the caller compiles).

    Numba refreshes its contexts before every cache load, which imports and registers its whole library of
    implementations (``numba.np.arraymath``, ``linalg``, ``unicode``...): 0.4 s of a process's first kernel
    call, more than many commands' whole work. Loaded machine code needs none of it, only Numba's runtime (NRT,
    for the arrays a kernel allocates). A compile still refreshes the contexts itself before it starts.
    """
    from numba.core import sigutils
    from numba.core.runtime import rtsys

    cache = getattr(dispatcher, "_cache", None)
    load = getattr(cache, "_load_overload", None)
    if load is None or not getattr(cache, "_enabled", False):  # no cache, or a Numba laid out otherwise
        return None
    args, _ = sigutils.normalize_signature(sig)
    existing = dispatcher.overloads.get(tuple(args))
    if existing is not None:
        return existing.entry_point
    context = dispatcher.targetctx
    rtsys.initialize(context)
    compiled = load(sig, context)
    if compiled is None or compiled.objectmode:
        return None
    dispatcher._cache_hits[sig] += 1
    context.insert_user_function(compiled.entry_point, compiled.fndesc, [compiled.library])
    dispatcher.add_overload(compiled)
    return compiled.entry_point


def _cacheable(options: dict) -> dict:
    """``options``, without the on-disk cache where ``SEQCOMPARE_VECTOR_BYTES`` forces a SIMD width other than
    this CPU's: that changes compiled code that Numba's cache key cannot see (:mod:`seqcompare._simd`)."""
    if options.get("cache") and os.environ.get("SEQCOMPARE_VECTOR_BYTES"):
        from ._simd import NATIVE_VECTOR_BYTES, VECTOR_BYTES

        if VECTOR_BYTES != NATIVE_VECTOR_BYTES:
            return {**options, "cache": False}
    return options


def compiler_started() -> bool:
    """Whether this process has started Numba (imported it for a first kernel call): after that, a compiled
    kernel costs only its own load, and before it NumPy alone often beats Numba's start-up."""
    return bool(_NJIT)


class Kernel:
    """A function compiled by Numba on its first call. Attributes other than the call (``signatures``,
    ``inspect_asm``...) are the Numba dispatcher's."""

    def __init__(self, function, options: dict, reads: tuple[str, ...] = ()):
        functools.update_wrapper(self, function)
        self.py_func = function
        self._options = options
        self._dispatcher = None
        names = list(inspect.signature(function).parameters)
        unknown = sorted(set(reads) - set(names))
        if unknown:
            raise TypeError(f"{function.__qualname__} has no arguments {unknown} to read")
        self._reads = tuple(names.index(name) for name in reads)
        self._read_names = frozenset(reads)

    @property
    def dispatcher(self):
        """The Numba dispatcher (made on first use)."""
        if self._dispatcher is None:
            njit = _njit()
            with _LOCK:
                if self._dispatcher is None:
                    dispatcher = njit(**_cacheable(self._options))(self.py_func)
                    _take_turns_on_cache_files(dispatcher)
                    self._dispatcher = dispatcher
        return self._dispatcher

    def __call__(self, *args, **kwargs):
        if self._reads:
            args = tuple(_read_only(value) if at in self._reads else value for at, value in enumerate(args))
            kwargs = {name: _read_only(value) if name in self._read_names else value for name, value in kwargs.items()}
        return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_dispatcher", "_options", "_reads", "_read_names", "py_func"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)


def _read_only(value):
    """``value``, or a read-only view of it where it is a writable NumPy array. (NumPy is not imported here at
    module level: the command line's parser and the GPU helper's fork import this module before NumPy.)"""
    import numpy as np

    if isinstance(value, np.ndarray) and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


def jit(function=None, *, reads: tuple[str, ...] = (), **options):
    """Compile ``function`` on first call with the package's Numba defaults (``nogil``, cached, no fastmath).

    Parameters
    ----------
    function : callable, optional
        The function to compile; without it, ``jit(...)`` returns the decorator.
    reads : tuple of str
        Names of array arguments the kernel only reads. A call from Python passes them read-only, so writable and
        read-only inputs (a memory-mapped or ``frombuffer`` array) share one compiled specialization instead of
        compiling one for each combination of flags (several seconds each on a cold cache).
    **options
        Numba ``njit`` options over :data:`DEFAULT_OPTIONS`.
    """
    merged = {**DEFAULT_OPTIONS, **options}

    def decorate(fn):
        return Kernel(fn, merged, tuple(reads))

    return decorate if function is None else decorate(function)
