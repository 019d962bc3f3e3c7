// Hamming / SNP-distance kernels for NVIDIA GPUs, compiled at run time by CuPy (NVRTC) for the device.
//
// Operands of the tensor-core paths ("code-bit operands"): a row is a sequence of groups of 64 sites; group g
// holds n_codes 64-bit words, word k with bit s set when
//   right operand: site 64g+s holds present code k                          (one-hot)
//   left operand:  site 64g+s holds a present code x that differs from k    (row x of the difference table)
// so for a left row a and a right row b,  sum over bits of (left_a AND right_b)  =  the number of sites where
// both are present and differ. This is exact for any relation between codes, and with 4 codes (A, C, G, T) it
// costs 4 bits per site and side: the fewest possible, since the 4x4 "differ" matrix has rank 4.
// Rows are padded with zero words to a multiple of 8 words (512 bits) and row counts to the tile size.
//
// Planes of the CPU encoder (seqcompare.hamming.encoding.pack_planes): a row is P value planes then a validity
// plane, each W 64-bit words; site s is bit s%64 of word s/64.
//
// The 1-bit tensor-core GEMM itself is seqcompare's shared one (cuda/bitgemm.cuh, launched by
// seqcompare.cuda.bitgemm); this file holds what is Hamming's own: the operand builders, the popcount kernel on
// CUDA cores, and the int8 path's helpers, which hand their distances to the same epilogue.

#include "bitgemm.cuh"

// ---------------------------------------------------------------------------------------------------------
// Building code-bit operands.

// From CPU planes: one thread per (row, group). `stored[x]` is the value bits present code x has in the
// planes; `left_masks[k]` has bit x set when codes x and k count as a difference.
extern "C" __global__ void expand_planes(const u64* __restrict__ planes, int n_rows, int n_value_planes,
                                         int plane_words, const u32* __restrict__ stored,
                                         const u32* __restrict__ left_masks, int n_codes, int row_words,
                                         u64* __restrict__ left, u64* __restrict__ right) {
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= (long long)n_rows * plane_words) return;
    int row = (int)(tid / plane_words);
    int group = (int)(tid % plane_words);
    const u64* src = planes + (long long)row * (n_value_planes + 1) * plane_words + group;
    u64 valid = src[(long long)n_value_planes * plane_words];
    u64 value[8];
    for (int p = 0; p < n_value_planes; ++p) value[p] = src[(long long)p * plane_words];
    u64 onehot[32];
    for (int x = 0; x < n_codes; ++x) {
        u64 hit = valid;
        for (int p = 0; p < n_value_planes; ++p) hit &= ((stored[x] >> p) & 1u) ? value[p] : ~value[p];
        onehot[x] = hit;
    }
    u64* out_left = left + (long long)row * row_words + (long long)group * n_codes;
    u64* out_right = right + (long long)row * row_words + (long long)group * n_codes;
    for (int k = 0; k < n_codes; ++k) {
        u64 differ = 0;
        for (int x = 0; x < n_codes; ++x)
            if ((left_masks[k] >> x) & 1u) differ |= onehot[x];
        if (right) out_right[k] = onehot[k];
        if (left) out_left[k] = differ;
    }
}

// Raw sequence bytes to site codes, in place, by the alphabet's 256-entry byte-to-code table (held in shared
// memory): sequences then cross PCIe as they were read, and the host runs no pass over the sites.
extern "C" __global__ void translate_bytes(unsigned char* __restrict__ data, long long n,
                                           const unsigned char* __restrict__ table) {
    __shared__ unsigned char codes[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) codes[b] = table[b];
    __syncthreads();
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) data[i] = codes[data[i]];
}

// Rows that lie at given offsets of uploaded file bytes (an alignment read in place, one line per sequence),
// gathered into a row-major matrix and translated to site codes on the way: the host never copies them.
extern "C" __global__ void gather_rows(const unsigned char* __restrict__ span, const long long* __restrict__ offsets,
                                       long long length, const unsigned char* __restrict__ table,
                                       unsigned char* __restrict__ out) {
    __shared__ unsigned char codes[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) codes[b] = table[b];
    __syncthreads();
    const unsigned char* from = span + offsets[blockIdx.x];
    unsigned char* to = out + (long long)blockIdx.x * length;
    for (long long j = threadIdx.x; j < length; j += blockDim.x) to[j] = codes[from[j]];
}

// The pairs found, as sortable keys (row << 32 | column), and their gather in sorted order: CuPy's elementwise
// kernels for the same steps are compiled or loaded at a process's first use (0.11 s of a fresh command on an
// H200 host, session 31), these come with this module.
extern "C" __global__ void pair_keys(const unsigned* __restrict__ rows, const unsigned* __restrict__ cols,
                                     long long n, unsigned long long* __restrict__ keys) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride)
        keys[k] = ((unsigned long long)rows[k] << 32) | cols[k];
}

