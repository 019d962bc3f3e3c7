"""The Hamming methods' names (apart, so that the command line can list them without loading the kernels)."""

METHODS = ("auto", "vector", "matrix", "tiled", "bitpack", "bitmma")
GPU_ONLY_METHODS = ("bitmma",)
METHOD_DESCRIPTIONS = {
    "vector": "Algorithm 1: every pair compared site by site (the oracle)",
    "matrix": "Algorithm 2: one-hot masks and one BLAS GEMM per code over the whole matrix",
    "tiled": "Algorithm 2 on lower-triangle tiles, masks built per tile, tiles in parallel",
    "bitpack": "bit planes + popcount (Numba, AVX-512 VPOPCNTQ where available; CUDA cores on a GPU)",
    "bitmma": "GPU only: 1-bit tensor-core MMA (AND + POPC) on one-hot code bits",
}
