// Shared device helpers of seqcompare's CUDA kernels: basic types, and the warp-aggregated append that every
// kernel selecting results on the device (Hamming pairs, CCC entries) uses to write them out compactly.
#pragma once

typedef unsigned long long u64;
typedef unsigned int u32;

#define FULL_MASK 0xffffffffu

// A slot in an output list for each lane that keeps an item, with one atomicAdd per warp instead of one per item.
// Every lane of the warp must call it (it votes). Returns the slot, or -1 for a lane that keeps nothing or whose
// slot is past `capacity`; `count` still counts every kept item, so the caller can size a second run exactly.
__device__ __forceinline__ long long warp_append_slot(bool keep, unsigned long long* count,
                                                      unsigned long long capacity) {
    u32 ballot = __ballot_sync(FULL_MASK, keep);
    if (ballot == 0) return -1;
    int lane = threadIdx.x & 31;
    unsigned long long base = 0;
    if (lane == 0) base = atomicAdd(count, (unsigned long long)__popc(ballot));
    base = __shfl_sync(FULL_MASK, base, 0);
    if (!keep) return -1;
    unsigned long long slot = base + __popc(ballot & ((1u << lane) - 1u));
    return slot < capacity ? (long long)slot : -1;
}
