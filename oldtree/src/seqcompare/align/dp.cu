// Batched NW (linear gaps, match/mismatch) and DTW on NVIDIA GPUs: one warp per pair, the DP in registers.
//
// The warp sweeps the target (columns j) while its 32 lanes own consecutive strips of R query rows: a chunk of
// 32 R rows at a time (longer queries go chunk by chunk through one boundary row in global memory). Lane t
// works on column j = s - t + 1 at step s, so the cell above its strip (lane t - 1's bottom row, same column)
// arrives by one warp shuffle per step. Scores are 32-bit (the host refuses inputs that could leave the range);
// the minimum-plus-add steps are Hopper's DPX instructions (__viaddmin_s32: min(a + b, c); __vimin3_s32).

#define FULL_MASK 0xffffffffu
// Blocks of 128 threads each multiprocessor must be able to hold (a cap on registers per thread): the DP is a
// chain of dependent cells down each lane's strip, so latency is hidden by warps, not by ILP. 4 (128 registers)
// measured best on an H200 for 40,000 pairs of 1,000 (bench/dp_occupancy.py): float32 DTW 3,054 GCUPS against
// 2,773 with no cap (136 registers), int32 3,631 against 3,521; 5 and 6 spill and lose.
#ifndef DP_MIN_BLOCKS
#define DP_MIN_BLOCKS 4
#endif
#define BIG 0x3fffffff

// DTW on integer, float or double signals: the same steps through these overloads. A float cell is one
// rounding of min + |q - t| (the CPU's lanes kernel makes the same two roundings, so results are bit-equal).
__device__ __forceinline__ int unreachable(int) { return BIG; }
__device__ __forceinline__ double unreachable(double) { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float unreachable(float) { return __int_as_float(0x7f800000); }
__device__ __forceinline__ int min3(int a, int b, int c) { return __vimin3_s32(a, b, c); }
__device__ __forceinline__ double min3(double a, double b, double c) { return fmin(fmin(a, b), c); }
// (float32 DTW takes strip_column's cell form, where this minimum is used)
template <typename V>
constexpr bool is_float32 = false;
template <>
constexpr bool is_float32<float> = true;
// Float DTW cells are never negative (+0, sums of |q - t|, or +inf; no NaN: the host refuses values that are not
// finite), and such floats order exactly as their bit patterns do as signed integers, so the three-way minimum
// is one DPX instruction on the bits (VIMNMX3) in place of two float minima.
__device__ __forceinline__ float min3(float a, float b, float c) {
    return __int_as_float(__vimin3_s32(__float_as_int(a), __float_as_int(b), __float_as_int(c)));
}

// The value of register h[k] (k known only at run time) without local memory.
template <int R, typename V>
__device__ __forceinline__ V pick(const V (&h)[R], int k) {
    V value = h[0];
#pragma unroll
    for (int r = 1; r < R; ++r) value = r == k ? h[r] : value;
    return value;
}

// The split step's minima (strip_column). For floats, as volatile PTX: the compiler otherwise moves each row's
// off-chain minimum after the new value of the row above is born, so that the old and new values of a row are
// alive together and every cell ends in a register copy (SASS of float32 DTW, R = 32: 81 copies a step of 297
// instructions; with this, 3 of 234 and 95 registers in place of 128 with spills). Integer minima are left to
// the compiler, which fuses the two of a cell into one three-way DPX minimum (a copy a cell remains either way).
__device__ __forceinline__ int min2(int a, int b) { return min(a, b); }
__device__ __forceinline__ float min2(float a, float b) {
    float least;
    asm volatile("min.f32 %0, %1, %2;" : "=f"(least) : "f"(a), "f"(b));
    return least;
}
__device__ __forceinline__ double min2(double a, double b) { return fmin(a, b); }  // (as PTX: more spills)

// A DTW cell from its best neighbour: best + |q - t|. For integers one instruction (VABSDIFF, PTX sad.s32) in
// place of a subtraction, an absolute value and a DPX add that clamps at the sentinel: no clamp is needed,
// because every cell a step computes (row and column at least 1) has a reachable neighbour (the diagonal of
// cell (1, 1) is M[0][0] = 0; a later cell has a computed cell above or to its left, and the first row of a
// long pair's chunk has the chunk above's bottom row), so best is a finite path cost, which the host's range
// check keeps below 2^29; rows past the query's end (which may wrap) are never read. For floats (never is +inf,
// costs are finite) the sum is one rounding, as the CPU's lanes kernel makes it, so results are bit-equal.
__device__ __forceinline__ int plus_distance(int best, int a, int b) {
    int sum;
    asm("sad.s32 %0, %1, %2, %3;" : "=r"(sum) : "r"(a), "r"(b), "r"(best));
    return sum;
}
__device__ __forceinline__ float plus_distance(float best, float a, float b) { return best + fabsf(a - b); }
__device__ __forceinline__ double plus_distance(double best, double a, double b) { return best + fabs(a - b); }

// The part of a cell that does not depend on the cell above it, from the cells to its left (left) and up-left
// (diag) in the column before: NW, min(left + ins, diag + cost); DTW, min(left, diag).
template <int KIND, typename V>
__device__ __forceinline__ V off_chain(V diag, V left, V qv, V tj, int match, int mismatch, int ins) {
    if constexpr (KIND == 0) {
        return __viaddmin_s32(left, ins, diag + (qv == tj ? match : mismatch));
    } else {
        return min2(diag, left);
    }
}

// Every kind, one cell at a time: the minimum of the three neighbours (and, affine, of the gap states).
template <int R, int KIND, typename V>
__device__ __forceinline__ void strip_column_cells(V (&h)[R], const V (&qv)[R], V (&e)[KIND >= 2 ? R : 1], V diag,
                                                   V& up, V& up_f, const V tj, const int* __restrict__ sub,
                                                   int match, int mismatch, int ins, int del, int io, int dop,
                                                   const V never) {
    int row_cost[KIND == 3 ? 5 : 1];
    if constexpr (KIND == 3) {
#pragma unroll
        for (int y = 0; y < 5; ++y) row_cost[y] = sub[(int)tj * 5 + y];
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        V left = h[r];
        V value;
        if constexpr (KIND == 0) {
            int cost = qv[r] == tj ? match : mismatch;
            // the cell above last: one instruction a cell on the chain down the strip (dp_long; 3-4% on NW)
            value = __viaddmin_s32(up, del, __viaddmin_s32(left, ins, diag + cost));
        } else if constexpr (KIND == 1) {
            value = plus_distance(min3(diag, up, left), qv[r], tj);
        } else {
            int cost;
            if constexpr (KIND == 3) {
                int y = (int)qv[r];
                cost = row_cost[0];
                cost = y == 1 ? row_cost[1] : cost;
                cost = y == 2 ? row_cost[2] : cost;
                cost = y == 3 ? row_cost[3] : cost;
                cost = y == 4 ? row_cost[4] : cost;
            } else {
                cost = qv[r] == tj ? match : mismatch;
            }
            int ev = __viaddmin_s32(e[r], ins, left + io + ins);
            up_f = __viaddmin_s32(up_f, del, up + dop + del);
            value = __vimin3_s32(diag + cost, ev, up_f);
            e[r] = ev;
        }
        diag = left;
        h[r] = value;
        up = value;
    }
}

// One column j of a lane's strip of R rows: h (and e, affine only) hold the strip's cells at column j - 1 and
// receive those at j; diag is the cell up-left of the strip's first row, up (and up_f) the cell above it, and
// on return the strip's bottom cell, which the lane below reads next.
//
// NW and DTW split each cell in two: the part from the column before (off_chain, for row r + 1 taken before
// row r is overwritten) and the minimum with the cell above plus the cost. Only the second part waits on the
// row above, so the chain down a strip is one DPX instruction a cell for NW (min(up + del, part)) and two for
// DTW (a minimum, then the add of the distance). Minima are exact and
// associative (no NaN reaches a cell), so the scores are the recurrence's, bit for bit. On an H200, 40,000
// pairs of 1,000 (bench/dp_api.py, kernel only, one run against the cell-at-a-time form): float64 DTW 1,177
// GCUPS against 688, float32 3,344-3,355 against 2,905, int32 3,714-3,717 against 3,379, int16 3,751 against
// 3,454, NW 2,843-2,848 against 2,804. Then without the register copies (min2, plus_distance) and with the
// interior loop unrolled by two (dp_warp), one run each against the form before (bench/RESULTS.md, session 20):
// float32 4,285-4,310 against 3,378, then 4,522-4,588 against 4,340; int32 4,452-4,506 against 3,721, then
// 5,879-6,070 against 4,555; int16 6,175-6,263 against 4,613 at the end.
// float32 DTW now takes the cell form (SPLIT has no effect on it): its three-way minimum is one instruction on
// the bits (min3), so a cell is three instructions, two of them off the chain; on an H200 (session 21, one A/B/A
// call) the kernel ran 5,517-5,593 GCUPS against 4,461-4,495 for the split form.
template <int R, int KIND, typename V, bool SPLIT = true>
__device__ __forceinline__ void strip_column(V (&h)[R], const V (&qv)[R], V (&e)[KIND >= 2 ? R : 1], V diag, V& up,
                                             V& up_f, const V tj, const int* __restrict__ sub, int match,
                                             int mismatch, int ins, int del, int io, int dop, const V never) {
    if constexpr (SPLIT && (KIND == 0 || (KIND == 1 && !is_float32<V>))) {
        V part = off_chain<KIND, V>(diag, h[0], qv[0], tj, match, mismatch, ins);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int below = r + 1 < R ? r + 1 : r;
            const V next = off_chain<KIND, V>(h[r], h[below], qv[below], tj, match, mismatch, ins);
            if constexpr (KIND == 0) {
                h[r] = __viaddmin_s32(up, del, part);
            } else {
                h[r] = plus_distance(min2(up, part), qv[r], tj);
            }
            up = h[r];
            part = next;
        }
    } else {
        strip_column_cells<R, KIND, V>(h, qv, e, diag, up, up_f, tj, sub, match, mismatch, ins, del, io, dop, never);
    }
}

