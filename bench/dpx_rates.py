"""Throughput of single SASS instructions on the lent GPU (a labelled micro-benchmark, not a product figure).

Each kernel runs 8 independent chains of one instruction (or two, for the mixes) in every thread of a full
grid; the rate is lane instructions a second. Used to tell which of the 16-bit DPX and packed instructions
share a pipe (session 22, issue 19)::

    python3 bench/dpx_rates.py [NAME_PART ...]
"""
import cupy as cp, numpy as np, json, sys

OPS = {
    "viaddmax16": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j});",
    "viaddmax16_relu": "a{i} = __viaddmax_s16x2_relu(a{i}, k1, a{j});",
    "vimax3_16": "a{i} = __vimax3_s16x2_relu(a{i}, k1, a{j});",
    "vimax16": "a{i} = __vimax_s16x2_relu(a{i}, a{j});",
    "vadd2": "a{i} = __vadd2(a{i}, a{j});",
    "viaddmax32": "a{i} = (unsigned)__viaddmax_s32((int)a{i}, (int)k1, (int)a{j});",
    "iadd3": "a{i} = a{i} + a{j} + k1;",
    "prmt": "a{i} = __byte_perm(a{i}, a{j}, 0x5410);",
    "lop3": "a{i} = (a{i} & a{j}) ^ k1;",
    "mix_dpx_prmt": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = __byte_perm(b{i}, b{j}, 0x5410);",
    "mix_dpx_iadd": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = b{i} + b{j} + k1;",
    "mix_dpx_vadd2": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = __vadd2(b{i}, b{j});",
    "mix_dpx_vimax": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = __vimax_s16x2_relu(b{i}, b{j});",
    "mix_vimax3_vimax": "a{i} = __vimax3_s16x2_relu(a{i}, k1, a{j}); b{i} = __vimax_s16x2_relu(b{i}, b{j});",
    # Packed halves (fp16x2), which CUDASW++4.0's default kernels use: which pipe do their maxima and sums take?
    "hmax2": "a{i} = hmax2(a{i}, a{j});",
    "hadd2": "a{i} = hadd2(a{i}, a{j});",
    "hfma2_relu": "a{i} = hfma2_relu(a{i}, k1, a{j});",
    "mix_hmax2_hadd2": "a{i} = hmax2(a{i}, a{j}); b{i} = hadd2(b{i}, b{j});",
    "mix_dpx_hmax2": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = hmax2(b{i}, b{j});",
    "mix_dpx_hadd2": "a{i} = __viaddmax_s16x2(a{i}, k1, a{j}); b{i} = hadd2(b{i}, b{j});",
    "mix_vimax3_hmax2": "a{i} = __vimax3_s16x2_relu(a{i}, k1, a{j}); b{i} = hmax2(b{i}, b{j});",
    "mix_vadd2_hmax2": "a{i} = __vadd2(a{i}, a{j}); b{i} = hmax2(b{i}, b{j});",
    "mix_prmt_hmax2": "a{i} = __byte_perm(a{i}, a{j}, 0x5410); b{i} = hmax2(b{i}, b{j});",
    "mix_iadd_hmax2": "a{i} = a{i} + a{j} + k1; b{i} = hmax2(b{i}, b{j});",
}
HALF = """#include <cuda_fp16.h>
__device__ __forceinline__ unsigned as_u(__half2 x) { return *reinterpret_cast<unsigned*>(&x); }
__device__ __forceinline__ __half2 as_h(unsigned x) { return *reinterpret_cast<__half2*>(&x); }
__device__ __forceinline__ unsigned hmax2(unsigned a, unsigned b) { return as_u(__hmax2(as_h(a), as_h(b))); }
__device__ __forceinline__ unsigned hadd2(unsigned a, unsigned b) { return as_u(__hadd2(as_h(a), as_h(b))); }
__device__ __forceinline__ unsigned hfma2_relu(unsigned a, unsigned b, unsigned c) {
    return as_u(__hfma2_relu(as_h(a), as_h(b), as_h(c))); }
"""
CH = 8
def source(name, body):
    decl = " ".join(f"unsigned a{i} = seed + {i}; unsigned b{i} = seed * 3 + {i};" for i in range(CH))
    steps = "\n".join(body.format(i=i, j=(i + 1) % CH) for i in range(CH))
    out = " ^ ".join(f"a{i} ^ b{i}" for i in range(CH))
    return HALF + f'''extern "C" __global__ void {name}(unsigned* o, unsigned seed, unsigned k1, int iters) {{
      {decl}
      for (int it = 0; it < iters; ++it) {{
        #pragma unroll 4
        for (int u = 0; u < 4; ++u) {{ {steps} }}
      }}
      o[blockIdx.x * blockDim.x + threadIdx.x] = {out};
    }}'''

res = {}
props = cp.cuda.runtime.getDeviceProperties(0)
sms = props["multiProcessorCount"]
for name, body in OPS.items():
    if len(sys.argv) > 1 and not any(word in name for word in sys.argv[1:]):  # only the named instructions
        continue
    k = cp.RawKernel(source(name, body), name, options=("-arch=sm_90",))
    blocks, threads, iters = sms * 8, 256, 2000
    o = cp.empty(blocks * threads, cp.uint32)
    k((blocks,), (threads,), (o, np.uint32(1), np.uint32(0xfffeffff), np.int32(10)))
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(5):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record(); k((blocks,), (threads,), (o, np.uint32(1), np.uint32(0xfffeffff), np.int32(iters))); b.record(); b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    t = min(times)
    per_iter = body.count(";")
    lane_ops = blocks * threads * iters * 4 * CH * per_iter
    res[name] = lane_ops / t / 1e12
    print(f"{name:20s} {res[name]:7.2f} T lane-instr/s", flush=True)
print(json.dumps(res))
