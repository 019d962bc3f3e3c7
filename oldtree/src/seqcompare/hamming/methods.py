"""The Hamming methods: their names (apart from the kernels, so that the command line lists them without loading
anything) and which one ``auto`` stands for on each device."""

METHODS = ("auto", "vector", "matrix", "tiled", "bitpack", "sparse", "bitmma")
GPU_ONLY_METHODS = ("bitmma",)
METHOD_DESCRIPTIONS = {
    "vector": "every pair compared site by site (Alomairy et al.'s Algorithm 1; the test oracle)",
    "matrix": "one-hot masks and one BLAS GEMM per code over the whole matrix (their Algorithm 2)",
    "tiled": "the matrix method on lower-triangle tiles, masks built per tile, tiles in parallel",
    "bitpack": "bit planes + popcount (Numba, AVX-512 VPOPCNTQ where available; CUDA cores on a GPU)",
    "sparse": "CPU: sites few rows differ from the consensus at as lists of those rows, the rest as bit planes "
    "(close genomes: only pairs that differ from the consensus at the same site cost work)",
    "bitmma": "GPU only: 1-bit tensor-core MMA (AND + POPC) on one-hot code bits",
}

GPU_METHODS = ("bitmma", "matrix", "bitpack")
MAX_MMA_CODES = 32  # codes the tensor-core paths handle (one 64-bit word per code and 64 sites)


def resolve_method(method: str, device: str, n_codes: int = 5) -> str:
    """The method ``method`` stands for on ``device`` (``"cpu"`` or ``"cuda"``; see
    :func:`seqcompare.cuda.resolve_device` for ``"auto"``), for a code space of ``n_codes`` codes.

    On the CPU ``auto`` is ``bitpack`` here (:func:`seqcompare.hamming.work.choose_method` takes ``sparse`` for
    uncapped problems of rows it can list), 27-35x faster than the next method in the method table of
    bench/RESULTS.md (3 bits move per DNA site instead of one float per code and site). On a GPU it is
    ``bitmma`` (8 bit-operations per DNA pair-site on tensor cores that do ~10^16 of them per second), unless the
    code space has more than 32 present codes, where ``bitpack`` (planes and popcount on CUDA cores) takes over.

    Raises
    ------
    ValueError
        For an unknown method, a GPU-only method on the CPU, or a method the GPU cannot run for these codes.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if device == "cuda":
        if method == "auto":
            return "bitmma" if n_codes - 1 <= MAX_MMA_CODES else "bitpack"
        if method not in GPU_METHODS:
            raise ValueError(f"method {method!r} does not run on a GPU; use one of auto, {', '.join(GPU_METHODS)}")
        if method in ("bitmma", "matrix") and n_codes - 1 > MAX_MMA_CODES:
            raise ValueError(f"method {method!r} handles at most {MAX_MMA_CODES} distinct values; use 'bitpack'")
        return method
    if method in GPU_ONLY_METHODS:
        raise ValueError(f"method {method!r} runs on a GPU only (device='cuda')")
    return "bitpack" if method == "auto" else method


def gpu_tile_size(method: str, tile_size: int | None = None) -> int:
    """Engine tiles on the GPU: big enough to fill the device, a multiple of every kernel's block edge (128)."""
    if tile_size is not None:
        return -(-tile_size // 128) * 128
    return 4096 if method == "matrix" else 8192
