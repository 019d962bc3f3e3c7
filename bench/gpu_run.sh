#!/usr/bin/env bash
# On a GPU machine with no network (CuPy, Numba, pytest, hypothesis preinstalled; Python 3.12): install the
# package from this working tree, run the GPU tests, then the GPU benchmarks, writing everything to OUTDIR.
#
#   bash bench/gpu_run.sh OUTDIR [tests|bench|scale|scan|all|WHAT,WHAT] [extra pytest args...]
#
# tests: pytest -m gpu; bench: bench/hamming_gpu.py (32,768 x 30,000: kernels, shapes, mask builders);
# scale: bench/hamming_gpu_scale.py table, gpus and e2e (100,000 x 30,000 from FASTA on disk). The FASTA and
# pairs files of e2e go to $SEQCOMPARE_WORK (default /tmp/seqcompare-work), not OUTDIR (3 GB);
# SCALE_PARTS="gpus e2e" runs some of the three. scan: bench/scan_bench.py --device cuda (course full-size run).
# ccc: bench/ccc_gpu.py (CCC 2-way rates; CCC_ARGS="--vectors N --fields M" to change the size).
# dp: bench/dp_bench.py --device cuda (NW and DTW GCUPS at the seed's four lengths; DP_ARGS for options).
# dpapi: bench/dp_api.py (GPU NW and DTW through the API, 40,000 pairs of 1,000, kernel-only rates beside).
# probe: bench/dp_transfer_probe.py (the DP host path: host and bus rates, the two upload routes, one call traced).
# long: bench/dp_long.py (goal 3: 20 pairs of 10,000 and of 100,000 over many warps; LONG_ARGS for options).
# search: bench/dtw_search.py (one query against 2^20 series, float32; CUDTW_SOURCE=.peers/cuDTW builds cuDTW++).
# shmprobe: bench/shm_probe.py (filling and page-locking 1 GB shared buffers by each route; SHM_ARGS for options).
# e2e4: bench/hamming_gpu_e2e.py (32,768 x 30,000 FASTA to pairs on disk, against hammingdist's GPU path).
# tn93: bench/tn93_bench.py (TN93 links of a 5,000 x 9,000 pol-like alignment against veg/tn93 built from .peers/tn93).
# tn93scale: bench/tn93_gpu_scale.py (GPU TN93 links, 100,000 x 30,000 disk to disk; TN93_SCALE_ARGS for options).
# collapse: bench/collapse_bench.py (--collapse against the plain run, 30% duplicates, CPU and GPU; COLLAPSE_ARGS).
# modes: bench/align_modes.py (issue 19: GPU traceback against the CPU's --cigar; protein search against CUDASW++4.0
# built from .peers/CUDASW4; MODES_PARTS="traceback search" and MODES_ARGS for options).
# scanapprox: bench/scan_approximate.py --device cuda (issue 20: 1 Gbp of reads within 5% mismatches or edits,
# against Sassy and seqkit locate; SCANAPPROX_ARGS for options such as --threads and --peer-threads).
# goal5: bench/hamming_goal5.py (CPU Hamming -L on this host against hammingdist, GOAL5_ARGS such as --threads).
# dask: bench/dask_bench.py weak (one Dask worker per GPU; DASK_GPUS=1,2,4 and DASK_ARGS for options).
# daskstrong: bench/dask_bench.py strong (one Hamming problem on 1, 2, 4 GPUs; DASK_GPUS and DASK_STRONG_ARGS).
# Python packages the GPU image lacks (dask, distributed and their needs) travel as wheels in .whl/ (see
# docs/DEVELOPING.md); they are installed to /tmp/site first.
set -uo pipefail
OUT=${1:?usage: bash bench/gpu_run.sh OUTDIR [tests|bench|all] [pytest args]}
WHAT=${2:-all}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."

if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -3
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
python3 -m pip install -q --no-index --no-deps --no-build-isolation . 2>&1 | tail -3
python3 - <<'EOF' 2>&1 | tee "$OUT/environment.txt"
import cupy, numba, numpy, platform, seqcompare
print("python", platform.python_version(), "numpy", numpy.__version__, "numba", numba.__version__,
      "cupy", cupy.__version__, "seqcompare", seqcompare.__version__)
for d in range(cupy.cuda.runtime.getDeviceCount()):
    p = cupy.cuda.runtime.getDeviceProperties(d)
    print("gpu", d, p["name"], "sm", p["major"], p["minor"], "SMs", p["multiProcessorCount"])
EOF
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1 | tee -a "$OUT/environment.txt"

