"""Public Hamming / SNP-distance API: matrices, pairs within a distance, k nearest neighbours."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ...encoding import (
    ALPHABETS,
    CodeSpace,
    apply_code_table,
    encode_categorical,
    pack_planes,
    sequence_encoding,
)
from ...gpu._runtime import resolve_device
from ...engine import Tile, ThreadExecutor, default_threads, default_tile_size, plan_tiles, run_tiles
from ... import validation
from ...errors import InputError
from ...io.fasta import Alignment, read_alignment
from ...progress import reporter
from ...sinks import KnnSink, MatrixSink, PairsSink
from .methods import GPU_ONLY_METHODS, METHODS


@dataclass
class Encoded:
    """Inputs ready for the kernels: left and optional right values, and their shared code space.

    For sequences the values are the raw bytes and ``table`` maps bytes to codes; for value arrays the
    values are already codes and ``table`` is None. Codes are materialised only for methods that need them.
    """

    left_values: np.ndarray
    right_values: np.ndarray | None
    space: CodeSpace
    table: np.ndarray | None = None

    @property
    def symmetric(self) -> bool:
        return self.right_values is None

    @property
    def n_sites(self) -> int:
        return self.left_values.shape[1]

    @property
    def n_left(self) -> int:
        return self.left_values.shape[0]

    @property
    def n_right(self) -> int | None:
        return None if self.right_values is None else self.right_values.shape[0]

    def codes(self, side: str = "left") -> np.ndarray:
        values = self.left_values if side == "left" or self.symmetric else self.right_values
        return values if self.table is None else apply_code_table(self.table, values)

    def planes(self, side: str = "left", threads: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        values = self.left_values if side == "left" or self.symmetric else self.right_values
        return pack_planes(values, self.space, self.table, threads=threads, out=out)

    def plane_shape(self, side: str = "left") -> tuple[int, int, int]:
        """Shape of :meth:`planes` for ``side``."""
        values = self.left_values if side == "left" or self.symmetric else self.right_values
        return (values.shape[0], self.space.n_value_planes + 1, (values.shape[1] + 63) // 64)


def _as_matrix(data, role: str):
    """Classify one input: ``("sequences", uint8 bytes)`` or ``("values", array)``."""
    if isinstance(data, (str, os.PathLike)):
        data = read_alignment(data)
    if isinstance(data, Alignment):
        return "sequences", data.sequences
    if isinstance(data, (list, tuple)) and data and all(isinstance(s, (str, bytes)) for s in data):
        rows = [s.encode("latin-1") if isinstance(s, str) else s for s in data]
        lengths = {len(r) for r in rows}
        if len(lengths) > 1:
            first = len(rows[0])
            bad = next(k for k, r in enumerate(rows) if len(r) != first)
            raise InputError(
                f"{role}: sequence #{bad + 1} has length {len(rows[bad])} but sequence #1 has length {first}"
            )
        matrix = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), lengths.pop())
        return "sequences", matrix
    array = np.asarray(data)
    if array.dtype.kind in "SU" and array.ndim == 2 and array.dtype.itemsize in (1, 4):
        if array.dtype.kind == "U":
            array = np.char.encode(array, "latin-1")
        return "sequences", np.ascontiguousarray(array).view(np.uint8).reshape(array.shape)
    if array.dtype.kind in "SU" and array.ndim == 1:
        return _as_matrix([str(s) if array.dtype.kind == "U" else bytes(s) for s in array], role)
    if array.ndim != 2:
        raise InputError(f"{role}: expected a 2-D array (items x sites) or a list of sequences, got shape {array.shape}")
    return "values", array


def encode_inputs(X, Y=None, *, alphabet="acgt", keep_case=False, missing=None) -> Encoded:
    """Encode ``X`` (and ``Y``) into site codes of one shared code space.

    Sequences (an :class:`~seqcompare.io.fasta.Alignment`, a FASTA path, a list of equal-length strings, or
    a 2-D character array) use the sequence ``alphabet``; any other 2-D array is categorical data in which
    every distinct value is a category.
    """
    if alphabet not in ALPHABETS:
        raise ValueError(f"alphabet must be one of {', '.join(ALPHABETS)}; got {alphabet!r}")
    kind_x, mx = _as_matrix(X, "X")
    parts = [mx]
    if Y is not None:
        kind_y, my = _as_matrix(Y, "Y")
        if kind_x != kind_y:
            raise InputError("X and Y must both be sequences or both be value arrays")
        if my.shape[1] != mx.shape[1]:
            raise InputError(f"X has {mx.shape[1]} sites but Y has {my.shape[1]}; they must be equally long")
        parts.append(my)
    if kind_x == "sequences":
        if missing is None:
            missing = ""
        elif not isinstance(missing, (str, bytes)):
            missing = "".join(missing)
        table, space = sequence_encoding(parts, alphabet, keep_case=keep_case, missing=missing)
        return Encoded(parts[0], parts[1] if Y is not None else None, space, table)
    codes, space = encode_categorical(parts, missing=missing)
    return Encoded(codes[0], codes[1] if Y is not None else None, space)


def resolve_method(method: str, device: str = "cpu", n_codes: int = 5) -> str:
    """The method ``auto`` stands for. On the CPU: ``bitpack``, 27-35x faster than the next method in the
    method table of bench/RESULTS.md, because it moves 3 bits per DNA site instead of one float per code and
    site. On a GPU: see :func:`seqcompare.gpu.hamming.gpu_method` (``bitmma`` for up to 32 codes)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if resolve_device(device) == "cuda":
        from ...gpu.hamming import gpu_method

        return gpu_method(method, n_codes)
    if method in GPU_ONLY_METHODS:
        raise ValueError(f"method {method!r} runs on a GPU only (device='cuda')")
    return "bitpack" if method == "auto" else method


