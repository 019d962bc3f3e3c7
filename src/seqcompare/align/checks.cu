// The checks a DP call's result depends on (gpu.py's _Checks), folded over each piece of values as it arrives:
// one launch a piece into two device words by atomics, read back once at the end of the call. The CuPy
// reductions this replaces cost five launches a piece (minimum, maximum, two casts and a stack), about 1.5-2 ms
// of host time in a call of 40,000 DTW pairs of 1,000 (bench/dp_checks_probe.py).

// found[0] = min(found[0], every value), found[1] = max(found[1], every value). 64-bit words, so that int64
// values past the 32-bit range stay visible to the host's test.
template <typename T>
__global__ void fold_range(const T* __restrict__ values, long long n, long long* found) {
    long long low = 0x7fffffffffffffffLL, high = -0x7fffffffffffffffLL - 1;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        long long v = (long long)values[i];
        low = v < low ? v : low;
        high = v > high ? v : high;
    }
    for (int offset = 16; offset; offset >>= 1) {
        long long other_low = __shfl_xor_sync(0xffffffffu, low, offset);
        long long other_high = __shfl_xor_sync(0xffffffffu, high, offset);
        low = other_low < low ? other_low : low;
        high = other_high > high ? other_high : high;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicMin(found, low);
        atomicMax(found + 1, high);
    }
}

// found[0] = 1 where any value is NaN or infinite (every writer writes the same 1).
template <typename T>
__global__ void fold_finite(const T* __restrict__ values, long long n, long long* found) {
    int bad = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        bad |= !isfinite(values[i]);
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0)
        found[0] = 1;
}
