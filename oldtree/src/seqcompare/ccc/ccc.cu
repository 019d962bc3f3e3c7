// CCC / DUO on NVIDIA GPUs: values and thresholds where the tallies are (compiled at run time by CuPy).
//
// The products T(S) of allele-count planes come from seqcompare's shared 1-bit tensor-core GEMM (cuda/bitgemm.cuh,
// launched by seqcompare.cuda.bitgemm) in matrix mode,
// one int32 matrix per product kind (without missing data one kind, a.a, makes the whole table). The kernels
// here make the tables and values with the sequence of double operations of CoMet's formulas.hh, which
// seqcompare.ccc.formulas.values also follows (compiled with --fmad=false, so no contraction changes a
// rounding), and append the entries that pass CoMet's thresholds. (Finishing in the GEMM's epilogue instead measured slower: 51 ms against 33 + 7 ms for 32,768 x
// 32,768 without missing data; the epilogue's double work stalls the tensor cores.)
//
// Products of a block (rows r0.., every column): t_xy[(row - r0) * ld + col] = sum over fields of x of the row
// vector R times y of the column vector Q (x, y = a: allele-1 count, d: defined), from GEMMs whose left operand
// holds rows R. The pair is (Q, R) with Q < R. Without sparse data d.d is the field count and the mixed
// products are the vectors' allele-1 totals.

#include "warp_append.cuh"

// CoMet's thresholds compare single-precision values with double thresholds: keep when (float)value > t; the
// combined test adds the two floats in single precision.
__device__ __forceinline__ bool passes(double value, double limit) { return (double)(float)value > limit; }
__device__ __forceinline__ bool passes_combined(double low, double high, double combined) {
    float a = (float)low, b = (float)high;
    return a > 0.0f && b > 0.0f && (double)(a + b) > combined;
}

// The values follow CoMet's formulas.hh operation by operation (this file is compiled with --fmad=false, so no
// contraction changes a rounding): frequencies f = ((1 / C) * recip_c) * s, the joint frequency recip_sum * r,
// then M * f_joint * (1 - g f_lo) * (1 - g f_hi), multiplied left to right over the ascending frequencies.
// Non-sparse values, and 3-way values, take per-vector frequencies made on the host the same way
// (seqcompare.ccc.formulas.vector_frequencies); 2-way sparse values derive both reciprocals from one
// division per pair, as CoMet does.
struct ValueRule {
    int value_sparse;      // CoMet's sparse formulas (reciprocals per pair) rather than 1 / m
    double inv_c;          // 1 / C
    double recip_sum;      // non-sparse: (1 / C**way) * (1 / m)
    double multiplier, gamma;
};

