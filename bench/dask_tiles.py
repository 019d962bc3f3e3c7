"""What one Dask worker's Hamming tiles cost on its GPU, run in this process (no cluster): per tile, cold
(blocks uploaded) and warm (blocks kept on the GPU), and a profile of the warm pass.

Usage::

    python3 bench/dask_tiles.py --rows 200000 --sites 30000 --blocks 3 [--profile]

The blocks are packed into a file in /dev/shm and mapped, as a local cluster's workers get them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))


def main(argv=None) -> int:
    from dask_bench import dna, profiled

    from seqcompare.allpairs import GpuExecutor, PairsReduction
    from seqcompare.distributed import Placement
    from seqcompare.hamming.api import encode_inputs
    from seqcompare.hamming.gpu import RESIDENT
    from seqcompare.hamming.work import HammingWork

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200000)
    parser.add_argument("--sites", type=int, default=30000)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--max-dist", type=int, default=100)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    encoded = encode_inputs(dna(None, args.rows, args.sites))
    n = encoded.n_left
    tile_size = -(-n // args.blocks)
    # The regions and blocks a Dask run would make, placed as a local cluster places them.
    split = HammingWork(encoded, method="auto", device="cuda", cap=args.max_dist + 1).split(1, tile_size)
    placement = Placement(SimpleNamespace(_seqcompare_shared="/dev/shm"))
    start = time.perf_counter()
    arrays = {name: placement.empty(shape, dtype) for name, (shape, dtype) in split.arrays.items()}
    blocks = []
    for block in split.blocks:
        block.fill(arrays[block.array][block.start : block.stop])
        blocks.append(placement.block(arrays[block.array], block.start, block.stop))
    print(f"packed {n} x {args.sites} into {len(blocks)} blocks in {time.perf_counter() - start:.3f} s", flush=True)
    reduction = PairsReduction(args.max_dist, True)

    def run_region(region):
        opened = [blocks[b].open() for b in region.blocks]
        work = split.template.attach(region.spec, opened, [("dask-tiles", b) for b in region.blocks], "cuda")
        return list(GpuExecutor([0]).partials(work, reduction))

    def run_all():
        seconds = []
        for region in split.regions:
            begin = time.perf_counter()
            run_region(region)
            seconds.append(time.perf_counter() - begin)
        return seconds

    run_all()  # kernels load
    RESIDENT.release()
    tiles = [region.spec for region in split.regions]
    for name in ("cold", "warm"):
        seconds = run_all()
        diagonal = [s for s, t in zip(seconds, tiles, strict=True) if t.diagonal]
        whole = [s for s, t in zip(seconds, tiles, strict=True) if not t.diagonal]
        print(f"{name}: {len(tiles)} tiles in {sum(seconds):.3f} s; diagonal {np.round(diagonal, 3).tolist()}, "
              f"whole {np.round(whole, 3).tolist()}", flush=True)  # fmt: skip
    if args.profile:
        print(profiled(run_all, 30, "tottime"), flush=True)
    RESIDENT.release()
    arrays.clear()
    placement.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