// A lane's strip at column 0: its query values and H[i][0] (NW: dop + i del; DTW: unreachable) for rows
// first + 1 .. first + R (rows past n hold code 0 and are never read).
template <int R, int KIND, typename V, typename S>
__device__ __forceinline__ void start_strip(V (&h)[R], V (&qv)[R], V (&e)[KIND >= 2 ? R : 1], const S* __restrict__ q,
                                            int n, int first, int dop, int del, const V never) {
#pragma unroll
    for (int r = 0; r < R; ++r) {
        int i = first + r + 1;
        qv[r] = i <= n ? q[i - 1] : V(0);
        h[r] = KIND != 1 ? V(dop + i * del) : never;  // column 0
        if constexpr (KIND >= 2) e[r] = BIG;
    }
}

// Row 0 at column j, for the lane that holds row 1: the cell above (H[0][j]) and up-left (H[0][j - 1]). NW:
// io + j ins (and H[0][0] = 0); DTW: M[0][0] = 0, the rest unreachable, or 0 in subsequence mode (mode 2).
template <int KIND, typename V>
__device__ __forceinline__ void first_row(int j, int io, int ins, int mode, const V never, V& above, V& diag) {
    above = KIND != 1 ? V(io + j * ins) : (mode == 2 ? V(0) : never);
    diag = KIND != 1 ? V(j == 1 ? 0 : io + (j - 1) * ins) : ((j == 1 || mode == 2) ? V(0) : never);
}

