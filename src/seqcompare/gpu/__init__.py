"""NVIDIA GPU backends (the ``[cuda]`` extra: CuPy).

Nothing here imports CuPy until a GPU function is called, so ``import seqcompare`` and every CPU path work
without it. :func:`available` says whether a CUDA device can be used.
"""

from __future__ import annotations

from ._runtime import available, device_count, require_cupy

__all__ = ["available", "device_count", "require_cupy"]