def _make_kernel(method: str, encoded: Encoded, cap: int, threads: int):
    from . import matrix as matrix_module
    from .reference import vector_tile

    if method in ("vector", "tiled", "matrix"):
        left = encoded.codes("left")
        right = left if encoded.symmetric else encoded.codes("right")
        if method == "vector":
            table = encoded.space.difference_table()
            return lambda tile: vector_tile(left, right, table, tile, cap)
        return lambda tile: matrix_module.tiled_tile(left, right, encoded.space, tile, cap)
    if method == "bitpack":
        from ._bitpack import bitpack_tile

        left_planes = encoded.planes("left", threads)
        right_planes = left_planes if encoded.symmetric else encoded.planes("right", threads)
        disjoint = encoded.space.relation == "disjoint"
        dtype = distance_dtype(encoded.n_sites)

        def kernel(tile):
            block = np.empty((tile.n_rows, tile.n_cols), dtype=dtype)
            bitpack_tile(
                left_planes, right_planes, tile.row_start, tile.row_stop, tile.col_start, tile.col_stop,
                tile.diagonal, disjoint, cap, block,
            )  # fmt: skip
            return block

        return kernel
    raise ValueError(f"unknown method {method!r}")


def distance_dtype(n_sites: int):
    """int32 while a distance (at most the number of sites) fits, else int64."""
    return np.int32 if n_sites < 2**31 else np.int64


