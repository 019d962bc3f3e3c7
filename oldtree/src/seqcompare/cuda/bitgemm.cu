// Instantiates the shared 1-bit GEMM kernel (bitgemm.cuh) for seqcompare.cuda.bitgemm's configurations.
#include "bitgemm.cuh"
