// CCC / DUO on NVIDIA GPUs: values and thresholds where the tallies are (compiled at run time by CuPy).
//
// The products T(S) of allele-count planes come from the 1-bit tensor-core GEMM of hamming.cu (matrix mode,
// one int32 matrix per product kind). These kernels turn them into 2x2 tables and CCC/DUO values with the same
// sequence of double operations as seqcompare.ccc.formulas.values (compiled with --fmad=false, so no
// contraction changes a rounding), apply CoMet's thresholds and append the entries that pass.
//
// Products of a block (rows r0.., every column): t_xy[(row - r0) * ld + col] = sum over fields of x of the row
// vector R times y of the column vector Q (x, y = a: allele-1 count, d: defined), from GEMMs whose left operand
// holds rows R. The pair is (Q, R) with Q < R. Without sparse data only t_aa is stored: d.d is the field count
// and the mixed products are the vectors' allele-1 totals.

typedef unsigned long long u64;
typedef unsigned int u32;

#define FULL_MASK 0xffffffffu

// Per vector and allele bit b: f[2v + b] = s_b / (C c) and w[2v + b] = 1 - gamma f[2v + b], computed on the host
// with the formulas' own operations (the host's values are the reference).
//
// One entry: M * (r / total) * w_lo * w_hi, multiplied left to right, where w_lo belongs to the operand with the
// smaller frequency: the formulas' (1 - g f_lo) (1 - g f_hi).
__device__ __forceinline__ double ccc_value(long long r, long long total, double fq, double fr, double wq, double wr,
                                            double multiplier) {
    bool q_low = fq <= fr;
    double value = multiplier * ((double)r / (double)total);
    value = value * (q_low ? wq : wr);
    value = value * (q_low ? wr : wq);
    return value;
}

// Grid: x over 256-column strips, y over the block's rows; a strip wholly at or above the diagonal exits.
extern "C" __global__ void ccc2_threshold(const int* __restrict__ t_dd, const int* __restrict__ t_da,
                                          const int* __restrict__ t_ad, const int* __restrict__ t_aa, long long ld,
                                          int r0, int rows, int n, int sparse, int n_fields, int c_bits,
                                          const long long* __restrict__ defined, const long long* __restrict__ ones,
                                          const double* __restrict__ freq, const double* __restrict__ weight,
                                          double multiplier, double t0, double t1, double t2, double combined,
                                          u32* __restrict__ out_q, u32* __restrict__ out_r,
                                          unsigned char* __restrict__ out_entry, double* __restrict__ out_value,
                                          unsigned long long* __restrict__ count, unsigned long long capacity) {
    int local = blockIdx.y;
    int r = r0 + local;
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x * blockDim.x >= r) return;  // whole warps leave together: the strip starts at or past r
    const double limits[3] = {t0, t1, t2};
    bool inside = local < rows && r < n && q < r;
    double v[4] = {0.0, 0.0, 0.0, 0.0};
    bool keep[4] = {false, false, false, false};
    if (inside) {
        long long at = (long long)local * ld + q;
        long long aa = t_aa[at];
        long long dd, d_a, a_d;  // d_a: Q defined x R's count; a_d: Q's count x R defined
        if (sparse) {
            dd = t_dd[at];
            d_a = t_ad[at];
            a_d = t_da[at];
        } else {
            dd = n_fields;
            d_a = ones[r];
            a_d = ones[q];
        }
        long long C = c_bits;
        long long table[4];
        table[3] = aa;                                   // Q 1, R 1
        table[2] = C * a_d - aa;                         // Q 1, R 0
        table[1] = C * d_a - aa;                         // Q 0, R 1
        table[0] = C * C * dd - C * a_d - C * d_a + aa;  // Q 0, R 0
        long long total = table[0] + table[1] + table[2] + table[3];
        bool zero = total == 0 || defined[q] == 0 || defined[r] == 0;
        for (int e = 0; e < 4; ++e) {
            int bq = e >> 1, br = e & 1;
            v[e] = zero ? 0.0
                        : ccc_value(table[e], total, freq[2 * q + bq], freq[2 * r + br], weight[2 * q + bq],
                                    weight[2 * r + br], multiplier);
            keep[e] = v[e] > limits[bq + br];
        }
        if (v[0] > 0.0 && v[3] > 0.0 && v[0] + v[3] > combined) keep[0] = keep[3] = true;
    }
    for (int e = 0; e < 4; ++e) {
        u32 ballot = __ballot_sync(FULL_MASK, keep[e]);
        if (ballot == 0) continue;
        int lane = threadIdx.x & 31;
        unsigned long long base = 0;
        if (lane == 0) base = atomicAdd(count, (unsigned long long)__popc(ballot));
        base = __shfl_sync(FULL_MASK, base, 0);
        if (keep[e]) {
            unsigned long long slot = base + __popc(ballot & ((1u << lane) - 1u));
            if (slot < capacity) {
                out_q[slot] = (u32)q;
                out_r[slot] = (u32)r;
                out_entry[slot] = (unsigned char)e;
                out_value[slot] = v[e];
            }
        }
    }
}
