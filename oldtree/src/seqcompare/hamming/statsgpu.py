"""Per-pair site counts on NVIDIA GPUs: the device side of :class:`~seqcompare.hamming.pairstats.PairStatsWork`.

Every count of pairs of resolved bases is a 1-bit tensor-core product of one-hot planes, through the shared GEMM
(:mod:`seqcompare.cuda.bitgemm`): an operand row is a few planes laid end to end, and the product of a left and a
right row sums ``popcount(left & right)`` over them. The seven products a tile needs, into one int32 buffer:

=========== ============== ==============
count       left planes    right planes
=========== ============== ==============
sites       V              V
matches     A C G T        A C G T
ag          A G            G A
ct          C T            T C
A, C, G     X V            V X            (X = A, C or G: both sides' bases in one product)
=========== ============== ==============

(V = A | C | G | T.) One kernel (``pair_stats``) then makes each pair's nine counts in registers: the products
scaled, plus, for sites where a sequence holds an ambiguity code (or a gap under ``gapmm``), their weights from each
row's list of them. It writes either the counts (int64 ``(modes, 9, rows, cols)``, brought to the host, where the
model makes distances with the same floating-point operations as on the CPU: CUDA's ``log`` rounds differently),
or, for TN93 pairs within a distance and clusters, the distance made on the device plus a short list of the pairs
near the threshold with their exact counts, whose distances the host makes again
(:meth:`~seqcompare.hamming.pairstats.PairStatsWork.screened_block`).
"""

from __future__ import annotations

import numpy as np

from ..cuda import bitgemm
from ..cuda.runtime import require_cupy, upload
from .gpu import _round_up

# Operand kinds: the planes (0 A, 1 C, 2 G, 3 T, 4 V = A | C | G | T, 5 Y = C | T) laid end to end in a row.
_KINDS = {"V": (4,), "Y": (5,), "AG": (0, 2), "GA": (2, 0), "CT": (1, 3), "TC": (3, 1),
          "AV": (0, 4), "VA": (4, 0), "CV": (1, 4), "VC": (4, 1), "GV": (2, 4), "VG": (4, 2)}  # fmt: skip
# (left kind, right kind) of each product, in the order the kernel reads them.
_PRODUCTS = (("V", "V"), ("Y", "Y"), ("AG", "GA"), ("CT", "TC"), ("AV", "VA"), ("CV", "VC"), ("GV", "VG"))
_NEAR_CAPACITY = 1 << 16  # pairs near the threshold a tile can list before its kernel runs again with more room
_EDGE = 32  # a block's square of pairs
_THREADS = 256


def _shared_bytes(n_modes: int) -> int:
    """Dynamic shared memory of a ``pair_stats`` block: the packed weight table and the square's sums."""
    return n_modes * 18 * 18 * 3 * 8 + n_modes * 9 * _EDGE * (_EDGE + 1) * 4


# One warp a 64-site word of a row: each lane reads one code of each half (coalesced), and ballots make the A, C,
# G and T bits; out is (rows, 4, words).
_CODE_PLANES = r"""
extern "C" __global__ void code_planes(const unsigned char* codes, long long n, long long m, long long words,
                                       unsigned long long* out)
{
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= n * words) return;
    long long i = warp / words, w = warp % words;
    unsigned long long plane[4] = {0, 0, 0, 0};
    #pragma unroll
    for (int half = 0; half < 2; ++half) {
        long long s = w * 64 + half * 32 + lane;
        int code = s < m ? codes[i * m + s] : 255;
        #pragma unroll
        for (int b = 0; b < 4; ++b)
            plane[b] |= (unsigned long long)__ballot_sync(0xffffffffu, code == b) << (32 * half);
    }
    if (lane == 0) {
        #pragma unroll
        for (int b = 0; b < 4; ++b) out[(i * 4 + b) * words + w] = plane[b];
    }
}
"""

