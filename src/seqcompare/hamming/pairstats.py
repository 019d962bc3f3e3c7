"""Per-pair site counts and the model distances made from them, as a :class:`~seqcompare.allpairs.Work`.

:class:`SiteCodes` holds the rows as TN93 codes (:data:`~seqcompare.hamming.models.TN93_CHARACTERS`: A, C, G, T
are 0..3, ambiguity codes follow, the gap is 17; under the snp-dists alphabet every character other than
A/C/G/T is a gap). :class:`PairStatsWork` counts, for every pair of a tile, the :data:`~.models.QUANTITIES`
(comparable sites, matches, transitions, base weights, resolved ambiguities) and turns them into the model's
distance where the block is (:func:`~.models.distances`). Its block is the distances, or ``(distances, sites)``
with ``with_sites``, so the engine's reductions (matrix, pairs within a distance, clusters) apply unchanged on
CPU threads, GPUs and Dask workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..allpairs import DataBlock, Region, Split, Tile, Work, default_tile_size, plan_tiles, region_tile_size
from ..errors import InputError
from . import models
from .encoding import sequence_code_table

_GPU_TILE = 4096
_NEAR_CAPACITY = 4096  # pairs near the threshold a CPU tile lists before it runs again with more room


def _cpu_tile_size(n_left: int, n_right: int | None, threads: int) -> int:
    """Tiles as wide as leave every thread about four of them, from 512 down to the engine's default: a left row's
    ambiguity sites are walked once for all its pairs in a tile, so wider tiles amortise the walk (1,500 x 9,000
    pol-like, one thread: 363 ns a pair at 1,500 columns, 371 at 512, 399 at 128)."""
    size = 512
    while size > 128:
        rows = -(-n_left // size)
        tiles = rows * (rows + 1) // 2 if n_right is None else rows * -(-n_right // size)
        if tiles >= 4 * threads:
            break
        size //= 2
    return max(size, default_tile_size(max(n_left, n_right or 0), threads))


@dataclass
class SiteCodes:
    """Rows as TN93 codes: ``left`` (and ``right``, or None for all pairs of ``left``), uint8 ``(n, m)``."""

    left: np.ndarray
    right: np.ndarray | None
    _planes: dict = field(default_factory=dict, repr=False, compare=False)
    _derived: dict = field(default_factory=dict, repr=False, compare=False)  # site lists, site-major copies

    @property
    def symmetric(self) -> bool:
        return self.right is None

    @property
    def n_left(self) -> int:
        return self.left.shape[0]

    @property
    def n_right(self) -> int | None:
        return None if self.right is None else self.right.shape[0]

    @property
    def n_sites(self) -> int:
        return self.left.shape[1]

    def side(self, name: str) -> np.ndarray:
        return self.left if name == "left" or self.symmetric else self.right

    def planes(self, side: str) -> np.ndarray:
        """One-hot planes of the resolved bases, rows of ``4 * W`` words (A, C, G, T)."""
        key = "left" if self.symmetric else side
        if key not in self._planes:
            from .packing import row_packer

            codes = np.ascontiguousarray(self.side(side))
            n, m = codes.shape
            out = np.zeros((n, 4, (m + 63) // 64), dtype=np.uint64)
            patterns = np.zeros(256, dtype=np.uint32)
            patterns[:4] = 1 << np.arange(4, dtype=np.uint32)
            if n and m:
                from ..allpairs import over_row_blocks

                over_row_blocks(row_packer(codes, 4), n, (codes, patterns, 4), (out,))
            self._planes[key] = out.reshape(n, -1)
        return self._planes[key]

    def special_sites(self, side: str, ambiguities: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(starts, positions, site_codes)``: each row's sites holding a code of the per-site path, in CSR form,
        with the code at each."""
        key = ("left" if self.symmetric else side, ambiguities)
        if key not in self._derived:
            from ..allpairs import over_row_blocks
            from .statskernel import count_special, list_special

            codes = np.ascontiguousarray(self.side(side))
            special = models.special_codes(ambiguities).astype(np.int64)
            n = codes.shape[0]
            counts = np.zeros(n, dtype=np.int64)
            starts = np.zeros(n + 1, dtype=np.int64)
            positions = np.zeros(0, dtype=np.int32)
            found = np.zeros(0, dtype=np.uint8)
            if special.any() and codes.size:
                over_row_blocks(count_special, n, (codes, special), (counts,))
                np.cumsum(counts, out=starts[1:])
                positions = np.empty(int(starts[-1]), dtype=np.int32)
                found = np.empty(int(starts[-1]), dtype=np.uint8)
                over_row_blocks(list_special, n, (codes, special), (starts, positions, found))
            self._derived[key] = (starts, positions, found)
        return self._derived[key]

    def columns(self, side: str) -> np.ndarray:
        """The codes of ``side`` site-major: uint8 ``(sites, rows)``, made once."""
        key = ("columns", "left" if self.symmetric else side)
        if key not in self._derived:
            from ..allpairs import over_row_blocks
            from .statskernel import transpose_rows

            codes = np.ascontiguousarray(self.side(side))
            out = np.empty((codes.shape[1], codes.shape[0]), dtype=np.uint8)
            if codes.size:
                over_row_blocks(transpose_rows, codes.shape[0], (codes,), (out,))
            self._derived[key] = out
        return self._derived[key]


