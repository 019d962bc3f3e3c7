# Session 44, 4-GPU call C (nvidia-h200-x4, issue 21): the smallest regions last (balanced_order). The Dask GPU
# tests with four workers, then the weak Hamming run (1 and 4 GPUs) and strong scaling (800,000 x 30,000 on 4 and
# 1 GPUs), every result checked against a single-process run, with each task's stamps. LABEL names the results
# (x4d.sh runs this script with LABEL=gate).
set -u
export PYTHONUNBUFFERED=1
export SEQCOMPARE_COMMIT=${SEQCOMPARE_COMMIT:?name the commit sent}
LABEL=${LABEL:-smallest_last}
bash bench/gpu_run.sh "$OUT" none > "$OUT/install.log" 2>&1
export PYTHONPATH=/tmp/site
(cd tests && timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider test_distributed.py 2>&1 | tail -3) | tee "$OUT/gpu_tests.log"
timeout 200 python3 bench/dask_bench.py weak --out "$OUT" --gpus 1,4 --check --repeats 3 --hamming 400000,30000 --jobs hamming --tasks-per-worker 2 --label $LABEL > "$OUT/weak.log" 2>&1
grep -E "root hamming \[" "$OUT/weak.log" | cut -c1-300
timeout 230 python3 bench/dask_bench.py strong --out "$OUT" --gpus 4,1 --check --repeats 3 --hamming 800000,30000 --tasks-per-worker 2 --label $LABEL > "$OUT/strong.log" 2>&1
grep -E "root hamming on" "$OUT/strong.log" | grep -v tasks | grep -v workers | cut -c1-200