extern "C" __global__ void gather_pairs(const long long* __restrict__ order, const unsigned long long* __restrict__ keys,
                                        const unsigned* __restrict__ dist, long long n,
                                        unsigned long long* __restrict__ sorted_keys, unsigned* __restrict__ sorted_dist) {
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        long long at = order[k];
        sorted_keys[k] = keys[at];
        sorted_dist[k] = dist[at];
    }
}

// From site codes (uint8, 0 = missing, x+1 = present code x): the seed's bit-mask construction, three ways.
// All write the same operands; outputs must be zeroed first for the two atomic versions.

// (1) The paper's naive kernel: one thread per site, atomicOr straight into global memory.
extern "C" __global__ void pack_codes_naive(const unsigned char* __restrict__ codes, int n_rows, int n_sites,
                                            const u32* __restrict__ left_masks, int n_codes, int row_words,
                                            u64* __restrict__ left, u64* __restrict__ right) {
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= (long long)n_rows * n_sites) return;
    int row = (int)(tid / n_sites);
    int site = (int)(tid % n_sites);
    int code = codes[tid];
    if (code == 0) return;
    int x = code - 1;
    u64 bit = 1ull << (site & 63);
    long long base = (long long)row * row_words + (long long)(site >> 6) * n_codes;
    atomicOr(right + base + x, bit);
    for (int k = 0; k < n_codes; ++k)
        if ((left_masks[k] >> x) & 1u) atomicOr(left + base + k, bit);
}

// (2) Shared-memory aggregation: a block builds the words of a 1024-site segment of one row in shared memory
// (atomics there are cheap), then writes them out coalesced, once.
#define SEGMENT_SITES 1024
extern "C" __global__ void pack_codes_shared(const unsigned char* __restrict__ codes, int n_rows, int n_sites,
                                             const u32* __restrict__ left_masks, int n_codes, int row_words,
                                             u64* __restrict__ left, u64* __restrict__ right) {
    extern __shared__ u64 words[];  // [2][SEGMENT_SITES / 64][n_codes]
    int row = blockIdx.y;
    int segment_start = blockIdx.x * SEGMENT_SITES;
    int n_words = (SEGMENT_SITES / 64) * n_codes;
    for (int w = threadIdx.x; w < 2 * n_words; w += blockDim.x) words[w] = 0;
    __syncthreads();
    for (int s = threadIdx.x; s < SEGMENT_SITES; s += blockDim.x) {
        int site = segment_start + s;
        if (site >= n_sites) break;
        int code = codes[(long long)row * n_sites + site];
        if (code == 0) continue;
        int x = code - 1;
        u64 bit = 1ull << (s & 63);
        int base = (s >> 6) * n_codes;
        atomicOr(words + n_words + base + x, bit);
        for (int k = 0; k < n_codes; ++k)
            if ((left_masks[k] >> x) & 1u) atomicOr(words + base + k, bit);
    }
    __syncthreads();
    long long out = (long long)row * row_words + (long long)(segment_start >> 6) * n_codes;
    int limit = min(n_words, (int)(((long long)row_words - (segment_start >> 6) * (long long)n_codes)));
    for (int w = threadIdx.x; w < limit; w += blockDim.x) {
        left[out + w] = words[w];
        right[out + w] = words[n_words + w];
    }
}

