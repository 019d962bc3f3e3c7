"""Hamming / SNP distances on NVIDIA GPUs (CuPy): the device side of :class:`~seqcompare.hamming.work.HammingWork`.

Methods (each equal to the CPU oracle bit for bit):

``bitmma``
    1-bit tensor cores: the shared GEMM (:mod:`seqcompare.cuda.bitgemm`) on code-bit operands (4 bits per DNA
    site and side, see ``hamming.cu``); 128 x 128 tiles, 3-stage ``cp.async`` pipeline of 1024-bit stages.
``matrix``
    Algorithm 2 on int8 tensor cores: the same operands unpacked to 0/1 bytes, one cuBLAS ``gemmEx`` (int8 in,
    int32 accumulation, exact) per engine tile.
``bitpack``
    CUDA cores: popcount over the CPU encoder's bit planes (any code space), the baseline.

Operands are built on the device from the CPU encoder's planes (3 bits per DNA site cross PCIe) or, with
``packer="naive" | "shared" | "ballot"``, from 8-bit site codes by the bit-mask construction kernels of
Alomairy et al. Sequences go up as the bytes that were read, and the alphabet's byte-to-code table is applied on
the device, so no compiled pass runs on the host: ``packer="auto"`` (the default) takes that route, with the
ballot kernel, for every problem whose rows are not packed already (:func:`resolve_packer`). Pairs within
``max_dist`` are selected on the device, in the kernels' epilogue
(:func:`device_pairs`, the work's native ``pairs``), so the n x n matrix never crosses PCIe; other reductions
run on the device blocks of :class:`HammingSession` (CuPy arrays), and only what they keep comes back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..allpairs import Tile, plan_tiles
from ..cuda import bitgemm
from ..cuda.runtime import lock_if_mapped, lock_mapping, locked_empty, module, require_cupy
from ..io.fasta import FileRows, in_memory
from .methods import gpu_tile_size

PACKERS = ("auto", "planes", "ballot", "shared", "naive")
POPCOUNT_TILE = 64
MMA_TILE = bitgemm.TILE
ROW_PAD = bitgemm.ROW_PAD
_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hamming.cu")


@dataclass(frozen=True)
class CodeBits:
    """How code-bit operands encode a code space: ``n_codes`` words per 64 sites and side.

    ``stored[x]`` is what present code ``x`` (code ``x + 1``) holds in the CPU planes; ``left_masks[k]`` has
    bit ``x`` set when codes ``x + 1`` and ``k + 1`` count as a difference.
    """

    n_codes: int
    stored: np.ndarray
    left_masks: np.ndarray

    @classmethod
    def from_space(cls, space) -> CodeBits:
        present = max(1, space.n_codes - 1)
        differ = space.difference_table()
        stored = np.array([x + 1 - space.plane_offset for x in range(present)], dtype=np.uint32)
        masks = np.zeros(present, dtype=np.uint32)
        for k in range(min(present, space.n_codes - 1)):
            for x in range(space.n_codes - 1):
                if differ[x + 1, k + 1]:
                    masks[k] |= np.uint32(1) << np.uint32(x)
        return cls(present, stored, masks)

    def row_words(self, n_sites: int) -> int:
        """64-bit words per operand row: ``n_codes`` per 64 sites, padded to 1024 bits (the deepest pipeline
        stage)."""
        words = ((n_sites + 63) // 64) * self.n_codes
        return -(-words // 16) * 16


def resolve_packer(packer: str, method: str, form: str) -> str:
    """The packer ``packer`` stands for, for a resolved GPU ``method`` and rows of ``form`` (see
    :class:`~seqcompare.hamming.work.Encoded`).

    ``auto`` builds operands from the rows as they are (``ballot``) unless they are packed already. Packing
    planes on the host needs Numba's start-up and a compiled pass over every site (0.5-0.6 s of a 2.3 s run of
    32,768 x 30,000 on an H200 host: bench/RESULTS.md, issue 17), while the 2.7x more bytes the raw rows put on
    PCIe cost tens of milliseconds and the ballot kernel 6 ms. ``bitpack`` reads planes only.
    """
    if packer not in PACKERS:
        raise ValueError(f"packer must be one of {', '.join(PACKERS)}; got {packer!r}")
    if method == "bitpack" or form == "planes":
        return "planes"
    return "ballot" if packer == "auto" else packer


def load_kernels() -> None:
    """Load, on the current device, the kernels a default GPU run of pairs launches (the packer's, the 1-bit
    GEMM's): 0.3-0.4 s of a fresh 2.2 s command on an H200's host went to loading them at first use
    (bench/RESULTS.md, session 30), which the command line now spends while it reads the input
    (:func:`~seqcompare.cuda.runtime.start_in_background`)."""
    hamming = module(_SOURCE)
    for name in ("translate_bytes", "pack_codes_ballot", "expand_planes", "pair_keys", "gather_pairs"):
        hamming.get_function(name)
    bitgemm.load(bitgemm.PAIRS_CONFIG)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _blocks(count: int, size: int) -> int:
    return -(-count // size)


class HostProblem:
    """Everything about one problem that is prepared once on the host, whatever the number of GPUs."""

    def __init__(self, encoded, method: str, packer: str = "auto", threads: int = 1, block_keys: dict | None = None):
        from .methods import resolve_method

        self.block_keys = block_keys or {}
        self.method = resolve_method(method, "cuda", encoded.space.n_codes)
        self.packer = resolve_packer(packer, self.method, encoded.form)
        if self.packer == "planes" or encoded.table is None:
            # The host packers read arrays, not rows in place.
            encoded = dataclasses.replace(encoded, left=in_memory(encoded.left), right=in_memory(encoded.right))
        self.encoded = encoded
        # The byte-to-code table the device applies to rows that go up as raw sequence bytes (or None).
        self.table = None
        self.symmetric = encoded.symmetric
        self.n_left = encoded.n_left
        self.n_right = encoded.n_left if encoded.symmetric else encoded.n_right
        self.n_sites = encoded.n_sites
        self.space = encoded.space
        self.bits = CodeBits.from_space(encoded.space)
        self.row_words = self.bits.row_words(self.n_sites)
        self.disjoint = encoded.space.relation == "disjoint"
        sides = ("left",) if self.symmetric else ("left", "right")
        self.host = {}
        for side in sides:
            if self.packer == "planes" and encoded.form == "planes":
                # Already packed (a Dask task's blocks in shared memory): uploaded from where they are, with
                # no page-locked staging copy to allocate and fill for every task.
                self.host[side] = encoded.planes(side, threads)
            elif self.packer == "planes":
                out = locked_empty(encoded.plane_shape(side), np.uint64)
                self.host[side] = encoded.planes(side, threads, out=out)
            elif encoded.table is not None:
                # Raw sequence bytes, uploaded from where the reader put them and translated on the device: on
                # the host, a table pass over every site is a compiled kernel (Numba's start-up), and a
                # page-locked copy of the bytes would cost more than the DMA it speeds up.
                rows = encoded.side(side)
                # Rows read in place (FileRows) go up as the file's bytes and are gathered on the device.
                self.host[side] = rows if isinstance(rows, FileRows) else np.ascontiguousarray(rows)
                self.table = np.ascontiguousarray(encoded.table, dtype=np.uint8)
            else:
                codes = encoded.codes(side)
                if codes.dtype != np.uint8:
                    codes = codes.astype(np.uint8)
                pinned = locked_empty(codes.shape, np.uint8)
                pinned[...] = codes
                self.host[side] = pinned

    def side(self, name: str) -> np.ndarray:
        return self.host["left" if self.symmetric else name]


class ResidentBlocks:
    """Operands of row blocks kept on their GPU between calls, for callers whose calls share blocks (a Dask
    worker's tiles): a block is uploaded and expanded once, and every later tile that needs it starts at once.

    A problem opts in through its ``block_keys`` (``{side: (run, block)}``, given by Dask workers). The blocks of one
    run are kept at a time, least recently used first out past the budget: ``SEQCOMPARE_GPU_RESIDENT_BYTES``,
    default half the device's memory. ``hits`` and ``misses`` count lookups.
    """

    def __init__(self):
        self._entries: OrderedDict = OrderedDict()  # (device, key) -> (operands entry, bytes)
        self._lock = threading.Lock()
        self._budgets: dict = {}
        self.hits = 0
        self.misses = 0

    def _budget(self, device_id: int) -> int:
        if device_id not in self._budgets:
            configured = os.environ.get("SEQCOMPARE_GPU_RESIDENT_BYTES")
            if configured:
                self._budgets[device_id] = int(float(configured))
            else:
                cupy = require_cupy()
                total = cupy.cuda.runtime.getDeviceProperties(device_id)["totalGlobalMem"]
                self._budgets[device_id] = total // 2
        return self._budgets[device_id]

    def take(self, device_id: int, key: tuple):
        """The operands kept under ``key`` on the device, or None."""
        with self._lock:
            found = self._entries.get((device_id, key))
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end((device_id, key))
            self.hits += 1
            return found[0]

    def keep(self, device_id: int, key: tuple, entry: dict) -> None:
        """Keep a block's operands (complete, and no longer being written) under ``key``."""
        size = sum(value.nbytes for value in entry.values() if hasattr(value, "nbytes"))
        budget = self._budget(device_id)
        with self._lock:
            for other in [k for k in self._entries if k[1][0] != key[0]]:  # another run's blocks
                del self._entries[other]
            if size > budget:
                return
            self._entries[(device_id, key)] = (entry, size)
            total = sum(bytes_ for _, bytes_ in self._entries.values())
            while total > budget:
                _, (_, freed) = self._entries.popitem(last=False)
                total -= freed

    def release(self, run=None) -> None:
        """Drop the blocks of ``run`` (default: all). Operands in use by a running problem stay alive with it."""
        with self._lock:
            for key in [k for k in self._entries if run is None or k[1][0] == run]:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


RESIDENT = ResidentBlocks()


class DeviceProblem:
    """One GPU's operands of a :class:`HostProblem`, uploaded in row chunks on a copy stream."""

    def __init__(self, host: HostProblem, device_id: int):
        cupy = require_cupy()
        self.cupy = cupy
        self.host = host
        self.device_id = device_id
        self.device = cupy.cuda.Device(device_id)
        with self.device:
            self.module = module(_SOURCE)
            self.copy_stream = cupy.cuda.Stream(non_blocking=True)
            self.stream = cupy.cuda.Stream(non_blocking=True)
            # A second compute stream lets one chunk's tiles fill the last wave of the previous chunk's.
            self.side_stream = cupy.cuda.Stream(non_blocking=True)
            self.stored = cupy.asarray(host.bits.stored)
            self.left_masks = cupy.asarray(host.bits.left_masks)
            self.table = None if host.table is None else cupy.asarray(host.table)
            self.operands = {}
            self.int8 = {}
            self.ready_rows = {}
            # Blocks another call already put on this device (see ResidentBlocks) are used as they are.
            block_keys = host.block_keys
            self._resident_keys = {}
            tile = POPCOUNT_TILE if host.method == "bitpack" else ROW_PAD
            for side, n in (("left", host.n_left), ("right", host.n_right)):
                if side == "right" and host.symmetric:
                    continue
                if side in block_keys:
                    key = (*block_keys[side], host.method, host.packer)
                    kept = RESIDENT.take(device_id, key)
                    if kept is not None:
                        self.operands[side] = kept
                        self.ready_rows[side] = n
                        continue
                    self._resident_keys[side] = key
                source = host.host[side]
                self.operands[side] = {
                    "source": cupy.empty(source.shape, dtype=source.dtype),
                    "n": n,
                }
                if host.method != "bitpack":
                    n_pad = _round_up(max(n, 1), tile)
                    # Both codings of a side: rows of the symmetric problem are left and right at once.
                    for coding in ("differ", "onehot"):
                        self.operands[side][coding] = cupy.zeros((n_pad, host.row_words), dtype=cupy.uint64)
                self.ready_rows[side] = 0
            # The allocations and copies above ran on the legacy default stream, which the non-blocking
            # streams do not wait for. Only that stream is waited for: another task's kernels may be running on
            # this device (a Dask worker running tasks side by side), and this one prepares meanwhile.
            cupy.cuda.Stream.null.synchronize()

    # -- operands ----------------------------------------------------------------------------------------
    def upload(self, side: str, row_stop: int, stream=None):
        """Copy rows ``ready .. row_stop`` of ``side`` and build their operands on ``stream`` (default: the
        main compute stream), asynchronously; returns an event recorded when they are ready (or None)."""
        start = self.ready_rows[side]
        if row_stop <= start:
            return None
        stream = self.stream if stream is None else stream
        entry = self.operands[side]
        with self.device:
            source = self.host.host[side]
            with self.copy_stream:
                if isinstance(source, FileRows):
                    self._gather_file_rows(entry, source, start, row_stop)
                else:
                    # A Dask task's planes lie in shared memory: locked there once, its chunks go up directly.
                    lock_if_mapped(source)
                    entry["source"][start:row_stop].set(source[start:row_stop], stream=self.copy_stream)
                copied = self.copy_stream.record()
            stream.wait_event(copied)
            if self.host.method != "bitpack":
                with stream:
                    self._build(entry, start, row_stop)
            ready = stream.record()
        self.ready_rows[side] = row_stop
        return ready

    def _gather_file_rows(self, entry, rows: FileRows, start: int, stop: int) -> None:
        """Rows ``start .. stop`` of an alignment read in place, on the copy stream: the file's bytes that hold
        them go up from the page cache (page-locked once, where CUDA allows: 0.038-0.054 s for a 1 GB file in a
        command on an H200 host, against 0.13-0.15 s for the shared memory a copy went to; bench/RESULTS.md,
        session 32), then are gathered into rows and translated to codes on the device."""
        cupy = self.cupy
        low, high = rows.span(start, stop)
        lock_mapping(rows.image)
        span = cupy.empty(high - low, dtype=cupy.uint8)  # on the copy stream: freed in its order
        span.set(rows.image[low:high], stream=self.copy_stream)
        offsets = cupy.asarray(rows.starts[start:stop] - low)
        # HostProblem keeps rows in place only on the byte route, which always has a table.
        self.module.get_function("gather_rows")(
            (stop - start,), (256,), (span, offsets, np.int64(rows.length), self.table, entry["source"][start:stop])
        )
        entry["translated"] = True

    def _build(self, entry, start: int, stop: int) -> None:
        host = self.host
        rows = stop - start
        left = entry["differ"][start:stop]
        right = entry["onehot"][start:stop]
        source = entry["source"][start:stop]
        n_codes, row_words = host.bits.n_codes, host.row_words
        if host.packer == "planes":
            words = source.shape[2]
            total = rows * words
            if total:
                self.module.get_function("expand_planes")(
                    (_blocks(total, 256),), (256,),
                    (source, np.int32(rows), np.int32(source.shape[1] - 1), np.int32(words), self.stored,
                     self.left_masks, np.int32(n_codes), np.int32(row_words), left, right),
                )  # fmt: skip
            return
        n_sites = source.shape[1]
        if rows == 0 or n_sites == 0:
            return
        if self.table is not None and not entry.get("translated"):  # raw bytes to codes, in place (once a row)
            self.module.get_function("translate_bytes")(
                (min(_blocks(source.size, 256), 4096),), (256,), (source, np.int64(source.size), self.table)
            )
        args = (source, np.int32(rows), np.int32(n_sites), self.left_masks, np.int32(n_codes),
                np.int32(row_words), left, right)  # fmt: skip
        if host.packer == "naive":
            left.fill(0)
            right.fill(0)
            self.module.get_function("pack_codes_naive")((_blocks(rows * n_sites, 256),), (256,), args)
        elif host.packer == "shared":
            left.fill(0)
            right.fill(0)
            shared = 2 * (1024 // 64) * n_codes * 8
            self.module.get_function("pack_codes_shared")(
                (_blocks(n_sites, 1024), rows), (256,), args, shared_mem=shared
            )
        else:
            warps = rows * _blocks(n_sites, 32)
            self.module.get_function("pack_codes_ballot")((_blocks(warps * 32, 256),), (256,), args)

    def operand(self, side: str, coding: str):
        name = "left" if self.host.symmetric else side
        return self.operands[name][coding]

    def planes(self, side: str):
        name = "left" if self.host.symmetric else side
        return self.operands[name]["source"]

    def upload_all(self) -> None:
        for side, entry in self.operands.items():
            self.upload(side, entry["n"])

    def prefetch(self) -> None:
        """Page-lock (on this thread) and queue the copy and build of every row not yet on the device, and have
        both compute streams wait for them: a Dask task does this before its turn on the device
        (:func:`device_turn`), while another task's kernels run."""
        for side, entry in self.operands.items():
            ready = self.upload(side, entry["n"])
            if ready is not None:
                self.side_stream.wait_event(ready)

    # -- kernels -----------------------------------------------------------------------------------------
    @staticmethod
    def _output(mode: int, max_dist: int, pairs, out, out_ld: int, out_row0: int, out_col0: int):
        """The shared epilogue's output: pairs under ``max_dist`` (mode 0) or a matrix block (mode 1)."""
        if mode == 0:
            return bitgemm.PairsOutput(max_dist, pairs["i"], pairs["j"], pairs["d"], pairs["count"])
        return bitgemm.MatrixOutput(out, out_ld, out_row0, out_col0)

    def run_tiles(self, tiles, *, mode: int, max_dist: int = 0, pairs=None, out=None, out_ld: int = 0,
                  out_row0: int = 0, out_col0: int = 0, mirror: bool = False, config: str = bitgemm.MATRIX_CONFIG,
                  stream=None) -> None:  # fmt: skip
        """Launch the method's kernel on micro tiles ``tiles`` (block indices, NumPy or already on the device:
        a host array costs a copy that waits for the stream), on ``stream`` (default: the compute stream)."""
        if len(tiles) == 0:
            return
        host, cupy = self.host, self.cupy
        output = self._output(mode, max_dist, pairs, out, out_ld, out_row0, out_col0)
        with self.device, (self.stream if stream is None else stream):
            tiles_dev = cupy.asarray(tiles)
            if host.method == "bitmma":
                bitgemm.launch(self.operand("left", "differ"), self.operand("right", "onehot"), tiles_dev,
                               n_left=host.n_left, n_right=host.n_right, symmetric=host.symmetric, output=output,
                               mirror=mirror, config=config)  # fmt: skip
            elif host.method == "bitpack":
                left, right = self.planes("left"), self.planes("right")
                n_planes = left.shape[1]
                shared = 2 * POPCOUNT_TILE * n_planes * 8 * 8
                kernel = self.module.get_function("hamming_popcount")
                if shared > 48 * 1024:
                    kernel.max_dynamic_shared_size_bytes = shared
                kernel(
                    (len(tiles),), (256,),
                    (left, right, np.int32(n_planes - 1), np.int32(left.shape[2]), np.int32(host.disjoint),
                     tiles_dev, np.int32(host.n_left), np.int32(host.n_right), np.int32(host.symmetric),
                     np.int32(mirror), *output.kernel_args()),
                    shared_mem=shared,
                )  # fmt: skip
            else:
                raise AssertionError("matrix method runs through run_gemm_block")

    def _int8_rows(self, side: str, start: int, stop: int, coding: str):
        """0/1 bytes of operand rows ``start:stop`` (built for each GEMM block, freed after it)."""
        cupy = self.cupy
        bits = self.operand(side, coding)[start:stop]
        out = cupy.empty((stop - start, self.host.row_words * 64), dtype=cupy.int8)
        n_words = bits.size
        if n_words:
            self.module.get_function("unpack_bits_int8")(
                (_blocks(n_words * 8, 256),), (256,), (cupy.ascontiguousarray(bits), np.int64(n_words), out)
            )
        return out

    def run_gemm_block(self, tile: Tile):
        """The int8 tensor-core block of ``tile`` (rows x cols int32, on the device): one cuBLAS gemmEx."""
        from cupy_backends.cuda.libs import cublas

        cupy = self.cupy
        with self.device, self.stream:
            left = self._int8_rows("left", tile.row_start, tile.row_stop, "differ")
            right = self._int8_rows("right", tile.col_start, tile.col_stop, "onehot")
            rows, cols, depth = tile.n_rows, tile.n_cols, left.shape[1]
            if not depth:  # no sites: every distance is 0 (and cuBLAS refuses an empty inner dimension)
                return cupy.zeros((rows, cols), dtype=cupy.int32)
            block = cupy.empty((rows, cols), dtype=cupy.int32)
            if rows and cols:
                handle = cupy.cuda.device.get_cublas_handle()
                cublas.setStream(handle, self.stream.ptr)
                alpha = np.array(1, dtype=np.int32)
                beta = np.array(0, dtype=np.int32)
                # Row-major block = left . right^T is column-major block^T = right . left^T.
                cublas.gemmEx(
                    handle, cublas.CUBLAS_OP_T, cublas.CUBLAS_OP_N, cols, rows, depth,
                    alpha.ctypes.data, right.data.ptr, 3, depth, left.data.ptr, 3, depth,
                    beta.ctypes.data, block.data.ptr, 10, cols, 72, -1,
                )  # fmt: skip  CUDA_R_8I = 3, CUDA_R_32I = 10, CUBLAS_COMPUTE_32I = 72, default algorithm
            return block

    def emit_block(self, block, tile: Tile, *, mode: int, max_dist: int = 0, pairs=None) -> None:
        """Run the shared epilogue over a GEMM block (pairs selection on the device)."""
        host = self.host
        total = block.size
        if total == 0:
            return
        output = self._output(mode, max_dist, pairs, None, 0, 0, 0)
        with self.device, self.stream:
            self.module.get_function("emit_block")(
                (_blocks(total, 256),), (256,),
                (block, np.int32(tile.n_rows), np.int32(tile.n_cols), np.int32(tile.row_start),
                 np.int32(tile.col_start), np.int32(host.n_left), np.int32(host.n_right),
                 np.int32(host.symmetric), np.int32(0), *output.kernel_args()),
            )  # fmt: skip

    def synchronize(self) -> None:
        with self.device:
            self.stream.synchronize()
            self.side_stream.synchronize()
        # Complete blocks that other calls may share stay on the device once nothing writes them any more.
        for side, key in list(self._resident_keys.items()):
            if self.ready_rows[side] >= self.operands[side]["n"]:
                RESIDENT.keep(self.device_id, key, self.operands[side])
                del self._resident_keys[side]

    # -- whole blocks --------------------------------------------------------------------------------------
    def block(self, tile: Tile):
        """The distances of an engine tile, on the device (rows x cols int32; full square for a diagonal
        tile of a symmetric problem)."""
        host, cupy = self.host, self.cupy
        self.upload("left", tile.row_stop)
        if not host.symmetric:
            self.upload("right", tile.col_stop)
        else:
            self.upload("left", max(tile.row_stop, tile.col_stop))
        if host.method == "matrix":
            return self.run_gemm_block(tile)
        size = MMA_TILE if host.method == "bitmma" else POPCOUNT_TILE
        with self.device, self.stream:
            out = cupy.empty((tile.n_rows, tile.n_cols), dtype=cupy.int32)
        first_row, first_col = tile.row_start // size, tile.col_start // size
        row_blocks = range(first_row, _blocks(tile.row_stop, size))
        if tile.diagonal:
            tiles = bitgemm.micro_tiles(row_blocks, None, True)
            tiles = tiles[tiles[:, 1] >= first_col]
        else:
            tiles = bitgemm.micro_tiles(row_blocks, range(first_col, _blocks(tile.col_stop, size)), False)
        self.run_tiles(tiles, mode=1, out=out, out_ld=tile.n_cols, out_row0=tile.row_start,
                       out_col0=tile.col_start, mirror=tile.diagonal)  # fmt: skip
        return out


_TURNS: dict = {}
_TURNS_LOCK = threading.Lock()


def device_turn(device_id: int) -> threading.Lock:
    """The lock that a problem holds on device ``device_id`` while its kernels are queued and run.

    A Dask worker that runs two tasks at once (``tasks_per_worker=2``) then has one task's kernels on its GPU
    while the other page-locks and copies its blocks; without turns both would run their kernels together,
    finish together, and prepare their next blocks together, with the GPU idle."""
    with _TURNS_LOCK:
        return _TURNS.setdefault(device_id, threading.Lock())


class DeviceGate:
    """Keeps a Dask task's preparation from stalling the kernels of the task whose turn comes next.

    CUDA serializes some calls of one process on a device: while one thread prepares (allocates, page-locks
    a block of shared memory with ``cudaHostRegister``, a few tenths of a second for a GB, queues copies),
    another thread's kernel launches can wait, and the GPU runs dry. A new task's thread frees up just as the
    next turn begins, so its preparing met that turn's launches: on 4 H200s, the first turn of a worker took
    up to 0.30 s more when the other task prepared beside it, later turns 0.01-0.03 s more (bench/RESULTS.md,
    session 44). Through the gate, tasks prepare one at a time, each once the task before it has queued its
    kernels."""

    # A task that prepared and has not queued its kernels within this many seconds no longer holds others back.
    WAIT_S = 10.0

    def __init__(self):
        self._preparing = threading.Lock()
        self._queued = threading.Event()
        self._queued.set()

    @contextlib.contextmanager
    def preparing(self):
        """Hold the gate to prepare; once prepared, the caller takes its turn and calls :meth:`queued`."""
        with self._preparing:
            self._queued.wait(self.WAIT_S)
            yield
            self._queued.clear()

    def queued(self) -> None:
        """The prepared task has queued its kernels (or given up): the next may prepare."""
        self._queued.set()


_GATES: dict = {}


def device_gate(device_id: int) -> DeviceGate:
    """The :class:`DeviceGate` of device ``device_id`` in this process."""
    with _TURNS_LOCK:
        return _GATES.setdefault(device_id, DeviceGate())


class TurnTimes:
    """Seconds a process's shared-device problems (Dask tasks) spent preparing their blocks, waiting for the
    device's turn and holding it, summed, for benchmarks that ask where a worker's time went."""

    def __init__(self):
        self._lock = threading.Lock()
        self.seconds = {"prefetch": 0.0, "wait": 0.0, "held": 0.0}
        self.turns = 0
        self.records: list = []  # one dict of wall-clock stamps a task, the latest _RECORDS_KEPT

    def add(self, prefetch: float, wait: float, held: float) -> None:
        with self._lock:
            for name, value in (("prefetch", prefetch), ("wait", wait), ("held", held)):
                self.seconds[name] += value
            self.turns += 1

    def record(self, stamps: dict) -> None:
        with self._lock:
            self.records.append(stamps)
            del self.records[:-_RECORDS_KEPT]


_RECORDS_KEPT = 1000


TURN_TIMES = TurnTimes()


def _new_pairs(cupy, capacity: int):
    return {
        "i": cupy.empty(capacity, dtype=cupy.uint32),
        "j": cupy.empty(capacity, dtype=cupy.uint32),
        "d": cupy.empty(capacity, dtype=cupy.uint32),
        "count": cupy.zeros(1, dtype=cupy.uint64),
    }


# Pairs up to this many are sorted by NumPy once copied back, rather than by CuPy's Thrust sort on the device: a
# process's first Thrust sort loads its kernels, which a fresh command pays for. For 32,768 x 30,000 to 132,509
# pairs on an H200 host, NumPy's sort took 3 ms and the command 0.680 s, against 0.845 s with Thrust
# (bench/RESULTS.md, session 32).
HOST_SORT_PAIRS_UP_TO = 1 << 20


def _pairs_on_device(problem: DeviceProblem, tiles: np.ndarray, max_dist: int, chunks: int, capacity: int,
                     config: str = bitgemm.PAIRS_CONFIG, on_queued=None):  # fmt: skip
    """Pairs within ``max_dist`` over micro ``tiles`` on one device: rows stream in while tiles run.

    Everything is queued without waiting: row chunks go up on the copy stream from page-locked memory, and
    each chunk's tiles start on the compute stream as soon as its rows have arrived. ``on_queued()``, if
    given, is called once everything is queued, before waiting for it.
    """
    host, cupy = problem.host, problem.cupy
    with problem.device:
        pairs = _new_pairs(cupy, capacity)
    if host.method == "matrix":
        size = gpu_tile_size("matrix")
        for tile in _engine_tiles_of(host, tiles, size):
            block = problem.block(tile)
            problem.emit_block(block, tile, mode=0, max_dist=max_dist, pairs=pairs)
    else:
        edge = bitgemm.CONFIGS[config][0] if host.method == "bitmma" else POPCOUNT_TILE
        with problem.device, problem.stream:
            tiles_dev = cupy.asarray(tiles)
            problem.stream.synchronize()  # before any work is queued: the side stream reads it too
        streams = (problem.stream, problem.side_stream)
        previous = None
        if not host.symmetric:
            previous = problem.upload("right", host.n_right)
        n_blocks = _blocks(host.n_left, edge)
        edges = np.unique(np.linspace(0, n_blocks, max(1, chunks) + 1).astype(int))
        for chunk, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
            # Chunks alternate between two streams. A chunk's tiles need its own rows (built just before on
            # the same stream) and every earlier chunk's: the previous one was built on the other stream,
            # so wait for it; older ones precede it there or on this stream.
            stream = streams[chunk % 2]
            ready = problem.upload("left", min(host.n_left, hi * edge), stream=stream)
            if previous is not None:
                stream.wait_event(previous)
            previous = ready if ready is not None else previous
            first, stop = np.searchsorted(tiles[:, 0], [lo, hi])
            problem.run_tiles(tiles_dev[first:stop], mode=0, max_dist=max_dist, pairs=pairs, config=config,
                              stream=stream)  # fmt: skip
    if on_queued is not None:
        on_queued()
    problem.synchronize()
    with problem.device:
        found = int(pairs["count"].get()[0])
    return pairs, found


def _engine_tiles_of(host: HostProblem, tiles: np.ndarray, size: int):
    """Engine tiles (of edge ``size``) covering micro tiles given as 128-blocks, for the GEMM method."""
    planned = plan_tiles(host.n_left, None if host.symmetric else host.n_right, size)
    wanted = {(int(r) * MMA_TILE // size, int(c) * MMA_TILE // size) for r, c in tiles}
    return [t for t in planned if (t.row_start // size, t.col_start // size) in wanted]


def device_pairs(encoded, max_dist: int, *, method: str = "auto", packer: str = "auto", devices=None,
                 threads: int = 1, chunks: int = 16, capacity: int = 1 << 24, host: HostProblem | None = None,
                 config: str = bitgemm.PAIRS_CONFIG, timings: dict | None = None):  # fmt: skip
    """Pairs at distance ``<= max_dist``, selected on the GPU(s): ``(i, j, d)`` int64 sorted by ``(i, j)``.

    Symmetric problems give each unordered pair once with ``i < j``. Micro tiles are dealt round-robin to
    ``devices`` (default: all visible), each holding its own copy of the operands; rows cross PCIe in
    ``chunks`` pieces while the tiles of earlier pieces run (every device pulls every row from the host:
    measured on 2 H200s, two devices copy at once as fast as one, faster than sharing rows by peer copies).
    The pairs of all devices are sorted together on the first one. ``host`` reuses a prepared
    :class:`HostProblem` (then ``encoded``, ``method``, ``packer`` and ``threads`` are not used); ``config``
    names the 1-bit kernel's shape (:data:`seqcompare.cuda.bitgemm.CONFIGS`); ``timings``, if given, receives host-clock stage
    times (per device under ``"devices"``).
    """
    entered = time.time()
    cupy = require_cupy()
    devices = list(range(cupy.cuda.runtime.getDeviceCount())) if devices is None else list(devices)
    if host is None:
        host = HostProblem(encoded, method, packer, threads)
    if host.method == "bitpack":
        rows, cols = POPCOUNT_TILE, POPCOUNT_TILE
    elif host.method == "bitmma":
        rows, cols = bitgemm.CONFIGS[config][:2]
    else:
        rows = cols = MMA_TILE
    all_tiles = bitgemm.micro_tiles(range(_blocks(host.n_left, rows)), range(_blocks(host.n_right, cols)),
                                    host.symmetric, rows, cols)  # fmt: skip
    if host.method == "matrix":
        # GEMM engine tiles are dealt instead of micro tiles.
        step = gpu_tile_size("matrix") // MMA_TILE
        all_tiles = all_tiles[(all_tiles[:, 0] % step == 0) & (all_tiles[:, 1] % step == 0)]
    # Dealt round-robin, each share stays sorted by block row (chunks of rows select contiguous slices).
    shares = [all_tiles[k :: len(devices)] for k in range(len(devices))]

    def setup(k: int):
        start = time.perf_counter()
        problem = DeviceProblem(host, devices[k])
        if timings is not None:
            timings.setdefault("devices", {})[devices[k]] = {"setup_s": time.perf_counter() - start}
        return problem

    def work(k: int):
        start = time.perf_counter()
        cap = capacity
        if shared:  # a Dask task: prepare through the device's gate, then take the device's turn
            gate = device_gate(devices[k])
            stamps = {"entered": entered}
            with gate.preparing():
                stamps["gate"] = time.time()
                problems[k] = problem = setup(k)
                stamps["set_up"] = time.time()
                problem.prefetch()
            prefetched = time.perf_counter()
            stamps["prefetched"] = time.time()
        else:
            problem = problems[k]
        while True:
            if shared:
                try:
                    with device_turn(problem.device_id):
                        turn = time.perf_counter()
                        stamps["turn"] = time.time()
                        pairs, found = _pairs_on_device(problem, shares[k], max_dist, chunks, cap, config,
                                                        on_queued=gate.queued)  # fmt: skip
                        stamps["released"] = time.time()
                finally:
                    gate.queued()
                TURN_TIMES.add(prefetched - start, turn - prefetched, time.perf_counter() - turn)
                prefetched = time.perf_counter()
            else:
                pairs, found = _pairs_on_device(problem, shares[k], max_dist, chunks, cap, config)
            if found <= cap:
                break
            cap = found  # the count is exact even when the buffer overflowed: run again with room for all
        if timings is not None:
            timings["devices"][devices[k]]["upload_and_kernels_s"] = time.perf_counter() - start
        with problem.device, problem.stream:
            keys = cupy.empty(found, dtype=cupy.uint64)
            if found:
                problem.module.get_function("pair_keys")(
                    (min(_blocks(found, 256), 4096),), (256,), (pairs["i"], pairs["j"], np.int64(found), keys)
                )
            problem.stream.synchronize()  # the first device's stream reads these next
        if shared:
            stamps["keyed"] = time.time()
            TURN_TIMES.record(stamps)
        return keys, pairs["d"][:found], problem

    clock = time.perf_counter()
    shared = bool(host.block_keys)  # Dask tasks set up their devices' problems through the gate (in work)
    if len(devices) == 1:
        problems = [None if shared else setup(0)]
        parts = [work(0)]
    else:
        with ThreadPoolExecutor(len(devices)) as pool:
            problems = [None] * len(devices) if shared else list(pool.map(setup, range(len(devices))))
            parts = list(pool.map(work, range(len(devices))))
    computed = time.perf_counter()
    # Every device's pairs meet on the first one (peer copies) and are sorted there once.
    first = parts[0][2]
    with first.device, first.stream:
        total = sum(int(keys.size) for keys, _, _ in parts)
        keys = cupy.empty(total, dtype=cupy.uint64)
        dist = cupy.empty(total, dtype=cupy.uint32)
        at = 0
        for part_keys, part_dist, _ in parts:
            count = int(part_keys.size)
            for target, part in ((keys, part_keys), (dist, part_dist)):
                if count:
                    cupy.cuda.runtime.memcpyPeerAsync(target[at:].data.ptr, first.device_id, part.data.ptr,
                                                      part.device.id, part.nbytes, first.stream.ptr)  # fmt: skip
            at += count
        keys_host = locked_empty((total,), np.uint64)
        dist_host = locked_empty((total,), np.uint32)
        sort_on_host = 0 < total <= HOST_SORT_PAIRS_UP_TO
        if sort_on_host:
            keys.get(stream=first.stream, out=keys_host)
            dist.get(stream=first.stream, out=dist_host)
        elif total:
            order = cupy.argsort(keys)  # Thrust, compiled into CuPy
            sorted_keys, sorted_dist = cupy.empty_like(keys), cupy.empty_like(dist)
            arguments = (order, keys, dist, np.int64(total), sorted_keys, sorted_dist)
            first.module.get_function("gather_pairs")((min(_blocks(total, 256), 4096),), (256,), arguments)
            sorted_keys.get(stream=first.stream, out=keys_host)
            sorted_dist.get(stream=first.stream, out=dist_host)
        first.stream.synchronize()
    if sort_on_host:
        order = np.argsort(keys_host)  # the keys are distinct: any order of sorting gives the same result
        keys_host, dist_host = keys_host[order], dist_host[order]
    i = (keys_host >> np.uint64(32)).astype(np.int64)
    j = (keys_host & np.uint64(0xFFFFFFFF)).astype(np.int64)
    d = dist_host.astype(np.int64)
    if timings is not None:
        timings.update(setup_s=timings["devices"][devices[0]]["setup_s"],
                       upload_and_kernels_s=timings["devices"][devices[0]]["upload_and_kernels_s"],
                       all_devices_s=computed - clock, sort_and_copy_back_s=time.perf_counter() - computed)  # fmt: skip
    return i, j, d


class HammingSession:
    """One GPU's side of a :class:`~seqcompare.hamming.work.HammingWork` for the engine's
    :class:`~seqcompare.allpairs.GpuExecutor`: the operands on the device, and each tile's block computed there
    (capped as the work says) and handed to the reduction before anything crosses PCIe."""

    def __init__(self, work, device: int):
        from ..allpairs import default_threads

        self.work = work
        self.problem = DeviceProblem(work.host_problem(default_threads()), device)
        # No pass over the blocks for a cap that no distance can reach.
        self.cap = work.cap if work.cap <= work.encoded.n_sites else None

    def reduce(self, tile: Tile, function):
        problem = self.problem
        block = problem.block(self.work.local(tile))
        with problem.device, problem.stream:
            if self.cap is not None:
                block = problem.cupy.minimum(block, self.cap)
            result = function(tile, block)
            problem.synchronize()
        return result

    def close(self) -> None:
        pass


def release_resident(run) -> None:
    """Free the GPU memory this process kept blocks of ``run`` in (:class:`ResidentBlocks`); run on every Dask
    worker at the end of a run."""
    RESIDENT.release(run)
