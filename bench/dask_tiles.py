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

    from seqcompare.distributed import _HammingJob, _hamming_tile, _Placement
    from seqcompare.hamming.encoding import pack_planes
    from seqcompare.allpairs import plan_tiles
    from seqcompare.hamming.gpu import RESIDENT
    from seqcompare.hamming import distance_dtype, encode_inputs

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200000)
    parser.add_argument("--sites", type=int, default=30000)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--max-dist", type=int, default=100)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    rows = dna(None, args.rows, args.sites)
    encoded = encode_inputs(rows)
    n = encoded.n_left
    tile_size = -(-n // args.blocks)
    tiles = [t for t in plan_tiles(n, None, tile_size) if t.n_rows and t.n_cols]
    placement = _Placement(SimpleNamespace(_seqcompare_shared="/dev/shm"))
    start = time.perf_counter()
    planes = placement.empty(encoded.plane_shape("left"), np.uint64)
    pack_planes(encoded.left_values, encoded.space, encoded.table, threads=os.cpu_count(), out=planes)
    blocks = [placement.block(planes, s, min(s + tile_size, n)) for s in range(0, n, tile_size)]
    print(f"packed {n} x {args.sites} into {len(blocks)} blocks in {time.perf_counter() - start:.3f} s", flush=True)
    job = _HammingJob(encoded.space, encoded.table, "auto", args.max_dist + 1, "cuda", "pairs", True,
                      distance_dtype(args.sites), max_dist=args.max_dist, planes=True, n_sites=args.sites,
                      run="dask-tiles")  # fmt: skip

    def ids(tile):
        row = tile.row_start // tile_size
        return (row,) if tile.diagonal else (row, tile.col_start // tile_size)

    def run_all():
        seconds = []
        for tile in tiles:
            begin = time.perf_counter()
            _hamming_tile([blocks[b] for b in ids(tile)], tile, job, ids(tile))
            seconds.append(time.perf_counter() - begin)
        return seconds

    run_all()  # kernels load
    RESIDENT.release()
    for name in ("cold", "warm"):
        seconds = run_all()
        diagonal = [s for s, t in zip(seconds, tiles, strict=True) if t.diagonal]
        whole = [s for s, t in zip(seconds, tiles, strict=True) if not t.diagonal]
        print(f"{name}: {len(tiles)} tiles in {sum(seconds):.3f} s; diagonal {np.round(diagonal, 3).tolist()}, "
              f"whole {np.round(whole, 3).tolist()}", flush=True)  # fmt: skip
    if args.profile:
        print(profiled(run_all, 30, "tottime"), flush=True)
    RESIDENT.release()
    del planes
    placement.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
