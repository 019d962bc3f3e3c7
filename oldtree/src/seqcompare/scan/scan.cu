// Signature scanning kernels (seqcompare scan --device cuda), compiled at run time by CuPy (NVRTC).
//
// The method is the CPU's (seqcompare/scan/index.py): candidates from an index of the signatures' clean
// k-windows, each verified base by base, plus an exact fallback over the offsets that no pair of clean
// windows covers, found with a ladder of dilated clean-window bitsets. Everything here is the same
// arithmetic on packed data.
//
// Packed sequences (samples and signatures alike): a record starts on a 32-base word; `bases` holds 2 bits a
// base (base j of a word at bits 2j, 2j+1; A=0 C=1 G=2 T=3, N stored as 0), `nmask` one bit a base (1 = N).
// Bases past a record's end are N. Both arrays carry one extra word at the end, so reading the word after a
// record's last one is always in bounds (its bits are masked off or are N).

typedef unsigned long long u64;
typedef unsigned int u32;

#define NO_MATCH 0x7fffffff

__device__ __forceinline__ u64 bases_at(const u64* __restrict__ bases, long long word0, long long pos) {
    long long w = word0 + (pos >> 5);
    int r = (int)(pos & 31);
    u64 low = bases[w] >> (2 * r);
    if (r) low |= bases[w + 1] << (64 - 2 * r);
    return low;
}

__device__ __forceinline__ u32 nmask_at(const u32* __restrict__ nmask, long long word0, long long pos) {
    long long w = word0 + (pos >> 5);
    int r = (int)(pos & 31);
    u32 low = nmask[w] >> r;
    if (r) low |= nmask[w + 1] << (32 - r);
    return low;
}

// Bit j of a 32-bit mask to bit 2j of a 64-bit word.
__device__ __forceinline__ u64 spread(u32 mask) {
    u64 x = mask;
    x = (x | (x << 16)) & 0x0000FFFF0000FFFFull;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFull;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | (x << 2)) & 0x3333333333333333ull;
    x = (x | (x << 1)) & 0x5555555555555555ull;
    return x;
}

// Does signature s occur at offset o of the sample whose packed words start at sample_word0? 32 bases a step.
__device__ bool occurs(const u64* __restrict__ sample_bases, const u32* __restrict__ sample_nmask,
                       long long sample_word0, long long o, const u64* __restrict__ sig_bases,
                       const u32* __restrict__ sig_nmask, long long sig_word0, int length) {
    for (int p = 0; p < length; p += 32) {
        int n = min(32, length - p);
        u64 diff = bases_at(sample_bases, sample_word0, o + p) ^ sig_bases[sig_word0 + (p >> 5)];
        diff = (diff | (diff >> 1)) & 0x5555555555555555ull;
        u64 wild = spread(nmask_at(sample_nmask, sample_word0, o + p) | sig_nmask[sig_word0 + (p >> 5)]);
        u64 valid = n == 32 ? ~0ull : ((1ull << (2 * n)) - 1);
        if (diff & ~wild & valid) return false;
    }
    return true;
}

__device__ __forceinline__ void emit(int sample, int signature, long long offset, int report_all, int* best,
                                     int n_signatures, int* out, unsigned long long* out_count,
                                     unsigned long long capacity) {
    if (report_all) {
        unsigned long long at = atomicAdd(out_count, 1ull);
        if (at < capacity) {
            out[3 * at] = sample;
            out[3 * at + 1] = signature;
            out[3 * at + 2] = (int)offset;
        }
    } else {
        atomicMin(best + (long long)sample * n_signatures + signature, (int)offset);
    }
}

// 1. Index candidates: one thread per (sample, window start).
// Does a window start before p that is clean both in the signature and in the sample at offset o? Each such
// window's lookup finds the occurrence (s, o) once it holds (equal bases where neither has an N), so with
// report_all only the thread of the first one reports it: one row an occurrence, not one a window (a piece of
// 19 bases was reported 8 times at k = 12, a 10 kb signature thousands of times), and the other threads skip
// the verification too. 16 window starts a step: with k <= 13 their bits fit one 32-bit mask read, and the
// reads stay within a record and the word after it.
__device__ bool doubly_clean_before(const u32* __restrict__ sample_nmask, long long sample_word0, long long o,
                                    const u32* __restrict__ sig_nmask, long long sig_word0, int p, int k) {
    for (int b = 0; b < p; b += 16) {
        const u32 sample_n = nmask_at(sample_nmask, sample_word0, o + b);
        const u32 sig_n = nmask_at(sig_nmask, sig_word0, b);
        u32 dirty = 0;
        for (int j = 0; j < k; ++j) dirty |= (sample_n | sig_n) >> j;
        u32 clean = ~dirty & 0xffffu;
        if (p - b < 16) clean &= (1u << (p - b)) - 1u;
        if (clean) return true;
    }
    return false;
}