// kind 0: NW, cost = match/mismatch, gaps ins (along a row: target base against a gap) and del (down a column).
//   H[0][j] = j ins, H[i][0] = i del, H[i][j] = min(H[i-1][j-1] + s, H[i-1][j] + del, H[i][j-1] + ins).
// kind 2: NW with affine gaps (Gotoh): a gap of L costs io + L ins along a row, dop + L del down a column; E
//   (row gaps) stays in registers per row, F (column gaps) travels down with H, through the shuffle and the
//   chunk border (the second half of each warp's border).
// kind 3: kind 2 with a substitution matrix, sub[x * 5 + y] for target code x against query code y: each lane
//   keeps the five costs of its column's target base and picks one per cell.
// kind 1: DTW, cost |t_j - q_i|: M[i][j] = cost + min(M[i-1][j-1], M[i-1][j], M[i][j-1]); M[0][0] = 0, the
//   rest of row 0 and column 0 unreachable, row 0 free (0) in subsequence mode (mode 2). Mode 0: M[n][m];
//   modes 1 and 2: the minimum over row n.
// V: the DP's values (int; float or double for float DTW); S: the stored inputs (unsigned char base codes for
// NW, so only bytes cross PCIe; for DTW the signals as the caller holds them: short, int or long long read as
// int (the host checks the range on the device before it trusts the scores), float or double).
template <int R, int KIND, typename V, typename S>
__global__ void __launch_bounds__(128, DP_MIN_BLOCKS) dp_warp(const S* __restrict__ t_values, const long long* __restrict__ t_off,
                                               const S* __restrict__ q_values, const long long* __restrict__ q_off,
                                               const long long* __restrict__ pair_t, const long long* __restrict__ pair_q,
                                               int n_pairs, int match, int mismatch, int ins, int del, int mode,
                                               int io, int dop, const int* __restrict__ sub,
                                               V* __restrict__ border, long long border_stride,
                                               V* __restrict__ out) {
    constexpr bool GOTOH = KIND >= 2;
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    const V never = unreachable(V(0));
    V* row_above = border + (long long)warp * border_stride;
    V* f_above = row_above + (border_stride >> 1);  // kind 2 only
    for (int p = warp; p < n_pairs; p += warps) {
        const S* t = t_values + t_off[pair_t[p]];
        const int m = (int)(t_off[pair_t[p] + 1] - t_off[pair_t[p]]);
        const S* q = q_values + q_off[pair_q[p]];
        const int n = (int)(q_off[pair_q[p] + 1] - q_off[pair_q[p]]);
        V result;
        if (KIND != 1) {
            V row_gap = m == 0 ? 0 : io + m * ins;
            V column_gap = dop + n * del;
            result = n == 0 ? row_gap : column_gap;  // H[0][m] or H[n][0] (linear: the opens are 0)
        } else {
            result = (n == 0) ? ((m == 0 || mode == 2) ? V(0) : never) : never;
        }
        V last_min = never;
        for (int row0 = 0; row0 < n && m > 0; row0 += 32 * R) {
            const int first = row0 + lane * R;  // rows above this lane's strip
            V h[R], qv[R], e[GOTOH ? R : 1];
            start_strip<R, KIND, V, S>(h, qv, e, q, n, first, dop, del, never);
            const bool last_chunk = row0 + 32 * R >= n;
            const int owner = (n - 1 - row0) / R;  // lane holding row n (last chunk)
            const int k = (n - 1 - row0) % R;
            V bottom = 0, bottom_f = BIG, above_prev = 0;
            const bool track_min = KIND == 1 && mode != 0 && last_chunk && lane == owner;
            // One step s of the sweep, for any step: lane t at column j = s - t + 1, or idle outside 1..m.
            auto step = [&](int s) {
                const int j = s - lane + 1;
                V above = __shfl_up_sync(FULL_MASK, bottom, 1);
                V above_f = GOTOH ? __shfl_up_sync(FULL_MASK, bottom_f, 1) : V(BIG);
                if (j < 1 || j > m) {
                    above_prev = above;
                    return;
                }
                V diag;
                if (lane == 0) {
                    if (row0 == 0) {
                        first_row<KIND, V>(j, io, ins, mode, never, above, diag);
                        above_f = BIG;
                    } else {
                        above = row_above[j];
                        diag = row_above[j - 1];
                        if (GOTOH) above_f = f_above[j];
                    }
                } else {
                    diag = j == 1 ? (KIND != 1 ? V(dop + first * del) : never) : above_prev;
                }
                above_prev = above;
                V up = above, up_f = above_f;
                strip_column<R, KIND, V>(h, qv, e, diag, up, up_f, V(t[j - 1]), sub, match, mismatch, ins, del, io, dop, never);
                bottom = up;
                bottom_f = up_f;
                if (!last_chunk && lane == 31) {
                    row_above[j] = bottom;
                    if (GOTOH) f_above[j] = bottom_f;
                }
                if (track_min) {
                    V here = pick<R, V>(h, k);
                    last_min = here < last_min ? here : last_min;
                }
            };
            // The steps where every lane is inside the matrix past its first column (32 <= s < m), for a query
            // of one chunk, NW or DTW in 32-bit values: no range test, no border row, lane 0's cells above from
            // row 0, the target value through a pointer that moves one a step, two steps an iteration. In the
            // SASS (R = 32) the general step wraps 35 instructions around a float32 strip's 128; here about 12.
            // Unrolled by two, the compiler alternates two sets of registers for the strip, which removes the
            // copy each integer cell otherwise ends with (int32 DTW: 2 instructions a cell, from 3). Affine NW
            // and 64-bit values keep the general step: this loop adds spills to them.
            constexpr bool INTERIOR = (KIND == 0 || KIND == 1) && sizeof(V) == 4;
            const bool interior = INTERIOR && row0 == 0 && last_chunk;
            const int interior_from = interior ? min(32, m) : m + 31;
            const int interior_to = interior ? max(m, interior_from) : m + 31;
            int s = 0;
            for (; s < interior_from; ++s) step(s);
            if constexpr (INTERIOR) {
                const S* target = t + (interior_from - lane);  // t[j - 1] at the first interior step
#pragma unroll 2
                for (; s < interior_to; ++s, ++target) {
                    const int j = s - lane + 1;
                    V above = __shfl_up_sync(FULL_MASK, bottom, 1);
                    V diag = above_prev;
                    if (lane == 0) first_row<KIND, V>(j, io, ins, mode, never, above, diag);
                    above_prev = above;
                    V up = above, up_f = BIG;
                    strip_column<R, KIND, V>(h, qv, e, diag, up, up_f, V(*target), sub, match, mismatch, ins, del,
                                             io, dop, never);  // fmt: skip
                    bottom = up;
                    if (track_min) {
                        V here = pick<R, V>(h, k);
                        last_min = here < last_min ? here : last_min;
                    }
                }
            }
            for (; s < m + 31; ++s) step(s);
            if (!last_chunk) {
                if (lane == 0) row_above[0] = KIND != 1 ? V(dop + (row0 + 32 * R) * del) : never;
                __syncwarp();
            } else if (lane == owner) {
                V at_m = pick<R, V>(h, k);
                result = (KIND == 1 && mode != 0) ? last_min : at_m;
            }
        }
        if (n > 0 && m > 0) {
            const int owner = ((n - 1) % (32 * R)) / R;
            result = __shfl_sync(FULL_MASK, result, owner);
        } else if (KIND == 1 && n > 0 && m == 0) {
            result = never;
        }
        if (lane == 0) out[p] = result;
        __syncwarp();
    }
}

