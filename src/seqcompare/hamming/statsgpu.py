"""Per-pair site counts on NVIDIA GPUs: the device side of :class:`~seqcompare.hamming.pairstats.PairStatsWork`.

Every count of pairs of resolved bases is a 1-bit tensor-core product of one-hot planes, through the shared GEMM
(:mod:`seqcompare.cuda.bitgemm`): an operand row is a few planes laid end to end, and the product of a left and a
right row sums ``popcount(left & right)`` over them. The ten products a tile needs:

========== ============== ==============
count      left planes    right planes
========== ============== ==============
sites      V              V
matches    A C G T        A C G T
ag         A G            G A
ct         C T            T C
left base  A / C / G      V
right base V              A / C / G
========== ============== ==============

(V = A | C | G | T.) Sites where a sequence holds an ambiguity code (or a gap under ``gapmm``) then add their
weights from each row's list of them, one thread per pair (``stats_corrections``). The exact counts then come to
the host, where the model makes distances (:func:`~seqcompare.hamming.models.distances`) with the same
floating-point operations as on the CPU: CUDA's ``log`` rounds differently. For pairs within a distance (and
clusters) the model runs on the device instead, and only pairs near the threshold are made again on the host
(:meth:`~seqcompare.hamming.pairstats.PairStatsWork.screened_block`).
"""

from __future__ import annotations

import numpy as np

from ..cuda import bitgemm
from ..cuda.runtime import require_cupy
from . import models
from .gpu import _round_up

# Operand kinds: the planes (0 A, 1 C, 2 G, 3 T, 4 V) laid end to end in a row.
_KINDS = {"V": (4,), "ACGT": (0, 1, 2, 3), "AG": (0, 2), "GA": (2, 0), "CT": (1, 3), "TC": (3, 1),
          "A": (0,), "C": (1,), "G": (2,)}  # fmt: skip
# (quantity, left kind, right kind); base counts of each side are kept apart until the frequencies are made.
_PRODUCTS = (("sites", "V", "V"), ("matches", "ACGT", "ACGT"), ("ag", "AG", "GA"), ("ct", "CT", "TC"),
             ("left_a", "A", "V"), ("left_c", "C", "V"), ("left_g", "G", "V"),
             ("right_a", "V", "A"), ("right_c", "V", "C"), ("right_g", "V", "G"))  # fmt: skip

# N_MODES is fixed per kernel (1, or 2 for resolve with its average fallback), so that the loops unroll and the
# sums stay in registers; the weight table, packed as the CPU kernel packs it (nine counts in three words of 21-bit
# lanes, emptied before a lane could overflow), is copied to shared memory once per block.
_CORRECTIONS = r"""
#define N_CODES 18
#define N_QUANTITIES 9
#define LANE_BITS 21
#define LANE_MASK ((1LL << LANE_BITS) - 1)
#define LANE_SITES (LANE_MASK / 288)
extern "C" __global__ void stats_corrections(
    const unsigned char* codes_left, const unsigned char* codes_right, const unsigned char* columns_right,
    long long n_right, long long n_sites,
    const long long* starts_left, const int* positions_left, const long long* starts_right,
    const int* positions_right, const unsigned char* special, const long long* weights,
    int row0, int rows, int col0, int cols, long long* out)
{
    // weights: each pair of codes' nine counts in three words of three 21-bit lanes (statskernel.pack_lanes).
    __shared__ long long table[N_MODES * N_CODES * N_CODES * 3];
    for (int k = threadIdx.x; k < N_MODES * N_CODES * N_CODES * 3; k += blockDim.x) table[k] = weights[k];
    __syncthreads();
    long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= (long long)rows * cols) return;
    int r = (int)(index / cols), c = (int)(index % cols);
    long long i = row0 + r, j = col0 + c;
    const unsigned char* x = codes_left + i * n_sites;
    const unsigned char* y = codes_right + j * n_sites;
    int sums[N_MODES * N_QUANTITIES];
    long long words[N_MODES * 3];
    #pragma unroll
    for (int k = 0; k < N_MODES * N_QUANTITIES; ++k) sums[k] = 0;
    #pragma unroll
    for (int k = 0; k < N_MODES * 3; ++k) words[k] = 0;
    int pending = 0;
#define ADD_SITE(CODE1, CODE2)                                                                  \
    {                                                                                           \
        const long long* w = table + ((CODE1) * N_CODES + (CODE2)) * 3;                        \
        _Pragma("unroll") for (int mode = 0; mode < N_MODES; ++mode)                            \
            _Pragma("unroll") for (int q = 0; q < 3; ++q)                                       \
                words[mode * 3 + q] += w[mode * N_CODES * N_CODES * 3 + q];                     \
        if (++pending == LANE_SITES) { FLUSH(); }                                               \
    }
#define FLUSH()                                                                                 \
    _Pragma("unroll") for (int k = 0; k < N_MODES * 3; ++k) {                                   \
        _Pragma("unroll") for (int lane = 0; lane < 3; ++lane)                                  \
            sums[(k / 3) * N_QUANTITIES + (k % 3) * 3 + lane] += (int)((words[k] >> (LANE_BITS * lane)) & LANE_MASK); \
        words[k] = 0;                                                                           \
    }                                                                                           \
    pending = 0;
    // The left row's sites are the same for the neighbouring threads of a warp (same i, consecutive j), so the
    // right codes are read from the site-major copy: one coalesced load for the warp.
    for (long long k = starts_left[i]; k < starts_left[i + 1]; ++k) {
        int p = positions_left[k];
        ADD_SITE(x[p], columns_right[(long long)p * n_right + j]);
    }
    for (long long k = starts_right[j]; k < starts_right[j + 1]; ++k) {
        int p = positions_right[k];
        int code1 = x[p];
        if (special[code1]) continue;  // counted from the left row's list
        ADD_SITE(code1, y[p]);
    }
    FLUSH();
    long long plane = (long long)rows * cols;
    #pragma unroll
    for (int k = 0; k < N_MODES * N_QUANTITIES; ++k)
        out[k * plane + index] += sums[k];
}
"""


