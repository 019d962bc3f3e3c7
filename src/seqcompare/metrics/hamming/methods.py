"""The Hamming methods' names (apart, so that the command line can list them without loading the kernels)."""

METHODS = ("auto", "vector", "matrix", "tiled", "bitpack", "bitmma")
GPU_ONLY_METHODS = ("bitmma",)
METHOD_DESCRIPTIONS = {
    "vector": "every pair compared site by site (Alomairy et al.'s Algorithm 1; the test oracle)",
    "matrix": "one-hot masks and one BLAS GEMM per code over the whole matrix (their Algorithm 2)",
    "tiled": "the matrix method on lower-triangle tiles, masks built per tile, tiles in parallel",
    "bitpack": "bit planes + popcount (Numba, AVX-512 VPOPCNTQ where available; CUDA cores on a GPU)",
    "bitmma": "GPU only: 1-bit tensor-core MMA (AND + POPC) on one-hot code bits",
}
