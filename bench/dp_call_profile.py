"""Where one GPU DTW call's host time goes (issue 17, goal 1; a labelled probe): cProfile over ``--calls`` calls of
``seqcompare.dtw(a, b, device="cuda")`` on 40,000 int32 pairs of 1,000 from ordinary arrays, after a warm-up,
sorted by each function's own time::

    python3 bench/dp_call_profile.py [--calls 5] [--dtype int32] [--top 35]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import numpy as np


def main(argv=None) -> None:
    import seqcompare
    import seqcompare.align.gpu as gpu

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=5)
    parser.add_argument("--dtype", default="int32")
    parser.add_argument("--top", type=int, default=35)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 1000, (40000, 1000)).astype(args.dtype) for _ in range(2))
    for _ in range(2):
        seqcompare.dtw(a, b, device="cuda")
    profile = cProfile.Profile()
    for _ in range(args.calls):
        gpu.wait_for_unlocking()  # each call alone, as a caller who does something with the scores first
        profile.enable()
        seqcompare.dtw(a, b, device="cuda")
        profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