// The four values of pair (q, r) from its products, and which of them pass the thresholds. A screen with one
// division per pair comes first: its values are within a few units in the last place of the exact ones, so
// |screened| * (1 + 1e-6) bounds the single-precision value the threshold sees, and a pair whose bounds all fail
// cannot pass (most pairs, for useful thresholds); only the others get the exact sequence of operations.
__device__ __forceinline__ void pair_entries(long long aa, long long a_d, long long d_a, long long dd, int q, int r,
                                             int c_bits, const long long* __restrict__ defined,
                                             const long long* __restrict__ ones, const double* __restrict__ freq,
                                             const double* __restrict__ weight, const ValueRule& rule,
                                             const double (&limits)[3], double combined, double (&v)[4],
                                             bool (&keep)[4]) {
    long long C = c_bits;
    long long table[4];
    table[3] = aa;                                   // Q 1, R 1
    table[2] = C * a_d - aa;                         // Q 1, R 0
    table[1] = C * d_a - aa;                         // Q 0, R 1
    table[0] = C * C * dd - C * a_d - C * d_a + aa;  // Q 0, R 0
    long long total = table[0] + table[1] + table[2] + table[3];
    bool zero = total == 0 || defined[q] == 0 || defined[r] == 0;
    double scale = zero ? 0.0 : rule.multiplier / (double)total;
    double bound[4];
    bool maybe = false;
    for (int e = 0; e < 4; ++e) {
        int bq = e >> 1, br = e & 1;
        bound[e] = zero ? 1e-300  // the value is 0: passes only a negative threshold
                        : fabs(scale * (double)table[e] * weight[2 * q + bq] * weight[2 * r + br]) * (1.0 + 1e-6) + 1e-300;
        maybe = maybe || bound[e] > limits[bq + br];
    }
    maybe = maybe || bound[0] + bound[3] > combined;
    for (int e = 0; e < 4; ++e) {
        v[e] = 0.0;
        keep[e] = false;
    }
    if (!maybe) return;
    double recip_q = 0.0, recip_r = 0.0, recip_sum = rule.recip_sum;
    if (rule.value_sparse && !zero) {
        double f_cq = (double)defined[q], f_cr = (double)defined[r], f_total = (double)total;
        double c_min = f_cq < f_cr ? f_cq : f_cr, c_max = f_cq < f_cr ? f_cr : f_cq;
        double recip = 1.0 / (c_min * c_max * f_total);
        recip_q = f_cr * f_total * recip;
        recip_r = f_cq * f_total * recip;
        recip_sum = c_min * c_max * recip;
    }
    for (int e = 0; e < 4; ++e) {
        int bq = e >> 1, br = e & 1;
        double value = 0.0;
        if (!zero) {
            double fq, fr;
            if (rule.value_sparse) {
                long long sq = bq ? ones[q] : C * defined[q] - ones[q];
                long long sr = br ? ones[r] : C * defined[r] - ones[r];
                fq = (rule.inv_c * recip_q) * (double)sq;
                fr = (rule.inv_c * recip_r) * (double)sr;
            } else {
                fq = freq[2 * q + bq];
                fr = freq[2 * r + br];
            }
            double f_low = fq < fr ? fq : fr, f_high = fq < fr ? fr : fq;
            value = rule.multiplier * (recip_sum * (double)table[e]);
            value = value * (1.0 - rule.gamma * f_low);
            value = value * (1.0 - rule.gamma * f_high);
        }
        v[e] = value;
        keep[e] = passes(value, limits[bq + br]);
    }
    if (passes_combined(v[0], v[3], combined)) keep[0] = keep[3] = true;
}

struct Entries {
    u32* q;
    u32* r;
    unsigned char* entry;
    double* value;
    unsigned long long* count;
    unsigned long long capacity;
};

// Append the kept entries of one pair per lane (every lane must call this: the append votes per warp).
__device__ __forceinline__ void emit_entries(const Entries& out, int q, int r, const double (&v)[4],
                                             const bool (&keep)[4]) {
    if (!__any_sync(FULL_MASK, keep[0] || keep[1] || keep[2] || keep[3])) return;
    for (int e = 0; e < 4; ++e) {
        long long slot = warp_append_slot(keep[e], out.count, out.capacity);
        if (slot >= 0) {
            out.q[slot] = (u32)q;
            out.r[slot] = (u32)r;
            out.entry[slot] = (unsigned char)e;
            out.value[slot] = v[e];
        }
    }
}

#define ENTRY_PARAMS                                                                                          \
    u32 *out_q, u32 *out_r, unsigned char *out_entry, double *out_value, unsigned long long *count,          \
        unsigned long long capacity
#define ENTRY_ARGS {out_q, out_r, out_entry, out_value, count, capacity}

