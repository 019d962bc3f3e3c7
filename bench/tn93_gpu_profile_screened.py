"""Where the GPU's TN93 links time goes once the model runs on the device (issue 18), a labelled profile.

Usage: ``python bench/tn93_gpu_profile_screened.py N M`` on a GPU machine (``simulate_pol(N, M)``, TN93 <= 0.015,
warm, medians of 3, alignment in memory). It times ``run_model`` into pairs with the screen (the real path),
then takes away the selection of pairs (a reduction that keeps nothing), then everything but the seven 1-bit
products (the ``pair_stats`` kernel: counts, model and the list of pairs near the threshold). The monkeypatching
is for this profile only.
"""

import sys
import time

import seqcompare
from seqcompare.allpairs import PairsReduction
from seqcompare.hamming import pairstats, statsgpu
from seqcompare.hamming.api import encode_site_codes, run_model
from seqcompare.simulate import simulate_pol

n, m = (int(a) for a in sys.argv[1:3])
names, seqs = simulate_pol(n, m, seed=0)
codes = encode_site_codes(seqcompare.Alignment(names, seqs), None, "tn93", False, "")
print(f"{n} x {m}: {n * (n - 1) // 2} pairs, ambiguity sites per sequence "
      f"{codes.special_sites('left', 'resolve')[0][-1] / n:.1f}", flush=True)


class Discard:
    kind = "discard"
    accepts = ("discard",)

    def reduce(self, tile, block):
        import cupy
        cupy.cuda.get_current_stream().synchronize()
        return None

    def merge(self, partial):
        pass

    def finish(self):
        return None


def timed(label, reduction):
    runs = []
    for _ in range(4):
        start = time.perf_counter()
        result = run_model(codes, reduction(), model="tn93", device="cuda", screen=0.015)
        runs.append(time.perf_counter() - start)
    runs = sorted(runs[1:])
    extra = f", {len(result[0])} pairs" if isinstance(result, tuple) else ""
    print(f"{label}: median {runs[1]:.3f} s{extra}", flush=True)


timed("pairs <= 0.015: products, pair_stats (counts, model, near list), exact redo near it, selection",
      lambda: PairsReduction(0.015, True))
timed("the same into a reduction that keeps nothing (no selection)", Discard)
reduce = statsgpu.PairStatsSession.reduce


def products_only(self, tile, function):
    with self.device, self.stream:
        self._products(tile, self.work.local(tile))
    return function(tile, None)


statsgpu.PairStatsSession.reduce = products_only
timed("the seven 1-bit products alone", Discard)