def run_hamming(encoded: Encoded, sink, *, method="auto", cap=None, threads=None, tile_size=None,
                progress=False, device="cpu", gpu_packer="planes", client=None):  # fmt: skip
    """Run the tile engine on encoded inputs and return what ``sink`` finishes with.

    This is the layer every public function and the CLI share; ``cap`` limits every distance to
    ``min(distance, cap)`` and lets kernels stop counting a pair early. ``gpu_packer`` chooses how GPU
    operands are built (see :mod:`seqcompare.gpu.hamming`). With a Dask ``client`` the tiles run on its
    cluster (:func:`seqcompare.distributed.run_hamming_tiles`; ``tile_size`` is then the task tile).
    ``progress`` is a bool or a reporter factory (:mod:`seqcompare.progress`).
    """
    threads = validation.threads(threads)
    tile_size = validation.optional_integer(tile_size, "tile_size", minimum=1)
    cap = validation.optional_integer(cap, "max_count", minimum=0)
    n_left, n_right = encoded.n_left, encoded.n_right
    full_cap = encoded.n_sites + 1
    cap = full_cap if cap is None else int(min(cap, full_cap))
    if client is not None:
        from ...distributed import run_hamming_tiles

        if device == "cpu":  # refuse a GPU-only method here; workers resolve "auto" for their own hardware
            resolve_method(method, "cpu", encoded.space.n_codes)
        return run_hamming_tiles(client, encoded, sink, method=method, cap=cap, device=device, tile_size=tile_size,
                                 packer=gpu_packer)  # fmt: skip
    device = resolve_device(device)
    method = resolve_method(method, device, encoded.space.n_codes)
    threads = threads or default_threads()
    if device == "cuda":
        return _run_on_gpu(encoded, sink, method, cap, threads, tile_size, progress, gpu_packer)
    if method == "matrix":
        # Algorithm 2 as published: the whole matrix in one go (no tiling, no symmetry saving).
        tiles = [Tile(0, n_left, 0, n_left if n_right is None else n_right, n_right is None)]
        executor = ThreadExecutor(1)
    elif method == "tiled":
        # BLAS already spreads each GEMM over the cores and needs tiles of a few hundred rows to reach its
        # rate, so tiles are large and run one at a time (measured: 2.3 s vs 5.1 s for 128-row tiles on
        # 2 threads, 1000 x 30,000).
        n_max = max(n_left, n_right or 0)
        size = tile_size or max(256, min(1024, -(-n_max // 3)))
        tiles = plan_tiles(n_left, n_right, size)
        executor = ThreadExecutor(1)
    else:
        size = tile_size or default_tile_size(max(n_left, n_right or 0), threads)
        tiles = plan_tiles(n_left, n_right, size)
        executor = ThreadExecutor(threads)
    tiles = [t for t in tiles if t.n_rows and t.n_cols]
    kernel = _make_kernel(method, encoded, cap, threads)
    report = reporter(progress, sum(t.n_pairs for t in tiles), "pair", "hamming")
    try:
        return run_tiles(kernel, tiles, executor, sink, report.update)
    finally:
        report.close()


def _run_on_gpu(encoded: Encoded, sink, method: str, cap: int, threads: int, tile_size, progress: bool,
                packer: str):  # fmt: skip
    """The GPU side of :func:`run_hamming`: pairs and nearest neighbours are reduced on the device.

    Engine tiles are large (4096-8192, or ``tile_size`` rounded up to a multiple of 128, the kernels' block).
    """
    from ...gpu.hamming import GpuExecutor, HostProblem, device_pairs, engine_tile_size, knn_reducer

    if isinstance(sink, PairsSink):
        # Selection happens on raw distances; a cap at or below max_dist admits every pair (as on the CPU).
        threshold = sink.max_dist if cap > sink.max_dist else 2**32 - 1
        i, j, d = device_pairs(encoded, threshold, method=method, packer=packer, threads=threads)
        sink.add_pairs(i, j, np.minimum(d, cap))
        return sink.finish()
    host = HostProblem(encoded, method, packer, threads)
    block_cap = cap if cap <= encoded.n_sites else None  # no pass over the blocks for a cap nothing reaches
    size = engine_tile_size(host.method) if tile_size is None else -(-tile_size // 128) * 128
    tiles = [t for t in plan_tiles(encoded.n_left, encoded.n_right, size) if t.n_rows and t.n_cols]
    report = reporter(progress, sum(t.n_pairs for t in tiles), "pair", "hamming")
    try:
        if isinstance(sink, KnnSink):
            executor = GpuExecutor(host, cap=block_cap, reduce=knn_reducer(sink.k, encoded.symmetric))
            for tile, candidates in executor.map(None, tiles):
                sink.add_candidates(tile, candidates)
                report.update(tile.n_pairs)
            return sink.finish()
        return run_tiles(None, tiles, GpuExecutor(host, cap=block_cap), sink, report.update)
    finally:
        report.close()


def hamming(X, Y=None, *, method="auto", alphabet="acgt", keep_case=False, missing=None, max_count=None,
            threads=None, tile_size=None, out=None, progress=False, device="cpu", client=None):  # fmt: skip
    """All-pairs Hamming / SNP distances.

    Parameters
    ----------
    X : Alignment, path, list of str, or array_like, shape (n, m)
        Sequences (FASTA path, :class:`~seqcompare.io.fasta.Alignment`, equal-length strings, 2-D character
        array) or any 2-D array of categorical values (integers, floats, strings per cell).
    Y : same kinds as X, shape (p, m), optional
        Right-hand items; the result is then the rectangular ``X`` x ``Y`` matrix.
    method : {"auto", "vector", "matrix", "tiled", "bitpack", "bitmma"}
        Algorithm; all give identical results. ``auto`` picks the fastest for the device. On a GPU:
        ``bitmma`` (1-bit tensor cores), ``matrix`` (int8 tensor cores, cuBLAS), ``bitpack`` (CUDA cores).
    alphabet : {"acgt", "all", "iupac"}
        Sequence semantics (ignored for value arrays). ``"acgt"`` is snp-dists': a site counts only when
        both characters are A, C, G or T (case-insensitive) and differ. ``"all"`` counts every differing
        character. ``"iupac"`` treats ambiguity codes as base sets (A vs R = 0, A vs Y = 1).
    keep_case : bool
        Compare case-sensitively (snp-dists ``-k``).
    missing : str or sequence, optional
        Characters (sequences) or values (arrays) treated as missing: sites holding them never count.
        Float NaN is always missing.
    max_count : int, optional
        Report ``min(distance, max_count)``; kernels stop counting a pair once it reaches the cap.
    threads : int, optional
        Worker threads (default: all available cores).
    tile_size : int, optional
        Tile edge; the result does not depend on it.
    out : str or path-like, optional
        Write the matrix to this ``.npy`` file tile by tile (never held in memory) and return a read-only
        memmap of it.
    progress : bool or callable
        Show a progress bar on stderr (or report through a callable, see :mod:`seqcompare.progress`).
    device : {"cpu", "cuda", "auto"}
        Where to compute: ``"cuda"`` uses every visible NVIDIA GPU (limit them with ``CUDA_VISIBLE_DEVICES``)
        and needs the ``[cuda]`` extra; ``"auto"`` picks a GPU when one is usable.
    client : dask.distributed.Client, optional
        Run the tiles on this Dask cluster (:mod:`seqcompare.distributed`); ``out`` must then be a path every
        worker can write. The result is identical.

    Returns
    -------
    ndarray of int32, shape (n, n) or (n, p)
        Symmetric with a zero diagonal when ``Y`` is None.

    Examples
    --------
    >>> import seqcompare
    >>> seqcompare.hamming(["ACGTN", "ACCTA", "TCGT-"])
    array([[0, 1, 1],
           [1, 0, 2],
           [1, 2, 0]], dtype=int32)
    """
    max_count = validation.optional_integer(max_count, "max_count", minimum=0)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    shape = (encoded.n_left, encoded.n_left if encoded.symmetric else encoded.n_right)
    sink = MatrixSink(shape, encoded.symmetric, distance_dtype(encoded.n_sites), path=out)
    try:
        return run_hamming(encoded, sink, method=method, cap=max_count, threads=threads,
                           tile_size=tile_size, progress=progress, device=device, client=client)  # fmt: skip
    except BaseException:
        if out is not None:
            sink.abort()
        raise


def hamming_pairs(X, Y=None, *, max_dist, method="auto", alphabet="acgt", keep_case=False, missing=None,
                  threads=None, tile_size=None, progress=False, device="cpu", client=None):  # fmt: skip
    """Pairs within a distance, without ever building the full matrix.

    Parameters
    ----------
    X, Y, method, alphabet, keep_case, missing, threads, tile_size, progress, device, client
        As for :func:`hamming`.
    max_dist : int
        Report pairs at distance ``<= max_dist``. Kernels stop counting a pair past it.

    Returns
    -------
    i, j, d : ndarray of int64
        Pair indices and distances, sorted by ``(i, j)``. Without ``Y`` each unordered pair appears once,
        with ``i < j``; with ``Y``, ``i`` indexes ``X`` and ``j`` indexes ``Y``.
    """
    max_dist = validation.integer(max_dist, "max_dist", minimum=0)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    sink = PairsSink(max_dist, encoded.symmetric)
    return run_hamming(encoded, sink, method=method, cap=max_dist + 1, threads=threads,
                       tile_size=tile_size, progress=progress, device=device, client=client)  # fmt: skip


def hamming_knn(X, Y=None, *, k, method="auto", alphabet="acgt", keep_case=False, missing=None,
                threads=None, tile_size=None, progress=False, device="cpu", client=None):  # fmt: skip
    """The ``k`` nearest neighbours of every item of ``X`` (among ``X`` itself, or among ``Y``).

    Parameters
    ----------
    X, Y, method, alphabet, keep_case, missing, threads, tile_size, progress, device, client
        As for :func:`hamming`.
    k : int
        Neighbours per item; fewer when there are fewer candidates.

    Returns
    -------
    indices, distances : ndarray of int64, shape (n, min(k, candidates))
        Sorted by distance, ties by the smaller index; an item is never its own neighbour.
    """
    k = validation.integer(k, "k", minimum=1)
    threads = validation.threads(threads)
    encoded = encode_inputs(X, Y, alphabet=alphabet, keep_case=keep_case, missing=missing)
    sink = KnnSink(k, encoded.n_left, encoded.n_right)
    return run_hamming(encoded, sink, method=method, threads=threads, tile_size=tile_size,
                       progress=progress, device=device, client=client)  # fmt: skip