def site_codes(matrix: np.ndarray, alphabet: str, *, names=None, source: str = "<array>", keep_case: bool = False,
               missing: str = "") -> np.ndarray:  # fmt: skip
    """TN93 codes of a byte matrix.

    ``alphabet="tn93"`` reads veg/tn93's characters (case-insensitive) and rejects any other byte, naming the
    record and column; ``"acgt"`` is the snp-dists alphabet (only A, C, G, T present).
    """
    if alphabet == "acgt":
        table, _ = sequence_code_table("acgt", keep_case=keep_case, missing=missing)
        to_tn93 = np.full(256, models.GAP, dtype=np.uint8)
        present = table != 0
        to_tn93[present] = table[present] - 1
        return to_tn93[matrix]
    if alphabet != "tn93":
        raise ValueError(f"model distances read the 'acgt' or 'tn93' alphabet, not {alphabet!r}")
    from ..allpairs import over_row_blocks
    from .statskernel import map_rows

    table = models.tn93_byte_table()
    for character in missing:
        table[ord(character.upper())] = table[ord(character.lower())] = models.GAP
    matrix = np.ascontiguousarray(matrix)
    codes = np.empty(matrix.shape, dtype=np.uint8)
    bad = [k for k in (over_row_blocks(map_rows, matrix.shape[0], (matrix, table), (codes,)) if matrix.size else [])
           if k >= 0]  # fmt: skip
    if bad:
        row, column = divmod(bad[0], matrix.shape[1])
        name = names[row] if names is not None else f"#{row + 1}"
        raise InputError(
            f"{source}: record {name!r}, column {column + 1}: {chr(matrix[row, column])!r} is not a nucleotide "
            f"code of TN93 ({models.TN93_CHARACTERS}, any case)"
        )
    return codes


