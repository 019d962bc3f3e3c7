"""Hamming distances as a :class:`~seqcompare.allpairs.Work` of the all-pairs engine.

:class:`Encoded` holds the rows (raw bytes with a code table, codes, or bit planes already packed) and their
shared code space. :class:`HammingWork` is one all-pairs problem over them, or a region of a larger one (its rows
and columns start at ``row_offset`` / ``col_offset``, so every tile and pair it hands out is in the whole
problem's coordinates): it plans tiles for the CPU and the GPU, computes a tile's block with the method's kernel,
selects pairs on the GPU in the kernels' epilogue (its native ``pairs``), and splits itself into tile regions for
Dask workers, with the rows placed once as bit planes.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field

import numpy as np

from ..allpairs import DataBlock, Region, Split, Tile, Work, default_tile_size, plan_tiles, region_tile_size
from ..io.fasta import FileRows, in_memory
from .encoding import CodeSpace, apply_code_table, pack_planes, translate_codes
from .methods import gpu_tile_size, resolve_method



@dataclass
class Encoded:
    """Rows ready for the kernels: left and optional right rows, and their shared code space.

    ``form`` says what the rows hold: ``"values"``, raw bytes mapped to codes by ``table`` (sequences) or codes
    already (``table`` None, value arrays); ``"planes"``, bit planes packed already (``pack_planes``; a Dask
    worker's blocks), which serve the plane-based methods only. Codes and planes are made only for the methods
    that need them.
    """

    left: np.ndarray
    right: np.ndarray | None
    space: CodeSpace
    table: np.ndarray | None = None
    form: str = "values"
    sites: int | None = None  # the site count, which packed planes do not record exactly
    informative: np.ndarray | None = field(default=None, repr=False, compare=False)  # see informative_sites

    @property
    def symmetric(self) -> bool:
        return self.right is None

    @property
    def n_sites(self) -> int:
        return self.left.shape[1] if self.sites is None else self.sites

    @property
    def n_left(self) -> int:
        return self.left.shape[0]

    @property
    def n_right(self) -> int | None:
        return None if self.right is None else self.right.shape[0]

    def side(self, name: str = "left") -> np.ndarray:
        return self.left if name == "left" or self.symmetric else self.right

    def codes(self, side: str = "left") -> np.ndarray:
        if self.form == "planes":
            raise ValueError("rows sent as bit planes serve the bitpack and bitmma methods only")
        values = self.side(side)
        if self.table is None:
            return values
        if values.size <= _SMALL_CELLS:  # no compiled kernel (nor Numba's start-up) for a small table
            return translate_codes(self.table, values)
        return apply_code_table(self.table, values)

    def planes(self, side: str = "left", threads: int = 1, out: np.ndarray | None = None) -> np.ndarray:
        if self.form == "planes":
            if out is None:
                return self.side(side)
            out[...] = self.side(side)
            return out
        return pack_planes(self.side(side), self.space, self.table, threads=threads, out=out)

    def plane_shape(self, side: str = "left") -> tuple[int, int, int]:
        """Shape of :meth:`planes` for ``side``."""
        if self.form == "planes":
            return self.side(side).shape
        rows = self.side(side)
        return (rows.shape[0], self.space.n_value_planes + 1, (rows.shape[1] + 63) // 64)


_SMALL_CELLS = 1 << 24
# On the CPU, ``auto`` runs a problem whose GEMMs over its informative sites come to at most this many
# floating-point operations through NumPy's BLAS (the matrix method): that costs less than Numba's start-up.
SMALL_GEMM_FLOPS = 2e9


def rows_in_memory(encoded: Encoded) -> Encoded:
    """``encoded`` with any side read in place (:class:`~seqcompare.io.fasta.FileRows`, which only a GPU run of
    raw bytes reads where it lies) copied into an array; ``encoded`` itself when it has none."""
    if not any(isinstance(rows, FileRows) for rows in (encoded.left, encoded.right)):
        return encoded
    return dataclasses.replace(encoded, left=in_memory(encoded.left), right=in_memory(encoded.right))


def _varying(codes: list) -> np.ndarray:
    """Columns of code matrices where at least two different codes other than 0 (missing) occur."""
    stacked = codes[0] if len(codes) == 1 else np.concatenate(codes)
    if stacked.shape[0] == 0:
        return np.zeros(stacked.shape[1], dtype=bool)
    highest = stacked.max(axis=0)
    lowest = np.where(stacked == 0, np.iinfo(stacked.dtype).max, stacked).min(axis=0)
    return highest > lowest


def informative_sites(encoded: Encoded) -> np.ndarray:
    """The sites that can make a distance: where at least two different present codes occur (a site where every
    present code is the same adds 0 to every pair). Sites where every row holds the same byte are dropped before
    any encoding, so a small alignment of close genomes encodes only a few thousand columns. Kept on
    ``encoded`` once found."""
    if encoded.informative is None:
        rows = [encoded.side("left")] + ([] if encoded.symmetric else [encoded.side("right")])
        stacked = rows[0] if len(rows) == 1 else np.concatenate(rows)
        if stacked.shape[0] == 0:
            candidates = np.empty(0, dtype=np.int64)
        else:
            candidates = np.flatnonzero((stacked != stacked[:1]).any(axis=0))
        if encoded.table is not None:
            codes = [translate_codes(encoded.table, part[:, candidates]) for part in rows]
        else:
            codes = [part[:, candidates] for part in rows]
        encoded.informative = candidates[_varying(codes)]
    return encoded.informative


def informative_codes(encoded: Encoded, side: str) -> np.ndarray:
    """The codes of ``side`` at :func:`informative_sites` only (contiguous)."""
    columns = np.ascontiguousarray(encoded.side(side)[:, informative_sites(encoded)])
    return columns if encoded.table is None else translate_codes(encoded.table, columns)


def choose_method(encoded: Encoded, method: str, device: str, capped: bool = False) -> str:
    """The method ``method`` stands for here: :func:`~seqcompare.hamming.methods.resolve_method`, except on the
    CPU under ``auto``:

    - a small problem takes the matrix method on its informative sites (no compiled kernel, so no Numba start-up:
      the bundled 338 genomes in ~0.2 s end to end instead of ~0.6 s);
    - a larger one takes ``sparse`` unless its distances are ``capped`` (the bitpack kernel stops counting a pair
      at the cap, and the lists cannot); ``sparse`` sends the sites many rows differ at to the bitpack kernel
      itself, so unrelated rows cost it one extra pass over the bytes.
    """
    resolved = resolve_method(method, device, encoded.space.n_codes)
    if method != "auto" or device != "cpu" or encoded.form != "values":
        return resolved
    n_right = encoded.n_left if encoded.symmetric else encoded.n_right
    if (encoded.n_left + (0 if encoded.symmetric else n_right)) * encoded.n_sites <= _SMALL_CELLS:
        sites = informative_sites(encoded).size
        flops = 2.0 * encoded.n_left * n_right * sites * max(1, encoded.space.n_codes - 1)
        if flops <= SMALL_GEMM_FLOPS:
            return "matrix"
    return resolved if capped else "sparse"


def distance_dtype(n_sites: int):
    """int32 while a distance (at most the number of sites) fits, else int64."""
    return np.int32 if n_sites < 2**31 else np.int64


class HammingWork(Work):
    """All pairs of ``encoded`` (or a region of a larger problem) by ``method``.

    Parameters
    ----------
    encoded : Encoded
    method : str
        A Hamming method; ``auto`` is resolved for ``device``.
    device : {"cpu", "cuda"}
        The device the work computes on (resolved already: not ``"auto"``).
    cap : int
        Report ``min(distance, cap)``; kernels stop counting a pair there (``n_sites + 1``: no cap).
    tile_size : int, optional
        Tile edge (default: automatic for the device).
    packer : str
        How GPU operands are built (see :mod:`seqcompare.hamming.gpu`).
    row_offset, col_offset : int
        Where this region's rows and columns start in the whole problem.
    block_keys : dict, optional
        ``{side: key}``: lets a GPU keep these rows' operands for later regions (Dask workers).
    """

    unit = "pair"
    native = {"cuda": ("pairs",)}
    # Two Dask tasks may share a GPU: pairs take the device's turn around their kernels (hamming.gpu.device_turn),
    # and no buffer is sized by the device's free memory.
    takes_device_turns = True

    def __init__(self, encoded: Encoded, *, method: str = "auto", device: str = "cpu", cap: int | None = None,
                 tile_size: int | None = None, packer: str = "auto", row_offset: int = 0, col_offset: int = 0,
                 block_keys: dict | None = None):  # fmt: skip
        self.encoded = encoded
        self.device = device
        self.requested_method = method  # what Dask workers resolve for their own device
        full = encoded.n_sites + 1
        self.cap = full if cap is None else int(min(cap, full))
        self.method = choose_method(encoded, method, device, capped=self.cap < full)
        self.tile_size = tile_size
        self.packer = packer
        self.row_offset = row_offset
        self.col_offset = row_offset if encoded.symmetric else col_offset
        self.block_keys = block_keys
        # Algorithm 2 as published runs one BLAS GEMM over the whole matrix, and the tiled variant's GEMMs
        # already use every core: their tiles run one at a time.
        self.parallel_parts = self.method not in ("matrix", "tiled")
        self._host = None
        self._host_lock = threading.Lock()

    # -- the plan ------------------------------------------------------------------------------------------
    def parts(self, backend: str) -> list:
        enc = self.encoded
        n_left, n_right = enc.n_left, enc.n_right
        offsets = {"row_offset": self.row_offset, "col_offset": self.col_offset}
        if backend == "cuda":
            return plan_tiles(n_left, n_right, gpu_tile_size(self.method, self.tile_size), **offsets)
        if self.method == "matrix":
            width = n_left if n_right is None else n_right
            tile = Tile(self.row_offset, self.row_offset + n_left, self.col_offset, self.col_offset + width,
                        n_right is None)  # fmt: skip
            return [tile] if tile.n_rows and tile.n_cols else []
        largest = max(n_left, n_right or 0)
        if self.method == "sparse":
            return plan_tiles(n_left, n_right, self._sparse_tile_size(), **offsets)
        if self.method == "tiled":
            # BLAS needs tiles of a few hundred rows to reach its rate (measured: 2.3 s vs 5.1 s for 128-row
            # tiles on 2 threads, 1000 x 30,000).
            size = self.tile_size or max(256, min(1024, -(-largest // 3)))
        else:
            from ..allpairs import default_threads

            size = self.tile_size or default_tile_size(largest, default_threads())
        return plan_tiles(n_left, n_right, size, **offsets)

    def size(self, part) -> int:
        return part.n_pairs

    def _sparse_tile_size(self) -> int:
        """Tiles of the sparse method: at most 512 (measured best of 256-1,024 on 4,000 rows: every tile visits
        every list, so smaller tiles cost more visits), at least 8 block rows."""
        if self.tile_size:
            return self.tile_size
        largest = max(self.encoded.n_left, self.encoded.n_right or 0)
        return int(max(64, min(512, -(-largest // 8))))

    def local(self, tile: Tile) -> Tile:
        """``tile`` in this region's own coordinates."""
        return Tile(tile.row_start - self.row_offset, tile.row_stop - self.row_offset,
                    tile.col_start - self.col_offset, tile.col_stop - self.col_offset, tile.diagonal)  # fmt: skip

    # -- the CPU -------------------------------------------------------------------------------------------
    def cpu_kernel(self, threads: int):
        enc, method, cap = self.encoded, self.method, self.cap
        if method in ("vector", "tiled", "matrix"):
            from .matrix import tiled_tile
            from .reference import vector_tile

            if method == "vector":  # the oracle compares every site
                left = enc.codes("left")
                right = left if enc.symmetric else enc.codes("right")
                table = enc.space.difference_table()
                return lambda tile: vector_tile(left, right, table, self.local(tile), cap)
            # The GEMMs need only the sites where two different codes occur.
            left = informative_codes(enc, "left")
            right = left if enc.symmetric else informative_codes(enc, "right")
            return lambda tile: tiled_tile(left, right, enc.space, self.local(tile), cap)
        if method == "sparse":
            return self._sparse_kernel(threads)
        if method != "bitpack":
            raise ValueError(f"method {method!r} does not run on the CPU")
        from .bitpack import bitpack_tile

        left_planes = enc.planes("left", threads)
        right_planes = left_planes if enc.symmetric else enc.planes("right", threads)
        disjoint = enc.space.relation == "disjoint"
        dtype = distance_dtype(enc.n_sites)

        def kernel(tile):
            local = self.local(tile)
            block = np.empty((tile.n_rows, tile.n_cols), dtype=dtype)
            bitpack_tile(left_planes, right_planes, local.row_start, local.row_stop, local.col_start,
                         local.col_stop, tile.diagonal, disjoint, cap, block)  # fmt: skip
            return block

        return kernel

    def _sparse_kernel(self, threads: int):
        """The sparse method's tile kernel: the heavy sites' planes through the bitpack kernel, then the light
        sites' lists (:mod:`seqcompare.hamming.sparse`)."""
        from .bitpack import bitpack_tile
        from .sparse import SparseOperands, mirror_lower, subtract_shared

        enc, cap = self.encoded, self.cap
        if enc.form == "planes":
            raise ValueError("rows sent as bit planes serve the bitpack and bitmma methods only")
        sides = [enc.side("left")] + ([] if enc.symmetric else [enc.side("right")])
        operands = SparseOperands(sides, enc.space, enc.table, threads)
        left_planes, left_lists = operands.side(0)
        right_planes, right_lists = operands.side(1)
        disjoint = enc.space.relation == "disjoint"
        dtype = distance_dtype(enc.n_sites)
        band = self._sparse_tile_size()
        no_cap = enc.n_sites + 1
        if left_lists is not None:
            left_starts, right_starts = left_lists.band_starts(band), right_lists.band_starts(band)

        allocate = np.zeros if left_planes is None else np.empty  # the planes' kernel writes every value

        def kernel(tile):
            local = self.local(tile)
            block = allocate((tile.n_rows, tile.n_cols), dtype=dtype)
            if left_planes is not None:
                bitpack_tile(left_planes, right_planes, local.row_start, local.row_stop, local.col_start,
                             local.col_stop, tile.diagonal, disjoint, no_cap, block)  # fmt: skip
            if left_lists is not None:
                subtract_shared(left_starts, left_lists.entries, left_lists.totals, right_starts,
                                right_lists.entries, right_lists.totals, operands.list_consensus, operands.differ,
                                local.row_start // band, local.col_start // band, local.row_start,
                                local.row_stop, local.col_start, local.col_stop, tile.diagonal, block)  # fmt: skip
                if tile.diagonal:
                    mirror_lower(block)
            if cap < no_cap:
                np.minimum(block, cap, out=block)
            return block

        return kernel

    # -- the GPU -------------------------------------------------------------------------------------------
    def host_problem(self, threads: int = 1):
        """The host side of the GPU run (operands staged once, shared by every device's session)."""
        with self._host_lock:
            if self._host is None:
                from .gpu import HostProblem

                self._host = HostProblem(self.encoded, self.method, self.packer, threads, self.block_keys)
            return self._host

    def gpu_session(self, device: int):
        from .gpu import HammingSession

        return HammingSession(self, device)

    def run_native(self, backend: str, reduction, resources):
        """Pairs within ``reduction.max_dist``, selected in the kernels' epilogue on the GPUs ``resources``: one
        partial for the whole region, in the whole problem's coordinates and orientation."""
        from ..allpairs.plan import default_threads
        from .gpu import device_pairs

        host = self.host_problem(default_threads())
        total = self.total(backend)
        if self.cap <= reduction.max_dist:  # a cap at or below max_dist admits every pair (as on the CPU)
            threshold = 2**32 - 1
        else:
            threshold = reduction.max_dist
        i, j, d = device_pairs(None, threshold, host=host, devices=resources)
        i, j = i + self.row_offset, j + self.col_offset
        if reduction.symmetric and not self.encoded.symmetric:  # a region below the diagonal: (smaller, larger)
            i, j = j, i
        yield total, (i, j, np.minimum(d, self.cap))

    def self_pairs(self, items):
        """A sequence differs from itself nowhere (under every alphabet and missing set): zeros."""
        return np.zeros(len(items), dtype=distance_dtype(self.encoded.n_sites))

    # -- Dask ----------------------------------------------------------------------------------------------
    def split(self, regions: int, tile_size: int | None = None) -> Split:
        enc = self.encoded
        n_left, n_right = enc.n_left, enc.n_right
        largest = max(n_left, n_right or 0)
        if tile_size is None:
            tile_size = region_tile_size(largest, regions)
        tiles = plan_tiles(n_left, n_right, tile_size)
        # Plane-based methods get their rows as bit planes: a third of the bytes to move for DNA between
        # workers, and packed once for every task that reads them.
        planes = self.method in ("bitpack", "bitmma") and self.packer in ("planes", "auto")
        arrays, data_blocks, index_of = {}, [], {}
        sides = [("left", n_left)] + ([] if enc.symmetric else [("right", n_right)])
        for side, count in sides:
            if planes:
                arrays[side] = (enc.plane_shape(side), np.dtype(np.uint64))
            else:
                arrays[side] = (enc.side(side).shape, enc.side(side).dtype)
            for start in range(0, count, tile_size):
                stop = min(start + tile_size, count)
                index_of[(side, start)] = len(data_blocks)
                data_blocks.append(DataBlock(side, start, stop, _BlockFill(enc, side, start, stop, planes)))
        region_list = []
        for tile in tiles:
            row = index_of[("left", tile.row_start)]
            if tile.diagonal:
                needed = [row]
            else:
                needed = [row, index_of[("left" if enc.symmetric else "right", tile.col_start)]]
            # Whole tiles before the half-size diagonal ones: the last tasks to finish are then small.
            region_list.append(Region(needed, tile, tile.n_pairs, 0 if tile.diagonal else 1))
        template = HammingTemplate(enc.space, None if planes else enc.table, "planes" if planes else "values",
                                   enc.n_sites, self.requested_method, self.cap, self.packer)  # fmt: skip
        from .gpu import release_resident

        return Split(arrays, data_blocks, region_list, template, release_resident)


class _BlockFill:
    """Fills a placed block with rows ``start:stop`` of one side (packed as planes, or copied)."""

    def __init__(self, encoded: Encoded, side: str, start: int, stop: int, planes: bool):
        self.encoded, self.side, self.start, self.stop, self.planes = encoded, side, start, stop, planes

    def __call__(self, out) -> None:
        from ..allpairs import copy_rows, default_threads

        rows = self.encoded.side(self.side)[self.start : self.stop]
        if self.planes:
            pack_planes(rows, self.encoded.space, self.encoded.table, threads=default_threads(), out=out)
        else:
            copy_rows(out, rows)


@dataclass(frozen=True)
class HammingTemplate:
    """What a Dask worker needs besides its blocks to make its region's :class:`HammingWork`."""

    space: CodeSpace
    table: np.ndarray | None
    form: str
    n_sites: int
    method: str
    cap: int
    packer: str

    def attach(self, tile: Tile, blocks: list, keys: list, device: str) -> HammingWork:
        left = blocks[0]
        right = None if tile.diagonal else blocks[-1]
        encoded = Encoded(left, right, self.space, self.table, self.form, self.n_sites)
        block_keys = {"left": keys[0], "right": keys[-1]}
        return HammingWork(encoded, method=self.method, device=device, cap=self.cap, packer=self.packer,
                           row_offset=tile.row_start, col_offset=tile.col_start, block_keys=block_keys)  # fmt: skip