# TN93 from a tile's counts in one pass, for the screen of pairs within a threshold: veg/tn93's formula in the
# order of models._tn93 (the device's log and fused multiply-adds may differ from the host's in the last bits,
# which the screen's margin absorbs; pairs near the threshold are made again on the host).
_TN93 = r"""
extern "C" __global__ void tn93_distances(const long long* counts, long long n, int n_modes, double fraction,
                                          long long min_overlap, double* out)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const double S = 144.0, SATURATED = 1000.0;
    double sites = counts[k] / S;
    if (sites < (double)min_overlap || sites == 0.0) { out[k] = nan(""); return; }
    const long long* c = counts;
    if (n_modes > 1 && fraction < 1.0 && sites * fraction <= (double)counts[8 * n + k]) c = counts + 9 * n;
    double f0 = c[4 * n + k] / S, f1 = c[5 * n + k] / S, f2 = c[6 * n + k] / S, f3 = c[7 * n + k] / S;
    double total = f0 + f1 + f2 + f3;
    double scale = 2.0 / total, inverse = 1.0 / total;
    double n0 = f0 * inverse, n1 = f1 * inverse, n2 = f2 * inverse, n3 = f3 * inverse;
    double f_r = n0 + n2, f_y = n1 + n3;
    double ag = c[2 * n + k] / S * scale, ct = c[3 * n + k] / S * scale;
    double tv = 1.0 - (c[n + k] / S * scale + ag + ct);
    double result;
    if (f0 == 0.0 || f1 == 0.0 || f2 == 0.0 || f3 == 0.0) {
        double ti = ag + ct, a = 1.0 - 2.0 * ti - tv, b = 1.0 - 2.0 * tv;
        result = (a > 0.0 && b > 0.0) ? -0.5 * log(a) - 0.25 * log(b) : SATURATED;
    } else {
        double k1 = 2.0 * n0 * n2 / f_r, k2 = 2.0 * n1 * n3 / f_y;
        double k3 = 2.0 * (f_r * f_y - n0 * n2 * f_y / f_r - n1 * n3 * f_r / f_y);
        double t_ag = 1.0 - ag / k1 - 0.5 * tv / f_r, t_ct = 1.0 - ct / k2 - 0.5 * tv / f_y;
        double t_tv = 1.0 - 0.5 * tv / f_y / f_r;
        result = (t_ag > 0.0 && t_ct > 0.0 && t_tv > 0.0)
            ? -k1 * log(t_ag) - k2 * log(t_ct) - k3 * log(t_tv) : SATURATED;
    }
    out[k] = result <= 0.0 ? 0.0 : result;
}
"""