extern "C" __global__ void scan_index(
    const u64* __restrict__ sample_bases, const u32* __restrict__ sample_nmask,
    const long long* __restrict__ sample_word0, const int* __restrict__ sample_length,
    const u64* __restrict__ sig_bases, const u32* __restrict__ sig_nmask, const long long* __restrict__ sig_word0,
    const int* __restrict__ sig_length, int n_signatures, int k, const u64* __restrict__ bitmap,
    const long long* __restrict__ word_rank, const long long* __restrict__ key_start, const int* __restrict__ entry_sig,
    const int* __restrict__ entry_pos, int report_all, int* best, int* out, unsigned long long* out_count,
    unsigned long long capacity, int sample_first) {
    int sample = sample_first + blockIdx.y;
    long long q = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int size = sample_length[sample];
    if (q + k > size) return;
    long long word0 = sample_word0[sample];
    if (nmask_at(sample_nmask, word0, q) & ((1u << k) - 1u)) return;
    u64 key = bases_at(sample_bases, word0, q) & ((1ull << (2 * k)) - 1ull);
    u64 word = bitmap[key >> 6];
    int bit = (int)(key & 63);
    if (!((word >> bit) & 1ull)) return;
    long long rank = word_rank[key >> 6] + __popcll(word & ((1ull << bit) - 1ull));
    for (long long e = key_start[rank]; e < key_start[rank + 1]; ++e) {
        int s = entry_sig[e];
        long long o = q - entry_pos[e];
        int length = sig_length[s];
        if (o < 0 || o + length > size) continue;
        if (!report_all && o >= *((volatile int*)(best + (long long)sample * n_signatures + s))) continue;
        if (report_all && doubly_clean_before(sample_nmask, word0, o, sig_nmask, sig_word0[s], entry_pos[e], k))
            continue;
        if (occurs(sample_bases, sample_nmask, word0, o, sig_bases, sig_nmask, sig_word0[s], length))
            emit(sample, s, o, report_all, best, n_signatures, out, out_count, capacity);
    }
}

// 2a. Level 0 of the ladder: bit q of a sample's row is set when a clean k-window starts at q.
// One thread per 64 window starts; rows hold ceil(size / 64) + 2 words, the last two always zero.
extern "C" __global__ void clean_windows(const u32* __restrict__ sample_nmask,
                                         const long long* __restrict__ sample_word0,
                                         const int* __restrict__ sample_length, const long long* __restrict__ row0,
                                         const int* __restrict__ row_words, int k, u64* __restrict__ levels,
                                         int sample_first) {
    int sample = sample_first + blockIdx.y;
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= row_words[sample]) return;
    int size = sample_length[sample];
    long long starts = (long long)size - k + 1;  // window starts 0 .. size - k
    long long q0 = 64ll * w;
    u64 value = 0;
    if (q0 < starts) {
        long long word0 = sample_word0[sample];
        long long n32 = (size + 31) >> 5;  // the sample's own 32-base words
        u32 part[4];
        for (int j = 0; j < 4; ++j) {
            long long index = 2ll * w + j;
            part[j] = index < n32 ? sample_nmask[word0 + index] : 0xffffffffu;
        }
        u64 low = (u64)part[0] | ((u64)part[1] << 32);
        u64 high = (u64)part[2] | ((u64)part[3] << 32);
        u64 any = low;
        for (int j = 1; j < k; ++j) any |= (low >> j) | (high << (64 - j));
        value = ~any;
        long long left = starts - q0;
        if (left < 64) value &= (1ull << left) - 1ull;
    }
    levels[row0[sample] + w] = value;
}

__device__ __forceinline__ u64 row_bits(const u64* __restrict__ row, int n_words, long long bit) {
    long long w = bit >> 6;
    int r = (int)(bit & 63);
    if (w >= n_words) return 0;
    u64 low = row[w] >> r;
    if (r && w + 1 < n_words) low |= row[w + 1] << (64 - r);
    return low;
}

// 2b. Level l = level a OR (level b shifted by `shift` positions), within each sample's row.
extern "C" __global__ void dilate(u64* levels, long long level_stride, const long long* __restrict__ row0,
                                  const int* __restrict__ row_words, int level, int first, int second, int shift,
                                  int sample_first) {
    int sample = sample_first + blockIdx.y;
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int n_words = row_words[sample];
    if (w >= n_words) return;
    long long base = row0[sample];
    u64 value = levels[first * level_stride + base + w] |
                row_bits(levels + second * level_stride + base, n_words, 64ll * w + shift);
    if (w >= n_words - 2) value = 0;  // the padding words stay zero
    levels[level * level_stride + base + w] = value;
}