// (3) Ballot packer: a warp reads 32 consecutive sites (coalesced); one vote per code gives a 32-bit word
// directly, with no atomics and no zeroing. Output words are addressed as 32-bit halves.
extern "C" __global__ void pack_codes_ballot(const unsigned char* __restrict__ codes, int n_rows, int n_sites,
                                             const u32* __restrict__ left_masks, int n_codes, int row_words,
                                             u32* __restrict__ left, u32* __restrict__ right) {
    int lane = threadIdx.x & 31;
    long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int halves = (n_sites + 31) >> 5;  // 32-site pieces per row
    if (warp >= (long long)n_rows * halves) return;
    int row = (int)(warp / halves);
    int piece = (int)(warp % halves);
    int site = piece * 32 + lane;
    int code = site < n_sites ? codes[(long long)row * n_sites + site] : 0;
    int x = code - 1;
    // Word k of group g is u32 pair (2*(g*n_codes + k), +1); piece p is half p&1 of group p>>1.
    long long base = (long long)row * row_words * 2 + (long long)(piece >> 1) * n_codes * 2 + (piece & 1);
    for (int k = 0; k < n_codes; ++k) {
        u32 one = __ballot_sync(FULL_MASK, code != 0 && x == k);
        u32 differ = __ballot_sync(FULL_MASK, code != 0 && ((left_masks[k] >> x) & 1u));
        if (lane == k % 32) {
            right[base + 2 * k] = one;
            left[base + 2 * k] = differ;
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// CUDA cores: popcount on the CPU encoder's planes (any number of value planes, either relation).
// A block computes a 64 x 64 tile; each thread a 4 x 4 block of pairs, reading words staged in shared memory.

#define PC_TILE 64
#define PC_WORDS 8

extern "C" __global__ void __launch_bounds__(256)
    hamming_popcount(const u64* __restrict__ left, const u64* __restrict__ right, int n_value_planes,
                     int plane_words, int disjoint, const int2* __restrict__ tiles, int n_left, int n_right,
                     int symmetric, int mirror, OUTPUT_PARAMS) {
    const Output o = OUTPUT_ARGS;
    extern __shared__ u64 stage[];  // [2][PC_TILE][n_planes][PC_WORDS]
    const int n_planes = n_value_planes + 1;
    const int2 tile = tiles[blockIdx.x];
    const int row0 = tile.x * PC_TILE, col0 = tile.y * PC_TILE;
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const long long row_stride = (long long)n_planes * plane_words;
    u64* sa = stage;
    u64* sb = stage + PC_TILE * n_planes * PC_WORDS;
    u32 acc[4][4] = {};
    for (int w0 = 0; w0 < plane_words; w0 += PC_WORDS) {
        __syncthreads();
        for (int e = threadIdx.x; e < PC_TILE * n_planes * PC_WORDS; e += 256) {
            int r = e / (n_planes * PC_WORDS), rest = e % (n_planes * PC_WORDS);
            int p = rest / PC_WORDS, w = w0 + rest % PC_WORDS;
            bool ok = w < plane_words;
            int ra = row0 + r, rb = col0 + r;
            sa[e] = (ok && ra < n_left) ? left[ra * row_stride + (long long)p * plane_words + w] : 0ull;
            sb[e] = (ok && rb < n_right) ? right[rb * row_stride + (long long)p * plane_words + w] : 0ull;
        }
        __syncthreads();
        for (int w = 0; w < PC_WORDS; ++w) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const u64* a = sa + ((ty * 4 + i) * n_planes) * PC_WORDS + w;
                u64 a_valid = a[n_value_planes * PC_WORDS];
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const u64* b = sb + ((tx * 4 + j) * n_planes) * PC_WORDS + w;
                    u64 mix = 0;
                    for (int p = 0; p < n_value_planes; ++p)
                        mix |= disjoint ? (a[p * PC_WORDS] & b[p * PC_WORDS]) : (a[p * PC_WORDS] ^ b[p * PC_WORDS]);
                    if (disjoint) mix = ~mix;
                    acc[i][j] += __popcll(mix & a_valid & b[n_value_planes * PC_WORDS]);
                }
            }
        }
    }
    const bool sym = symmetric != 0;
    const bool mir = mirror != 0 && tile.x != tile.y;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) emit(o, row0 + ty * 4 + i, col0 + tx * 4 + j, n_left, n_right, sym, mir, acc[i][j]);
}

// ---------------------------------------------------------------------------------------------------------
// Helpers of the int8 tensor-core path (cuBLAS does the GEMM): unpack code-bit operands to 0/1 bytes,
// and hand a GEMM result block to the shared epilogue.

extern "C" __global__ void unpack_bits_int8(const u64* __restrict__ bits, long long n_words, signed char* __restrict__ out) {
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n_words * 8) return;
    u64 word = bits[tid >> 3];
    int byte = (int)(tid & 7);
    unsigned int piece = (unsigned int)(word >> (byte * 8)) & 0xffu;
    // 8 output bytes per input byte, written as two 32-bit stores.
    u32 low = 0, high = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) {
        low |= ((piece >> b) & 1u) << (8 * b);
        high |= ((piece >> (b + 4)) & 1u) << (8 * b);
    }
    u32* dst = reinterpret_cast<u32*>(out + tid * 8);
    dst[0] = low;
    dst[1] = high;
}

// `block` is rows x cols (row-major, ld = cols) for rows row0.., cols col0..; one thread per element, with
// whole warps kept together so the pair epilogue can vote.
extern "C" __global__ void emit_block(const int* __restrict__ block, int rows, int cols, int row0, int col0,
                                      int n_left, int n_right, int symmetric, int mirror, OUTPUT_PARAMS) {
    const Output o = OUTPUT_ARGS;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long total = (long long)rows * cols;
    bool inside = tid < total;
    int r = inside ? (int)(tid / cols) : 0, c = inside ? (int)(tid % cols) : 0;
    u32 d = inside ? (u32)block[tid] : 0xffffffffu;
    int row = inside ? row0 + r : n_left, col = inside ? col0 + c : n_right;
    emit(o, row, col, n_left, n_right, symmetric != 0, mirror != 0, d);
}
