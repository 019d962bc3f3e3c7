"""Where a run's blocks of data live on a Dask cluster: in files in shared memory that every worker of a local
cluster maps (nothing is copied through sockets), or in this process, to be scattered to other clusters."""

from __future__ import annotations

import atexit
import itertools
import os
import threading
import uuid
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SharedBlock:
    """Rows of an array in a file that every worker maps (a local cluster's shared memory)."""

    path: str
    offset: int
    shape: tuple
    dtype: str

    def open(self) -> np.ndarray:
        if 0 in self.shape:
            return np.empty(self.shape, self.dtype)
        return np.memmap(self.path, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)


def opened(blocks) -> list:
    return [b.open() if isinstance(b, SharedBlock) else b for b in blocks]


def joined(blocks) -> np.ndarray:
    """Consecutive row blocks as one array: one mapping when they are adjacent in one shared file (no copy)."""
    first = blocks[0]
    if all(isinstance(b, SharedBlock) for b in blocks) and len({b.path for b in blocks}) == 1:
        row = int(np.prod(first.shape[1:], dtype=np.int64)) * np.dtype(first.dtype).itemsize
        if all(b.offset == a.offset + a.shape[0] * row for a, b in itertools.pairwise(blocks)):
            rows = sum(b.shape[0] for b in blocks)
            return SharedBlock(first.path, first.offset, (rows, *first.shape[1:]), first.dtype).open()
    arrays = opened(blocks)
    return np.concatenate(arrays) if len(arrays) > 1 else np.asarray(arrays[0])


_removals: list = []  # threads removing earlier runs' shared-memory files


def finish_removals() -> None:
    """Wait until the shared-memory files of earlier runs are gone (the interpreter also waits at exit)."""
    while _removals:
        _removals.pop().join()


# Shared-memory files of at least this many bytes are kept, mapped, for a client's next run (:class:`SharedPool`).
_POOL_FROM = 1 << 28


class SharedPool:
    """Large shared-memory files of a client's last run, kept mapped for its next one.

    The kernel hands out a fresh shared page at a few GB/s in all, whatever the threads: on a 4 x H200 host the
    caller took 2.1-2.4 s to pack the 9 GB of bit planes of 800,000 x 30,000 rows into new files, while its
    workers waited for the first blocks (bench/RESULTS.md, session 35). Pages already mapped are written at
    memory speed. A run that ends normally leaves its large files here; the next run takes those that are
    large enough, and the rest are removed when it ends. :func:`~seqcompare.distributed.close`, and the
    interpreter's exit, remove them all. Every block's ``fill`` writes all of its part, so what an earlier run
    left in a file never shows."""

    def __init__(self):
        self._lock = threading.Lock()
        self._files: list = []  # (path, uint8 memmap of the whole file)
        atexit.register(self.clear)

    def take(self, nbytes: int):
        """The smallest kept ``(path, mapping)`` of at least ``nbytes`` bytes, no longer kept; or None."""
        with self._lock:
            fits = [entry for entry in self._files if entry[1].size >= nbytes]
            if not fits:
                return None
            entry = min(fits, key=lambda e: e[1].size)
            self._files.remove(entry)
            return entry

    def keep(self, entries: list) -> list:
        """Keep ``entries`` for the next run; returns the paths of files kept until now, to be removed."""
        with self._lock:
            dropped = [path for path, _ in self._files]
            self._files = list(entries)
            return dropped

    def clear(self) -> None:
        """Remove every kept file."""
        for path in self.keep([]):
            _unlink(path)

    def __len__(self) -> int:
        return len(self._files)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class Placement:
    """Where a run's row blocks live: in files in shared memory for a local cluster (each worker maps them,
    nothing is copied through sockets), else in this process, to be scattered. Files go on :meth:`close`, or
    wait in the client's :class:`SharedPool` for its next run."""

    def __init__(self, client):
        self.directory = getattr(client, "_seqcompare_shared", None)
        self.pool = getattr(client, "_seqcompare_pool", None)
        self.paths: list = []
        self.arrays: list = []
        self.whole: dict = {}  # path -> the uint8 mapping of a whole file that may be kept in the pool

    def empty(self, shape, dtype) -> np.ndarray:
        """An array to build the operands in (filled by the caller, who drops it before :meth:`close`)."""
        if self.directory is None or 0 in tuple(shape):
            return np.empty(shape, dtype)
        shape = tuple(shape)
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        kept = self.pool.take(nbytes) if self.pool is not None and nbytes >= _POOL_FROM else None
        if kept is not None:
            path, whole = kept
        else:
            path = os.path.join(self.directory, f"seqcompare-{os.getpid()}-{uuid.uuid4().hex}.bin")
            whole = np.memmap(path, dtype=np.uint8, mode="w+", shape=(nbytes,))
        self.paths.append(path)
        if nbytes >= _POOL_FROM:
            self.whole[path] = whole
        # A view from the file's first byte: a memmap whose filename and offset (0) name where the blocks lie.
        array = whole[:nbytes].view(dtype).reshape(shape)
        self.arrays.append(array)
        return array

    def block(self, array: np.ndarray, start: int, stop: int):
        """Rows ``start:stop`` of ``array`` (written) as a task will receive them."""
        if not isinstance(array, np.memmap):
            return array[start:stop]
        array.flush()
        row = int(np.prod(array.shape[1:], dtype=np.int64)) * array.dtype.itemsize
        return SharedBlock(array.filename, array.offset + start * row, (stop - start, *array.shape[1:]),
                            array.dtype.str)  # fmt: skip

    def close(self, completed: bool = False) -> None:
        """Unmap and remove the files in a background thread: giving gigabytes of pages back to the system takes
        a good part of a second (0.3 s for 2 GB measured), which the caller's result need not wait for. After
        a ``completed`` run, large files go to the client's pool instead (an interrupted run's workers may
        still read its files)."""
        arrays, paths = self.arrays, self.paths
        self.arrays, self.paths = [], []
        kept = []
        if completed and self.pool is not None:
            kept = [(path, self.whole[path]) for path in paths if path in self.whole]
            paths = [path for path in paths if path not in self.whole] + self.pool.keep(kept)
        self.whole = {}

        def remove():
            arrays.clear()
            for path in paths:
                _unlink(path)

        _removals[:] = [thread for thread in _removals if thread.is_alive()]
        thread = threading.Thread(target=remove, name="seqcompare-remove-blocks")
        thread.start()
        _removals.append(thread)