class PairStatsWork(Work):
    """All pairs of ``codes`` (or a region of a larger problem): counts, then ``model`` distances.

    Parameters
    ----------
    codes : SiteCodes
    model : str
        One of :data:`~seqcompare.hamming.models.MODELS`.
    ambiguities : str
        One of :data:`~seqcompare.hamming.models.AMBIGUITIES` (TN93's rules; the other models count resolved
        bases only).
    fraction : float
        veg/tn93's ``-d``: under ``resolve``, pairs where at least this fraction of the comparable sites were
        resolved ambiguities are averaged instead.
    min_overlap : int
        Pairs with fewer comparable sites are missing (NaN).
    with_sites : bool
        The block is ``(distances, sites)`` instead of the distances.
    tile_size : int, optional
    row_offset, col_offset : int
        Where this region's rows and columns start in the whole problem.
    screen : float, optional
        The threshold of the reduction, when it keeps only pairs at most this far (pairs, clusters). A GPU then
        makes the model on the device and redoes exactly, with the host's operations, only the pairs within a
        hair of it (:meth:`screened_block`): the pairs kept are the same, and only theirs cross the bus.
    """

    unit = "pair"

    def __init__(self, codes: SiteCodes, *, model: str = "snp", ambiguities: str = "resolve", fraction: float = 1.0,
                 min_overlap: int = 0, with_sites: bool = False, tile_size: int | None = None, row_offset: int = 0,
                 col_offset: int = 0, screen: float | None = None):  # fmt: skip
        models.check_options(model, ambiguities, fraction, min_overlap)
        self.codes = codes
        self.model = model
        self.ambiguities = ambiguities if model == "tn93" else "skip"
        self.fraction = float(fraction)
        self.min_overlap = int(min_overlap)
        self.with_sites = with_sites
        self.tile_size = tile_size
        self.row_offset = row_offset
        self.col_offset = row_offset if codes.symmetric else col_offset
        self.screen = None if screen is None else float(screen)
        modes = [self.ambiguities]
        if self.ambiguities == "resolve" and self.fraction < 1.0:
            modes.append("average")
        self.weights = np.stack([models.weight_table(mode) for mode in modes])
        self.special = models.special_codes(self.ambiguities)

    # -- the plan ------------------------------------------------------------------------------------------
    def parts(self, backend: str) -> list:
        codes = self.codes
        largest = max(codes.n_left, codes.n_right or 0)
        if backend == "cuda":  # tiles start on the GEMM's block edges
            size = _GPU_TILE if self.tile_size is None else -(-self.tile_size // 128) * 128
        elif self.tile_size is not None:
            size = self.tile_size
        else:
            from ..allpairs import default_threads

            size = _cpu_tile_size(codes.n_left, codes.n_right, default_threads())
        return plan_tiles(codes.n_left, codes.n_right, size, row_offset=self.row_offset, col_offset=self.col_offset)

    def size(self, part) -> int:
        return part.n_pairs

    def local(self, tile: Tile) -> Tile:
        return Tile(tile.row_start - self.row_offset, tile.row_stop - self.row_offset,
                    tile.col_start - self.col_offset, tile.col_stop - self.col_offset, tile.diagonal)  # fmt: skip

    def finish_block(self, counts):
        """The block the reductions see, from a tile's counts ``(modes, quantities, rows, cols)`` (NumPy or
        CuPy): the model's distances, with the comparable sites when asked."""
        fallback = counts[1] if counts.shape[0] > 1 else None
        result = models.distances(self.model, counts[0], self.min_overlap, self.fraction, fallback)
        if self.with_sites:
            return result, counts[0, 0] // models.SCALE
        return result

    @property
    def screen_bound(self) -> float:
        """The threshold plus the screen's margin (a relative 1e-9, a million times the difference between a
        device's ``log`` and the host's): pairs a device's model puts at most this far are made again exactly."""
        return self.screen + 1e-9 * max(1.0, abs(self.screen))

    def exact_distances(self, counts: np.ndarray) -> np.ndarray:
        """The model's distances of host counts ``(modes, quantities, k)``, exactly as :meth:`finish_block`."""
        return models.distances(self.model, counts[0], self.min_overlap, self.fraction,
                                counts[1] if counts.shape[0] > 1 else None)  # fmt: skip

    def redo_near(self, distances, near_index, near_counts: np.ndarray, mirror: bool = False) -> None:
        """Make again exactly, in ``distances`` (NumPy or CuPy), the pairs a one-pass model listed near the
        threshold: ``near_index`` (flat indices in the tile, where ``distances`` is) with their exact counts
        ``near_counts`` (host, ``(k, modes * quantities)``). ``mirror`` also writes each at the transposed cell
        (a diagonal tile computed below its diagonal)."""
        from ..allpairs import array_module

        k = near_counts.shape[0]
        if not k:
            return
        xp = array_module(distances)
        picked = near_counts.reshape(k, -1, len(models.QUANTITIES)).transpose(1, 2, 0)
        exact = xp.asarray(self.exact_distances(picked))
        distances.reshape(-1)[near_index] = exact
        if mirror:
            rows, cols = divmod(near_index, distances.shape[1])
            distances[cols, rows] = exact

    def screened_block(self, counts):
        """The block of a tile's ``counts`` for a reduction that keeps pairs within :attr:`screen`.

        The model runs where the counts are (on a GPU, whose ``log`` may differ from the host's in the last bit);
        pairs within :attr:`screen_bound` have their counts brought to the host and their distances made again
        there by :meth:`exact_distances`. Every other pair is farther than the threshold on both, so the pairs
        kept, and their values, are those of the exact block.
        """
        from ..allpairs import array_module, to_host

        xp = array_module(counts)
        block = self.finish_block(counts)
        distances = block[0] if self.with_sites else block
        near = xp.nonzero((distances <= self.screen_bound).reshape(-1))[0]
        if near.size:
            picked = to_host(counts.reshape(counts.shape[0] * counts.shape[1], -1)[:, near])
            self.redo_near(distances, near, np.ascontiguousarray(picked.T))
        return block

    def self_pairs(self, items):
        """Each row's block against itself: its counts are the sum over its sites of the weight of the code
        against itself (a code histogram times the table's diagonal), exact integers as the kernels' are, made
        into distances by the same :meth:`finish_block`."""
        from ..allpairs import over_row_blocks
        from .statskernel import code_histogram

        items = np.asarray(items, dtype=np.int64)
        histogram = np.zeros((items.size, models.N_CODES), dtype=np.int64)
        if items.size and self.codes.n_sites:
            over_row_blocks(code_histogram, items.size, (np.ascontiguousarray(self.codes.left), items), (histogram,))
        diagonal = self.weights[:, np.arange(models.N_CODES), np.arange(models.N_CODES), :]  # (modes, codes, Q)
        counts = np.einsum("kc,mcq->mqk", histogram, diagonal)
        return self.finish_block(counts)

    # -- the CPU -------------------------------------------------------------------------------------------
    def cpu_kernel(self, threads: int):
        from .statskernel import stats_tile, stats_tile_tn93

        codes = self.codes
        # The site-major copy is read only at the left rows' special sites.
        right_columns = codes.columns("right") if self.special.any() else np.zeros((0, 0), np.uint8)
        tile_arguments = (codes.planes("left"), codes.planes("right"))
        site_arguments = (np.ascontiguousarray(codes.side("left")), right_columns,
                          *codes.special_sites("left", self.ambiguities), *codes.special_sites("right", self.ambiguities),
                          self.special, self.weights)  # fmt: skip
        screened = self.screen is not None and self.model == "tn93"
        near_capacity = [_NEAR_CAPACITY]

        def kernel(tile):
            local = self.local(tile)
            where = (local.row_start, local.row_stop, local.col_start, local.col_stop, tile.diagonal)
            if screened:  # one compiled pass makes the model; NumPy makes again the pairs near the threshold
                return tn93_screened(where, tile)
            counts = np.zeros((self.weights.shape[0], len(models.QUANTITIES), tile.n_rows, tile.n_cols), np.int64)
            stats_tile(*tile_arguments, *where, *site_arguments, counts)
            if self.screen is not None:
                return self.screened_block(counts)
            return self.finish_block(counts)

        def tn93_screened(where, tile):
            distances = np.empty((tile.n_rows, tile.n_cols))
            sites = np.empty((tile.n_rows, tile.n_cols) if self.with_sites else (0, 0), dtype=np.int64)
            width = self.weights.shape[0] * len(models.QUANTITIES)
            capacity = near_capacity[0]  # tiles run in threads: each keeps the room it made its lists with
            while True:
                near_index = np.empty(capacity, dtype=np.int64)
                near_counts = np.empty((capacity, width), dtype=np.int64)
                found = stats_tile_tn93(*tile_arguments, *where, *site_arguments, self.fraction, self.min_overlap,
                                        self.screen_bound, distances, sites, near_index, near_counts)  # fmt: skip
                if found <= capacity:
                    break
                capacity = near_capacity[0] = found  # rare: a tile of mostly close pairs
            self.redo_near(distances, near_index[:found], near_counts[:found], mirror=tile.diagonal)
            return (distances, sites) if self.with_sites else distances

        return kernel

    # -- the GPU -------------------------------------------------------------------------------------------
    def gpu_session(self, device: int):
        from .statsgpu import PairStatsSession

        return PairStatsSession(self, device)

    # -- Dask ----------------------------------------------------------------------------------------------
    def split(self, regions: int, tile_size: int | None = None) -> Split:
        codes = self.codes
        n_left, n_right = codes.n_left, codes.n_right
        largest = max(n_left, n_right or 0)
        if tile_size is None:
            tile_size = region_tile_size(largest, regions)
        arrays, data_blocks, index_of = {}, [], {}
        sides = [("left", n_left)] + ([] if codes.symmetric else [("right", n_right)])
        for side, count in sides:
            arrays[side] = (codes.side(side).shape, np.dtype(np.uint8))
            for start in range(0, count, tile_size):
                stop = min(start + tile_size, count)
                index_of[(side, start)] = len(data_blocks)
                data_blocks.append(DataBlock(side, start, stop, _CopyRows(codes.side(side), start, stop)))
        region_list = []
        for tile in plan_tiles(n_left, n_right, tile_size):
            needed = [index_of[("left", tile.row_start)]]
            if not tile.diagonal:
                needed.append(index_of[("left" if codes.symmetric else "right", tile.col_start)])
            region_list.append(Region(needed, tile, tile.n_pairs, 0 if tile.diagonal else 1))
        template = PairStatsTemplate(self.model, self.ambiguities, self.fraction, self.min_overlap, self.with_sites,
                                     self.screen)  # fmt: skip
        return Split(arrays, data_blocks, region_list, template)


class _CopyRows:
    """Fills a placed block with rows ``start:stop`` of a code matrix."""

    def __init__(self, rows: np.ndarray, start: int, stop: int):
        self.rows, self.start, self.stop = rows, start, stop

    def __call__(self, out) -> None:
        out[...] = self.rows[self.start : self.stop]


@dataclass(frozen=True)
class PairStatsTemplate:
    """What a Dask worker needs besides its blocks to make its region's :class:`PairStatsWork`."""

    model: str
    ambiguities: str
    fraction: float
    min_overlap: int
    with_sites: bool
    screen: float | None = None

    def attach(self, tile: Tile, blocks: list, keys: list, device: str) -> PairStatsWork:
        right = None if tile.diagonal else blocks[-1]
        return PairStatsWork(SiteCodes(blocks[0], right), model=self.model, ambiguities=self.ambiguities,
                             fraction=self.fraction, min_overlap=self.min_overlap, with_sites=self.with_sites,
                             row_offset=tile.row_start, col_offset=tile.col_start, screen=self.screen)  # fmt: skip
