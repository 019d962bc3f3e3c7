"""Where a run's blocks of data live on a Dask cluster: in files in shared memory that every worker of a local
cluster maps (nothing is copied through sockets), or in this process, to be scattered to other clusters."""

from __future__ import annotations

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


class Placement:
    """Where a run's row blocks live: in files in shared memory for a local cluster (each worker maps them,
    nothing is copied through sockets), else in this process, to be scattered. Files go on :meth:`close`."""

    def __init__(self, client):
        self.directory = getattr(client, "_seqcompare_shared", None)
        self.paths: list = []
        self.arrays: list = []

    def empty(self, shape, dtype) -> np.ndarray:
        """An array to build the operands in (filled by the caller, who drops it before :meth:`close`)."""
        if self.directory is None or 0 in tuple(shape):
            return np.empty(shape, dtype)
        path = os.path.join(self.directory, f"seqcompare-{os.getpid()}-{uuid.uuid4().hex}.bin")
        self.paths.append(path)
        array = np.memmap(path, dtype=dtype, mode="w+", shape=tuple(shape))
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

    def close(self) -> None:
        """Unmap and remove the files in a background thread: giving gigabytes of pages back to the system takes
        a good part of a second (0.3 s for 2 GB measured), which the caller's result need not wait for."""
        arrays, paths = self.arrays, self.paths
        self.arrays, self.paths = [], []

        def remove():
            arrays.clear()
            for path in paths:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

        _removals[:] = [thread for thread in _removals if thread.is_alive()]
        thread = threading.Thread(target=remove, name="seqcompare-remove-blocks")
        thread.start()
        _removals.append(thread)