status=0
wants() { [[ ",$WHAT," == *",$1,"* || "$WHAT" == all ]]; }
if wants modes; then
    for part in ${MODES_PARTS:-traceback search}; do
        python3 bench/align_modes.py "$part" --out "$OUT" ${MODES_ARGS:-} 2>&1 | tee "$OUT/modes_$part.log"
        [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
    done
fi
if wants tests; then
    # Run from outside the tree so the installed package (with its .cu files) is what gets tested.
    (cd tests && python3 -m pytest -q -m gpu -p no:cacheprovider "$@" . 2>&1) | tee "$OUT/gpu_tests.log"
    status=${PIPESTATUS[0]}
fi
if wants bench; then
    python3 bench/hamming_gpu.py --out "$OUT" 2>&1 | tee "$OUT/bench.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants scale; then
    WORK=${SEQCOMPARE_WORK:-/tmp/seqcompare-work}
    for what in ${SCALE_PARTS:-table gpus e2e}; do
        python3 bench/hamming_gpu_scale.py "$what" --out "$OUT" --work "$WORK" 2>&1 | tee "$OUT/scale_$what.log"
        [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
    done
fi
if wants ccc; then
    python3 bench/ccc_gpu.py --out "$OUT" ${CCC_ARGS:-} 2>&1 | tee "$OUT/ccc_gpu.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants dp; then
    python3 bench/dp_bench.py --out "$OUT" --device cuda ${DP_ARGS:-} 2>&1 | tee "$OUT/dp_bench.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants tn93scale; then
    python3 bench/tn93_gpu_scale.py --out "$OUT" ${TN93_SCALE_ARGS:-} 2>&1 | tee "$OUT/tn93_gpu_scale.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants collapse; then
    python3 bench/collapse_bench.py --out "$OUT/collapse" --devices cpu,cuda ${COLLAPSE_ARGS:-} 2>&1 | tee "$OUT/collapse.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants dpapi; then
    python3 bench/dp_api.py --out "$OUT" --profile ${DPAPI_ARGS:-} 2>&1 | tee "$OUT/dp_api.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants probe; then
    python3 bench/dp_transfer_probe.py --out "$OUT" 2>&1 | tee "$OUT/dp_transfer_probe.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants long; then
    python3 bench/dp_long.py --out "$OUT" ${LONG_ARGS:-} 2>&1 | tee "$OUT/dp_long.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants search; then
    # cuDTW++'s source travels in .peers/cuDTW (excluded from git; carry it).
    python3 bench/dtw_search.py --out "$OUT" ${CUDTW_SOURCE:+--cudtw-source "$CUDTW_SOURCE"} ${SEARCH_ARGS:-} 2>&1 | tee "$OUT/dtw_search.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants tn93; then
    # veg/tn93's source travels in .peers/tn93 (excluded from git; carry it); the bench builds it.
    python3 bench/tn93_bench.py --out "$OUT" --tn93-source "${TN93_SOURCE:-.peers/tn93}" ${TN93_ARGS:-} 2>&1 | tee "$OUT/tn93_bench.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants dask; then
    python3 bench/dask_bench.py weak --out "$OUT" --gpus "${DASK_GPUS:-1,2}" ${DASK_ARGS:-} 2>&1 | tee "$OUT/dask_bench.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants daskstrong; then
    python3 bench/dask_bench.py strong --out "$OUT" --gpus "${DASK_GPUS:-1,2}" ${DASK_STRONG_ARGS:-} 2>&1 | tee "$OUT/dask_strong.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants shmprobe; then
    python3 bench/shm_probe.py --out "$OUT" ${SHM_ARGS:-} 2>&1 | tee "$OUT/shm_probe.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants e2e4; then
    python3 bench/hamming_gpu_e2e.py --out "$OUT" --work "${SEQCOMPARE_WORK:-/tmp/seqcompare-work}" ${E2E4_ARGS:-} 2>&1 | tee "$OUT/hamming_gpu_e2e.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants goal5; then
    python3 bench/hamming_goal5.py --out "$OUT/hamming_goal5.json" ${GOAL5_ARGS:-} 2>&1 | tee "$OUT/hamming_goal5.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants scan; then
    python3 bench/scan_bench.py --out "$OUT" --device cuda --repeats "${SCAN_REPEATS:-7}" --work "${SEQCOMPARE_WORK:-/tmp/seqcompare-work}" 2>&1 | tee "$OUT/scan_bench.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
if wants scanapprox; then
    # Issue 20: within 5% mismatches or edits on the GPU against Sassy (sassy-rs wheel in .whl/) and seqkit locate
    # (.peers/seqkit/seqkit, Debian's build of shenwei356/seqkit) on the same host.
    python3 bench/scan_approximate.py --out "$OUT" --device cuda --work "${SEQCOMPARE_WORK:-/tmp/seqcompare-work}" \
        --seqkit .peers/seqkit/seqkit ${SCANAPPROX_ARGS:-} 2>&1 | tee "$OUT/scan_approximate.log"
    [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
fi
exit $status
