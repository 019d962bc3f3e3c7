"""Where the GPU's TN93 links time goes once the model runs on the device (issue 18), a labelled profile.

Usage: ``python bench/tn93_gpu_profile_screened.py N M`` on a GPU machine (``simulate_pol(N, M)``, TN93 <= 0.015,
warm, medians of 3, alignment in memory). It times ``run_model`` into pairs with the screen (the real path),
then takes away, one at a time, the exact redo near the threshold and the model (a reduction that keeps
nothing), and the ambiguity-site kernel (counts then not exact: the ten 1-bit products alone). The
monkeypatching is for this profile only.
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


timed("pairs <= 0.015: counts, model on the device, exact redo near the threshold, selection",
      lambda: PairsReduction(0.015, True))
screened = pairstats.PairStatsWork.screened_block
pairstats.PairStatsWork.screened_block = lambda self, counts, approximate=None: (
    approximate or self.finish_block)(counts)
timed("the same without the exact redo (device model, selection)", lambda: PairsReduction(0.015, True))
pairstats.PairStatsWork.screened_block = lambda self, counts, approximate=None: counts
timed("counts only (products + ambiguity-site kernel), no model", Discard)
init = statsgpu.PairStatsSession.__init__


def no_special(self, work, device):
    init(self, work, device)
    self.has_special = False


statsgpu.PairStatsSession.__init__ = no_special
timed("the ten bit-GEMM products and the int64 stack alone (counts not exact)", Discard)