// Long pairs, few of them: one pair over many warps. A unit of work is one chunk of 32 R query rows of one pair,
// swept across every column exactly as dp_warp sweeps a chunk; chunk c reads the bottom row of chunk c - 1 as
// that chunk's warp writes it, so the chunks of a pair run at once, a wavefront of strips a few columns apart.
//
// Handing out work: a warp takes the next unit from a ticket counter when it is running. Units are numbered
// chunk by chunk (every pair's chunk 0, then every pair's chunk 1, ...), so the unit a warp waits on always holds
// a smaller ticket, held by a warp that is already running or finished: no wait can last forever, whatever the
// order in which blocks are scheduled.
//
// Passing rows: each chunk's bottom row (and F row, affine) has its own place in `border`, set beforehand to
// bytes 0x80 (a value no cell can take: scores stay inside +-2^30, distances are not negative); the writer stores
// each cell once, and the reader waits until the cell it needs no longer holds that pattern. An aligned 32- or
// 64-bit store is seen whole or not at all, so no fence or flag is needed. The reader's warp loads the next 32
// cells of the row above together (lane l the cell lane 0 uses l / K steps later, K columns a step) and hands
// them to lane 0 by a shuffle a column in the general step, through the warp's shared slots in the interior.
//
// Measured on an H200, 20 pairs of 10,000 at R = 8 (40 chunks a pair, 800 warps; a clock read at each unit's
// start and first batch): each chunk started 12 us (59 steps) after the one above, about the 62 steps the
// layout needs (lane 31 ends a column 31 steps after lane 0 starts it, plus a batch of 32). What bounds the
// kernel is the step itself, 208 ns at 6 warps an SM: dp_warp on 800 independent pairs of that shape (256 x
// 10,000) ran at 1,058 GCUPS, and this kernel at 600-730 (with no waiting at all, a wrong-answer probe, 881).
// Loading the next column's target value a step ahead and unrolling the step loop by 2 or 4 changed nothing.
// Nor did sweeping two columns a step (row r's cell at j + 1 right after its cell at j: a chain of R + 1 cells
// for 2 R, twice the independent work), in one A/B/A call (session 21): int32 DTW 621, 641, 700 GCUPS kernel
// only, NW 575, 554, 664. So the step was not bound by the latency of the chain down a strip then. Once session
// 27 had taken the loads, the shuffle and the store off the interior step, it was, at a few warps a scheduler:
// two columns a step (K = 2) gave int32 DTW at R = 16 1,957-1,960 GCUPS against 1,645 (20 pairs of 10,000,
// kernel only, session 28; with no waiting at all, R = 8: 3,061-3,078 against 2,756-2,764), while NW, whose cell
// has more instructions off the chain, lost (1,669 against 1,783).
__device__ __forceinline__ bool unset(int v) { return v == (int)0x80808080; }
#define DP_LONG_WARPS 4  // warps a block of dp_long at most (gpu.py's _LONG_WARPS_PER_BLOCK; the launch bounds)
template <bool B>
struct Flag {  // a compile-time choice passed to a generic lambda
    static constexpr bool value = B;
};
__device__ __forceinline__ bool unset(float v) { return __float_as_int(v) == (int)0x80808080; }
__device__ __forceinline__ bool unset(double v) { return __double_as_longlong(v) == (long long)0x8080808080808080ULL; }

// The long kernel sweeps its cells one at a time (strip_column's SPLIT off): on an H200, 20 pairs of 10,000,
// two rounds each in one run, the split form gave int32 DTW 625 and 644 GCUPS (kernel only) against 709 and
// 685, and NW the same (566-600 against 568-604). At a few warps an SM the split's extra instruction per DTW
// cell costs more than its shorter chain saves; with the GPU full (dp_warp) the split wins.
#ifndef DP_LONG_SPLIT
#define DP_LONG_SPLIT false
#endif
template <typename V>
__device__ __forceinline__ V await_cell(const V* cell) {
    V value = *(const volatile V*)cell;
    while (unset(value)) {
        __nanosleep(100);  // (0, 20 and 100 ns measured the same; a pause spares the L2 a stream of loads)
        value = *(const volatile V*)cell;
    }
    return value;
}

// A cell of a chunk's bottom row, for the chunk below (await_cell).
template <typename V>
__device__ __forceinline__ void publish_cell(V* cell, V value) {
    *(volatile V*)cell = value;
}