// 2b'. Whether each sample holds an N: only those can leave offsets to the fallback of a signature that has a
// clean run (see below), so the host launches the fallback over them, and over the other samples only for the
// signatures without one. One fallback block per (signature, sample) pair of 500,000 reads and 404 signatures,
// most returning at once, took 0.12 s of block scheduling on an H200.
extern "C" __global__ void samples_with_n(const u32* __restrict__ sample_nmask,
                                          const long long* __restrict__ sample_word0,
                                          const int* __restrict__ sample_length, int n_samples, int* has_n) {
    int sample = blockIdx.x * blockDim.x + threadIdx.x;
    if (sample >= n_samples) return;
    int size = sample_length[sample];
    long long n32 = (size + 31) >> 5;
    long long word0 = sample_word0[sample];
    u32 any = 0;
    for (long long i = 0; i < n32; ++i) {
        u32 word = sample_nmask[word0 + i];
        if (i == n32 - 1 && (size & 31)) word &= (1u << (size & 31)) - 1u;  // bits past the sample's end
        any |= word;
    }
    has_n[sample] = any != 0;
}

// 2c. The fallback: one block per (signature, sample) of the pairs listed (signatures sig_list[x], samples
// sample_list[sample_first + y]); offsets that no clean run of the signature covers are verified base by base.
// First mode looks only left of what the index found.
extern "C" __global__ void scan_fallback(
    const u64* __restrict__ sample_bases, const u32* __restrict__ sample_nmask,
    const long long* __restrict__ sample_word0, const int* __restrict__ sample_length,
    const u64* __restrict__ sig_bases, const u32* __restrict__ sig_nmask, const long long* __restrict__ sig_word0,
    const int* __restrict__ sig_length, int n_signatures, const u64* __restrict__ levels, long long level_stride,
    const long long* __restrict__ row0, const int* __restrict__ row_words, const long long* __restrict__ run_offsets,
    const int* __restrict__ run_starts, const int* __restrict__ run_levels, int report_all, int* best, int* out,
    unsigned long long* out_count, unsigned long long capacity, const int* __restrict__ sig_list,
    const int* __restrict__ sample_list, int sample_first) {
    int s = sig_list[blockIdx.x];
    int sample = sample_list[sample_first + blockIdx.y];
    int size = sample_length[sample];
    int length = sig_length[s];
    if (length > size) return;
    long long limit = (long long)size - length + 1;
    int* slot = best + (long long)sample * n_signatures + s;
    if (!report_all && *slot < limit) limit = *slot;
    long long n_live = (limit + 63) >> 6;
    const u64* rows = levels + row0[sample];
    int n_words = row_words[sample];
    long long first_run = run_offsets[s], last_run = run_offsets[s + 1];
    long long word0 = sample_word0[sample];
    if (last_run > first_run) {
        // In an N-free sample every window is clean, so a signature with a clean run covers every offset
        // (offset + run start + k <= offset + length <= size): nothing is left to the fallback.
        long long n32 = (size + 31) >> 5;
        int any_n = 0;
        for (long long i = threadIdx.x; i < n32; i += blockDim.x) {
            u32 word = sample_nmask[word0 + i];
            if (i == n32 - 1 && (size & 31)) word &= (1u << (size & 31)) - 1u;  // bits past the sample's end
            any_n |= word != 0;
        }
        if (!__syncthreads_or(any_n)) return;
    }
    for (long long w = threadIdx.x; w < n_live; w += blockDim.x) {
        long long base = 64 * w;
        u64 acc = (w == n_live - 1 && (limit & 63)) ? ((1ull << (limit & 63)) - 1ull) : ~0ull;
        for (long long r = first_run; r < last_run && acc; ++r)
            acc &= ~row_bits(rows + run_levels[r] * level_stride, n_words, base + run_starts[r]);
        while (acc) {
            int bit = __ffsll((long long)acc) - 1;
            acc &= acc - 1;
            long long o = base + bit;
            if (!report_all && o >= *((volatile int*)slot)) break;
            if (occurs(sample_bases, sample_nmask, word0, o, sig_bases, sig_nmask, sig_word0[s], length)) {
                emit(sample, s, o, report_all, best, n_signatures, out, out_count, capacity);
                if (!report_all) break;
            }
        }
    }
}