// Grid: x over 256-column strips, y over the block's rows; a strip wholly at or above the diagonal exits.
// sparse: the products include d (missing data present); value_sparse: CoMet's sparse value formulas (asked for,
// whether or not any genotype is missing).
extern "C" __global__ void ccc2_threshold(const int* __restrict__ t_dd, const int* __restrict__ t_da,
                                          const int* __restrict__ t_ad, const int* __restrict__ t_aa, long long ld,
                                          int r0, int rows, int n, int sparse, int n_fields, int c_bits,
                                          const long long* __restrict__ defined, const long long* __restrict__ ones,
                                          const double* __restrict__ freq, const double* __restrict__ weight,
                                          const float2* __restrict__ weight32, int value_sparse, double recip_sum,
                                          double multiplier, double gamma, double t0, double t1, double t2,
                                          double combined, ENTRY_PARAMS) {
    const Entries out = ENTRY_ARGS;
    const ValueRule rule = {value_sparse, 1.0 / (double)c_bits, recip_sum, multiplier, gamma};
    int local = blockIdx.y;
    int r = r0 + local;
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x * blockDim.x >= r) return;  // whole warps leave together: the strip starts at or past r
    const double limits[3] = {t0, t1, t2};
    double v[4] = {0.0, 0.0, 0.0, 0.0};
    bool keep[4] = {false, false, false, false};
    if (local < rows && r < n && q < r) {
        long long at = (long long)local * ld + q;
        if (sparse) {
            pair_entries(t_aa[at], t_da[at], t_ad[at], t_dd[at], q, r, c_bits, defined, ones, freq, weight, rule,
                         limits, combined, v, keep);
        } else {
            // Without missing data: a float screen of the four values first (32-bit integer tables, float
            // weights: within 1e-6 of the exact values, so a bound with a 1e-4 margin is safe).
            int aa = t_aa[at], sq = (int)ones[q], sr = (int)ones[r], C = c_bits;
            float t3 = (float)aa, t2 = (float)(C * sq - aa), t1 = (float)(C * sr - aa);
            float t0 = (float)(C * C * n_fields - C * sq - C * sr + aa);
            float scale = (float)multiplier / (float)(C * C * n_fields);
            float2 wq = weight32[q], wr = weight32[r];
            float b0 = fabsf(scale * t0 * wq.x * wr.x), b1 = fabsf(scale * t1 * wq.x * wr.y);
            float b2 = fabsf(scale * t2 * wq.y * wr.x), b3 = fabsf(scale * t3 * wq.y * wr.y);
            const float margin = 1.0001f;
            bool maybe = n_fields == 0 || b0 * margin + 1e-30f > limits[0] || b1 * margin + 1e-30f > limits[1] ||
                         b2 * margin + 1e-30f > limits[1] || b3 * margin + 1e-30f > limits[2] ||
                         (b0 + b3) * margin + 1e-30f > combined;
            if (maybe)
                pair_entries(aa, ones[q], ones[r], n_fields, q, r, c_bits, defined, ones, freq, weight, rule, limits,
                             combined, v, keep);
        }
    }
    emit_entries(out, q, r, v, keep);
}

// ---------------------------------------------------------------------------------------------------------
// 3-way, one batch of pivots i at a time (CoMet's 2-step idea on the 1-bit path): the right operand's rows are
// vector j's planes ANDed with pivot i's, so the GEMM of rows k against them sums x_i y_j z_k over the fields.

// out[(b * n_rows + j) * row_words + s * words + w] = plane[seg_pivot[s]][i0 + b][w] & plane[seg_row[s]][j][w].
extern "C" __global__ void pivot_operand(const u64* __restrict__ planes, int n_rows, int words, int row_words,
                                         const int* __restrict__ seg_pivot, const int* __restrict__ seg_row,
                                         int n_segments, int i0, int batch, u64* __restrict__ out) {
    long long total = (long long)batch * n_rows * row_words;
    for (long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x; at < total;
         at += (long long)gridDim.x * blockDim.x) {
        int c = (int)(at % row_words);
        long long row = at / row_words;
        int j = (int)(row % n_rows), b = (int)(row / n_rows);
        int s = c / words, w = c % words;
        u64 value = 0;
        if (s < n_segments) {
            const u64* pivot = planes + ((long long)seg_pivot[s] * n_rows + i0 + b) * words;
            const u64* other = planes + ((long long)seg_row[s] * n_rows + j) * words;
            value = pivot[w] & other[w];
        }
        out[at] = value;
    }
}

