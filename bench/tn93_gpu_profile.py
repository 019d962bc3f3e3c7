"""Where the GPU's TN93 time goes (issue 18), labelled profile beside ``tn93_bench.py``'s end-to-end figures.

Usage: ``python bench/tn93_gpu_profile.py`` on a GPU machine (5,000 x 9,000 ``simulate_pol``, TN93, min overlap
501, warm, medians of 3). It runs ``run_model`` into a reduction that keeps nothing, then takes away, one at a
time, the host's model, the copy of the counts to the host, and the ambiguity-site kernel (the last row's counts
are then not exact: it times the 1-bit tensor-core products alone). The monkeypatching is for this profile only.
"""

import time, numpy as np, seqcompare
from seqcompare.simulate import simulate_pol
from seqcompare.hamming import pairstats, statsgpu
from seqcompare.hamming.api import encode_site_codes, run_model
names, seqs = simulate_pol(5000, 9000, seed=0)
codes = encode_site_codes(seqcompare.Alignment(names, seqs), None, "tn93", False, "")

class Discard:
    kind = "discard"
    accepts = ("discard",)
    def reduce(self, tile, block): return None
    def merge(self, partial): pass
    def finish(self): return None

def timed(label, **kw):
    run_model(codes, Discard(), model="tn93", min_overlap=501, device="cuda", **kw)
    t = []
    for _ in range(3):
        s = time.perf_counter(); run_model(codes, Discard(), model="tn93", min_overlap=501, device="cuda", **kw); t.append(time.perf_counter() - s)
    print(label, "median %.3f s" % sorted(t)[1], ["%.3f" % x for x in t], flush=True)

timed("full block (counts on device, to host, model on host)")
finish = pairstats.PairStatsWork.finish_block
pairstats.PairStatsWork.finish_block = lambda self, counts: None
timed("counts on device and copied to host, no model")
reduce = statsgpu.PairStatsSession.reduce
def no_copy(self, tile, function):
    import cupy
    get = cupy.ndarray.get
    cupy.ndarray.get = lambda a, stream=None: None
    try:
        result = reduce(self, tile, function)
        self.stream.synchronize()
        return result
    finally:
        cupy.ndarray.get = get
statsgpu.PairStatsSession.reduce = no_copy
timed("device only: ten bit-GEMM products and the ambiguity-site kernel (synchronised per tile)")
init = statsgpu.PairStatsSession.__init__
def no_special(self, work, device):
    init(self, work, device); self.has_special = False
statsgpu.PairStatsSession.__init__ = no_special
timed("device only, bit-GEMM products alone (ambiguity sites off: counts not exact)")
