"""What the engines share on NVIDIA GPUs (``pip install 'seqcompare[cuda]'``): CuPy access and device discovery,
the cache of run-time compiled modules, page-locked host memory (:mod:`.runtime`), the 1-bit tensor-core GEMM
(``bitgemm.cuh`` and its one launcher, :mod:`.bitgemm`), and the warp-aggregated append device helper
(``warp_append.cuh``). Each engine's own kernels live in its package (``hamming/hamming.cu``, ``ccc/ccc.cu``,
``scan/scan.cu``, ``align/dp.cu``). Importing this package imports no CuPy.
"""

from .runtime import (
    available,
    device_count,
    free_bytes,
    locked_empty,
    module,
    pinned_empty,
    prepare_narrowing,
    require_cupy,
    require_gpu_quickly,
    resolve_device,
)

__all__ = ["available", "device_count", "free_bytes", "locked_empty", "module", "pinned_empty", "prepare_narrowing",
           "require_cupy", "require_gpu_quickly", "resolve_device"]  # fmt: skip
