// The 1-bit GEMM that seqcompare's engines share (Hamming distances, CCC tallies), compiled at run time by CuPy
// (NVRTC) for the device: out[r][c] = sum over the rows' bits of (left_r AND right_c), on tensor cores, with an
// epilogue that writes the matrix (a block of it, optionally mirrored) or selects the pairs under a threshold.
// seqcompare.cuda.bitgemm is its one launcher; bitgemm.cu instantiates the kernel.
//
// Operands are rows of `row_words` 64-bit words (a multiple of 16: the deepest pipeline stage is 1024 bits),
// padded with zero rows to the block edges. What the bits mean is the caller's: Hamming's code-bit operands
// (hamming.cu), CCC's allele planes (ccc.cu).
#pragma once

#include "warp_append.cuh"

// ---------------------------------------------------------------------------------------------------------
// Shared epilogue: hand one distance to the output.
//
// mode 0 (pairs): keep (row, col, d) when d <= max_dist (and col < row for symmetric problems), appended through
//   one atomic per warp; a symmetric pair is written as (col, row) so that i < j.
// mode 1 (matrix): out[(row - out_row0) * out_ld + col - out_col0] = d; with `mirror` also the transposed
//   element (for blocks that lie off the diagonal of a symmetric problem).

// Every kernel that hands out distances takes these parameters last (CuPy passes scalars and pointers, not
// structs) and gathers them into an Output.
#define OUTPUT_PARAMS                                                                                        \
    int mode, u32 max_dist, u32 *pair_i, u32 *pair_j, u32 *pair_d, unsigned long long *pair_count,            \
        unsigned long long capacity, int *out, long long out_ld, int out_row0, int out_col0
#define OUTPUT_ARGS {mode, max_dist, pair_i, pair_j, pair_d, pair_count, capacity, out, out_ld, out_row0, out_col0}

struct Output {
    int mode;
    u32 max_dist;
    u32* pair_i;
    u32* pair_j;
    u32* pair_d;
    unsigned long long* pair_count;
    unsigned long long capacity;
    int* out;
    long long out_ld;
    int out_row0;
    int out_col0;
};

__device__ __forceinline__ void emit_pair(const Output& o, bool keep, u32 i, u32 j, u32 d) {
    long long slot = warp_append_slot(keep, o.pair_count, o.capacity);
    if (slot >= 0) {
        o.pair_i[slot] = i;
        o.pair_j[slot] = j;
        o.pair_d[slot] = d;
    }
}

__device__ __forceinline__ void emit(const Output& o, int row, int col, int n_left, int n_right, bool symmetric,
                                     bool mirror, u32 d) {
    bool inside = row < n_left && col < n_right;
    if (o.mode == 0) {
        bool keep = inside && d <= o.max_dist && (!symmetric || col < row);
        emit_pair(o, keep, symmetric ? (u32)col : (u32)row, symmetric ? (u32)row : (u32)col, d);
    } else if (inside) {
        o.out[(long long)(row - o.out_row0) * o.out_ld + (col - o.out_col0)] = (int)d;
        if (mirror) o.out[(long long)(col - o.out_row0) * o.out_ld + (row - o.out_col0)] = (int)d;
    }
}

// ---------------------------------------------------------------------------------------------------------
// The 1-bit tensor-core GEMM: mma.sync m16n8k256 b1 AND+POPC, i.e. out[r][c] = popcount(left_r AND right_c)
// summed over the rows' words.
//
// A block computes a BM x BN tile of (left rows) x (right rows) for each entry of `tiles` (block-row, block-col
// indices); warps own WM x WN sub-tiles. K advances KC 16-byte chunks per row (KC = 4: 512 bits, two MMA
// k-steps; KC = 8: 1024 bits) per pipeline stage; stages are filled with cp.async 16-byte copies into a swizzled
// layout (chunk c of row r at c ^ ((r >> 1) & 3) for 64-byte rows, c ^ (r & 7) for 128-byte rows) so that every
// ldmatrix reads 8 rows without bank conflicts.

__device__ __forceinline__ u32 smem_address(const void* p) { return (u32)__cvta_generic_to_shared(p); }

template <int KC>
__device__ __forceinline__ int swizzle(int row, int chunk) {
    const int pattern = KC == 4 ? ((row >> 1) & 3) : (row & 7);
    return row * (KC * 16) + ((chunk ^ pattern) << 4);
}

__device__ __forceinline__ void cp_async16(u32 dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void ldmatrix_x4(u32 address, u32& r0, u32& r1, u32& r2, u32& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(address));
}