// K: columns a step (1, or 2 for DTW in 32-bit values with strips of at most 16 rows; gpu.py's long_columns).
template <int R, int KIND, typename V, typename S, int K>
__global__ void __launch_bounds__(128, DP_MIN_BLOCKS) dp_long(const S* __restrict__ t_values, const long long* __restrict__ t_off,
                                               const S* __restrict__ q_values, const long long* __restrict__ q_off,
                                               const long long* __restrict__ pair_t, const long long* __restrict__ pair_q,
                                               const int* __restrict__ unit_pair, const int* __restrict__ unit_chunk,
                                               int n_units, unsigned* __restrict__ ticket,
                                               int match, int mismatch, int ins, int del, int mode,
                                               int io, int dop, const int* __restrict__ sub,
                                               V* border, const long long* __restrict__ border_off,
                                               V* __restrict__ out) {
    constexpr bool GOTOH = KIND >= 2;
    const int lane = threadIdx.x & 31;
    const V never = unreachable(V(0));
    while (true) {
        unsigned u = 0;
        if (lane == 0) u = atomicAdd(ticket, 1u);
        u = __shfl_sync(FULL_MASK, u, 0);
        if (u >= (unsigned)n_units) break;
        const int p = unit_pair[u];
        const int c = unit_chunk[u];
        const S* t = t_values + t_off[pair_t[p]];
        const int m = (int)(t_off[pair_t[p] + 1] - t_off[pair_t[p]]);  // the host sends pairs with m >= 1
        const S* q = q_values + q_off[pair_q[p]];
        const int n = (int)(q_off[pair_q[p] + 1] - q_off[pair_q[p]]);
        const int row0 = c * 32 * R;
        const long long row_stride = (long long)(m + 1) * (GOTOH ? 2 : 1);  // H[0..m], then F[0..m]
        const V* row_above = border + border_off[p] + (long long)(c - 1) * row_stride;  // c >= 1 only
        V* row_below = border + border_off[p] + (long long)c * row_stride;
        const bool last_chunk = row0 + 32 * R >= n;
        const int first = row0 + lane * R;
        V h[R], qv[R], e[GOTOH ? R : 1];
        start_strip<R, KIND, V, S>(h, qv, e, q, n, first, dop, del, never);
        const int owner = (n - 1 - row0) / R;  // lane holding row n (last chunk)
        const int k = (n - 1 - row0) % R;
        // The steps where every lane is inside the matrix past its first column, NW and DTW in 32-bit values, as
        // dp_warp's interior loop: no range test and no column-0 case, and the row above awaited once a block of
        // 32 columns. Nsight Compute on the general step (H200, 20 pairs of 10,000, int32 DTW, R = 8; session 21)
        // counted 88 instructions a step for 8 cells, and the step's load of t[j - 1] among the top stalls. With
        // this loop (and the cells as min3 + VABSDIFF): 360 million instructions in place of 665 million, 2.26 ms
        // in place of 2.68 (clocks locked by the profiler).
        // Session 21 found no gain in loading t[j - 1] a step ahead from global memory, in awaiting 16 or 8 cells
        // at a time (32: the same as 16 within the spread, 8 slower), or in strips of 4 rows. Session 27 found what
        // the step did wait on (bench/chain_latency.py: a DPX or VABSDIFF result is ready 4.3 cycles on, a shuffle
        // 30, an L1 load about 35, a volatile load about 290): the shuffle of lane 0's cell above, the target load
        // and the bottom cell's store at each step. With those moved to the warp's shared slots (below), int32 DTW
        // at R = 8 went from 1,132 to 1,777 GCUPS kernel only, NW at R = 16 from 1,129 to 1,724 (20 pairs of
        // 10,000; bench/dp_long_variants.py --old, one H200).
        // (Not at R = 32, where it spills; that strip is taken only for pairs of about 100,000.)
        constexpr bool INTERIOR = (KIND == 0 || KIND == 1) && sizeof(V) == 4 && R <= 16;
        // Columns a step: lane l works on columns K (s - l) + 1 .. K (s - l) + K at step s, each from the bottom
        // cells lane l - 1 made of them at step s - 1. With K = 2 a step is a shuffle and two chains down the
        // strip, the second one cell behind the first (R + 1 cells deep for 2 R cells), which pays where a few
        // warps a scheduler leave the step waiting on that chain; but the lane at the bottom of the chunk is 31
        // steps, now 62 columns, behind the top, so each chunk starts further behind the one above.
        static_assert(K == 1 || (K == 2 && INTERIOR), "two columns a step: interior kinds only");
        constexpr int BLOCK = 32 / K;  // the steps that use 32 cells of the awaited row
        const int steps = (m + K - 1) / K + 31;
        V bottom[K], bottom_f[K];
#pragma unroll
        for (int col = 0; col < K; ++col) {
            bottom[col] = 0;
            bottom_f[col] = BIG;
        }
        V above_prev = 0, waiting = 0, waiting_f = BIG, last_min = never;
        const bool track_min = KIND == 1 && mode != 0 && last_chunk && lane == owner;
        // interior blocks of BLOCK steps from step 32, ending where lane 0's last column is at most m - 1, so
        // that lane 0's next target value stays inside the target
        const int interior_from = INTERIOR ? min(32, steps) : steps;
        const int interior_to = INTERIOR ? max((m - 1) / 32 * BLOCK, interior_from) : steps;
        int s = 0;  // the step
        // Each warp's slots for a block of interior steps: lane 0's cells of the row above (the awaited row), the
        // target values the block reads (t[K s - 32 K .. K s + 31] for the block from step s; K more slots that a
        // read ahead past the block's last step may touch, unused), and lane 31's bottom cells, passed down to the
        // chunk below in one store at the block's end.
        __shared__ V lane0_rows[DP_LONG_WARPS][32];
        __shared__ V target_rows[DP_LONG_WARPS][32 * (K + 1) + K];
        __shared__ V bottom_rows[DP_LONG_WARPS][32];
        V* lane0_row = lane0_rows[threadIdx.x >> 5];
        V* target_row = target_rows[threadIdx.x >> 5];
        V* bottom_row = bottom_rows[threadIdx.x >> 5];
        // The interior steps, with or without the minimum over row n (a loop of each, so that no step branches on
        // it). A step waits on the chain alone: its target values and lane 0's cells above come from the warp's
        // slots (read a step ahead), lane 0's cells by selects, not a branch, and lane 31's bottom cells go to
        // slots, not to global memory. In the interior loop as first written (one load of t[j - 1] and one store
        // of the bottom cell a step, lane 0's cell above by a shuffle at the step that used it), the load cost
        // 13%, the shuffle 18-35% and the store 12% of the kernel (bench/dp_long_variants.py, session 27).
        // Passing the bottom cells down a block at a time delays them by a block at most: the chunk below awaits
        // the next 32 cells together.
        auto interior_blocks = [&](auto tracking) {
            constexpr bool TRACK = decltype(tracking)::value;
            if (s >= interior_to) return;
            const bool pass_down = !last_chunk && lane == 31;
            // K + 1 rows of 32 target values, lane l holding value l of each: row r from t[K s - 32 K + 32 r].
            // The next block's rows are this block's rows 1 .. K and one more.
            V staged[K + 1];
#pragma unroll
            for (int r = 0; r <= K; ++r) staged[r] = V(t[min(K * s - 32 * K + 32 * r + lane, m - 1)]);
            for (; s < interior_to; s += BLOCK) {  // blocks of BLOCK steps, from a multiple of BLOCK
                __syncwarp();  // every lane is done with the last block's slots
#pragma unroll
                for (int r = 0; r <= K; ++r) target_row[32 * r + lane] = staged[r];
                if (c > 0) {  // warp-uniform: the 32 cells of the row above that lane 0 takes next
                    lane0_row[lane] = await_cell(row_above + (K * s + 1 + lane));
                }
                __syncwarp();
                // the next block's new row of target values, read now so that its latency passes under this block
#pragma unroll
                for (int r = 0; r < K; ++r) staged[r] = staged[r + 1];
                staged[K] = V(t[min(K * s + 32 + lane, m - 1)]);
                // lane l's target value for column col at step s + i is t[K (s + i - l) + col]: slot
                // K (i - l) + col + 32 K; lane 0's cell above it is slot K i + col of the awaited row
                V t_next[K], border_next[K];
#pragma unroll
                for (int col = 0; col < K; ++col) {
                    t_next[col] = target_row[col + 32 * K - K * lane];
                    border_next[col] = lane0_row[col];
                }
#pragma unroll(8 / K)
                for (int i = 0; i < BLOCK; ++i) {
                    V tj[K], from_border[K], above[K];
#pragma unroll
                    for (int col = 0; col < K; ++col) {
                        tj[col] = t_next[col];
                        t_next[col] = target_row[K * (i + 1 - lane) + col + 32 * K];  // (next step's)
                        from_border[col] = border_next[col];
                        border_next[col] = lane0_row[(K * (i + 1) + col) & 31];  // (at the last i unused)
                        above[col] = __shfl_up_sync(FULL_MASK, bottom[col], 1);
                    }
#pragma unroll
                    for (int col = 0; col < K; ++col) {
                        V diag = above_prev;
                        V row0_above, row0_diag;
                        first_row<KIND, V>(K * (s + i) + 1 + col, io, ins, mode, never, row0_above, row0_diag);
                        const V cell_above = lane == 0 ? (c == 0 ? row0_above : from_border[col]) : above[col];
                        diag = lane == 0 && c == 0 ? row0_diag : diag;
                        above_prev = cell_above;
                        V up = cell_above, up_f = BIG;
                        strip_column<R, KIND, V, DP_LONG_SPLIT>(h, qv, e, diag, up, up_f, tj[col], sub, match,
                                                                mismatch, ins, del, io, dop, never);  // fmt: skip
                        bottom[col] = up;
                        if (pass_down) bottom_row[K * i + col] = up;  // lane 31's cell of column K (s + i - 31) + 1 + col
                        if constexpr (TRACK) {
                            V here = pick<R, V>(h, k);
                            last_min = here < last_min ? here : last_min;
                        }
                    }
                }
                if (!last_chunk) {  // warp-uniform: the block's bottom cells (columns K (s - 31) + 1 ..), together
                    __syncwarp();
                    publish_cell(row_below + (K * (s - 31) + 1 + lane), bottom_row[lane]);
                }
            }
        };
        for (; s < steps; ++s) {
            if constexpr (INTERIOR) {
                if (s == interior_from) {  // the interior steps, then the general step goes on at interior_to
                    if (track_min) {
                        interior_blocks(Flag<true>{});
                    } else {
                        interior_blocks(Flag<false>{});
                    }
                }
            }
            if (c > 0 && s % BLOCK == 0) {  // warp-uniform: the next cells of the row above
                const int column = K * s + 1 + lane;
                if (column <= m) {
                    waiting = await_cell(row_above + column);
                    if (GOTOH) waiting_f = await_cell(row_above + (m + 1) + column);
                }
                __syncwarp();
            }
            V above[K], above_f[K], from_border[K], from_border_f[K];
#pragma unroll
            for (int col = 0; col < K; ++col) {
                from_border[col] = __shfl_sync(FULL_MASK, waiting, (K * s + col) & 31);
                from_border_f[col] = GOTOH ? __shfl_sync(FULL_MASK, waiting_f, (K * s + col) & 31) : V(BIG);
                above[col] = __shfl_up_sync(FULL_MASK, bottom[col], 1);
                above_f[col] = GOTOH ? __shfl_up_sync(FULL_MASK, bottom_f[col], 1) : V(BIG);
            }
#pragma unroll
            for (int col = 0; col < K; ++col) {
                const int j = K * (s - lane) + 1 + col;
                V cell_above = above[col], cell_above_f = above_f[col];
                if (j < 1 || j > m) {
                    above_prev = cell_above;
                    continue;
                }
                V diag;
                if (lane == 0 && c == 0) {
                    first_row<KIND, V>(j, io, ins, mode, never, cell_above, diag);
                    cell_above_f = BIG;
                } else {
                    if (lane == 0) {
                        cell_above = from_border[col];
                        cell_above_f = from_border_f[col];
                    }
                    diag = j == 1 ? (KIND != 1 ? V(dop + first * del) : never) : above_prev;  // H[first][0] at j = 1
                }
                above_prev = cell_above;
                V up = cell_above, up_f = cell_above_f;
                strip_column<R, KIND, V, DP_LONG_SPLIT>(h, qv, e, diag, up, up_f, V(t[j - 1]), sub, match, mismatch,
                                                        ins, del, io, dop, never);  // fmt: skip
                bottom[col] = up;
                bottom_f[col] = up_f;
                if (!last_chunk && lane == 31) {
                    publish_cell(row_below + j, up);
                    if (GOTOH) publish_cell(row_below + (m + 1) + j, up_f);
                }
                if (track_min) {
                    V here = pick<R, V>(h, k);
                    last_min = here < last_min ? here : last_min;
                }
            }
        }
        if (last_chunk && lane == owner) out[p] = (KIND == 1 && mode != 0) ? last_min : pick<R, V>(h, k);
        __syncwarp();
    }
}