class PairStatsSession:
    """One GPU's operands of a :class:`~seqcompare.hamming.pairstats.PairStatsWork`, and its tiles' blocks."""

    def __init__(self, work, device: int):
        cupy = require_cupy()
        self.cupy = cupy
        self.work = work
        self.device = cupy.cuda.Device(device)
        codes = work.codes
        sides = ("left",) if codes.symmetric else ("left", "right")
        with self.device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.operands = {side: self._operands(codes, side) for side in sides}
            self.has_special = bool(work.special.any())
            if self.has_special:
                self.codes = {side: cupy.asarray(np.ascontiguousarray(codes.side(side))) for side in sides}
                # Site-major copies: sites x rows, for the left rows' loop (see the kernel).
                self.columns = {side: cupy.ascontiguousarray(self.codes[side].T) for side in sides}
                self.sites = {}
                for side in sides:
                    starts, positions, _ = codes.special_sites(side, work.ambiguities)
                    self.sites[side] = (cupy.asarray(starts), cupy.asarray(positions))
                self.special = cupy.asarray(work.special.astype(np.uint8))
                from .statskernel import pack_lanes

                self.weights = cupy.asarray(pack_lanes(np.ascontiguousarray(work.weights)))
                n_modes = work.weights.shape[0]
                self.corrections = cupy.RawKernel(f"#define N_MODES {n_modes}\n" + _CORRECTIONS, "stats_corrections")
            self.tn93 = cupy.RawKernel(_TN93, "tn93_distances") if work.model == "tn93" else None
            self.device.synchronize()

    def _tn93_distances(self, counts):
        """TN93 of a tile's counts ``(modes, quantities, rows, cols)`` on the device, float64 ``(rows, cols)``."""
        cupy, work = self.cupy, self.work
        n = counts.shape[2] * counts.shape[3]
        out = cupy.empty(counts.shape[2:], dtype=cupy.float64)
        if n:
            self.tn93((-(-n // 256),), (256,), (counts, np.int64(n), np.int32(counts.shape[0]),
                                                np.float64(work.fraction), np.int64(work.min_overlap), out))  # fmt: skip
        return out

    def _operands(self, codes, side: str) -> dict:
        """Every operand kind of ``side``'s rows, on the device, rows padded to the GEMM's block edge."""
        cupy = self.cupy
        host = codes.planes(side)
        n = host.shape[0]
        words = host.shape[1] // 4
        planes = cupy.asarray(host).reshape(n, 4, words)
        planes = cupy.concatenate([planes, (planes[:, 0] | planes[:, 1] | planes[:, 2] | planes[:, 3])[:, None]], 1)
        rows = _round_up(max(n, 1), bitgemm.ROW_PAD)
        out = {}
        for kind, members in _KINDS.items():
            width = _round_up(max(1, len(members) * words), bitgemm.ROW_WORDS_MULTIPLE)
            operand = cupy.zeros((rows, width), dtype=cupy.uint64)
            for k, plane in enumerate(members):
                operand[:n, k * words : (k + 1) * words] = planes[:, plane]
            out[kind] = operand
        return out

    def _operand(self, side: str, kind: str):
        return self.operands["left" if self.work.codes.symmetric else side][kind]

    def reduce(self, tile, function):
        """``function(tile, block)`` with the tile's block made on this device."""
        cupy, work = self.cupy, self.work
        local = work.local(tile)
        codes = work.codes
        n_left = codes.n_left
        n_right = codes.n_left if codes.symmetric else codes.n_right
        size = bitgemm.TILE
        with self.device, self.stream:
            row_blocks = range(local.row_start // size, -(-local.row_stop // size))
            col_blocks = range(local.col_start // size, -(-local.col_stop // size))
            micro = cupy.asarray(bitgemm.micro_tiles(row_blocks, col_blocks, False))
            products = {}
            for name, left_kind, right_kind in _PRODUCTS:
                out = cupy.empty((tile.n_rows, tile.n_cols), dtype=cupy.int32)
                output = bitgemm.MatrixOutput(out, tile.n_cols, local.row_start, local.col_start)
                bitgemm.launch(self._operand("left", left_kind), self._operand("right", right_kind), micro,
                               n_left=min(n_left, local.row_stop), n_right=min(n_right, local.col_stop),
                               symmetric=False, output=output)  # fmt: skip
                products[name] = out.astype(cupy.int64)
            sites = products["sites"]
            freqs = [products[f"left_{b}"] + products[f"right_{b}"] for b in "acg"]
            freqs.append(2 * sites - freqs[0] - freqs[1] - freqs[2])
            base = cupy.stack([sites, products["matches"], products["ag"], products["ct"], *freqs,
                               cupy.zeros_like(sites)]) * models.SCALE  # fmt: skip  (resolved: sites only)
            n_modes = work.weights.shape[0]
            counts = cupy.ascontiguousarray(cupy.broadcast_to(base, (n_modes, *base.shape)))
            if self.has_special and tile.n_rows and tile.n_cols:
                left_side = "left"
                right_side = "left" if codes.symmetric else "right"
                starts_left, positions_left = self.sites[left_side]
                starts_right, positions_right = self.sites[right_side]
                total = tile.n_rows * tile.n_cols
                self.corrections(
                    (-(-total // 256),), (256,),
                    (self.codes[left_side], self.codes[right_side], self.columns[right_side], np.int64(n_right),
                     np.int64(codes.n_sites), starts_left,
                     positions_left, starts_right, positions_right, self.special, self.weights,
                     np.int32(local.row_start), np.int32(tile.n_rows), np.int32(local.col_start),
                     np.int32(tile.n_cols), counts),
                )  # fmt: skip
            if work.screen is not None:  # only pairs near the threshold are made again on the host
                approximate = self._tn93_distances if self.tn93 is not None else None
                return function(tile, work.screened_block(counts, approximate))
            # The counts are exact integers; the model's floating point runs on the host, so that every backend
            # gives the same bits (the device's log and its fused multiply-adds round differently from NumPy's).
            host_counts = counts.get(stream=self.stream)
        return function(tile, work.finish_block(host_counts))

    def close(self) -> None:
        self.operands = {}
        self.codes = self.columns = {}