__device__ __forceinline__ void mma_b1(int* c, const u32* a, u32 b0, u32 b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The GEMM itself, shared by every 1-bit kernel: accumulates the BM x BN tile at (row0, col0) into the calling
// warp's fragment acc[MT][NT][4] (element e of fragment (i, j) is row warp_m * WM + i * 16 + (lane >> 2) +
// (e >> 1) * 8, column warp_n * WN + j * 8 + (lane & 3) * 2 + (e & 1) of the tile).
template <int BM, int BN, int WM, int WN, int STAGES, int KC>
__device__ __forceinline__ void bitmma_tile(const u64* __restrict__ left, const u64* __restrict__ right, int row_words,
                                            int row0, int col0, unsigned char* smem,
                                            int (&acc)[WM / 16][WN / 8][4]) {
    constexpr int WARPS_N = BN / WN;
    constexpr int THREADS = (BM / WM) * WARPS_N * 32;
    constexpr int MT = WM / 16;  // m16 tiles per warp
    constexpr int NT = WN / 8;   // n8 tiles per warp
    static_assert(KC == 4 || KC == 8, "stage depth is 512 or 1024 bits");
    constexpr int ROW_BYTES = KC * 16;
    constexpr int STAGE_BYTES = (BM + BN) * ROW_BYTES;

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    const int k_stages = row_words / (2 * KC);  // 2 words per 16-byte chunk
    const char* left_bytes = reinterpret_cast<const char*>(left + (long long)row0 * row_words);
    const char* right_bytes = reinterpret_cast<const char*>(right + (long long)col0 * row_words);
    const long long row_bytes = (long long)row_words * 8;

    auto load_stage = [&](int stage, int ks) {
        u32 base = smem_address(smem + stage * STAGE_BYTES);
        long long k_offset = (long long)ks * ROW_BYTES;
        for (int c = threadIdx.x; c < (BM + BN) * KC; c += THREADS) {
            int r = c / KC, chunk = c % KC;
            const char* src = r < BM ? left_bytes + r * row_bytes : right_bytes + (r - BM) * row_bytes;
            cp_async16(base + swizzle<KC>(r, chunk), src + k_offset + chunk * 16);
        }
    };

#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_stages) load_stage(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }

    for (int ks = 0; ks < k_stages; ++ks) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();
        int next = ks + STAGES - 1;
        if (next < k_stages) load_stage(next % STAGES, next);
        asm volatile("cp.async.commit_group;\n" ::);

        const unsigned char* stage = smem + (ks % STAGES) * STAGE_BYTES;
        u32 a_base = smem_address(stage);
        u32 b_base = smem_address(stage + BM * ROW_BYTES);
#pragma unroll
        for (int step = 0; step < KC / 2; ++step) {
            u32 a[MT][4];
#pragma unroll
            for (int i = 0; i < MT; ++i) {
                int r = warp_m * WM + i * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
                int chunk = 2 * step + (lane >> 4);
                ldmatrix_x4(a_base + swizzle<KC>(r, chunk), a[i][0], a[i][1], a[i][2], a[i][3]);
            }
#pragma unroll
            for (int j = 0; j < NT; j += 2) {
                int r = warp_n * WN + j * 8 + (lane & 7) + ((lane >> 4) & 1) * 8;
                int chunk = 2 * step + ((lane >> 3) & 1);
                u32 b0, b1, b2, b3;
                ldmatrix_x4(b_base + swizzle<KC>(r, chunk), b0, b1, b2, b3);
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    mma_b1(acc[i][j], a[i], b0, b1);
                    mma_b1(acc[i][j + 1], a[i], b2, b3);
                }
            }
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
}

template <int BM, int BN, int WM, int WN, int STAGES, int KC>
__global__ void __launch_bounds__((BM / WM) * (BN / WN) * 32)
    bitgemm(const u64* __restrict__ left, const u64* __restrict__ right, int row_words,
                   const int2* __restrict__ tiles, int n_left, int n_right, int symmetric, int mirror, OUTPUT_PARAMS) {
    const Output o = OUTPUT_ARGS;
    constexpr int WARPS_N = BN / WN;
    constexpr int MT = WM / 16;
    constexpr int NT = WN / 8;
    extern __shared__ __align__(128) unsigned char smem[];

    const int2 tile = tiles[blockIdx.x];
    const int row0 = tile.x * BM, col0 = tile.y * BN;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    int acc[MT][NT][4];
    bitmma_tile<BM, BN, WM, WN, STAGES, KC>(left, right, row_words, row0, col0, smem, acc);

    const int group = lane >> 2, pair = (lane & 3) * 2;
    const bool sym = symmetric != 0;
    const bool mir = mirror != 0 && tile.x != tile.y;
    if (o.mode == 0) {
        // Skip the epilogue's votes when no distance of this warp can be kept.
        u32 lowest = 0xffffffffu;
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) lowest = min(lowest, (u32)acc[i][j][e]);
        if (!__any_sync(FULL_MASK, lowest <= o.max_dist)) return;
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                int row = row0 + warp_m * WM + i * 16 + group + (e >> 1) * 8;
                int col = col0 + warp_n * WN + j * 8 + pair + (e & 1);
                emit(o, row, col, n_left, n_right, sym, mir, (u32)acc[i][j][e]);
            }
}
