import time, numpy as np
import seqcompare
from seqcompare.align import gpu, batch
rng = np.random.default_rng(5)
a = rng.integers(0, 1000, (40000, 1000)).astype(np.int32)
b = rng.integers(0, 1000, (40000, 1000)).astype(np.int32)
off = np.arange(40001, dtype=np.int64) * 1000
plan = np.stack([np.arange(40000), np.arange(40000)], axis=1)
inner = []
real = gpu.dp_on_gpu
def timed(*args, **kw):
    tm = kw.setdefault("timings", {})
    s = time.perf_counter(); r = real(*args, **kw); inner.append((time.perf_counter() - s, tm))
    return r
gpu.dp_on_gpu = timed
for i in range(14):
    s = time.perf_counter(); seqcompare.dtw(a, b, device="cuda"); outer = time.perf_counter() - s
    t, tm = inner[-1]
    st = dict(tm["stages"])
    print(f"dtw {outer*1e3:6.2f} ms  dp_on_gpu {t*1e3:6.2f}  kernel {tm['kernel_s']*1e3:6.2f}  launched(last piece) {max(v for k, v in st.items() if k.endswith('launched'))*1e3:5.1f}  released {st['released']*1e3:5.1f}", flush=True)
for i in range(6):
    s = time.perf_counter(); timed(1, a.reshape(-1), off, b.reshape(-1), off, plan); outer = time.perf_counter() - s
    t, tm = inner[-1]; st = dict(tm["stages"])
    print(f"direct {outer*1e3:6.2f} ms  kernel {tm['kernel_s']*1e3:6.2f}  launched {max(v for k, v in st.items() if k.endswith('launched'))*1e3:5.1f}  released {st['released']*1e3:5.1f}", flush=True)
