"""Kernel-only rates of the DP kernels against the registers each thread may hold (``__launch_bounds__``'s
minimum blocks per multiprocessor, ``-DDP_MIN_BLOCKS``): 40,000 pairs of 1,000 already on the GPU, CUDA events
around the launch. Chooses dp.cu's default. Usage: ``python bench/dp_occupancy.py [--blocks 1,3,4,5,6]``."""

from __future__ import annotations

import argparse
import os

import numpy as np


def main(argv=None) -> int:
    import cupy

    from seqcompare.align import gpu

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", default="1,3,4,5,6")
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--length", type=int, default=1000)
    args = parser.parse_args(argv)
    pairs, length = args.pairs, args.length
    rng = np.random.default_rng(2)
    offsets = cupy.asarray(np.arange(pairs + 1, dtype=np.int64) * length)
    index = cupy.arange(pairs, dtype=cupy.int64)
    sub = cupy.zeros(25, cupy.int32)
    source = open(gpu._SOURCE).read()
    for name, kind, value, stored, dtype in [("dtw float32", 1, "float", "float", np.float32),
                                             ("dtw int32", 1, "int", "int", np.int32),
                                             ("dtw int16", 1, "int", "short", np.int16),
                                             ("nw codes (32-bit)", 0, "int", "unsigned char", np.uint8)]:  # fmt: skip
        high = 4 if kind == 0 else 1000
        t = cupy.asarray(rng.integers(0, high, pairs * length).astype(dtype))
        q = cupy.asarray(rng.integers(0, high, pairs * length).astype(dtype))
        out = cupy.empty(pairs, {"int": np.int32, "float": np.float32}[value])
        for blocks in [int(b) for b in args.blocks.split(",")]:
            kernel_name = f"dp_warp<32,{kind},{value},{stored}>"
            module = cupy.RawModule(code=source, options=("-std=c++17", f"-DDP_MIN_BLOCKS={blocks}"),
                                    name_expressions=[kernel_name])  # fmt: skip
            kernel = module.get_function(kernel_name)
            grid = int(min(-(-pairs // 4), 132 * 16))
            border = cupy.empty(1, out.dtype)
            arguments = (t, offsets, q, offsets, index, index, np.int32(pairs), np.int32(0), np.int32(1), np.int32(1),
                         np.int32(1), np.int32(0), np.int32(0), np.int32(0), sub, border, np.int64(0), out)  # fmt: skip
            kernel((grid,), (128,), arguments)
            times = []
            for _ in range(5):
                start, stop = cupy.cuda.Event(), cupy.cuda.Event()
                start.record()
                kernel((grid,), (128,), arguments)
                stop.record()
                stop.synchronize()
                times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
            print(f"{name:20s} min blocks {blocks}: {kernel.num_regs} registers, {kernel.local_size_bytes} B local, "
                  f"{pairs * length * length / min(times) / 1e9:.0f} GCUPS", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