// NW with two pairs of the same shape per lane, one in each 16-bit half of every register (used when every
// score provably stays inside 16 bits): the compare, the cost select (one LOP3), the add and the two
// min-plus-adds each serve two cells.
template <int R>
__device__ __forceinline__ unsigned pick16(const unsigned (&h)[R], int k) {
    unsigned value = h[0];
#pragma unroll
    for (int r = 1; r < R; ++r) value = r == k ? h[r] : value;
    return value;
}

__device__ __forceinline__ unsigned twice(int x) { return (unsigned)(x & 0xffff) * 0x10001u; }

template <int R>
__global__ void __launch_bounds__(128) nw16_warp(const unsigned char* __restrict__ t_values,
                                                 const long long* __restrict__ t_off,
                                                 const unsigned char* __restrict__ q_values,
                                                 const long long* __restrict__ q_off,
                                                 const long long* __restrict__ unit_t, const long long* __restrict__ unit_q,
                                                 int n_units, int match, int mismatch, int ins, int del,
                                                 unsigned* __restrict__ border, long long border_stride,
                                                 long long* __restrict__ out) {
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    unsigned* row_above = border + (long long)warp * border_stride;
    const unsigned match2 = twice(match), mismatch2 = twice(mismatch), ins2 = twice(ins), del2 = twice(del);
    for (int u = warp; u < n_units; u += warps) {
        const unsigned char* ta = t_values + t_off[unit_t[2 * u]];
        const unsigned char* tb = t_values + t_off[unit_t[2 * u + 1]];
        const unsigned char* qa = q_values + q_off[unit_q[2 * u]];
        const unsigned char* qb = q_values + q_off[unit_q[2 * u + 1]];
        const int m = (int)(t_off[unit_t[2 * u] + 1] - t_off[unit_t[2 * u]]);
        const int n = (int)(q_off[unit_q[2 * u] + 1] - q_off[unit_q[2 * u]]);
        unsigned result = n == 0 ? twice(m * ins) : twice(n * del);
        for (int row0 = 0; row0 < n && m > 0; row0 += 32 * R) {
            const int first = row0 + lane * R;
            unsigned h[R], qv[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                int i = first + r + 1;
                qv[r] = i <= n ? ((unsigned)qa[i - 1] | ((unsigned)qb[i - 1] << 16)) : 0xffffffffu;
                h[r] = twice(i * del);
            }
            const bool last_chunk = row0 + 32 * R >= n;
            unsigned bottom = 0, above_prev = 0;
            for (int s = 0; s < m + 31; ++s) {
                const int j = s - lane + 1;
                unsigned above = __shfl_up_sync(FULL_MASK, bottom, 1);
                if (j < 1 || j > m) {
                    above_prev = above;
                    continue;
                }
                unsigned diag;
                if (lane == 0) {
                    if (row0 == 0) {
                        above = twice(j * ins);
                        diag = twice((j - 1) * ins);
                    } else {
                        above = row_above[j];
                        diag = row_above[j - 1];
                    }
                } else {
                    diag = j == 1 ? twice(first * del) : above_prev;
                }
                above_prev = above;
                const unsigned t2 = (unsigned)ta[j - 1] | ((unsigned)tb[j - 1] << 16);
                unsigned up = above;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    unsigned equal = __vcmpeq2(qv[r], t2);
                    unsigned cost = (equal & match2) | (~equal & mismatch2);
                    unsigned left = h[r];
                    unsigned value = __viaddmin_s16x2(left, ins2, __viaddmin_s16x2(up, del2, __vadd2(diag, cost)));
                    diag = left;
                    h[r] = value;
                    up = value;
                }
                bottom = up;
                if (!last_chunk && lane == 31) row_above[j] = bottom;
            }
            if (!last_chunk) {
                if (lane == 0) row_above[0] = twice((row0 + 32 * R) * del);
                __syncwarp();
            } else if (lane == (n - 1 - row0) / R) {
                result = pick16<R>(h, (n - 1 - row0) % R);
            }
        }
        if (n > 0 && m > 0) result = __shfl_sync(FULL_MASK, result, ((n - 1) % (32 * R)) / R);
        if (lane == 0) {
            out[2 * u] = (long long)(short)(result & 0xffff);
            out[2 * u + 1] = (long long)(short)(result >> 16);
        }
        __syncwarp();
    }
}