// Triples (i, j, k), i = i0 + b < j < k < n, from products t[S][k * ld + b * n_rows + j] (S bit 4: i counts
// alleles, 2: j, 1: k; a null t[S] is taken from pair products aa (n x n) and the totals instead, which is
// exact without missing data). Values as pair_entries makes them, with three sorted operands (CoMet: per-vector
// reciprocals and 1 / total per triple when sparse); thresholds by count of H bits.
extern "C" __global__ void ccc3_threshold(const int* const* __restrict__ t, const int* __restrict__ aa, long long ld,
                                          int n_rows, int i0, int batch, int n, int n_fields, int c_bits,
                                          const long long* __restrict__ defined, const long long* __restrict__ ones,
                                          const double* __restrict__ freq, const double* __restrict__ weight,
                                          const float2* __restrict__ weight32, int value_sparse, double recip_sum,
                                          double multiplier, double t0, double t1, double t2, double t3,
                                          double combined, u32* __restrict__ out_i, u32* __restrict__ out_j,
                                          u32* __restrict__ out_k, unsigned char* __restrict__ out_entry,
                                          double* __restrict__ out_value, unsigned long long* __restrict__ count,
                                          unsigned long long capacity) {
    int k = blockIdx.y;
    long long column = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int b = (int)(column / n_rows), j = (int)(column % n_rows);
    int i = i0 + b;
    // A block covers one pivot and 256 consecutive j (n_rows is a multiple of 256): leave when none is in (i, k).
    int j_first = (int)(((long long)blockIdx.x * blockDim.x) % n_rows);
    if (j_first >= k || j_first + (int)blockDim.x <= i + 1) return;
    bool inside = b < batch && i < j && j < k && k < n;
    const double limits[4] = {t0, t1, t2, t3};
    double v[8];
    bool keep[8];
    for (int e = 0; e < 8; ++e) {
        v[e] = 0.0;
        keep[e] = false;
    }
    if (inside) {
        long long products[8];
        long long at = (long long)k * ld + column;
        for (int s = 0; s < 8; ++s) products[s] = t[s] ? (long long)t[s][at] : 0;
        if (!t[0]) {  // no missing data
            products[6] = aa[(long long)i * n_rows + j];
            products[5] = aa[(long long)i * n_rows + k];
            products[3] = aa[(long long)k * n_rows + j];  // symmetric; this way round the loads coalesce
            products[4] = ones[i];
            products[2] = ones[j];
            products[1] = ones[k];
            products[0] = n_fields;
        }
        // Tables from products one operand at a time: with T[S | bit] (a) and T[S] (d) for that operand, the
        // allele-1 entry is a and the allele-0 entry C d - a. Entries never exceed the total, which the host
        // keeps below 2**31.
        int table[8];
        for (int s = 0; s < 8; ++s) table[s] = (int)products[s];
        for (int bit = 4; bit >= 1; bit >>= 1)
            for (int s = 0; s < 8; ++s)
                if (s & bit) {
                    int with_a = table[s], with_d = table[s ^ bit];
                    table[s ^ bit] = c_bits * with_d - with_a;
                }
        long long total = 0;
        for (int e = 0; e < 8; ++e) total += table[e];
        bool zero = total == 0 || defined[i] == 0 || defined[j] == 0 || defined[k] == 0;
        int vec[3] = {i, j, k};
        // Float screen (see ccc2_threshold): skip the exact values when no bound can pass.
        bool maybe = zero;
        if (!zero) {
            float scale = (float)multiplier / (float)total;
            float2 wi = weight32[i], wj = weight32[j], wk = weight32[k];
            float bound[8];
            for (int e = 0; e < 8; ++e) {
                bound[e] = fabsf(scale * (float)table[e] * ((e & 4) ? wi.y : wi.x) * ((e & 2) ? wj.y : wj.x) *
                                 ((e & 1) ? wk.y : wk.x)) * 1.0001f + 1e-30f;
                maybe = maybe || bound[e] > limits[__popc(e)];
            }
            maybe = maybe || bound[0] + bound[7] > combined;
        }
        for (int e = 0; e < 8 && maybe; ++e) {
            double f[3], w[3];
            for (int x = 0; x < 3; ++x) {
                int bit = (e >> (2 - x)) & 1;
                f[x] = freq[2 * vec[x] + bit];
                w[x] = weight[2 * vec[x] + bit];
            }
            // ascending by frequency (ties keep equal weights, so their order does not matter)
            for (int a = 0; a < 2; ++a)
                for (int c = 0; c < 2 - a; ++c)
                    if (f[c] > f[c + 1]) {
                        double tf = f[c], tw = w[c];
                        f[c] = f[c + 1];
                        w[c] = w[c + 1];
                        f[c + 1] = tf;
                        w[c + 1] = tw;
                    }
            double value = 0.0;
            if (!zero) {
                // CoMet's 3-way rule: sparse, recip_sum = 1 / total per triple; non-sparse, (1 / C**3) (1 / m).
                double joint = value_sparse ? 1.0 / (double)total : recip_sum;
                value = multiplier * (joint * (double)table[e]);
                value = value * w[0];
                value = value * w[1];
                value = value * w[2];
            }
            v[e] = value;
            keep[e] = passes(value, limits[__popc(e)]);
        }
        if (passes_combined(v[0], v[7], combined)) keep[0] = keep[7] = true;
    }
    bool any = false;
    for (int e = 0; e < 8; ++e) any = any || keep[e];
    if (!__any_sync(FULL_MASK, any)) return;
    for (int e = 0; e < 8; ++e) {
        long long slot = warp_append_slot(keep[e], count, capacity);
        if (slot >= 0) {
            out_i[slot] = (u32)i;
            out_j[slot] = (u32)j;
            out_k[slot] = (u32)k;
            out_entry[slot] = (unsigned char)e;
            out_value[slot] = v[e];
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Bit planes from CoMet codes (uint8, one per field), on the device: P = [a >= 1], Q = [a == 2], D = [defined],
// where a is the allele-1 count (CCC: both bits of the code; DUO: the low bit; 0 where missing), plus each
// vector's defined fields and allele-1 total. One thread per (vector, 64-field word).
extern "C" __global__ void planes_from_codes(const unsigned char* __restrict__ codes, int n, long long m, int words,
                                             int n_rows, int duo, int sparse, u64* __restrict__ planes,
                                             unsigned long long* __restrict__ defined,
                                             unsigned long long* __restrict__ ones) {
    long long cell = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= (long long)n * words) return;
    int row = (int)(cell / words), w = (int)(cell % words);
    const unsigned char* code = codes + (long long)row * m + 64LL * w;
    int count = (int)min(64LL, m - 64LL * w);
    u64 p = 0, q = 0, d = 0;
    unsigned int total = 0, present = 0;
    for (int f = 0; f < count; ++f) {
        unsigned int c = code[f];
        bool missing = sparse && c == 2;
        unsigned int a = missing ? 0 : (duo ? (c & 1) : (c & 1) + ((c >> 1) & 1));
        p |= (u64)(a >= 1) << f;
        q |= (u64)(a == 2) << f;
        d |= (u64)(!missing) << f;
        total += a;
        present += !missing;
    }
    long long plane = (long long)n_rows * words;
    planes[(long long)row * words + w] = p;
    planes[plane + (long long)row * words + w] = q;
    planes[2 * plane + (long long)row * words + w] = d;
    atomicAdd(ones + row, (unsigned long long)total);
    atomicAdd(defined + row, (unsigned long long)present);
}
