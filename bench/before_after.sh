#!/usr/bin/env bash
# The same benchmarks on two trees in one run on one machine: a baseline (an earlier commit, unpacked with
# `git archive COMMIT src bench pyproject.toml README.md | tar -x -C DIR`) and this working tree, alternating,
# each writing its own JSON under OUTDIR/base and OUTDIR/head. Used to check that a refactor lost no speed.
#
#   bash bench/before_after.sh BASE_DIR OUTDIR WHAT[,WHAT...]
#
# WHAT: gpu-api and cpu-api (bench/public_api.py, this tree's script on both trees: each command's public
# function end to end), gpu-hamming (bench/hamming_gpu.py, 32,768 x 30,000), gpu-ccc (bench/ccc_gpu.py, 32,768 x 32,768 dense and
# 2,048 x 16,384 3-way), gpu-dp (bench/dp_bench.py --device cuda), gpu-scan (bench/scan_bench.py --device cuda,
# the course's full-size run), cpu-hamming (bench/hamming_cpu.py), cpu-ccc (bench/ccc_cpu.py), cpu-dp
# (bench/dp_bench.py --device cpu), cpu-scan (bench/scan_bench.py --device cpu). PYTHON (default python3) runs
# them; on the GPU machine, wheels in .whl/ are installed first as bench/gpu_run.sh does.
set -uo pipefail
BASE=$(realpath "${1:?usage: bash bench/before_after.sh BASE_DIR OUTDIR WHAT}")
OUT=$(realpath -m "${2:?OUTDIR}")
WHAT=${3:?WHAT}
PYTHON=${PYTHON:-python3}
REPEATS=${REPEATS:-3}
cd "$(dirname "$0")/.."
mkdir -p "$OUT/base" "$OUT/head"
export PYTHONUNBUFFERED=1
WORK=${SEQCOMPARE_WORK:-/tmp/seqcompare-work}
if compgen -G ".whl/*.whl" > /dev/null && [[ -n "${INSTALL_WHEELS-1}" ]]; then
    $PYTHON -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -3
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# Each tree runs from its own src/ (its own CUDA sources and compiled-kernel cache), ahead of any installed copy.
HEAD_TREE=$(pwd)
status=0
for what in ${WHAT//,/ }; do
    case $what in
        gpu-api) args=("$HEAD_TREE/bench/public_api.py" --device cuda --repeats "$REPEATS" ${API_ONLY:+--only "$API_ONLY"}) ;;
        cpu-api) args=("$HEAD_TREE/bench/public_api.py" --device cpu --repeats "$REPEATS") ;;
        gpu-hamming) args=(bench/hamming_gpu.py --repeats 5) ;;
        gpu-ccc) args=(bench/ccc_gpu.py --repeats "$REPEATS" --dense-only --vectors 32768 --fields 32768 --vectors3 2048 --fields3 16384) ;;
        gpu-dp) args=(bench/dp_bench.py --device cuda) ;;
        gpu-scan) args=(bench/scan_bench.py --device cuda --repeats "$REPEATS" --work "$WORK") ;;
        cpu-hamming) args=(bench/hamming_cpu.py --threads 2 --repeats "$REPEATS") ;;
        cpu-ccc) args=(bench/ccc_cpu.py --repeats "$REPEATS" --work "$WORK") ;;
        cpu-dp) args=(bench/dp_bench.py --device cpu --threads 2) ;;
        cpu-scan) args=(bench/scan_bench.py --device cpu --repeats "$REPEATS" --work "$WORK") ;;
        *) echo "unknown benchmark $what" >&2; exit 2 ;;
    esac
    for side in base head; do
        tree=$([[ $side == base ]] && echo "$BASE" || echo "$HEAD_TREE")
        echo "=== $what: $side ($tree)"
        out="$OUT/$side"
        [[ $what == cpu-hamming ]] && out="$OUT/$side/results_hamming_cpu.json"
        (cd "$tree" && PYTHONPATH=$tree/src${PYTHONPATH:+:$PYTHONPATH} $PYTHON "${args[@]}" --out "$out") 2>&1 \
            | tee "$OUT/${what}_$side.log"
        [[ ${PIPESTATUS[0]} -ne 0 ]] && status=1
    done
done
exit $status