// kind 4: edit distance (unit costs: match 0, mismatch, insertion and deletion 1; the host multiplies by the
// unit) by Myers' bit-vectors, Hyyrö's global form, as the CPU's lanes kernel (bitparallel.py) computes it.
// A pair owns a segment of SEG lanes, each lane 32 query rows as one 32-bit word of each vector (Pv, Mv, and
// the query's codes bit-sliced into three planes), so a warp holds 32 / SEG pairs of up to 32 SEG rows; longer
// queries (SEG 32 only) go chunk by chunk of 1,024 rows through one border of horizontal differences.
// A column is one addition across the segment's words: each lane adds its own word, and the carries between
// lanes come from two ballots (generate: the word overflowed; propagate: it is all ones) by one more addition,
// ((G | P) + G) ^ P, the carry into every lane at once. The horizontal differences shift into the next lane
// by a shuffle; the top lane takes the chunk's boundary (+1 in the first chunk: D[0][j] = j; the border's
// value below; a -1 also sets the lowest Eq bit, Hyyrö's block rule).
template <int SEG>
__global__ void __launch_bounds__(128) myers_warp(const unsigned char* __restrict__ t_values,
                                                  const long long* __restrict__ t_off,
                                                  const unsigned char* __restrict__ q_values,
                                                  const long long* __restrict__ q_off,
                                                  const long long* __restrict__ pair_t,
                                                  const long long* __restrict__ pair_q, int n_pairs,
                                                  signed char* __restrict__ border, long long border_stride,
                                                  long long* __restrict__ out) {
    constexpr int PER = 32 / SEG;  // pairs per warp
    constexpr int ROWS = 32 * SEG;  // query rows per chunk
    const int lane = threadIdx.x & 31;
    const int sub = lane % SEG;  // this lane's place in its pair's segment
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    unsigned segment_ends = 0;  // no carry leaves one pair's segment for the next
#pragma unroll
    for (int k = SEG - 1; k < 32; k += SEG) segment_ends |= 1u << k;
    signed char* hrow = border + (long long)warp * border_stride;
    for (int first_pair = warp * PER; first_pair < n_pairs; first_pair += warps * PER) {
        const int p = first_pair + lane / SEG;
        int m = 0, n = 0;
        const unsigned char *t = t_values, *q = q_values;
        if (p < n_pairs) {
            t = t_values + t_off[pair_t[p]];
            m = (int)(t_off[pair_t[p] + 1] - t_off[pair_t[p]]);
            q = q_values + q_off[pair_q[p]];
            n = (int)(q_off[pair_q[p] + 1] - q_off[pair_q[p]]);
        }
        // Every lane runs every column of the warp's longest pair (the ballots and shuffles need the whole warp);
        // a pair's lanes past its own columns compute what is never read.
        const int columns = __reduce_max_sync(FULL_MASK, (n > 0) ? m : 0);
        const int row_count = __reduce_max_sync(FULL_MASK, (m > 0) ? n : 0);
        int score = n;  // D[n][0]
        for (int row0 = 0; row0 < row_count; row0 += ROWS) {
            unsigned plane0 = 0, plane1 = 0, plane2 = 0;
            const int top = row0 + sub * 32;  // this lane's rows: top + 1 .. top + 32
#pragma unroll 4
            for (int b = 0; b < 32; ++b) {
                const unsigned code = top + b < n ? q[top + b] : 0u;  // rows past the query: code A, harmless
                plane0 |= (code & 1u) << b;
                plane1 |= ((code >> 1) & 1u) << b;
                plane2 |= ((code >> 2) & 1u) << b;
            }
            unsigned pv = 0xffffffffu, mv = 0;  // column 0: D[i][0] = i
            const bool last_chunk = row0 + ROWS >= n;
            const int owner = (n - 1 - row0) >> 5;  // the lane (in the segment) and bit holding row n
            const int bit = (n - 1 - row0) & 31;
            for (int j0 = 0; j0 < columns; j0 += SEG) {
                const unsigned loaded = j0 + sub < m ? t[j0 + sub] : 0u;
#pragma unroll 4
                for (int step = 0; step < SEG; ++step) {
                    const int j = j0 + step + 1;
                    if (j > columns) break;  // warp-uniform
                    const unsigned code = __shfl_sync(FULL_MASK, loaded, step, SEG);
                    int hin = 1;
                    if (row0 > 0 && sub == 0) hin = hrow[j];
                    unsigned eq = ~((plane0 ^ (0u - (code & 1u))) | (plane1 ^ (0u - ((code >> 1) & 1u))) |
                                    (plane2 ^ (0u - ((code >> 2) & 1u))));
                    if (sub == 0 && hin < 0) eq |= 1u;
                    const unsigned xv = eq | mv;
                    const unsigned sum = (eq & pv) + pv;
                    const unsigned generate = __ballot_sync(FULL_MASK, sum < pv) & ~segment_ends;
                    const unsigned propagate = __ballot_sync(FULL_MASK, sum == 0xffffffffu) & ~segment_ends;
                    const unsigned carries = ((generate | propagate) + generate) ^ propagate;
                    const unsigned total = sum + ((carries >> lane) & 1u);
                    const unsigned xh = (total ^ pv) | eq;
                    const unsigned ph = mv | ~(xh | pv);
                    const unsigned mh = pv & xh;
                    unsigned ph_in = __shfl_up_sync(FULL_MASK, ph, 1, SEG) >> 31;
                    unsigned mh_in = __shfl_up_sync(FULL_MASK, mh, 1, SEG) >> 31;
                    if (sub == 0) {
                        ph_in = hin > 0;
                        mh_in = hin < 0;
                    }
                    const unsigned shifted_ph = (ph << 1) | ph_in;
                    const unsigned shifted_mh = (mh << 1) | mh_in;
                    pv = shifted_mh | ~(xv | shifted_ph);
                    mv = shifted_ph & xv;
                    if (j <= m) {
                        if (last_chunk && sub == owner) score += (int)((ph >> bit) & 1u) - (int)((mh >> bit) & 1u);
                        if (!last_chunk && sub == SEG - 1) hrow[j] = (signed char)((int)(ph >> 31) - (int)(mh >> 31));
                    }
                }
            }
            __syncwarp();  // the border written by the bottom lane is read by the top one in the next chunk
        }
        const int holder = (lane / SEG) * SEG + (n > 0 ? ((n - 1) % ROWS) >> 5 : 0);
        score = __shfl_sync(FULL_MASK, score, holder);
        if (sub == 0 && p < n_pairs) out[p] = n == 0 ? m : (m == 0 ? n : score);
        __syncwarp();
    }
}
