import time, numpy as np, json
import seqcompare
from seqcompare.align import gpu
from seqcompare.cuda import runtime
rng = np.random.default_rng(5)
a = rng.integers(0, 1000, (40000, 1000)).astype(np.int32)
b = rng.integers(0, 1000, (40000, 1000)).astype(np.int32)
off = np.arange(40001, dtype=np.int64) * 1000
plan = np.stack([np.arange(40000), np.arange(40000)], axis=1)
for ro in (True, False, True, False):
    runtime.READ_ONLY_REGISTRATION = ro
    for rep in range(4):
        tm = {}
        s = time.perf_counter()
        gpu.dp_on_gpu(1, a.reshape(-1), off, b.reshape(-1), off, plan, timings=tm)
        total = time.perf_counter() - s
    st = tm["stages"]
    line = " ".join(f"{name}:{t*1e3:.1f}" for name, t in st)
    print(f"read-only {ro} total {total*1e3:.1f} ms kernel {tm['kernel_s']*1e3:.1f} ms | {line}", flush=True)
# the public API beside the direct call, interleaved
runtime.READ_ONLY_REGISTRATION = True
for rnd in range(2):
    for label, fn in (("seqcompare.dtw", lambda: seqcompare.dtw(a, b, device="cuda")),
                      ("dp_on_gpu", lambda: gpu.dp_on_gpu(1, a.reshape(-1), off, b.reshape(-1), off, plan))):
        fn()
        ts = []
        for _ in range(7):
            s = time.perf_counter(); fn(); ts.append(time.perf_counter() - s)
        med = sorted(ts)[3]
        print(f"round {rnd} {label:15s} median {med*1e3:.2f} ms  {4e10/med/1e9:.0f} GCUPS  runs " + " ".join(f"{t*1e3:.1f}" for t in ts), flush=True)