# Compiled per (N_MODES, HAS_SPECIAL, SCREEN, WITH_SITES), so that loops unroll and sums stay in registers. A block
# takes a 32 x 32 square of pairs. The ambiguity sites are walked twice, each time with a whole warp on one row's
# list, so that the list is read once for the warp and the other rows' codes at each site come in one coalesced
# load from a site-major copy: first the left rows' lists (lanes along the square's columns), then the right rows'
# (lanes along its rows), the sums meeting in shared memory. The weight table, packed as the CPU kernel packs it
# (nine counts in three words of 21-bit lanes, emptied before a lane could overflow), sits in shared memory too.
# TN93 follows models._tn93's order of operations (the device's log and fused multiply-adds may differ in the last
# bits, which the screen's margin absorbs). Counts from the products: Y (C or T) shared by both sides at a site
# means no transversion there, so transversions = (C + T of both sides) - 2 Y.Y, and matches are what is left.
_PAIR_STATS = r"""
#define N_CODES 18
#define N_QUANTITIES 9
#define N_PRODUCTS 7
#define EDGE 32
#define WARPS 8
#define BATCH 8
#define LANE_BITS 21
#define LANE_MASK ((1LL << LANE_BITS) - 1)
#define LANE_SITES (LANE_MASK / 288)
#define SCALE 144
#define TABLE_WORDS (N_MODES * N_CODES * N_CODES * 3)

__device__ double tn93_of(const long long* counts, double fraction, long long min_overlap)
{
    const double S = 144.0, SATURATED = 1000.0;
    double sites = counts[0] / S;
    if (sites < (double)min_overlap || sites == 0.0) return nan("");
    const long long* c = counts;
    if (N_MODES > 1 && fraction < 1.0 && sites * fraction <= (double)counts[8]) c = counts + N_QUANTITIES;
    double f0 = c[4] / S, f1 = c[5] / S, f2 = c[6] / S, f3 = c[7] / S;
    double total = f0 + f1 + f2 + f3;
    double scale = 2.0 / total, inverse = 1.0 / total;
    double n0 = f0 * inverse, n1 = f1 * inverse, n2 = f2 * inverse, n3 = f3 * inverse;
    double f_r = n0 + n2, f_y = n1 + n3;
    double ag = c[2] / S * scale, ct = c[3] / S * scale;
    double tv = 1.0 - (c[1] / S * scale + ag + ct);
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
    return result <= 0.0 ? 0.0 : result;
}

#if HAS_SPECIAL
__device__ __forceinline__ void empty_lanes(long long* words, int* sums)
{
    #pragma unroll
    for (int word = 0; word < N_MODES * 3; ++word) {
        #pragma unroll
        for (int lane = 0; lane < 3; ++lane)
            sums[(word / 3) * N_QUANTITIES + (word % 3) * 3 + lane] += (int)((words[word] >> (LANE_BITS * lane)) & LANE_MASK);
        words[word] = 0;
    }
}

// One row's list of sites against the codes of 32 rows of the other side, read site-major: the nine counts of
// every mode into sums (this lane's pair). A lane past the tile's edge reads no code and adds to nothing kept.
__device__ __forceinline__ void walk(const long long* table, long long start, long long stop, const int* positions,
                                     const unsigned char* site_codes, const unsigned char* columns,
                                     long long n_columns, long long column, bool live, bool skip_special,
                                     const unsigned char* special, bool codes_first, int* sums)
{
    long long words[N_MODES * 3];
    #pragma unroll
    for (int k = 0; k < N_MODES * 3; ++k) words[k] = 0;
    int pending = 0;
    // BATCH sites at a time: their loads are independent, so they are in flight together (one at a time, the walk
    // waited on each site's position and then on its code).
    for (long long k0 = start; k0 < stop; k0 += BATCH) {
        int codes[BATCH], others[BATCH];
        #pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            long long k = k0 + u;
            codes[u] = -1;
            if (k < stop) {
                codes[u] = site_codes[k];
                others[u] = live ? columns[(long long)positions[k] * n_columns + column] : 0;
            }
        }
        #pragma unroll
        for (int u = 0; u < BATCH; ++u) {
            int code = codes[u], other = others[u];
            if (code < 0) break;
            if (skip_special && special[other]) continue;  // that site is on the other row's list too: counted there
            const long long* w = table + (codes_first ? code * N_CODES + other : other * N_CODES + code) * 3;
            #pragma unroll
            for (int mode = 0; mode < N_MODES; ++mode)
                #pragma unroll
                for (int q = 0; q < 3; ++q) words[mode * 3 + q] += w[mode * N_CODES * N_CODES * 3 + q];
            if (++pending == LANE_SITES) {
                empty_lanes(words, sums);
                pending = 0;
            }
        }
    }
    empty_lanes(words, sums);
}
#endif

extern "C" __global__ void __launch_bounds__(EDGE * WARPS) pair_stats(
    const int* products, int rows, int cols, int row0, int col0,
    const unsigned char* columns_left, long long n_left, const unsigned char* columns_right, long long n_right,
    const long long* starts_left, const int* positions_left, const unsigned char* site_codes_left,
    const long long* starts_right, const int* positions_right, const unsigned char* site_codes_right,
    const unsigned char* special, const long long* weights,
    long long* counts_out,
    double* distances, long long* sites_out, double fraction, long long min_overlap, double bound,
    unsigned long long* near_count, long long near_capacity, long long* near_index, long long* near_counts)
{
    const int r0 = blockIdx.y * EDGE, c0 = blockIdx.x * EDGE;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long plane = (long long)rows * cols;
#if HAS_SPECIAL
    extern __shared__ long long shared[];
    long long* table = shared;
    int* square = (int*)(shared + TABLE_WORDS);  // [N_MODES * N_QUANTITIES][EDGE][EDGE + 1]
#define SQUARE(Q, R, C) square[((Q) * EDGE + (R)) * (EDGE + 1) + (C)]
    for (int k = threadIdx.x; k < TABLE_WORDS; k += blockDim.x) table[k] = weights[k];
    __syncthreads();
    // The left rows' lists: a warp a row, lanes along the columns.
    for (int rr = warp; rr < EDGE; rr += WARPS) {
        int r = r0 + rr, c = c0 + lane;
        if (r >= rows) break;
        int sums[N_MODES * N_QUANTITIES] = {0};
        long long i = row0 + r;
        walk(table, starts_left[i], starts_left[i + 1], positions_left, site_codes_left, columns_right, n_right,
             col0 + c, c < cols, false, special, true, sums);
        #pragma unroll
        for (int q = 0; q < N_MODES * N_QUANTITIES; ++q) SQUARE(q, rr, lane) = sums[q];
    }
    __syncthreads();
    // The right rows' lists, skipping sites the left row listed: a warp a column, lanes along the rows.
    for (int cc = warp; cc < EDGE; cc += WARPS) {
        int c = c0 + cc, r = r0 + lane;
        if (c >= cols) break;
        int sums[N_MODES * N_QUANTITIES] = {0};
        long long j = col0 + c;
        walk(table, starts_right[j], starts_right[j + 1], positions_right, site_codes_right, columns_left, n_left,
             row0 + r, r < rows, true, special, false, sums);
        #pragma unroll
        for (int q = 0; q < N_MODES * N_QUANTITIES; ++q) SQUARE(q, lane, cc) += sums[q];
    }
    __syncthreads();
#endif
    for (int rr = warp; rr < EDGE; rr += WARPS) {
        int r = r0 + rr, c = c0 + lane;
        if (r >= rows || c >= cols) continue;
        long long index = (long long)r * cols + c;
        int p[N_PRODUCTS];
        #pragma unroll
        for (int k = 0; k < N_PRODUCTS; ++k) p[k] = products[k * plane + index];
        long long sites = p[0], ag = p[2], ct = p[3], fa = p[4], fc = p[5], fg = p[6];
        long long ft = 2 * sites - fa - fc - fg;
        long long tv = fc + ft - 2LL * p[1];
        long long base[N_QUANTITIES] = {sites, sites - ag - ct - tv, ag, ct, fa, fc, fg, ft, 0};
        long long counts[N_MODES * N_QUANTITIES];
        #pragma unroll
        for (int mode = 0; mode < N_MODES; ++mode)
            #pragma unroll
            for (int q = 0; q < N_QUANTITIES; ++q) {
                counts[mode * N_QUANTITIES + q] = SCALE * base[q];
#if HAS_SPECIAL
                counts[mode * N_QUANTITIES + q] += SQUARE(mode * N_QUANTITIES + q, rr, lane);
#endif
            }
#if SCREEN
        double d = tn93_of(counts, fraction, min_overlap);
        distances[index] = d;
#if WITH_SITES
        sites_out[index] = counts[0] / SCALE;
#endif
        if (d <= bound) {  // near or under the threshold: the host makes it again from the exact counts
            unsigned long long slot = atomicAdd(near_count, 1ULL);
            if (slot < (unsigned long long)near_capacity) {
                near_index[slot] = index;
                #pragma unroll
                for (int k = 0; k < N_MODES * N_QUANTITIES; ++k)
                    near_counts[slot * (N_MODES * N_QUANTITIES) + k] = counts[k];
            }
        }
#else
        #pragma unroll
        for (int k = 0; k < N_MODES * N_QUANTITIES; ++k) counts_out[k * plane + index] = counts[k];
#endif
    }
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
        self.has_special = bool(work.special.any())
        self.n_modes = work.weights.shape[0]
        self.near_capacity = _NEAR_CAPACITY
        self.kernels = {}
        with self.device:
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.operands, self.columns = {}, {}
            for side in sides:
                # The codes go up once (page-locked pieces); the planes are made from them on the device, and so
                # is the site-major copy the walks over ambiguity sites read (a warp on one row's list reads the
                # other side's codes at each of its sites in one coalesced load).
                rows = upload(codes.side(side), self.stream)
                self.operands[side] = self._operands(rows)
                if self.has_special:
                    self.columns[side] = cupy.ascontiguousarray(rows.T)
                del rows
            if self.has_special:
                if codes.symmetric:
                    self.columns["right"] = self.columns["left"]
                self.sites = {side: tuple(cupy.asarray(a) for a in codes.special_sites(side, work.ambiguities))
                              for side in sides}  # fmt: skip
                if codes.symmetric:
                    self.sites["right"] = self.sites["left"]
                self.special = cupy.asarray(work.special.astype(np.uint8))
                from .statskernel import pack_lanes

                self.weights = cupy.asarray(pack_lanes(np.ascontiguousarray(work.weights)))
            self.near_count = cupy.zeros(1, dtype=cupy.uint64)
            self.device.synchronize()

    def _kernel(self, screen: bool):
        if screen not in self.kernels:
            defines = (f"#define N_MODES {self.n_modes}\n#define HAS_SPECIAL {int(self.has_special)}\n"
                       f"#define SCREEN {int(screen)}\n#define WITH_SITES {int(self.work.with_sites)}\n")  # fmt: skip
            kernel = self.cupy.RawKernel(defines + _PAIR_STATS, "pair_stats")
            if self.has_special:
                kernel.max_dynamic_shared_size_bytes = _shared_bytes(self.n_modes)
            self.kernels[screen] = kernel
        return self.kernels[screen]

    def _operands(self, rows) -> dict:
        """Every operand kind of the code rows ``rows`` (on the device), rows padded to the GEMM's block edge."""
        cupy = self.cupy
        n, m = rows.shape
        words = -(-m // 64)
        planes = cupy.empty((n, 6, words), dtype=cupy.uint64)
        if n and m:
            one_hot = cupy.empty((n, 4, words), dtype=cupy.uint64)
            kernel = cupy.RawKernel(_CODE_PLANES, "code_planes")
            kernel((-(-n * words * 32 // 256),), (256,), (rows, np.int64(n), np.int64(m), np.int64(words), one_hot))
            planes[:, :4] = one_hot
            del one_hot
        else:
            planes[:] = 0
        planes[:, 4] = planes[:, 0] | planes[:, 1] | planes[:, 2] | planes[:, 3]
        planes[:, 5] = planes[:, 1] | planes[:, 3]
        padded = _round_up(max(n, 1), bitgemm.ROW_PAD)
        out = {}
        for kind, members in _KINDS.items():
            width = _round_up(max(1, len(members) * words), bitgemm.ROW_WORDS_MULTIPLE)
            operand = cupy.zeros((padded, width), dtype=cupy.uint64)
            for k, plane in enumerate(members):
                operand[:n, k * words : (k + 1) * words] = planes[:, plane]
            out[kind] = operand
        return out

    def _operand(self, side: str, kind: str):
        return self.operands["left" if self.work.codes.symmetric else side][kind]

    def _products(self, tile, local):
        """The tile's seven 1-bit products, int32 ``(7, rows, cols)`` on the device."""
        cupy = self.cupy
        codes = self.work.codes
        n_right = codes.n_left if codes.symmetric else codes.n_right
        size = bitgemm.TILE
        row_blocks = range(local.row_start // size, -(-local.row_stop // size))
        col_blocks = range(local.col_start // size, -(-local.col_stop // size))
        micro = cupy.asarray(bitgemm.micro_tiles(row_blocks, col_blocks, False))
        products = cupy.empty((len(_PRODUCTS), tile.n_rows, tile.n_cols), dtype=cupy.int32)
        for k, (left_kind, right_kind) in enumerate(_PRODUCTS):
            output = bitgemm.MatrixOutput(products[k], tile.n_cols, local.row_start, local.col_start)
            bitgemm.launch(self._operand("left", left_kind), self._operand("right", right_kind), micro,
                           n_left=min(codes.n_left, local.row_stop), n_right=min(n_right, local.col_stop),
                           symmetric=False, output=output)  # fmt: skip
        return products

    def _launch(self, screen: bool, products, local, outputs: tuple) -> None:
        """``pair_stats`` over the tile's pairs, with ``outputs`` (its last ten parameters)."""
        rows, cols = products.shape[1:]
        if not rows * cols:
            return
        if self.has_special:
            left, right = self.columns["left"], self.columns["right"]
            special = (left, np.int64(left.shape[1]), right, np.int64(right.shape[1]), *self.sites["left"],
                       *self.sites["right"], self.special, self.weights)  # fmt: skip
            shared = _shared_bytes(self.n_modes)
        else:
            null = np.uint64(0)
            special = (null, np.int64(0), null, np.int64(0), null, null, null, null, null, null, null, null)
            shared = 0
        self._kernel(screen)((-(-cols // _EDGE), -(-rows // _EDGE)), (_THREADS,),
                             (products, np.int32(rows), np.int32(cols), np.int32(local.row_start),
                              np.int32(local.col_start), *special, *outputs), shared_mem=shared)  # fmt: skip

    def _counts(self, products, local):
        """Exact counts ``(modes, 9, rows, cols)`` int64 on the device."""
        cupy = self.cupy
        counts = cupy.empty((self.n_modes, 9, *products.shape[1:]), dtype=cupy.int64)
        null = np.uint64(0)
        self._launch(False, products, local, (counts, null, null, np.float64(0), np.int64(0), np.float64(0), null,
                                              np.int64(0), null, null))  # fmt: skip
        return counts

    def _screened_tn93(self, products, local):
        """TN93 distances of the tile (with sites, if asked) for a reduction that keeps pairs within the screen:
        made on the device, and again on the host for the pairs near the threshold, from their exact counts."""
        cupy, work = self.cupy, self.work
        shape = products.shape[1:]
        distances = cupy.empty(shape, dtype=cupy.float64)
        sites = cupy.empty(shape, dtype=cupy.int64) if work.with_sites else None
        width = self.n_modes * 9
        capacity = self.near_capacity
        while True:
            self.near_count.fill(0)
            near_index = cupy.empty(capacity, dtype=cupy.int64)
            near_counts = cupy.empty((capacity, width), dtype=cupy.int64)
            self._launch(True, products, local,
                         (np.uint64(0), distances, np.uint64(0) if sites is None else sites, np.float64(work.fraction),
                          np.int64(work.min_overlap), np.float64(work.screen_bound), self.near_count,
                          np.int64(capacity), near_index, near_counts))  # fmt: skip
            found = int(self.near_count.get(stream=self.stream)[0])
            if found <= capacity:
                break
            capacity = self.near_capacity = _round_up(found, _NEAR_CAPACITY)  # rare: a tile of mostly close pairs
        work.redo_near(distances, near_index[:found], near_counts[:found].get(stream=self.stream))
        return distances if sites is None else (distances, sites)

    def reduce(self, tile, function):
        """``function(tile, block)`` with the tile's block made on this device."""
        work = self.work
        local = work.local(tile)
        with self.device, self.stream:
            products = self._products(tile, local)
            if work.screen is not None and work.model == "tn93":
                return function(tile, self._screened_tn93(products, local))
            counts = self._counts(products, local)
            del products
            if work.screen is not None:  # only pairs near the threshold are made again on the host
                return function(tile, work.screened_block(counts))
            # The counts are exact integers; the model's floating point runs on the host, so that every backend
            # gives the same bits (the device's log and its fused multiply-adds round differently from NumPy's).
            host_counts = counts.get(stream=self.stream)
        return function(tile, work.finish_block(host_counts))

    def close(self) -> None:
        self.operands = {}
        self.columns = self.sites = {}
